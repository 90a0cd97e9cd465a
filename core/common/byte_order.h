// Byte order: integers as big-endian bytes (memcmp order), and sorting byte strings (key and row
// encodings) in memcmp order, fast: each string's first 16 bytes as two big-endian integers,
// compared first, so the strings themselves are read only on a tie. Encoded keys of one or two
// columns (an integer's encoding is 9 bytes) never tie there, where a comparison of the strings
// would be a call and a cache miss per step of the sort.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace fld {

// The unsigned integer whose order is memcmp's order of v's bytes as memory holds them (native
// byte order): v itself on a big-endian host, v byte-swapped on a little-endian one. The same
// swap turns a value into its big-endian bytes for memcpy.
inline uint64_t ByteOrder64(uint64_t v) {
  if constexpr (std::endian::native == std::endian::little) return __builtin_bswap64(v);
  return v;
}
inline uint32_t ByteOrder32(uint32_t v) {
  if constexpr (std::endian::native == std::endian::little) return __builtin_bswap32(v);
  return v;
}

// The first 16 bytes of s (zero-padded) as two integers in the order of the bytes.
inline void BytePrefix(std::string_view s, uint64_t* hi, uint64_t* lo) {
  uint64_t part[2] = {0, 0};
  for (size_t b = 0; b < 16; ++b) part[b / 8] = (part[b / 8] << 8) | (b < s.size() ? static_cast<uint8_t>(s[b]) : 0);
  *hi = part[0];
  *lo = part[1];
}

// Indexes 0..n-1 ordered by key(i) (a string_view) in memcmp order, equal keys by index. From
// kRadixSortFrom keys on, the first 8 bytes are radix sorted (a pass per byte in which the keys
// differ: a step's group keys, integers, differ in two or three) and only runs that tie there are
// compared; below, a comparison sort.
constexpr size_t kRadixSortFrom = 1024;
template <typename Key>
std::vector<uint32_t> SortedByBytes(size_t n, Key key) {
  struct Entry {
    uint64_t hi, lo;
    uint32_t index;
  };
  std::vector<Entry> e(n);
  for (size_t i = 0; i < n; ++i) {
    BytePrefix(key(i), &e[i].hi, &e[i].lo);
    e[i].index = static_cast<uint32_t>(i);
  }
  auto less = [&](const Entry& x, const Entry& y) {
    if (x.hi != y.hi) return x.hi < y.hi;
    if (x.lo != y.lo) return x.lo < y.lo;
    const int c = std::string_view(key(x.index)).compare(std::string_view(key(y.index)));
    return c != 0 ? c < 0 : x.index < y.index;
  };
  if (n < kRadixSortFrom) {
    std::sort(e.begin(), e.end(), less);
  } else {
    // Least significant byte of hi first; each pass is stable. The counts of all 8 bytes in one
    // read; a byte whose count is n everywhere it occurs (all keys share it) needs no pass.
    std::vector<std::array<uint32_t, 256>> counts(8);
    for (const Entry& x : e)
      for (int d = 0; d < 8; ++d) ++counts[d][(x.hi >> (8 * d)) & 0xff];
    std::vector<Entry> other(n);
    Entry* from = e.data();
    Entry* to = other.data();
    for (int d = 0; d < 8; ++d) {
      std::array<uint32_t, 256>& c = counts[d];
      if (c[(from[0].hi >> (8 * d)) & 0xff] == n) continue;
      uint32_t at = 0;
      for (uint32_t& k : c) at += std::exchange(k, at);
      for (const Entry* x = from; x < from + n; ++x) to[c[(x->hi >> (8 * d)) & 0xff]++] = *x;
      std::swap(from, to);
    }
    if (from != e.data()) std::copy(from, from + n, e.data());
    for (size_t i = 0; i < n;) {
      size_t j = i + 1;
      while (j < n && e[j].hi == e[i].hi) ++j;
      if (j - i > 1) std::sort(e.begin() + static_cast<ptrdiff_t>(i), e.begin() + static_cast<ptrdiff_t>(j), less);
      i = j;
    }
  }
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = e[i].index;
  return order;
}

}  // namespace fld
