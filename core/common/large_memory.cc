#include "core/common/large_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

namespace fld {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

size_t RoundUp(size_t n) {
  return (n + kHugePage - 1) & ~(kHugePage - 1);
}

}  // namespace

void* AllocLarge(size_t bytes) {
  if (bytes < kLargeBytes) {
    void* p = std::malloc(bytes == 0 ? 1 : bytes);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  // Map a huge page more than needed, then give back the unaligned head and tail.
  const size_t len = RoundUp(bytes);
  void* m = ::mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(m);
  const uintptr_t aligned = (start + kHugePage - 1) & ~(kHugePage - 1);
  if (aligned > start) ::munmap(m, aligned - start);
  const size_t tail = start + len + kHugePage - (aligned + len);
  if (tail > 0) ::munmap(reinterpret_cast<void*>(aligned + len), tail);
  void* p = reinterpret_cast<void*>(aligned);
  ::madvise(p, len, MADV_HUGEPAGE);  // advice only: without THP the pages are ordinary
  return p;
}

void FreeLarge(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes < kLargeBytes)
    std::free(p);
  else
    ::munmap(p, RoundUp(bytes));
}

void ReexecWithHugePageHeap(char** argv) {
#ifdef __GLIBC__
  const char* old = std::getenv("GLIBC_TUNABLES");
  const std::string before = old ? old : "";
  if (before.find("glibc.malloc.hugetlb") != std::string::npos) return;  // set: also after our exec
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");        // "always [madvise] never"
  std::string mode;
  if (!std::getline(f, mode) || mode.find("[never]") != std::string::npos) return;
  const std::string now = before.empty() ? "glibc.malloc.hugetlb=1" : before + ":glibc.malloc.hugetlb=1";
  if (setenv("GLIBC_TUNABLES", now.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Not executed (no /proc, say): go on as before.
  if (old)
    setenv("GLIBC_TUNABLES", before.c_str(), 1);
  else
    unsetenv("GLIBC_TUNABLES");
#else
  (void)argv;
#endif
}

}  // namespace fld
