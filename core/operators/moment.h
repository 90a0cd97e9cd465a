// STDDEV_POP/STDDEV_SAMP/VAR_POP/VAR_SAMP as window functions: the window operator computes
// COUNT(x), SUM(x) and SUM(x * x) over each row's frame; this operator appends, per row, the
// variance or standard deviation those give, as the aggregate computes it (MomentOf in
// core/operators/aggregate.h). A map: linear and stateless, so its own incremental version.
#pragma once

#include <string>
#include <vector>

#include "core/circuit/operator.h"
#include "core/operators/aggregate.h"

namespace fld {

struct MomentSpec {
  AggKind kind = AggKind::kVarPop;
  int count = -1, sum = -1, sumsq = -1;  // input columns
  SqlType arg_type;                      // an integer or floating type: the result's
};

class MomentOp : public Operator {
 public:
  explicit MomentOp(std::vector<MomentSpec> specs) : specs_(std::move(specs)) {}
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "moment"; }
  std::string Describe() const override;

 private:
  std::vector<MomentSpec> specs_;
};

}  // namespace fld
