#include "core/zset/value_multiset.h"

namespace fld {

void ValueMultiset::Add(const Value& v, int64_t w) {
  if (w == 0) return;
  if (compact_ && v.kind == Value::Kind::kInt) return AddInt(v.i, w);
  if (compact_ && !v.IsNull()) Spill();
  auto it = other_.try_emplace(v, 0).first;
  it->second += w;
  if (it->second == 0) other_.erase(it);
}

void ValueMultiset::AddAll(const ValueMultiset& o) {
  if (compact_ && o.compact_) {
    for (const auto& [v, w] : o.other_) Add(v, w);  // NULL only
    for (const int64_t i : o.ones_) AddInt(i, 1);
    for (const auto& [i, w] : o.ints_) AddInt(i, w);
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
      if (w != -1) ints_.emplace(i, 1 + w);
      return;
    }
    ints_.emplace(i, w);
    return;
  }
  it->second += w;
  if (it->second == 0) {
    ints_.erase(it);
  } else if (it->second == 1) {
    ints_.erase(it);
    ones_.insert(i);
  }
}

Value ValueMultiset::FirstPositive() const {
  for (const auto& [v, w] : other_)
    if (w > 0) return v;
  for (const auto& [i, w] : ints_) {  // the first positive of ints_, or the first of ones_ before it
    if (!ones_.empty() && *ones_.begin() < i) return Value::Int(*ones_.begin());
    if (w > 0) return Value::Int(i);
  }
  if (!ones_.empty()) return Value::Int(*ones_.begin());
  return Value::Null();
}

Value ValueMultiset::LastPositive() const {
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
  return ones_.size() * 11 + ints_.size() * 22 + other_.size() * (32 + sizeof(std::pair<const Value, int64_t>));
}

void ValueMultiset::Spill() {
  compact_ = false;
  for (const int64_t i : ones_) other_.emplace(Value::Int(i), 1);
  for (const auto& [i, w] : ints_) other_.emplace(Value::Int(i), w);
  ones_.clear();
  ints_.clear();
}

}  // namespace fld
