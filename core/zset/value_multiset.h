// ValueMultiset: SQL values with integer weights, kept in Value order (core/types/types.h), for
// the accumulators that need every value rather than a running sum: MIN, MAX, the DISTINCT
// aggregates, STDDEV/VARIANCE of wide decimals.
//
// Integers (every INTEGER, BIGINT, narrow DECIMAL, DATE, TIMESTAMP, BOOLEAN value: Value::kInt)
// are kept in B-trees: those of weight 1 (most: a MAX over an append-only input holds nothing
// else) as 8-byte values (absl::btree_set, about 10 bytes a value), the others as 16-byte
// (value, weight) entries (absl::btree_map, about 20); a value is in one of the two. A Value in a
// red-black tree node would take 100 bytes. NULL is kept apart with its
// weight. Once a value of another kind arrives (a double or a string), the set moves everything
// into a std::map<Value, int64_t> for good: those kinds compare across kinds and keep their first
// spelling (a double -0.0 and 0.0 are one value), which an integer key cannot.
//
// A weight that reaches 0 removes its value, so every value held has a nonzero weight; weights
// may be negative (a retraction seen before its insertion).
#pragma once

#include <absl/container/btree_map.h>
#include <absl/container/btree_set.h>

#include <cstddef>
#include <cstdint>
#include <map>

#include "core/types/types.h"

namespace fld {

class ValueMultiset {
 public:
  // Adds w to v's weight (w may be negative); a value whose weight reaches 0 is removed.
  void Add(const Value& v, int64_t w);
  // Adds every value of `o` with its weight.
  void AddAll(const ValueMultiset& o);
  size_t size() const { return ones_.size() + ints_.size() + other_.size(); }
  bool empty() const { return ones_.empty() && ints_.empty() && other_.empty(); }
  // Calls f(const Value&, int64_t weight) for each value, in ascending Value order.
  template <class F>
  void ForEach(F&& f) const {
    for (const auto& [v, w] : other_) f(v, w);  // with integers held, only NULL: it sorts first
    if (ints_.empty() && ones_.empty()) return;
    Value x = Value::Int(0);
    auto one = ones_.begin();
    for (const auto& [i, w] : ints_) {  // merged with ones_ (the two hold different values)
      for (; one != ones_.end() && *one < i; ++one) {
        x.i = *one;
        f(static_cast<const Value&>(x), int64_t{1});
      }
      x.i = i;
      f(static_cast<const Value&>(x), w);
    }
    for (; one != ones_.end(); ++one) {
      x.i = *one;
      f(static_cast<const Value&>(x), int64_t{1});
    }
  }
  // The smallest (largest) value whose weight is positive; NULL when there is none.
  Value FirstPositive() const;
  Value LastPositive() const;
  // Heap bytes held (B-tree nodes, tree nodes; strings' own buffers not counted).
  size_t HeapBytes() const;

 private:
  void AddInt(int64_t i, int64_t w);  // while compact_
  // Moves the integers into other_: from now on every value is kept there.
  void Spill();

  absl::btree_set<int64_t> ones_;           // while compact_: the integer values of weight 1
  absl::btree_map<int64_t, int64_t> ints_;  // while compact_: the other integer values
  std::map<Value, int64_t> other_;          // while compact_: NULL only; after: every value
  bool compact_ = true;
};

}  // namespace fld
