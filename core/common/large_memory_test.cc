// Tests of AllocLarge and LargeAllocator (core/common/large_memory.h): small requests come from
// malloc, large ones are whole, writable, 2 MiB-aligned mappings; vectors using the allocator
// keep their elements across growth from small to large.
#include "core/common/large_memory.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

namespace fld {
namespace {

TEST_CASE("AllocLarge gives whole, writable, huge-page-aligned regions for large sizes", "[large_memory]") {
  for (size_t bytes : {size_t{1}, size_t{4096}, kLargeBytes - 1, kLargeBytes, kLargeBytes + 1, size_t{9} << 20}) {
    char* p = static_cast<char*>(AllocLarge(bytes));
    REQUIRE(p != nullptr);
    if (bytes >= kLargeBytes) REQUIRE(reinterpret_cast<uintptr_t>(p) % (size_t{2} << 20) == 0);
    // Every byte is usable and keeps what was written.
    for (size_t i = 0; i < bytes; i += 4093) p[i] = static_cast<char>(i * 7);
    p[bytes - 1] = 'z';
    for (size_t i = 0; i + 1 < bytes; i += 4093) REQUIRE(p[i] == static_cast<char>(i * 7));
    REQUIRE(p[bytes - 1] == 'z');
    FreeLarge(p, bytes);
  }
  FreeLarge(nullptr, kLargeBytes);  // like free(nullptr)
}

TEST_CASE("A vector with LargeAllocator keeps its elements from small to large", "[large_memory]") {
  std::vector<uint64_t, LargeAllocator<uint64_t>> v;
  const size_t n = 3 * kLargeBytes / sizeof(uint64_t);  // grows through malloc into mappings
  for (size_t i = 0; i < n; ++i) v.push_back(i * 2654435761u);
  for (size_t i = 0; i < n; i += 997) REQUIRE(v[i] == i * 2654435761u);
  REQUIRE(v.back() == (n - 1) * 2654435761u);
  auto w = std::move(v);
  REQUIRE(w.size() == n);
  w.clear();
  w.shrink_to_fit();
  REQUIRE(w.capacity() == 0);
}

}  // namespace
}  // namespace fld
