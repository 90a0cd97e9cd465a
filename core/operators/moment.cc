#include "core/operators/moment.h"

#include <fmt/format.h>

namespace fld {

Batch MomentOp::Step(std::span<const Batch* const> inputs) {
  Batch out = *inputs[0];
  const size_t n = out.size();
  for (const MomentSpec& m : specs_) {
    auto col = std::make_shared<Column>(m.arg_type.phys());
    col->Reserve(n);
    for (size_t r = 0; r < n; ++r) {
      const Value c = out.Get(m.count, r);
      col->Append(MomentOf(m.kind, c.IsNull() ? 0 : c.i, out.Get(m.sum, r), out.Get(m.sumsq, r), m.arg_type));
    }
    out.cols.push_back(std::move(col));
  }
  return out;
}

std::string MomentOp::Describe() const {
  std::string s = "moment";
  for (const MomentSpec& m : specs_)
    s += fmt::format(" {}(n ${}, sum ${}, sumsq ${})", AggName(m.kind), m.count, m.sum, m.sumsq);
  return s;
}

}  // namespace fld
