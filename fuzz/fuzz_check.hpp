#pragma once
// Invariant checks for the fuzz targets: a broken invariant prints what broke and aborts, so
// libFuzzer records the input as a crash-* finding exactly like a sanitizer report.

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition, ...)                                                       \
  do {                                                                                   \
    if (!(condition)) {                                                                  \
      std::fprintf(stderr, "fuzz invariant broken at %s:%d: %s\n  ", __FILE__, __LINE__, \
                   #condition);                                                          \
      std::fprintf(stderr, __VA_ARGS__);                                                 \
      std::fprintf(stderr, "\n");                                                        \
      std::abort();                                                                      \
    }                                                                                    \
  } while (false)
