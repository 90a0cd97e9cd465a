// KeyWeights: byte strings with nonzero integer weights, in byte order (memcmp, a prefix first),
// for the accumulators that keep one group's values: MIN/MAX over strings (ValueMultiset), the
// (key, value) pairs of ARG_MIN/ARG_MAX, ARRAY_AGG and MAP_AGG.
//
// Most groups hold few values, and there are many groups: a B-tree of 10 keys takes three nodes
// (about 800 bytes) and its first key is a walk from the root. So a set of up to kSmall keys is a
// sorted array of (InlineKey, weight) entries, 32 bytes each (its capacity grown by
// NextSmallCapacity); past kSmall it moves into an absl::btree_set of the same entries for good
// (an insert into the array moves the entries after it, which stays cheap only while the array
// is short). Keys are InlineKeys (core/zset/order_key.h): up to 23 bytes inline, longer ones on
// the heap.
//
// A weight that reaches 0 removes its key, so every key held has a nonzero weight; weights may
// be negative (a retraction seen before its insertion).
#pragma once

#include <absl/container/btree_set.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "core/zset/order_key.h"

namespace fld {

// The capacity after `cap` of an array holding one group's values (KeyWeights' entries,
// ValueMultiset's pending integers): 2, 4, then by 2 up to 16, then by half. Most groups hold a
// handful of values, where doubling (or growing by half) would leave several slots unused in
// every group (10 values in 12 or 16); a step of 2 leaves at most one.
inline size_t NextSmallCapacity(size_t cap) {
  return cap < 4 ? std::max<size_t>(2, cap * 2) : cap < 16 ? cap + 2 : cap + cap / 2;
}

class KeyWeights {
 public:
  struct Entry {
    InlineKey key;
    mutable int64_t weight;  // mutable: the B-tree's entries are const, their weights are not
  };
  static constexpr size_t kSmall = 64;

  KeyWeights() = default;
  KeyWeights(KeyWeights&& o) noexcept
      : small_(std::move(o.small_)), tree_(std::move(o.tree_)), heap_(std::exchange(o.heap_, 0)) {}
  KeyWeights& operator=(KeyWeights&& o) noexcept {
    small_ = std::move(o.small_);
    tree_ = std::move(o.tree_);
    heap_ = std::exchange(o.heap_, 0);
    return *this;
  }
  KeyWeights(const KeyWeights& o)
      : small_(o.small_),
        tree_(o.tree_ ? std::make_unique<absl::btree_set<Entry, Less>>(*o.tree_) : nullptr),
        heap_(o.heap_) {}
  KeyWeights& operator=(const KeyWeights& o) {
    if (this != &o) *this = KeyWeights(o);
    return *this;
  }

  // Adds w to key's weight; a key whose weight reaches 0 is removed.
  void Add(std::string_view key, int64_t w);
  size_t size() const { return tree_ ? tree_->size() : small_.size(); }
  bool empty() const { return size() == 0; }
  void clear() {
    small_ = {};
    tree_.reset();
    heap_ = 0;
  }
  // Asks the CPU to fetch what FirstPositive and LastPositive read first (of an array: its first
  // and last entries).
  void Prefetch() const {
    if (tree_ || small_.empty()) return;
    __builtin_prefetch(small_.data());
    __builtin_prefetch(small_.data() + small_.size() - 1);
  }
  // Heap bytes held: the array's capacity or the tree's entries with its slack, and long keys.
  size_t HeapBytes() const;

  // f(const InlineKey&, int64_t weight) for each key, ascending.
  template <class F>
  void ForEach(F&& f) const {
    if (tree_) {
      for (const Entry& e : *tree_) f(e.key, e.weight);
    } else {
      for (const Entry& e : small_) f(e.key, e.weight);
    }
  }
  // The first key (in ascending order) at or after `from` whose weight is positive, and the
  // last one; null when there is none.
  const InlineKey* FirstPositive(std::string_view from = {}) const;
  const InlineKey* LastPositive() const;

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
  // Moves the array's entries into the tree.
  void ToTree();

  std::vector<Entry> small_;  // sorted by key, while tree_ is null
  std::unique_ptr<absl::btree_set<Entry, Less>> tree_;
  size_t heap_ = 0;  // heap bytes of the long keys (InlineKeyHeapBytes)
};

}  // namespace fld
