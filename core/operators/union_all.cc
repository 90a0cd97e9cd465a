#include "core/operators/union_all.h"

namespace fld {

Batch UnionAllOp::Step(std::span<const Batch* const> inputs) {
  std::vector<Batch> parts;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Batch b = *inputs[i];
    if (i < signs_.size() && signs_[i] < 0)
      for (auto& w : b.weights) w = -w;
    parts.push_back(std::move(b));
  }
  return Concat(parts);
}

}  // namespace fld
