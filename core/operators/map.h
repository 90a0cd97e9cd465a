// Filter + map (projection): a linear operator, so it is its own incremental version: it keeps
// the rows whose predicate is TRUE and computes the output columns from them; weights pass
// through unchanged. Column references in the projection share the input's column vectors.
#pragma once

#include <vector>

#include "core/circuit/operator.h"
#include "core/expr/expr.h"

namespace fld {

class MapOp : public Operator {
 public:
  // predicate may be null (no filter); an empty projection list means "all input columns".
  MapOp(BoundExprPtr predicate, std::vector<BoundExprPtr> projections);
  bool PreservesInserts() const override { return true; }
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return predicate_ ? (projections_.empty() ? "filter" : "filter+map") : "map"; }
  std::string Describe() const override;
  const BoundExpr* predicate() const { return predicate_.get(); }
  const std::vector<BoundExprPtr>& projections() const { return projections_; }

 private:
  BoundExprPtr predicate_;
  std::vector<BoundExprPtr> projections_;
};

}  // namespace fld
