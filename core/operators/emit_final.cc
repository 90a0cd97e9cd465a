#include "core/operators/emit_final.h"

#include <fmt/format.h>

#include "core/common/error.h"

namespace fld {

EmitFinalOp::EmitFinalOp(std::vector<PhysType> types, int col, std::string col_name, WaterlineRef w)
    : types_(std::move(types)), col_(col), col_name_(std::move(col_name)), w_(std::move(w)) {}

std::string EmitFinalOp::Describe() const {
  return fmt::format("emit final ${} ({}) below {}", col_, col_name_, w_.ToString());
}

Batch EmitFinalOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  std::string enc;
  for (size_t r = 0; r < in.size(); ++r) {
    if (in.cols[col_]->IsNull(r)) continue;
    enc.clear();
    EncodeRow(&enc, in, r);
    auto key = std::make_pair(in.Get(col_, r), enc);
    int64_t& w = held_[key];
    w += in.weights[r];
    if (w == 0) held_.erase(key);
  }
  BatchBuilder out(types_);
  std::optional<Value> wl = w_.Current();
  if (!wl || wl->IsNull()) return out.Finish();
  for (auto it = held_.begin(); it != held_.end() && it->first.first < *wl;) {
    DecodeRowInto(it->first.second, &out, 0);
    out.AddWeight(it->second);
    it = held_.erase(it);
  }
  return out.Finish();
}

void EmitFinalOp::SaveState(StateWriter& w) const {
  w.U64(held_.size());
  for (const auto& [k, weight] : held_) {
    w.Str(k.second);
    w.I64(weight);
  }
}

void EmitFinalOp::RestoreState(StateReader& r) {
  held_.clear();
  uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    std::string row = r.Str();
    std::vector<Value> vals = DecodeRow(row);
    if (col_ >= static_cast<int>(vals.size())) Fail(ErrorKind::kCorruption, "saved emit_final row is too short");
    held_[{vals[col_], std::move(row)}] = r.I64();
  }
}

}  // namespace fld
