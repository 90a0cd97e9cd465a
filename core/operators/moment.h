// STDDEV_POP/STDDEV_SAMP/VAR_POP/VAR_SAMP as window functions: the window operator computes
// COUNT(x), SUM(x) and SUM(x * x) over each row's frame; this operator appends, per row, the
// variance or standard deviation those give, as the aggregate computes it (MomentOf in
// core/operators/aggregate.h). A map: linear and stateless, so its own incremental version.
#pragma once

#include <string>
#include <vector>

#include "core/circuit/operator.h"
#include "core/common/int512.h"
#include "core/operators/aggregate.h"

namespace fld {

struct MomentSpec {
  AggKind kind = AggKind::kVarPop;
  int count = -1, sum = -1, sumsq = -1;  // input columns
  SqlType arg_type;                      // an integer or floating type: the result's
};

// STDDEV/VARIANCE from exact sums, as GROUP BY aggregation computes them (defined in
// aggregate.cc): integers and DECIMAL(p <= 18) from 128-bit sums (in units of the scale);
// DECIMAL(p > 18) exactly from 512-bit ones. n values, their sum and sum of squares.
Value MomentOfSums(AggKind kind, int64_t n, __int128 sum, __int128 sumsq, const SqlType& t);
Value WideMomentOf(AggKind kind, const Int512& n, const Int512& sum, const Int512& sumsq, const SqlType& t);

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
