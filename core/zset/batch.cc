#include "core/zset/batch.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <map>
#include <unordered_map>

namespace fld {

Value Column::Get(size_t r) const {
  if (IsNull(r)) return Value::Null();
  switch (phys) {
    case PhysType::kI64:
      return Value::Int(i64[r]);
    case PhysType::kF64:
      return Value::Double(f64[r]);
    case PhysType::kStr:
      return Value::String(str[r]);
  }
  return Value::Null();
}

void Column::Reserve(size_t n) {
  switch (phys) {
    case PhysType::kI64:
      i64.reserve(n);
      break;
    case PhysType::kF64:
      f64.reserve(n);
      break;
    case PhysType::kStr:
      str.reserve(n);
      break;
  }
}

void Column::SetNull(size_t r) {
  if (nulls.empty()) nulls.assign(size(), 0);
  nulls[r] = 1;
}

void Column::CompactNulls() {
  if (!nulls.empty() && std::find(nulls.begin(), nulls.end(), 1) == nulls.end()) nulls.clear();
}

void Column::AppendNull() {
  size_t n = size();
  switch (phys) {
    case PhysType::kI64:
      i64.push_back(0);
      break;
    case PhysType::kF64:
      f64.push_back(0);
      break;
    case PhysType::kStr:
      str.emplace_back();
      break;
  }
  if (nulls.empty()) nulls.assign(n, 0);
  nulls.push_back(1);
}

void Column::Append(const Value& v) {
  if (v.IsNull()) {
    AppendNull();
    return;
  }
  switch (phys) {
    case PhysType::kI64:
      i64.push_back(v.kind == Value::Kind::kDouble ? static_cast<int64_t>(v.d) : v.i);
      break;
    case PhysType::kF64:
      f64.push_back(v.kind == Value::Kind::kInt ? static_cast<double>(v.i) : v.d);
      break;
    case PhysType::kStr:
      str.push_back(v.s);
      break;
  }
  if (!nulls.empty()) nulls.push_back(0);
}

void Column::AppendFrom(const Column& src, size_t r) {
  if (src.IsNull(r)) {
    AppendNull();
    return;
  }
  switch (phys) {
    case PhysType::kI64:
      i64.push_back(src.i64[r]);
      break;
    case PhysType::kF64:
      f64.push_back(src.f64[r]);
      break;
    case PhysType::kStr:
      str.push_back(src.str[r]);
      break;
  }
  if (!nulls.empty()) nulls.push_back(0);
}

Batch EmptyBatch(std::span<const PhysType> types) {
  Batch b;
  for (PhysType t : types) b.cols.push_back(std::make_shared<Column>(t));
  return b;
}

BatchBuilder::BatchBuilder(std::span<const PhysType> types) {
  for (PhysType t : types) cols_.push_back(std::make_shared<Column>(t));
}

void BatchBuilder::AppendRow(std::span<const Value> row, int64_t w) {
  assert(row.size() == cols_.size());
  for (size_t c = 0; c < cols_.size(); ++c) cols_[c]->Append(row[c]);
  weights_.push_back(w);
}

void BatchBuilder::AppendFrom(const Batch& src, size_t r, int64_t w) {
  for (size_t c = 0; c < cols_.size(); ++c) cols_[c]->AppendFrom(*src.cols[c], r);
  weights_.push_back(w);
}

Batch BatchBuilder::Finish() {
  Batch b;
  for (auto& c : cols_) {
    c->CompactNulls();
    b.cols.push_back(std::move(c));
  }
  b.weights = std::move(weights_);
  cols_.clear();
  return b;
}

// ---- Row encoding ----
// tag 0: NULL; tag 1: int64 little-endian (8 bytes); tag 2: double bits (8 bytes);
// tag 3: u32 length then bytes.
namespace {
inline void Put64(std::string* out, uint64_t v) {
  char buf[8];
  std::memcpy(buf, &v, 8);
  out->append(buf, 8);
}
inline uint64_t Get64(std::string_view in, size_t pos) {
  uint64_t v;
  std::memcpy(&v, in.data() + pos, 8);
  return v;
}
}  // namespace

void EncodeValue(std::string* out, const Column& c, size_t r) {
  if (c.IsNull(r)) {
    out->push_back(0);
    return;
  }
  switch (c.phys) {
    case PhysType::kI64:
      out->push_back(1);
      Put64(out, static_cast<uint64_t>(c.i64[r]));
      break;
    case PhysType::kF64: {
      out->push_back(2);
      double d = c.f64[r] == 0.0 ? 0.0 : c.f64[r];  // -0.0 and 0.0 are the same value
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      Put64(out, bits);
      break;
    }
    case PhysType::kStr: {
      out->push_back(3);
      uint32_t n = static_cast<uint32_t>(c.str[r].size());
      out->append(reinterpret_cast<const char*>(&n), 4);
      out->append(c.str[r]);
      break;
    }
  }
}

void EncodeValue(std::string* out, const Value& v) {
  switch (v.kind) {
    case Value::Kind::kNull:
      out->push_back(0);
      break;
    case Value::Kind::kInt:
      out->push_back(1);
      Put64(out, static_cast<uint64_t>(v.i));
      break;
    case Value::Kind::kDouble: {
      out->push_back(2);
      double d = v.d == 0.0 ? 0.0 : v.d;
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      Put64(out, bits);
      break;
    }
    case Value::Kind::kString: {
      out->push_back(3);
      uint32_t n = static_cast<uint32_t>(v.s.size());
      out->append(reinterpret_cast<const char*>(&n), 4);
      out->append(v.s);
      break;
    }
  }
}

void EncodeRow(std::string* out, const Batch& b, size_t r, std::span<const int> cols) {
  for (int c : cols) EncodeValue(out, *b.cols[c], r);
}

void EncodeRow(std::string* out, const Batch& b, size_t r) {
  for (const auto& c : b.cols) EncodeValue(out, *c, r);
}

Value DecodeValue(std::string_view in, size_t* pos) {
  uint8_t tag = static_cast<uint8_t>(in[*pos]);
  *pos += 1;
  switch (tag) {
    case 1: {
      int64_t v = static_cast<int64_t>(Get64(in, *pos));
      *pos += 8;
      return Value::Int(v);
    }
    case 2: {
      uint64_t bits = Get64(in, *pos);
      *pos += 8;
      double d;
      std::memcpy(&d, &bits, 8);
      return Value::Double(d);
    }
    case 3: {
      uint32_t n;
      std::memcpy(&n, in.data() + *pos, 4);
      *pos += 4;
      Value v = Value::String(std::string(in.substr(*pos, n)));
      *pos += n;
      return v;
    }
    default:
      return Value::Null();
  }
}

std::vector<Value> DecodeRow(std::string_view in) {
  std::vector<Value> row;
  size_t pos = 0;
  while (pos < in.size()) row.push_back(DecodeValue(in, &pos));
  return row;
}

void DecodeRowInto(std::string_view in, BatchBuilder* b, size_t first_col) {
  size_t pos = 0, c = first_col;
  while (pos < in.size()) {
    uint8_t tag = static_cast<uint8_t>(in[pos]);
    Column& col = b->col(c++);
    if (tag == 1 && col.phys == PhysType::kI64) {
      col.i64.push_back(static_cast<int64_t>(Get64(in, pos + 1)));
      if (!col.nulls.empty()) col.nulls.push_back(0);
      pos += 9;
    } else {
      col.Append(DecodeValue(in, &pos));
    }
  }
}

Batch Consolidate(const Batch& b) {
  // Hash the encodings to sum equal rows, then sort the survivors by encoding.
  std::vector<std::string> keys(b.size());
  for (size_t r = 0; r < b.size(); ++r) EncodeRow(&keys[r], b, r);
  std::unordered_map<std::string_view, std::pair<int64_t, uint32_t>> acc;  // encoding -> (weight, first row)
  acc.reserve(b.size());
  for (size_t r = 0; r < b.size(); ++r) {
    auto [it, fresh] = acc.try_emplace(keys[r], 0, static_cast<uint32_t>(r));
    it->second.first += b.weights[r];
  }
  std::vector<std::pair<std::string_view, std::pair<int64_t, uint32_t>>> live;
  live.reserve(acc.size());
  for (const auto& kv : acc)
    if (kv.second.first != 0) live.emplace_back(kv.first, kv.second);
  std::sort(live.begin(), live.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<PhysType> types;
  for (const auto& c : b.cols) types.push_back(c->phys);
  BatchBuilder out(types);
  for (const auto& [k, wr] : live) out.AppendFrom(b, wr.second, wr.first);
  return out.Finish();
}

Batch Concat(std::span<const Batch> parts) {
  const Batch* first = nullptr;
  size_t total = 0, nonempty = 0;
  for (const auto& p : parts) {
    if (!first) first = &p;
    total += p.size();
    if (!p.empty()) ++nonempty;
  }
  if (!first) return Batch();
  if (nonempty <= 1) {
    for (const auto& p : parts)
      if (!p.empty()) return p;
    return parts[0];
  }
  Batch out;
  for (size_t c = 0; c < first->width(); ++c) {
    auto col = std::make_shared<Column>(first->cols[c]->phys);
    col->Reserve(total);
    bool any_null = false;
    for (const auto& p : parts) any_null |= p.cols[c]->HasNulls();
    if (any_null) col->nulls.reserve(total);
    for (const auto& p : parts) {
      const Column& src = *p.cols[c];
      size_t n = p.size();
      switch (src.phys) {
        case PhysType::kI64:
          col->i64.insert(col->i64.end(), src.i64.begin(), src.i64.end());
          break;
        case PhysType::kF64:
          col->f64.insert(col->f64.end(), src.f64.begin(), src.f64.end());
          break;
        case PhysType::kStr:
          col->str.insert(col->str.end(), src.str.begin(), src.str.end());
          break;
      }
      if (any_null) {
        if (src.HasNulls())
          col->nulls.insert(col->nulls.end(), src.nulls.begin(), src.nulls.end());
        else
          col->nulls.insert(col->nulls.end(), n, 0);
      }
    }
    out.cols.push_back(std::move(col));
  }
  out.weights.reserve(total);
  for (const auto& p : parts) out.weights.insert(out.weights.end(), p.weights.begin(), p.weights.end());
  return out;
}

Batch Gather(const Batch& b, std::span<const uint32_t> sel) {
  Batch out;
  for (const auto& src : b.cols) {
    auto col = std::make_shared<Column>(src->phys);
    switch (src->phys) {
      case PhysType::kI64:
        col->i64.resize(sel.size());
        for (size_t k = 0; k < sel.size(); ++k) col->i64[k] = src->i64[sel[k]];
        break;
      case PhysType::kF64:
        col->f64.resize(sel.size());
        for (size_t k = 0; k < sel.size(); ++k) col->f64[k] = src->f64[sel[k]];
        break;
      case PhysType::kStr:
        col->str.resize(sel.size());
        for (size_t k = 0; k < sel.size(); ++k) col->str[k] = src->str[sel[k]];
        break;
    }
    if (src->HasNulls()) {
      col->nulls.resize(sel.size());
      for (size_t k = 0; k < sel.size(); ++k) col->nulls[k] = src->nulls[sel[k]];
      col->CompactNulls();
    }
    out.cols.push_back(std::move(col));
  }
  out.weights.resize(sel.size());
  for (size_t k = 0; k < sel.size(); ++k) out.weights[k] = b.weights[sel[k]];
  return out;
}

}  // namespace fld
