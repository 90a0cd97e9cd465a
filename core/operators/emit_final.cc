#include "core/operators/emit_final.h"

#include <fmt/format.h>

#include "core/common/error.h"

namespace fld {

EmitFinalOp::EmitFinalOp(std::vector<PhysType> types, int col, std::string col_name, WaterlineRef w)
    : types_(types),
      col_(col),
      col_name_(std::move(col_name)),
      w_(std::move(w)),
      held_(types_[static_cast<size_t>(col)], std::move(types), "an emit_final view") {}

std::string EmitFinalOp::Describe() const {
  return fmt::format("emit final ${} ({}) below {}", col_, col_name_, w_.ToString());
}

Batch EmitFinalOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  for (size_t r = 0; r < in.size(); ++r)
    if (!in.cols[col_]->IsNull(r)) held_.Add(in.Get(col_, r), in, r, in.weights[r]);
  BatchBuilder out(types_);
  std::optional<Value> wl = w_.Current();
  if (!wl || wl->IsNull()) return out.Finish();
  held_.ReleaseWhile([&](const Value& v) { return !(v < *wl); },
                     [&](std::string_view row, int64_t w) {
                       DecodeRowInto(row, &out, 0);
                       out.AddWeight(w);
                     });
  return out.Finish();
}

// The whole state: the held rows (OrderedRows::SaveWhole). A checkpoint before that held the
// count, then per row its encoding and weight.
void EmitFinalOp::SaveState(StateWriter& w) const {
  held_.SaveWhole(w);
}

void EmitFinalOp::RestoreState(StateReader& r) {
  held_.Clear();
  held_.RestoreWhole(r, false);
}

// Keyed state: no header; one entry per held row. An older checkpoint holds its rows (the count,
// then per row its encoding and weight) in the header.
void EmitFinalOp::BeginRestore(StateReader& r) {
  held_.Clear();
  held_.Restored();
  if (!r.AtEnd()) held_.RestoreRows(r, col_, true);
}

}  // namespace fld
