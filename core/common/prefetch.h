// Prefetch(p): asks the CPU to bring the cache line holding p into every cache level, without
// waiting for it. Unlike __builtin_prefetch, which GCC may drop together with the loads that
// compute its address when nothing else uses them, this one is always emitted.
#pragma once

namespace fld {

inline void Prefetch(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
  asm volatile("" : : "r"(p));
#endif
}

}  // namespace fld
