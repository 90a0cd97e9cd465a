#include "core/circuit/ordered_rows.h"

#include <algorithm>
#include <cstring>

#include "core/common/error.h"

namespace fld {

namespace {

// The value's part of a key: one ascending sort key.
constexpr SortKey kValue{0, false, true};

}  // namespace

OrderedRows::OrderedRows(PhysType value_type, std::vector<PhysType> row_types, std::string what)
    : value_type_(value_type), row_types_(std::move(row_types)), what_(std::move(what)) {}

size_t OrderedRows::ValueBytes(std::string_view key) const {
  return OrderKeySortBytes(key, {&kValue, 1}, {&value_type_, 1});
}

Value OrderedRows::ValueOf(std::string_view key, size_t n) const {
  return RowOfOrderKey(key.substr(0, n), {&kValue, 1}, {&value_type_, 1})[0];
}

std::string OrderedRows::StoredKey(std::string_view key) const {
  const size_t n = ValueBytes(key);
  std::string s;
  EncodeValue(&s, ValueOf(key, n));
  s.append(key.substr(n));
  return s;
}

std::string OrderedRows::KeyOf(std::string_view stored) const {
  static constexpr Value::Kind kKind[] = {Value::Kind::kInt, Value::Kind::kDouble, Value::Kind::kString};
  if (stored.empty() || !RowEncodingValid(stored))  // (then its first value decodes safely)
    Fail(ErrorKind::kCorruption, "{}'s stored row is malformed", what_);
  size_t pos = 0;
  const std::vector<Value> v{DecodeValue(stored, &pos)};
  const std::string_view row = stored.substr(pos);
  if (v[0].IsNull() || v[0].kind != kKind[static_cast<int>(value_type_)] || !RowEncodingFits(row, row_types_))
    Fail(ErrorKind::kCorruption, "{}'s stored row is malformed or does not fit the columns", what_);
  std::string key;
  AppendOrderKey({&kValue, 1}, v, &key);
  AppendCompactRow(row, &key);
  return key;
}

void OrderedRows::AddKey(std::string_view key, int64_t w) {
  if (w == 0) return;
  Changed(key);
  auto [it, fresh] = rows_.try_emplace(InlineKey(key), 0);
  it->second += w;
  if (it->second == 0) rows_.erase(it);
}

void OrderedRows::Add(const Value& v, const Batch& b, size_t r, int64_t w) {
  // (into buffers kept across calls: this runs per input row)
  value_.resize(1);
  value_[0] = v;
  key_.clear();
  AppendOrderKey({&kValue, 1}, value_, &key_);
  for (const auto& c : b.cols) EncodeCompactValue(&key_, *c, r);
  AddKey(key_, w);
}

void OrderedRows::Clear() {
  rows_.clear();
  changed_.clear();
  all_changed_ = true;
}

void OrderedRows::SaveChanges(StateDelta& d) {
  auto put = [&](std::string_view key, int64_t weight) {
    d.Put(StoredKey(key), std::string_view(reinterpret_cast<const char*>(&weight), 8));
  };
  if (all_changed_) {
    for (const auto& [k, weight] : rows_) put(k.view(), weight);
  } else {
    // In key order, each once: the delta is the same on every run.
    std::sort(changed_.begin(), changed_.end());
    changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
    for (const std::string& k : changed_) {
      auto it = rows_.find(InlineKey(k));
      if (it == rows_.end())
        d.Erase(StoredKey(k));
      else
        put(k, it->second);
    }
  }
  std::vector<std::string>().swap(changed_);
  all_changed_ = false;
}

void OrderedRows::RestoreEntry(std::string_view key, std::string_view value) {
  if (value.size() != 8) Fail(ErrorKind::kCorruption, "{}'s stored weight has {} bytes", what_, value.size());
  int64_t weight;
  std::memcpy(&weight, value.data(), 8);
  if (weight == 0) Fail(ErrorKind::kCorruption, "{}'s stored row has weight 0", what_);
  if (!rows_.try_emplace(InlineKey(KeyOf(key)), weight).second)
    Fail(ErrorKind::kCorruption, "{}'s stored state holds a row twice", what_);
}

void OrderedRows::SaveWhole(StateWriter& w) const {
  w.U64(rows_.size());
  for (const auto& [k, weight] : rows_) {
    const std::string stored = StoredKey(k.view());
    size_t pos = 0;
    DecodeValue(stored, &pos);
    w.Str(std::string_view(stored).substr(0, pos));
    w.Str(std::string_view(stored).substr(pos));
    w.I64(weight);
  }
}

void OrderedRows::RestoreWhole(StateReader& r, bool changed) {
  const uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    std::string stored = r.Str();
    stored.append(r.View());
    const int64_t weight = r.I64();
    const std::string key = KeyOf(stored);
    if (changed) changed_.push_back(key);
    rows_[InlineKey(key)] += weight;
  }
}

void OrderedRows::RestoreRows(StateReader& r, int col, bool changed) {
  const uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    const std::string_view row = r.View();
    const int64_t weight = r.I64();
    if (!RowEncodingFits(row, row_types_))
      Fail(ErrorKind::kCorruption, "{}'s saved row is malformed or does not fit the columns", what_);
    const std::vector<Value> values = DecodeRow(row);
    std::string stored;
    EncodeValue(&stored, values[static_cast<size_t>(col)]);
    stored.append(row);
    const std::string key = KeyOf(stored);
    if (changed) changed_.push_back(key);
    rows_[InlineKey(key)] += weight;
  }
}

}  // namespace fld
