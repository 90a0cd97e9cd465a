// Order keys: a row encoded so that comparing the bytes (memcmp order, std::string's <) orders
// rows as an ORDER BY does, for state kept sorted (top-K), without a comparator that decodes.
//
// A row's order key is, per sort key in turn, its column's value (sort part), then the row's
// other columns ascending, in column order (the tie-break: rows equal on the sort keys, equal in
// those columns, sort by the whole row, as SortedRowLess in core/operators/topk.h does, so the
// order is total and the same on every run; a sort key's column is not written twice).
// Each value is a tag byte, then for a non-NULL value its bytes:
//   - tag: NULL 0x00 in the tie-break, and in the sort part 0x00 with NULLS FIRST, 0xff with
//     NULLS LAST; a non-NULL double or string 0x01, an integer its own (below), all strictly
//     between (so NULL placement does not depend on ASC / DESC);
//   - integer: a tag of its sign and length (0x09 + n for a value >= 0 of n significant bytes,
//     0x09 - n for a negative one whose complement has n: 0x01 to 0x11, for DESC inverted), then
//     its n low bytes big-endian: 1 to 9 bytes, a small integer few;
//   - double: the 8 bytes big-endian of its bits with the sign bit flipped when positive, all
//     bits flipped when negative; -0.0 is written as 0.0 and every NaN as one NaN, which sorts
//     after +infinity (the order of Value's <=>, under which those are equal);
//   - string: its bytes with each 0x00 written 0x00 0xFF, then 0x00 0x00 (no key is a prefix
//     of another, so bytes order as the strings do);
//   - DESC: the value's bytes (not a NULL's or a double's or string's tag) inverted.
// Rows whose keys are byte-equal are equal under that order, and the other way round; the row
// comes back from the key (RowOfOrderKey), given the columns' physical types.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/types/types.h"

namespace fld {

struct Batch;
struct Column;

// One ORDER BY key: a column, its direction and where its NULLs go.
struct SortKey {
  int column = 0;
  bool desc = false;
  bool nulls_first = true;
};

// Appends the order key of row r of b (all its columns) to *out.
void AppendOrderKey(std::span<const SortKey> keys, const Batch& b, size_t r, std::string* out);
// The same for the row made of row r of `cols` (a row's columns taken from wherever they are).
void AppendOrderKey(std::span<const SortKey> keys, std::span<const Column* const> cols, size_t r, std::string* out);
// -1, 0, 1 as the one-column order keys (NULL first, ascending) of c[i] and c[j] compare, without
// writing them: integers, doubles as Value orders them (-0.0 equal to 0.0, NaN last), strings by
// their bytes.
int CompareCellsAsOrderKeys(const Column& c, size_t i, size_t j);
// The same for a row of values (one per column, of the columns' physical types, or NULL).
void AppendOrderKey(std::span<const SortKey> keys, const std::vector<Value>& row, std::string* out);
// The length of an order key's sort part; `types` are the columns' physical types. The key must
// be one AppendOrderKey wrote for these sort keys and types (state in memory). Peers (rows equal
// on the sort keys) have byte-equal sort parts, and among peers the rest of the key (the
// tie-break part) orders rows by memcmp as std::vector<Value>'s < does.
size_t OrderKeySortBytes(std::string_view key, std::span<const SortKey> keys, std::span<const PhysType> types);
// The row an order key holds.
std::vector<Value> RowOfOrderKey(std::string_view key, std::span<const SortKey> keys, std::span<const PhysType> types);
// The same into *row (resized to the columns; its strings' buffers are reused).
void RowOfOrderKeyInto(std::string_view key, std::span<const SortKey> keys, std::span<const PhysType> types,
                       std::vector<Value>* row);

// One integer's order key part alone, ascending: its tag (0x01 to 0x11, sign and length) and its
// significant bytes, 1 to 9 bytes in all, appended to *out; ReadOrderKeyInt reads one back from
// p (starting at its tag) into *v and returns its bytes. For keys that hold integers and say
// their kind themselves (a small ValueMultiset's).
void AppendOrderKeyInt(int64_t v, std::string* out);
size_t ReadOrderKeyInt(const char* p, int64_t* v);
// Whether c is the tag of such an integer.
inline bool IsOrderKeyIntTag(char c) {
  return c >= 0x01 && c <= 0x11;
}

// A byte string for the keys of B-trees of order keys: up to 23 bytes inline (24 bytes in all,
// a tree slot and its comparisons touching no other memory), longer ones on the heap.
class InlineKey {
 public:
  InlineKey() { std::memset(rep_, 0, sizeof(rep_)); }
  explicit InlineKey(std::string_view s);
  InlineKey(const InlineKey& o) : InlineKey(o.view()) {}
  InlineKey(InlineKey&& o) noexcept {
    std::memcpy(rep_, o.rep_, sizeof(rep_));
    std::memset(o.rep_, 0, sizeof(o.rep_));
  }
  InlineKey& operator=(const InlineKey& o) {
    if (this != &o) *this = InlineKey(o.view());
    return *this;
  }
  InlineKey& operator=(InlineKey&& o) noexcept {
    if (this != &o) {
      Free();
      std::memcpy(rep_, o.rep_, sizeof(rep_));
      std::memset(o.rep_, 0, sizeof(o.rep_));
    }
    return *this;
  }
  ~InlineKey() { Free(); }
  std::string_view view() const { return ViewAt(rep_); }
  // Heap bytes held (0 when inline).
  size_t HeapBytes() const { return HeapBytesAt(rep_); }

  // An InlineKey's kBytes kept in other memory (a field of a fixed-width record), which then
  // owns what they point to. 24 zero bytes are the empty key.
  static constexpr size_t kBytes = 24;
  static std::string_view ViewAt(const char* at) {
    const auto n = static_cast<unsigned char>(at[kInline]);
    if (n != kHeap) return {at, n};
    const char* p;
    uint64_t size;
    std::memcpy(&p, at, 8);
    std::memcpy(&size, at + 8, 8);
    return {p, size};
  }
  static size_t HeapBytesAt(const char* at) {
    return static_cast<unsigned char>(at[kInline]) == kHeap ? ViewAt(at).size() : 0;
  }
  // Writes s's bytes at `at`, over what is there, without freeing it (the caller frees it, or
  // another copy of those bytes owns it).
  static void PlaceAt(char* at, std::string_view s) {
    InlineKey k(s);
    std::memcpy(at, k.rep_, kBytes);
    std::memset(k.rep_, 0, kBytes);
  }
  // Frees the heap bytes of the key at `at` and leaves the empty key there.
  static void FreeAt(char* at) {
    InlineKey k;
    std::memcpy(k.rep_, at, kBytes);  // k owns them now
    std::memset(at, 0, kBytes);
  }
  // < 0, 0, > 0 as the bytes compare (memcmp order, a prefix first). Two inline keys are
  // compared on their first 8 bytes first, in registers: their unused bytes are zero, so a
  // difference there is the keys' (a byte past the end of one is 0, which is where the shorter
  // one sorts first anyway, or equal to the other's, and the whole keys decide).
  int Compare(const InlineKey& o) const {
    if (static_cast<unsigned char>(rep_[kInline]) != kHeap && static_cast<unsigned char>(o.rep_[kInline]) != kHeap) {
      uint64_t x, y;
      std::memcpy(&x, rep_, 8);
      std::memcpy(&y, o.rep_, 8);
      if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
    }
    return view().compare(o.view());
  }

 private:
  static constexpr size_t kInline = 23;
  static constexpr unsigned char kHeap = 0xff;  // in rep_[kInline]: rep_ holds a pointer and a size
  void Free() {
    if (static_cast<unsigned char>(rep_[kInline]) != kHeap) return;
    char* p;
    std::memcpy(&p, rep_, 8);
    delete[] p;
  }
  alignas(8) char rep_[kInline + 1];
};

// Memory estimates for B-trees of InlineKeys to 8-byte weights: an entry with the tree's slack,
// about, and the heap bytes a key of n bytes holds (none when inline, else malloc's chunk).
inline constexpr size_t kInlineKeyEntryBytes = 48;
inline size_t InlineKeyHeapBytes(size_t n) {
  return n <= 23 ? 0 : (n + 8 + 15) & ~size_t{15};
}

// Adds w to the weight of `key` in a B-tree of InlineKeys to weights (`rows`), erasing the key
// when its weight reaches 0; *heap counts the heap bytes of the tree's long keys
// (InlineKeyHeapBytes). The key is looked up as an InlineKey: compared in registers.
template <typename Rows>
void AddKeyWeight(Rows* rows, std::string_view key, int64_t w, size_t* heap) {
  InlineKey k(key);
  auto it = rows->find(k);
  if (it == rows->end()) {
    it = rows->emplace(std::move(k), 0).first;
    *heap += InlineKeyHeapBytes(key.size());
  }
  it->second += w;
  if (it->second != 0) return;
  *heap -= InlineKeyHeapBytes(key.size());
  rows->erase(it);
}

// A double's bits mapped to an unsigned integer that orders as Value orders doubles: -0.0 as
// 0.0, every NaN as one NaN after +infinity (the bytes order keys write, big-endian). And back.
uint64_t OrderedDoubleBits(double d);
double DoubleOfOrderedBits(uint64_t v);

// Orders InlineKeys (and string views) by their bytes, as memcmp does.
struct InlineKeyLess {
  using is_transparent = void;
  static std::string_view View(const InlineKey& k) { return k.view(); }
  static std::string_view View(std::string_view s) { return s; }
  bool operator()(const InlineKey& a, const InlineKey& b) const { return a.Compare(b) < 0; }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return View(a) < View(b);
  }
};

}  // namespace fld
