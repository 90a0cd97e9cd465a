#include "core/operators/watermark.h"

#include <fmt/format.h>

#include <limits>

namespace fld {

std::string WatermarkOp::Describe() const {
  return fmt::format("watermark ${} holds rows until input reaches their value + {}", column_,
                     delay_.kind == Value::Kind::kDouble ? fmt::format("{}", delay_.d) : fmt::format("{}", delay_.i));
}

Batch WatermarkOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  if (in.empty() && held_.empty()) return in;
  const Column& c = *in.cols[column_];
  BatchBuilder out(types_);
  std::string row;
  for (size_t r = 0; r < in.size(); ++r) {
    if (c.IsNull(r)) {
      out.AppendFrom(in, r, in.weights[r]);
      continue;
    }
    row.clear();
    EncodeRow(&row, in, r);
    held_[in.Get(column_, r)].emplace_back(row, in.weights[r]);
  }
  // Release the rows whose value + W the earlier steps reached: value <= max - W.
  if (max_) {
    Value bound;
    if (max_->kind == Value::Kind::kDouble) {
      bound = Value::Double(max_->d - delay_.d);
    } else {
      int64_t b;
      if (__builtin_sub_overflow(max_->i, delay_.i, &b)) b = std::numeric_limits<int64_t>::min();
      bound = Value::Int(b);
    }
    auto end = held_.upper_bound(bound);
    for (auto it = held_.begin(); it != end; ++it)
      for (const auto& [enc, w] : it->second) {
        DecodeRowInto(enc, &out, 0);
        out.AddWeight(w);
      }
    held_.erase(held_.begin(), end);
  }
  for (size_t r = 0; r < in.size(); ++r) {
    if (c.IsNull(r)) continue;
    Value v = in.Get(column_, r);
    if (!max_ || *max_ < v) max_ = v;
  }
  return out.Finish();
}

void WatermarkOp::SaveState(StateWriter& w) const {
  std::string enc;
  if (max_) EncodeValue(&enc, *max_);
  w.Str(enc);
  w.U64(held_.size());
  for (const auto& [v, rows] : held_) {
    std::string k;
    EncodeValue(&k, v);
    w.Str(k);
    w.U64(rows.size());
    for (const auto& [row, wt] : rows) {
      w.Str(row);
      w.I64(wt);
    }
  }
}

void WatermarkOp::RestoreState(StateReader& r) {
  std::string enc = r.Str();
  max_.reset();
  if (!enc.empty()) {
    size_t pos = 0;
    max_ = DecodeValue(enc, &pos);
  }
  held_.clear();
  uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    std::string k = r.Str();
    size_t pos = 0;
    auto& rows = held_[DecodeValue(k, &pos)];
    uint64_t nr = r.U64();
    for (uint64_t j = 0; j < nr; ++j) {
      std::string row = r.Str();
      rows.emplace_back(std::move(row), r.I64());
    }
  }
}

}  // namespace fld
