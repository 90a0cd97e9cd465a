#include "core/operators/lateness.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace fld {

LatenessOp::LatenessOp(std::vector<PhysType> types, std::vector<Annotated> cols)
    : types_(std::move(types)), cols_(std::move(cols)) {
  for (size_t i = 0; i < cols_.size(); ++i) cells_.push_back(std::make_shared<WaterlineCell>());
  max_.resize(cols_.size());
}

std::string LatenessOp::Describe() const {
  std::string s = "lateness";
  for (size_t i = 0; i < cols_.size(); ++i)
    s += fmt::format(
        "{} ${} ({}) - {}", i ? "," : "", cols_[i].index, cols_[i].name,
        FormatValue(cols_[i].lateness, cols_[i].type.IsTemporal() ? SqlType::Of(TypeId::kBigInt) : cols_[i].type));
  return s;
}

namespace {

// max - lateness, saturating at the type's lower end.
Value Minus(const Value& max, const Value& lateness) {
  if (max.kind == Value::Kind::kDouble)
    return Value::Double(max.d -
                         (lateness.kind == Value::Kind::kDouble ? lateness.d : static_cast<double>(lateness.i)));
  int64_t out;
  if (__builtin_sub_overflow(max.i, lateness.i, &out)) out = std::numeric_limits<int64_t>::min();
  return Value::Int(out);
}

}  // namespace

void LatenessOp::Publish() {
  for (size_t i = 0; i < cols_.size(); ++i) {
    if (!max_[i]) continue;
    cells_[i]->known = true;
    cells_[i]->value = Minus(*max_[i], cols_[i].lateness);
  }
}

Batch LatenessOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  if (in.empty()) return in;
  // Judge every row against the waterlines of the steps before this one.
  std::vector<uint8_t> keep(in.size(), 1);
  size_t dropped = 0;
  for (size_t i = 0; i < cols_.size(); ++i) {
    if (!cells_[i]->known) continue;
    const Column& c = *in.cols[cols_[i].index];
    const Value& w = cells_[i]->value;
    for (size_t r = 0; r < in.size(); ++r) {
      if (!keep[r] || c.IsNull(r)) continue;
      bool late = c.phys == PhysType::kF64 ? c.f64[r] < w.d : c.i64[r] < w.i;
      if (late) {
        keep[r] = 0;
        ++dropped;
      }
    }
  }
  Batch out = in;
  if (dropped > 0) {
    std::vector<uint32_t> sel;
    for (size_t r = 0; r < in.size(); ++r)
      if (keep[r]) sel.push_back(static_cast<uint32_t>(r));
    out = Gather(in, sel);
    late_ += dropped;
  }
  // Advance the largest values with what passed.
  for (size_t i = 0; i < cols_.size(); ++i) {
    const Column& c = *out.cols[cols_[i].index];
    for (size_t r = 0; r < out.size(); ++r) {
      if (c.IsNull(r)) continue;
      Value v = c.phys == PhysType::kF64 ? Value::Double(c.f64[r]) : Value::Int(c.i64[r]);
      if (!max_[i] || *max_[i] < v) max_[i] = v;
    }
  }
  Publish();
  return out;
}

void LatenessOp::SaveState(StateWriter& w) const {
  w.U64(late_);
  w.U64(max_.size());
  for (const auto& m : max_) {
    std::string enc;
    if (m) EncodeValue(&enc, *m);
    w.Str(enc);
  }
}

void LatenessOp::RestoreState(StateReader& r) {
  late_ = r.U64();
  uint64_t n = r.U64();
  if (n != max_.size()) Fail(ErrorKind::kCorruption, "saved lateness state has {} columns, not {}", n, max_.size());
  for (auto& m : max_) {
    std::string enc = r.Str();
    m.reset();
    if (!enc.empty()) {
      size_t pos = 0;
      m = DecodeValue(enc, &pos);
    }
  }
  for (auto& c : cells_) c->known = false;
  Publish();
}

}  // namespace fld
