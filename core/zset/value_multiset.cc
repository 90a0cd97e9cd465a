#include "core/zset/value_multiset.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/common/byte_order.h"
#include "core/zset/batch.h"
#include "core/zset/order_key.h"

namespace fld {

void LargeValueMultiset::Add(const Value& v, int64_t w) {
  if (w == 0) return;
  if (v.IsNull() || form_ == Form::kMixed) {
    auto& other = other_.Get();
    auto it = other.try_emplace(v, 0).first;
    it->second += w;
    if (it->second == 0) other.erase(it);
    return;
  }
  if (FormOf(v.kind) != form_) {
    if (HoldsValues()) {
      ToMixed();
      return Add(v, w);
    }
    form_ = FormOf(v.kind);  // nothing held but NULL: the set takes this kind's form
  }
  switch (form_) {
    case Form::kInts:
      return AddKey(v.i, w);
    case Form::kDoubles:
      return AddDouble(v.d, w);
    case Form::kStrings:
      return strings_.Add(v.s, w);
    case Form::kMixed:
      break;
  }
}

void LargeValueMultiset::AddKey(int64_t i, int64_t w) {
  if (w == 1 && trees().negative == 0) {
    if (pending_.empty()) {
      pending_min_ = pending_max_ = i;
    } else {
      pending_min_ = std::min(pending_min_, i);
      pending_max_ = std::max(pending_max_, i);
    }
    if (pending_.size() == pending_.capacity()) pending_.reserve(NextSmallCapacity(pending_.capacity()));
    pending_.push_back(i);
    return;
  }
  Flush();  // a weight that may turn negative: the trees hold every value from now on
  AddInt(i, w);
}

void LargeValueMultiset::AddAll(const LargeValueMultiset& o) {
  if (form_ == o.form_ && form_ != Form::kMixed) {
    for (const auto& [v, w] : o.other()) Add(v, w);  // NULL only
    if (o.zero_weight_ != 0) {
      if (zero_weight_ == 0) negative_zero_ = o.negative_zero_;  // the zero arrives in o's spelling
      zero_weight_ += o.zero_weight_;
    }
    for (const int64_t i : o.pending_) AddKey(i, 1);
    for (const int64_t i : o.trees().ones) AddKey(i, 1);
    for (const auto& [i, w] : o.trees().ints) AddKey(i, w);
    o.strings_.ForEach([&](std::string_view k, int64_t w) { strings_.Add(k, w); });
    return;
  }
  o.ForEach([&](const Value& v, int64_t w) { Add(v, w); });
}

// The order keys' ordered bits (unsigned) with the top bit flipped: signed integers order the same.
int64_t LargeValueMultiset::DoubleKey(double d) {
  return static_cast<int64_t>(OrderedDoubleBits(d) ^ (uint64_t{1} << 63));
}

Value LargeValueMultiset::DoubleOf(int64_t key) const {
  const double d = DoubleOfOrderedBits(static_cast<uint64_t>(key) ^ (uint64_t{1} << 63));
  return Value::Double(d == 0.0 && negative_zero_ ? -0.0 : d);
}

void LargeValueMultiset::AddDouble(double d, int64_t w) {
  if (d == 0.0) {
    if (zero_weight_ == 0) negative_zero_ = std::signbit(d);  // the first spelling stays
    zero_weight_ += w;
  }
  AddKey(DoubleKey(d), w);
}

void LargeValueMultiset::AddInt(int64_t i, int64_t w) {
  IntTrees& t = trees_.Get();
  // A value of weight 1 is in ones, any other in ints (w is not 0).
  auto it = t.ints.empty() ? t.ints.end() : t.ints.find(i);
  if (it == t.ints.end()) {
    if (w == 1) {
      if (t.ones.insert(i).second) return;  // new, of weight 1
      t.ones.erase(i);                      // 1 + 1
      t.ints.emplace(i, 2);
      return;
    }
    if (t.ones.erase(i)) {
      if (w != -1) {
        t.ints.emplace(i, 1 + w);
        t.negative += 1 + w < 0;
      }
      return;
    }
    t.ints.emplace(i, w);
    t.negative += w < 0;
    return;
  }
  t.negative -= it->second < 0;
  it->second += w;
  t.negative += it->second < 0;
  if (it->second == 0) {
    t.ints.erase(it);
  } else if (it->second == 1) {
    t.ints.erase(it);
    t.ones.insert(i);
  }
}

void LargeValueMultiset::FlushPending() {
  // In ascending order: each insert's path through the B-tree is mostly the last one's.
  std::sort(pending_.begin(), pending_.end());
  for (const int64_t i : pending_) AddInt(i, 1);
  std::vector<int64_t>().swap(pending_);
}

// With values pending no weight is negative: the extremes are those of the trees and the pending.
Value LargeValueMultiset::FirstPositive() const {
  for (const auto& [v, w] : other())
    if (w > 0) return v;  // NULL: it sorts first
  if (const auto k = strings_.FirstPositive()) return Value::String(std::string(*k));
  Value t = TreeFirst();
  if (!pending_.empty() && (t.IsNull() || pending_min_ <= t.i)) t = Value::Int(pending_min_);
  return form_ == Form::kDoubles && !t.IsNull() ? DoubleOf(t.i) : t;
}

Value LargeValueMultiset::LastPositive() const {
  if (const auto k = strings_.LastPositive()) return Value::String(std::string(*k));
  Value t = TreeLast();
  if (!pending_.empty() && (t.kind != Value::Kind::kInt || pending_max_ >= t.i)) t = Value::Int(pending_max_);
  if (form_ == Form::kDoubles && t.kind == Value::Kind::kInt) return DoubleOf(t.i);
  return t;
}

Value LargeValueMultiset::TreeFirst() const {
  const IntTrees& t = trees();
  for (const auto& [v, w] : other())
    if (w > 0) return v;
  for (const auto& [i, w] : t.ints) {  // the first positive of ints, or the first of ones before it
    if (!t.ones.empty() && *t.ones.begin() < i) return Value::Int(*t.ones.begin());
    if (w > 0) return Value::Int(i);
  }
  if (!t.ones.empty()) return Value::Int(*t.ones.begin());
  return Value::Null();
}

Value LargeValueMultiset::TreeLast() const {
  const IntTrees& t = trees();
  for (auto it = t.ints.rbegin(); it != t.ints.rend(); ++it) {
    if (!t.ones.empty() && *t.ones.rbegin() > it->first) return Value::Int(*t.ones.rbegin());
    if (it->second > 0) return Value::Int(it->first);
  }
  if (!t.ones.empty()) return Value::Int(*t.ones.rbegin());
  for (auto it = other().rbegin(); it != other().rend(); ++it)
    if (it->second > 0) return it->first;
  return Value::Null();
}

size_t LargeValueMultiset::HeapBytes() const {
  // An estimate in constant time: B-tree nodes of 16-byte entries about 3/4 full (a random
  // insertion order; ascending insertions fill them), a red-black tree node is 32 bytes of links
  // and colour plus its pair.
  return pending_.capacity() * sizeof(int64_t) + trees().ones.size() * 11 + trees().ints.size() * 22 +
         strings_.HeapBytes() + other().size() * (32 + sizeof(std::pair<const Value, int64_t>));
}

void LargeValueMultiset::ToMixed() {
  std::map<Value, int64_t> all;
  ForEach([&](const Value& v, int64_t w) { all.emplace(v, w); });
  *this = LargeValueMultiset();
  form_ = Form::kMixed;
  other_.Get() = std::move(all);
}

namespace {
// A small set's key starts with a tag byte that says its value's kind (NULL is the empty key,
// first): an integer is its order key part (AppendOrderKeyInt: the tag 0x01 to 0x11 holds its
// sign and length, then its significant bytes, 1 to 9 bytes in all); a double the tag 0x20 and
// the 8 big-endian bytes of its ordered bits without their trailing zero bytes (an integral
// double such as 1736.0 keeps 3; dropping them keeps the order, since all had 8: a key that is
// a prefix of another was the smaller); a string the tag 0x30 and its bytes.
constexpr char kDoubleTag = 0x20, kStringTag = 0x30;
// The kind a (non-empty) key's tag says: integers share one.
char KindOfTag(char tag) {
  return IsOrderKeyIntTag(tag) ? 0x01 : tag;
}
}  // namespace

bool ValueMultiset::EncodeSmall(const Value& v, std::string* key) {
  if (v.IsNull()) {
    key->clear();
    return true;
  }
  return EncodeSmall(v.kind, v.i, v.d, v.s, key);
}

bool ValueMultiset::EncodeSmall(Value::Kind kind, int64_t i, double d, std::string_view s, std::string* key) {
  key->clear();
  switch (kind) {
    case Value::Kind::kInt:
      AppendOrderKeyInt(i, key);
      return true;
    case Value::Kind::kDouble:
      if (d == 0.0 && std::signbit(d)) return false;  // its spelling needs the large form
      key->push_back(kDoubleTag);
      AppendBigEndian64(OrderedDoubleBits(d), key);
      while (key->back() == 0) key->pop_back();  // (the tag is not 0)
      return true;
    case Value::Kind::kString:
      key->push_back(kStringTag);
      key->append(s);
      return true;
    default:
      return false;
  }
}

void ValueMultiset::DecodeSmall(std::string_view key, Value* v) {
  if (key.empty()) {
    *v = Value::Null();
  } else if (IsOrderKeyIntTag(key[0])) {
    int64_t i;
    ReadOrderKeyInt(key.data(), &i);
    *v = Value::Int(i);
  } else if (key[0] == kDoubleTag) {
    char bits[8] = {};
    std::memcpy(bits, key.data() + 1, key.size() - 1);
    *v = Value::Double(DoubleOfOrderedBits(BigEndian64At(bits)));
  } else {
    if (v->kind != Value::Kind::kString) *v = Value::String(std::string());
    v->s.assign(key.data() + 1, key.size() - 1);
  }
}

bool ValueMultiset::AddSmall(std::string_view key, int64_t w) {
  if (!key.empty() && !small_.empty()) {
    // The kind held: that of the last key (NULL's, the empty key, is first).
    const std::string_view last = small_.LastKey();
    if (!last.empty() && KindOfTag(last[0]) != KindOfTag(key[0])) return false;
  }
  if (small_.size() >= kSmallValues || !small_.PacksAnother(key.size())) return false;
  small_.Add(key, w);
  return true;
}

void ValueMultiset::Add(const Value& v, int64_t w) {
  if (w == 0) return;
  if (large_) {
    large_.get()->Add(v, w);
    if (large_.get()->empty()) large_.reset();  // emptied: small again
    return;
  }
  thread_local std::string key;
  if (EncodeSmall(v, &key) && AddSmall(key, w)) return;
  ToLarge();
  large_.get()->Add(v, w);
}

void ValueMultiset::Add(const Column& c, size_t r, int64_t w) {
  if (w == 0) return;
  if (!large_ && !c.IsNull(r)) {
    thread_local std::string key;
    const bool encoded = c.phys == PhysType::kI64   ? EncodeSmall(Value::Kind::kInt, c.i64[r], 0, {}, &key)
                         : c.phys == PhysType::kF64 ? EncodeSmall(Value::Kind::kDouble, 0, c.f64[r], {}, &key)
                                                    : EncodeSmall(Value::Kind::kString, 0, 0, c.str[r], &key);
    if (encoded && AddSmall(key, w)) return;
  }
  Add(c.Get(r), w);  // NULL, a large set, or one that stops being small
}

void ValueMultiset::ToLarge() {
  LargeValueMultiset large;
  ForEach([&](const Value& v, int64_t w) { large.Add(v, w); });
  small_.clear();
  large_.Get() = std::move(large);
}

void ValueMultiset::AddAll(const ValueMultiset& o) {
  if (large_ && o.large_) return large_.get()->AddAll(*o.large_.get());
  o.ForEach([&](const Value& v, int64_t w) { Add(v, w); });
}

Value ValueMultiset::FirstPositive() const {
  if (large_) return large_.get()->FirstPositive();
  Value v;
  if (const auto k = small_.FirstPositive()) DecodeSmall(*k, &v);
  return v;
}

Value ValueMultiset::LastPositive() const {
  if (large_) return large_.get()->LastPositive();
  Value v;
  if (const auto k = small_.LastPositive()) DecodeSmall(*k, &v);
  return v;
}

}  // namespace fld
