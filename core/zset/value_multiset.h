// ValueMultiset: SQL values with integer weights, kept in Value order (core/types/types.h), for
// the accumulators that need every value rather than a running sum: MIN, MAX, the DISTINCT
// aggregates, STDDEV/VARIANCE of wide decimals.
//
// Most groups hold a few values, and there are millions of groups, so a set is two words: a
// small one (up to kSmallValues values of one kind besides NULL) is a KeyWeights
// (core/zset/key_weights.h), one packed buffer whose entries are the values' encodings, in
// Value order: NULL as the empty key, then a tag byte saying the kind and the value's ordered
// bytes less the zero bytes order does not need: an integer in 1 to 9 bytes with its tag (its
// order key part: AppendOrderKeyInt), a double in 1 to 9 (its ordered bits less their trailing
// zero bytes: an integral one below 2^12 in magnitude keeps 3 after the tag), a string as its
// bytes after the tag; each entry adds a length and a weight byte. Reading the extremes is one
// miss to the buffer. A larger set, or one given a value of a second kind
// or a negative zero (its spelling is kept, see below), moves into a LargeValueMultiset until
// it empties:
//   - integers (every INTEGER, BIGINT, narrow DECIMAL, DATE, TIMESTAMP, BOOLEAN value:
//     Value::kInt) in B-trees: those of weight 1 (most: a MAX over an append-only input holds
//     nothing else) as 8-byte values (absl::btree_set, about 10 bytes a value), the others as
//     16-byte (value, weight) entries (absl::btree_map, about 20); a value is in one of the two;
//   - doubles as integers, in the same trees: the bits of the value (-0.0 written as 0.0, every
//     NaN as one NaN) mapped to an integer that orders as Value orders doubles (NaN last). Zero
//     keeps the spelling it first arrived with, as a map keyed by Value would;
//   - strings as (bytes, weight) entries of a KeyWeights.
// A Value in a red-black tree node would take 100 bytes. NULL is kept apart with its weight. A
// set given values of two kinds (no column gives them) moves everything into a
// std::map<Value, int64_t> for good: kinds compare across each other there.
//
// A weight that reaches 0 removes its value, so every value held has a nonzero weight; weights
// may be negative (a retraction seen before its insertion).
//
// In a large set, integers added with weight 1 while no weight is negative (an append-only
// input's, all of them) wait unsorted in a vector, with their minimum and maximum, until
// something needs them in order or a weight other than 1 arrives: a B-tree insert took 80 ns,
// a MAX over 10M bids spent 13% of its time there, and MIN and MAX read only the extremes.
// Readers that walk the values (ForEach, size, a checkpoint) sort them and merge them with the
// trees as they go.
#pragma once

#include <absl/container/btree_map.h>
#include <absl/container/btree_set.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "core/common/boxed.h"
#include "core/types/types.h"
#include "core/zset/key_weights.h"
#include "core/zset/order_key.h"

namespace fld {

struct Column;

// The capacity after `cap` of the pending integers of one group's values: 2, 4, then by 2 up
// to 16, then by half. Most groups hold a handful of values, where doubling (or growing by half)
// would leave several slots unused in every group (10 values in 12 or 16); a step of 2 leaves at
// most one.
inline size_t NextSmallCapacity(size_t cap) {
  return cap < 4 ? std::max<size_t>(2, cap * 2) : cap < 16 ? cap + 2 : cap + cap / 2;
}

class LargeValueMultiset {
 public:
  // Adds w to v's weight (w may be negative); a value whose weight reaches 0 is removed.
  void Add(const Value& v, int64_t w);
  // Adds every value of `o` with its weight.
  void AddAll(const LargeValueMultiset& o);
  size_t size() const {
    size_t n = other().size() + strings_.size();
    if (pending_.empty()) return n + trees().ones.size() + trees().ints.size();
    ForEachInt([&](int64_t, int64_t) { ++n; });
    return n;
  }
  bool empty() const { return other().empty() && !HoldsValues(); }
  // Calls f(const Value&, int64_t weight) for each value, in ascending Value order.
  template <class F>
  void ForEach(F&& f) const {
    for (const auto& [v, w] : other()) f(v, w);  // unless mixed, only NULL: it sorts first
    if (form_ == Form::kDoubles) {
      ForEachInt([&](int64_t i, int64_t w) { f(static_cast<const Value&>(DoubleOf(i)), w); });
    } else {
      Value x = Value::Int(0);
      ForEachInt([&](int64_t i, int64_t w) {
        x.i = i;
        f(static_cast<const Value&>(x), w);
      });
    }
    strings_.ForEach([&](std::string_view k, int64_t w) { f(Value::String(std::string(k)), w); });
  }
  // The smallest (largest) value whose weight is positive; NULL when there is none.
  Value FirstPositive() const;
  Value LastPositive() const;
  // Asks the CPU to fetch what adding a value and reading the extremes touch first.
  void Prefetch() const {
    strings_.Prefetch();
    if (!pending_.empty()) fld::Prefetch(pending_.data() + pending_.size() - 1);
  }
  // Heap bytes held (B-tree nodes, tree nodes; strings' own buffers not counted).
  size_t HeapBytes() const;

 private:
  // The form the values other than NULL are kept in: that of the kind of the first one, until a
  // value of another kind arrives (kMixed: all in other_).
  enum class Form : uint8_t { kInts, kDoubles, kStrings, kMixed };
  static Form FormOf(Value::Kind k) {
    return k == Value::Kind::kInt ? Form::kInts : k == Value::Kind::kDouble ? Form::kDoubles : Form::kStrings;
  }
  // Values other than NULL held (outside other_).
  bool HoldsValues() const {
    return !pending_.empty() || !trees().ones.empty() || !trees().ints.empty() || !strings_.empty();
  }
  // Adds w to integer i's weight (kInts; kDoubles: i a DoubleKey), through pending_ when it can.
  void AddKey(int64_t i, int64_t w);
  void AddInt(int64_t i, int64_t w);  // into the trees
  void AddDouble(double d, int64_t w);
  // A double as the integer the trees hold it as: its bits (-0.0 as 0.0, every NaN as one NaN)
  // mapped so that integers order as Value orders the doubles. DoubleOf is the value back (zero
  // in its spelling).
  static int64_t DoubleKey(double d);
  Value DoubleOf(int64_t key) const;
  // Inserts the pending integers into the trees.
  void Flush() {
    if (!pending_.empty()) FlushPending();
  }
  void FlushPending();
  // f(value, weight) for each integer value (kInts, kDoubles), ascending: the trees' and the
  // pending merged (sorting pending_ in place: the readers leave what is held, and so HeapBytes,
  // as it was).
  template <class F>
  void ForEachInt(F&& f) const {
    if (form_ != Form::kInts && form_ != Form::kDoubles) return;
    // (A checkpoint reads size, then ForEach: the second finds the values sorted already.)
    if (!std::is_sorted(pending_.begin(), pending_.end())) std::sort(pending_.begin(), pending_.end());
    const IntTrees& t = trees();
    auto one = t.ones.begin();
    auto in = t.ints.begin();
    auto p = pending_.begin();
    for (;;) {
      int64_t v = INT64_MAX;
      bool any = false;
      if (one != t.ones.end()) v = *one, any = true;
      if (in != t.ints.end() && (!any || in->first < v)) v = in->first, any = true;
      if (p != pending_.end() && (!any || *p < v)) v = *p, any = true;
      if (!any) return;
      int64_t w = 0;
      if (one != t.ones.end() && *one == v) ++w, ++one;  // ones and ints hold different values
      if (in != t.ints.end() && in->first == v) w += in->second, ++in;
      for (; p != pending_.end() && *p == v; ++p) ++w;
      f(v, w);  // not 0: pending values come only while no weight is negative
    }
  }
  // Moves every value into other_: from now on every value is kept there.
  void ToMixed();
  // FirstPositive, LastPositive over the integer trees alone, as integers (NULL when none).
  Value TreeFirst() const;
  Value TreeLast() const;

  Form form_ = Form::kInts;
  bool negative_zero_ = false;  // kDoubles: whether zero (zero_weight_ != 0) is held as -0.0
  // kInts, kDoubles: the integer values of weight 1 (ones), the others (ints), and how many of
  // those have a negative weight. Made when the first value leaves pending_: a set that only
  // ever had inserts of weight 1 needs none.
  struct IntTrees {
    absl::btree_set<int64_t> ones;
    absl::btree_map<int64_t, int64_t> ints;
    size_t negative = 0;
  };
  const IntTrees& trees() const {
    static const IntTrees kNone;
    return trees_ ? *trees_.get() : kNone;
  }
  const std::map<Value, int64_t>& other() const {
    static const std::map<Value, int64_t> kNone;
    return other_ ? *other_.get() : kNone;
  }
  Boxed<IntTrees> trees_;
  // While kInts or kDoubles and no weight is negative: integers of weight 1 each not yet in the trees (a value may
  // be there already, or here twice), with their minimum and maximum. mutable: readers sort it.
  mutable std::vector<int64_t> pending_;
  int64_t pending_min_ = 0, pending_max_ = 0;
  int64_t zero_weight_ = 0;                // kDoubles: the weight of zero (0: not held)
  KeyWeights strings_;                     // kStrings: bytes -> weight
  Boxed<std::map<Value, int64_t>> other_;  // NULL; kMixed: every value (made when one arrives)
};

class ValueMultiset {
 public:
  // The most values a small set holds.
  static constexpr size_t kSmallValues = 32;

  // The set as two words, for a record that keeps it in its own bytes: Release leaves the set
  // empty and the words own what it held; Adopt is a set owning released words' contents.
  struct Words {
    uintptr_t small;
    LargeValueMultiset* large;
  };
  Words Release() { return {small_.Release(), large_.release()}; }
  static ValueMultiset Adopt(Words w) {
    ValueMultiset s;
    s.small_ = KeyWeights::Adopt(w.small);
    s.large_ = Boxed<LargeValueMultiset>::Adopt(w.large);
    return s;
  }

  // Adds w to v's weight (w may be negative); a value whose weight reaches 0 is removed.
  void Add(const Value& v, int64_t w);
  // The same for the value of row r of column c (a batch's), without making a Value of it
  // while the set is small.
  void Add(const Column& c, size_t r, int64_t w);
  // Adds every value of `o` with its weight.
  void AddAll(const ValueMultiset& o);
  size_t size() const { return large_ ? large_.get()->size() : small_.size(); }
  bool empty() const { return large_ ? large_.get()->empty() : small_.empty(); }
  // Calls f(const Value&, int64_t weight) for each value, in ascending Value order.
  template <class F>
  void ForEach(F&& f) const {
    if (large_) return large_.get()->ForEach(f);
    Value v;
    small_.ForEach([&](std::string_view k, int64_t w) {
      DecodeSmall(k, &v);
      f(static_cast<const Value&>(v), w);
    });
  }
  // The smallest (largest) value whose weight is positive; NULL when there is none.
  Value FirstPositive() const;
  Value LastPositive() const;
  // Asks the CPU to fetch what adding a value and reading the extremes touch first.
  void Prefetch() const {
    if (large_)
      large_.get()->Prefetch();
    else
      small_.Prefetch();
  }
  // Heap bytes held (the small set's buffer; a large set's object, B-tree and tree nodes, its
  // strings' buffers not counted).
  size_t HeapBytes() const {
    return large_ ? sizeof(LargeValueMultiset) + large_.get()->HeapBytes() : small_.HeapBytes();
  }

 private:
  // A small set's key of value v, into *key; false when no small set can hold v (-0.0, whose
  // spelling the large form keeps).
  static bool EncodeSmall(const Value& v, std::string* key);
  // The same for a non-NULL value given as its kind and its field of that kind.
  static bool EncodeSmall(Value::Kind kind, int64_t i, double d, std::string_view s, std::string* key);
  static void DecodeSmall(std::string_view key, Value* v);
  // Adds w to the weight of the small set's key when the set stays small with it (of the kind
  // it holds, within its limits); else false, and the set is unchanged.
  bool AddSmall(std::string_view key, int64_t w);
  // Moves the values into large_ (for good).
  void ToLarge();

  KeyWeights small_;                 // while large_ is null: the values' encodings
  Boxed<LargeValueMultiset> large_;  // a large set
};

}  // namespace fld
