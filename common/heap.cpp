#include "common/heap.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace reflectd {

bool keep_freed_heap_mapped() {
#if defined(__GLIBC__)
  // mallopt returns 1 on success, 0 on an out-of-range value.
  return mallopt(M_MMAP_THRESHOLD, kHeapMmapThresholdBytes) == 1 &&
         mallopt(M_TRIM_THRESHOLD, kHeapTrimThresholdBytes) == 1;
#else
  return false;
#endif
}

}  // namespace reflectd
