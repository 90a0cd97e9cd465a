#include "core/operators/map.h"

namespace fld {

MapOp::MapOp(BoundExprPtr predicate, std::vector<BoundExprPtr> projections)
    : predicate_(std::move(predicate)), projections_(std::move(projections)) {}

Batch MapOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  Batch filtered;
  const Batch* src = &in;
  if (predicate_ && !in.empty()) {
    std::vector<uint32_t> sel = SelectTrue(*predicate_, in);
    if (sel.size() != in.size()) {
      filtered = Gather(in, sel);
      src = &filtered;
    }
  }
  if (projections_.empty()) return *src;
  Batch out;
  out.cols.reserve(projections_.size());
  for (const auto& p : projections_) out.cols.push_back(Evaluate(*p, *src));
  out.weights = src->weights;
  return out;
}

std::string MapOp::Describe() const {
  std::string s = Name();
  if (predicate_) s += " where " + predicate_->ToString();
  if (!projections_.empty()) {
    s += " select ";
    for (size_t i = 0; i < projections_.size(); ++i) s += (i ? ", " : "") + projections_[i]->ToString();
  }
  return s;
}

}  // namespace fld
