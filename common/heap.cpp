#include "common/heap.hpp"

#include <dlfcn.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace reflectd {
namespace {

// gperftools defines malloc as an alias of tc_malloc, so the two names have one address
// exactly when tcmalloc's malloc is the one every library calls (a tcmalloc loaded after
// libc would not be).
bool tcmalloc_serves_malloc() {
  void* tc_malloc = dlsym(RTLD_DEFAULT, "tc_malloc");
  return tc_malloc != nullptr && tc_malloc == dlsym(RTLD_DEFAULT, "malloc");
}

}  // namespace

std::string heap_allocator() {
  if (!tcmalloc_serves_malloc()) return "system malloc";
  // const char* tc_version(int* major, int* minor, const char** patch) (gperftools/tcmalloc.h),
  // looked up rather than linked so that this library does not depend on gperftools.
  using TcVersion = const char* (*)(int*, int*, const char**);
  void* symbol = dlsym(RTLD_DEFAULT, "tc_version");
  if (symbol == nullptr) return "tcmalloc";
  int major = 0;
  int minor = 0;
  const char* patch = nullptr;
  // POSIX guarantees that dlsym's result converts to the function's pointer type.
  const char* version = reinterpret_cast<TcVersion>(symbol)(&major, &minor, &patch);
  return version != nullptr ? std::string("tcmalloc (") + version + ")" : "tcmalloc";
}

bool keep_freed_heap_mapped() {
  if (tcmalloc_serves_malloc()) return true;
#if defined(__GLIBC__)
  // mallopt returns 1 on success, 0 on an out-of-range value.
  return mallopt(M_MMAP_THRESHOLD, kHeapMmapThresholdBytes) == 1 &&
         mallopt(M_TRIM_THRESHOLD, kHeapTrimThresholdBytes) == 1;
#else
  return false;
#endif
}

}  // namespace reflectd
