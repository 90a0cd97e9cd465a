// Byte order: integers as big-endian bytes (memcmp order), and sorting byte strings (key and row
// encodings) in memcmp order, fast: each string's first 16 bytes as two big-endian integers,
// compared first, so the strings themselves are read only on a tie. Encoded keys of one or two
// columns (an integer's encoding is 9 bytes) never tie there, where a comparison of the strings
// would be a call and a cache miss per step of the sort. Many keys are radix sorted by such a
// prefix (SortByPrefix), compared only where prefixes tie.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
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

// v as 8 big-endian bytes appended to *out (memcmp orders them as the unsigned values; flip the
// sign bit first for signed ones), and back from the 8 bytes at p.
inline void AppendBigEndian64(uint64_t v, std::string* out) {
  const uint64_t be = ByteOrder64(v);
  out->append(reinterpret_cast<const char*>(&be), 8);
}
inline uint64_t BigEndian64At(const char* p) {
  uint64_t be;
  std::memcpy(&be, p, 8);
  return ByteOrder64(be);
}

// The first 16 bytes of s (zero-padded) as two integers in the order of the bytes.
inline void BytePrefix(std::string_view s, uint64_t* hi, uint64_t* lo) {
  uint64_t part[2] = {0, 0};
  for (size_t b = 0; b < 16; ++b) part[b / 8] = (part[b / 8] << 8) | (b < s.size() ? static_cast<uint8_t>(s[b]) : 0);
  *hi = part[0];
  *lo = part[1];
}

// Sorts [lo, hi) by less, given prefix(e): a uint64_t whose order is less's on whatever it
// covers (a key's first 8 bytes, ByteOrder64). From radix_from entries, a stable least-significant
// -digit radix sort of the prefixes, one pass per byte in which they differ (all eight counted in
// one read: integer keys below 2^20 differ in two or three), then each run of equal prefixes by
// less: the fewer the passes, the more it beats a comparison sort's log2(n) rounds. Below, std::sort.
template <typename Entry, typename Prefix, typename Less>
void SortByPrefix(Entry* lo, Entry* hi, Prefix prefix, Less less, size_t radix_from) {
  const size_t n = static_cast<size_t>(hi - lo);
  if (n < radix_from) {
    std::sort(lo, hi, less);
    return;
  }
  std::vector<std::array<size_t, 256>> counts(8);
  for (const Entry* e = lo; e < hi; ++e)
    for (int d = 0; d < 8; ++d) ++counts[d][(prefix(*e) >> (8 * d)) & 0xff];
  std::unique_ptr<Entry[]> spare(new Entry[n]);  // (not zeroed: every entry is written first)
  Entry *from = lo, *to = spare.get();
  for (int d = 0; d < 8; ++d) {
    std::array<size_t, 256>& c = counts[d];
    if (c[(prefix(*lo) >> (8 * d)) & 0xff] == n) continue;  // every prefix has this byte
    size_t at = 0;
    for (size_t& k : c) at += std::exchange(k, at);
    for (const Entry* e = from; e < from + n; ++e) to[c[(prefix(*e) >> (8 * d)) & 0xff]++] = *e;
    std::swap(from, to);
  }
  if (from != lo) std::copy(from, from + n, lo);
  for (Entry* i = lo; i < hi;) {
    Entry* j = i + 1;
    while (j < hi && prefix(*j) == prefix(*i)) ++j;
    if (j - i > 1) std::sort(i, j, less);
    i = j;
  }
}

// Indexes 0..n-1 ordered by key(i) (a string_view) in memcmp order, equal keys by index
// (SortByPrefix of the first 8 bytes from kRadixSortFrom keys on).
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
  SortByPrefix(
      e.data(), e.data() + n, [](const Entry& x) { return x.hi; },
      [&](const Entry& x, const Entry& y) {
        if (x.hi != y.hi) return x.hi < y.hi;
        if (x.lo != y.lo) return x.lo < y.lo;
        const int c = std::string_view(key(x.index)).compare(std::string_view(key(y.index)));
        return c != 0 ? c < 0 : x.index < y.index;
      },
      kRadixSortFrom);
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = e[i].index;
  return order;
}

}  // namespace fld
