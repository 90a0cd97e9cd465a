#include "core/zset/value_multiset.h"

#include <algorithm>

namespace fld {

void ValueMultiset::Add(const Value& v, int64_t w) {
  if (w == 0) return;
  if (compact_ && v.kind == Value::Kind::kInt) {
    if (w == 1 && negative_ == 0) {
      if (pending_.empty()) {
        pending_min_ = pending_max_ = v.i;
      } else {
        pending_min_ = std::min(pending_min_, v.i);
        pending_max_ = std::max(pending_max_, v.i);
      }
      pending_.push_back(v.i);
      return;
    }
    Flush();  // a weight that may turn negative: the trees hold every value from now on
    return AddInt(v.i, w);
  }
  if (compact_ && !v.IsNull()) Spill();
  auto it = other_.try_emplace(v, 0).first;
  it->second += w;
  if (it->second == 0) other_.erase(it);
}

void ValueMultiset::AddAll(const ValueMultiset& o) {
  if (compact_ && o.compact_) {
    for (const auto& [v, w] : o.other_) Add(v, w);  // NULL only
    Value x = Value::Int(0);
    for (const int64_t i : o.pending_) {
      x.i = i;
      Add(x, 1);
    }
    for (const int64_t i : o.ones_) {
      x.i = i;
      Add(x, 1);
    }
    for (const auto& [i, w] : o.ints_) {
      x.i = i;
      Add(x, w);
    }
    return;
  }
  o.ForEach([&](const Value& v, int64_t w) { Add(v, w); });
}

void ValueMultiset::AddInt(int64_t i, int64_t w) {
  // A value of weight 1 is in ones_, any other in ints_ (w is not 0).
  auto it = ints_.empty() ? ints_.end() : ints_.find(i);
  if (it == ints_.end()) {
    if (w == 1) {
      if (ones_.insert(i).second) return;  // new, of weight 1
      ones_.erase(i);                      // 1 + 1
      ints_.emplace(i, 2);
      return;
    }
    if (ones_.erase(i)) {
      if (w != -1) {
        ints_.emplace(i, 1 + w);
        negative_ += 1 + w < 0;
      }
      return;
    }
    ints_.emplace(i, w);
    negative_ += w < 0;
    return;
  }
  negative_ -= it->second < 0;
  it->second += w;
  negative_ += it->second < 0;
  if (it->second == 0) {
    ints_.erase(it);
  } else if (it->second == 1) {
    ints_.erase(it);
    ones_.insert(i);
  }
}

void ValueMultiset::FlushPending() {
  // In ascending order: each insert's path through the B-tree is mostly the last one's.
  std::sort(pending_.begin(), pending_.end());
  for (const int64_t i : pending_) AddInt(i, 1);
  std::vector<int64_t>().swap(pending_);
}

// With values pending no weight is negative: the extremes are those of the trees and the pending.
Value ValueMultiset::FirstPositive() const {
  for (const auto& [v, w] : other_)
    if (w > 0) return v;  // NULL: it sorts first
  const Value t = TreeFirst();
  if (pending_.empty() || (!t.IsNull() && t.i < pending_min_)) return t;
  return Value::Int(pending_min_);
}

Value ValueMultiset::LastPositive() const {
  const Value t = TreeLast();
  if (pending_.empty()) return t;
  if (t.kind == Value::Kind::kInt && t.i > pending_max_) return t;
  return Value::Int(pending_max_);
}

Value ValueMultiset::TreeFirst() const {
  for (const auto& [v, w] : other_)
    if (w > 0) return v;
  for (const auto& [i, w] : ints_) {  // the first positive of ints_, or the first of ones_ before it
    if (!ones_.empty() && *ones_.begin() < i) return Value::Int(*ones_.begin());
    if (w > 0) return Value::Int(i);
  }
  if (!ones_.empty()) return Value::Int(*ones_.begin());
  return Value::Null();
}

Value ValueMultiset::TreeLast() const {
  for (auto it = ints_.rbegin(); it != ints_.rend(); ++it) {
    if (!ones_.empty() && *ones_.rbegin() > it->first) return Value::Int(*ones_.rbegin());
    if (it->second > 0) return Value::Int(it->first);
  }
  if (!ones_.empty()) return Value::Int(*ones_.rbegin());
  for (auto it = other_.rbegin(); it != other_.rend(); ++it)
    if (it->second > 0) return it->first;
  return Value::Null();
}

size_t ValueMultiset::HeapBytes() const {
  // An estimate in constant time: B-tree nodes of 16-byte entries about 3/4 full (a random
  // insertion order; ascending insertions fill them), a red-black tree node is 32 bytes of links
  // and colour plus its pair.
  return pending_.capacity() * sizeof(int64_t) + ones_.size() * 11 + ints_.size() * 22 +
         other_.size() * (32 + sizeof(std::pair<const Value, int64_t>));
}

void ValueMultiset::Spill() {
  Flush();
  compact_ = false;
  for (const int64_t i : ones_) other_.emplace(Value::Int(i), 1);
  for (const auto& [i, w] : ints_) other_.emplace(Value::Int(i), w);
  ones_.clear();
  ints_.clear();
}

}  // namespace fld
