#pragma once
// The process's heap: which allocator serves malloc, and its policy, set once by main()
// before any thread starts.

#include <string>

namespace reflectd {

/// The allocator that serves this process's malloc: "tcmalloc" with gperftools' version
/// (e.g. "tcmalloc (gperftools 2.10)") when the global `malloc` symbol is tcmalloc's, as in
/// the reflectd executable built with REFLECTD_TCMALLOC (docs/PERFORMANCE.md);
/// otherwise "system malloc" (glibc's, or a sanitizer's). Thread-safe; no errors.
std::string heap_allocator();

/// Makes glibc's malloc keep freed memory mapped instead of returning it to the kernel after
/// each large free, and fixes the size above which a block gets its own mapping:
///
/// - `M_TRIM_THRESHOLD` = kHeapTrimThresholdBytes (64 MiB): the top of a heap is given back
///   only when more than this is free there. glibc's dynamic default starts at 128 KiB, so
///   SQLite's page cache (pages of ~4.3 KiB, freed whenever a connection's cache is reset) and
///   the jobs' per-chunk containers went back to the kernel and were faulted in again, zeroed,
///   on the next chunk: 165,000 page faults in one full cycle over 100,000 events, 27,000 with
///   this policy, and 8-10% of the cycle's time.
/// - `M_MMAP_THRESHOLD` = kHeapMmapThresholdBytes (32 MiB, glibc's largest dynamic value):
///   setting the trim threshold turns off glibc's adjustment of this one, which would leave
///   it at 128 KiB, so every vector of a job's graph (PageRank, Louvain) would be mapped and
///   unmapped, page by page faulted, on each run.
///
/// Peak RSS does not grow (the memory kept is reused before the heap grows); the RSS after a
/// job can stay up to 64 MiB above what is in use. Not thread-safe: call it before starting
/// threads. Returns whether both settings were accepted; without glibc it does nothing and
/// returns false. Under tcmalloc (heap_allocator()) glibc's heap serves nothing, so it does
/// nothing and returns true: tcmalloc keeps freed spans in its page heap for reuse and gives
/// them back to the kernel gradually (TCMALLOC_RELEASE_RATE), which the tcmalloc figures
/// include (page faults of a +10,000 cycle: 26,700 with glibc and this policy,
/// 31,000 with tcmalloc).
bool keep_freed_heap_mapped();

inline constexpr int kHeapTrimThresholdBytes = 64 * 1024 * 1024;
inline constexpr int kHeapMmapThresholdBytes = 32 * 1024 * 1024;

}  // namespace reflectd
