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
    for (const auto& [i, w] : o.ints_) AddInt(i, w);
    return;
  }
  o.ForEach([&](const Value& v, int64_t w) { Add(v, w); });
}

void ValueMultiset::AddInt(int64_t i, int64_t w) {
  auto it = ints_.try_emplace(i, 0).first;
  it->second += w;
  if (it->second == 0) ints_.erase(it);
}

Value ValueMultiset::FirstPositive() const {
  for (const auto& [v, w] : other_)
    if (w > 0) return v;
  for (const auto& [i, w] : ints_)
    if (w > 0) return Value::Int(i);
  return Value::Null();
}

Value ValueMultiset::LastPositive() const {
  for (auto it = ints_.rbegin(); it != ints_.rend(); ++it)
    if (it->second > 0) return Value::Int(it->first);
  for (auto it = other_.rbegin(); it != other_.rend(); ++it)
    if (it->second > 0) return it->first;
  return Value::Null();
}

size_t ValueMultiset::HeapBytes() const {
  // An estimate in constant time: B-tree nodes of 16-byte entries about 3/4 full (a random
  // insertion order; ascending insertions fill them), a red-black tree node is 32 bytes of links
  // and colour plus its pair.
  return ints_.size() * 22 + other_.size() * (32 + sizeof(std::pair<const Value, int64_t>));
}

void ValueMultiset::Spill() {
  compact_ = false;
  for (const auto& [i, w] : ints_) other_.emplace(Value::Int(i), w);
  ints_.clear();
}

}  // namespace fld
