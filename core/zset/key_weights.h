// KeyWeights: byte strings with nonzero integer weights, in byte order (memcmp, a prefix first),
// for the accumulators that keep one group's values: MIN/MAX over strings (ValueMultiset), the
// (key, value) pairs of ARG_MIN/ARG_MAX, ARRAY_AGG and MAP_AGG.
//
// Most groups hold few values, and there are many groups: a B-tree of 10 keys takes three nodes
// (about 800 bytes) and its first key is a walk from the root. So a small set (up to kSmall keys
// in up to kSmallBytes) is one packed buffer of entries in key order, each its key's length (a
// varint), its bytes and its weight (a zigzag varint: 1 byte for most): 9 bytes for a 7-byte
// key where a fixed-size entry took 32. Its capacity grows by a quarter, to what malloc gives.
// Lookups scan it from the start, which stays cheap while it is short; where the last entry
// starts is kept, so the largest key and a key above it (rising keys) need no scan. Past the
// limits it moves into an absl::btree_set of (InlineKey, weight) entries until it empties
// (InlineKey: core/zset/order_key.h, up to 23 bytes inline, longer ones on the heap).
// The set itself is one word (null, the buffer, or the tree): the buffer starts with its own
// sizes, so that a set can sit in a group's record and a group's values are one miss away.
//
// A weight that reaches 0 removes its key, so every key held has a nonzero weight; weights may
// be negative (a retraction seen before its insertion).
#pragma once

#include <absl/container/btree_set.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "core/common/prefetch.h"
#include "core/zset/order_key.h"

namespace fld {

class KeyWeights {
 public:
  struct Entry {  // of the B-tree
    InlineKey key;
    mutable int64_t weight;  // mutable: the B-tree's entries are const, their weights are not
  };
  static constexpr size_t kSmall = 64, kSmallBytes = 2048;

  KeyWeights() = default;
  ~KeyWeights() {
    if (rep_ != 0) Free();  // (most sets a step destroys were moved from: nothing to free)
  }
  KeyWeights(KeyWeights&& o) noexcept : rep_(std::exchange(o.rep_, 0)) {}
  KeyWeights& operator=(KeyWeights&& o) noexcept {
    if (this != &o) {
      if (rep_ != 0) Free();
      rep_ = std::exchange(o.rep_, 0);
    }
    return *this;
  }
  KeyWeights(const KeyWeights& o);
  KeyWeights& operator=(const KeyWeights& o) {
    if (this != &o) *this = KeyWeights(o);
    return *this;
  }

  // The set as one word, for a record that keeps it in its own bytes: Release leaves the set
  // empty and the word owns what it held; Adopt is a set owning a released word's contents.
  uintptr_t Release() { return std::exchange(rep_, 0); }
  static KeyWeights Adopt(uintptr_t word) {
    KeyWeights k;
    k.rep_ = word;
    return k;
  }

  // Adds w to key's weight; a key whose weight reaches 0 is removed.
  void Add(std::string_view key, int64_t w);
  size_t size() const;
  bool empty() const { return rep_ == 0; }
  void clear() { *this = KeyWeights(); }
  // Asks the CPU to fetch what Add, FirstPositive and LastPositive read (a buffer's lines, up
  // to 8 of them; a tree's root), without reading the set's memory.
  void Prefetch() const {
    if (rep_ == 0) return;
    const char* p = reinterpret_cast<const char*>(head());  // (or the tree: the same bits)
    const int lines = tree() ? 1 : static_cast<int>((rep_ >> 1) & 7) + 1;
    for (int i = 0; i < lines; ++i) fld::Prefetch(p + 64 * i);
  }
  // Heap bytes held: the buffer's capacity, or the tree's entries with its slack and long keys.
  size_t HeapBytes() const;

  // f(std::string_view key, int64_t weight) for each key, ascending.
  template <class F>
  void ForEach(F&& f) const {
    if (rep_ == 0) return;
    if (const Tree* t = tree()) {
      for (const Entry& e : t->set) f(e.key.view(), e.weight);
      return;
    }
    for (uint32_t at = 0, used = head()->used; at < used;) {
      const Packed e = Decode(at);
      f(e.key, e.weight);
      at = e.end;
    }
  }
  // The first key (in ascending order) at or after `from` whose weight is positive, and the
  // last one; nullopt when there is none. Valid until the set changes.
  std::optional<std::string_view> FirstPositive(std::string_view from = {}) const;
  std::optional<std::string_view> LastPositive() const;
  // The last key whatever its weight (the set must not be empty).
  std::string_view LastKey() const;
  // Whether a new key of n bytes, whatever its weight, would leave the set packed (not a
  // B-tree).
  bool PacksAnother(size_t n) const;

 private:
  struct Less {
    using is_transparent = void;
    static std::string_view View(const Entry& e) { return e.key.view(); }
    static std::string_view View(std::string_view s) { return s; }
    bool operator()(const Entry& a, const Entry& b) const { return a.key.Compare(b.key) < 0; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return View(a) < View(b);
    }
  };
  // The start of a packed buffer (malloc), before its entries: offsets count from the first
  // entry, so that the buffer holds at most kSmallBytes of them (and 9 bytes more a key when
  // weights grow).
  struct Header {
    uint16_t used;   // bytes of entries
    uint16_t cap;    // bytes of entries the allocation has room for
    uint16_t count;  // entries
    uint16_t last;   // where the last one starts
  };
  struct Tree {
    absl::btree_set<Entry, Less> set;
    size_t heap = 0;  // heap bytes of the long keys (InlineKeyHeapBytes)
  };
  // One entry of the buffer, decoded: its key, weight, where its weight starts and where the
  // next entry starts.
  struct Packed {
    std::string_view key;
    int64_t weight;
    uint32_t weight_at, end;
  };
  Header* head() const { return reinterpret_cast<Header*>(rep_ & ~uintptr_t{15}); }
  char* entries() const { return reinterpret_cast<char*>(head()) + sizeof(Header); }
  // The word of buffer h: its address, and in bits 1 to 3 the cache lines it spans less one (at
  // most 8, for Prefetch).
  static uintptr_t BufferWord(Header* h);
  Tree* tree() const { return (rep_ & 1) != 0 ? reinterpret_cast<Tree*>(rep_ - 1) : nullptr; }
  Packed Decode(uint32_t at) const;
  // Whether a buffer of `count` entries in `used` bytes stays packed with a new entry of `bytes`
  // (Add's rule; past it the set becomes a B-tree).
  static bool Packs(size_t count, size_t used, size_t bytes) { return count < kSmall && used + bytes <= kSmallBytes; }
  // Moves the buffer's entries into the tree.
  void ToTree();
  void Free();

  // 0 while empty; else a packed buffer (a Header, then the entries in key order: BufferWord),
  // or a Tree with the low bit set. One word: a set lives in every group's MIN/MAX and pair
  // accumulator.
  uintptr_t rep_ = 0;
};

}  // namespace fld
