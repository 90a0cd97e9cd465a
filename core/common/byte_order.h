// Byte order: integers as big-endian bytes (memcmp order), and sorting byte strings (key and row
// encodings) in memcmp order, fast: each string's first 16 bytes as two big-endian integers,
// compared first, so the strings themselves are read only on a tie. Encoded keys of one or two
// columns (an integer's encoding is 9 bytes) never tie there, where a comparison of the strings
// would be a call and a cache miss per step of the sort.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string_view>
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

// Indexes 0..n-1 ordered by key(i) (a string_view) in memcmp order, equal keys by index.
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
  std::sort(e.begin(), e.end(), [&](const Entry& x, const Entry& y) {
    if (x.hi != y.hi) return x.hi < y.hi;
    if (x.lo != y.lo) return x.lo < y.lo;
    const int c = std::string_view(key(x.index)).compare(std::string_view(key(y.index)));
    return c != 0 ? c < 0 : x.index < y.index;
  });
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = e[i].index;
  return order;
}

}  // namespace fld
