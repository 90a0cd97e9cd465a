// Memory for large, randomly accessed operator state (hash tables and record arenas).
//
// A lookup in a table of hundreds of megabytes lands on a different 4 KiB page each time, so
// beside its cache miss it pays a TLB miss (a page walk, itself often missing the cache). Regions
// of at least kLargeBytes are therefore mapped on 2 MiB boundaries and advised as transparent
// huge pages (madvise MADV_HUGEPAGE; Debian's default THP mode "madvise" honours it): one TLB
// entry then covers 2 MiB. Smaller requests use malloc, so a small map never pins a 2 MiB page.
// Where the kernel gives no huge pages the advice is ignored and the memory is ordinary.
//
// The rest of the heap (batches, consolidation buffers, sorted keys: allocated and freed every
// step) is glibc malloc's, which advises its own heap as huge pages only when the environment
// says so at startup (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, glibc 2.35 and later): a long-running
// command calls ReexecWithHugePageHeap first, which executes the same binary again with that set.
#pragma once

#include <cstddef>
#include <new>

namespace fld {

constexpr size_t kLargeBytes = size_t{4} << 20;

// Replaces the process (same pid, arguments, descriptors) by the same program with
// glibc.malloc.hugetlb=1 added to GLIBC_TUNABLES, unless GLIBC_TUNABLES already sets that tunable
// (glibc.malloc.hugetlb=0 keeps malloc's heap on ordinary pages), the kernel's transparent huge
// pages are off, or the C library is not a glibc that knows it. Returns when it does not
// re-execute (or when exec fails: the process then goes on as it is).
void ReexecWithHugePageHeap(char** argv);

// `bytes` of uninitialized memory (throws std::bad_alloc). Free with FreeLarge and the same size.
void* AllocLarge(size_t bytes);
void FreeLarge(void* p, size_t bytes);

// Deletes what AllocLarge gave (std::unique_ptr<char, LargeFree>).
struct LargeFree {
  size_t bytes = 0;
  void operator()(char* p) const { FreeLarge(p, bytes); }
};

// A std::allocator that takes large arrays from AllocLarge (std::vector<T, LargeAllocator<T>>).
template <typename T>
struct LargeAllocator {
  using value_type = T;
  LargeAllocator() = default;
  template <typename U>
  LargeAllocator(const LargeAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(AllocLarge(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { FreeLarge(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const LargeAllocator<U>&) const {
    return true;
  }
};

}  // namespace fld
