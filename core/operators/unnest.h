// UNNEST(e1, e2, ...) in FROM, as a flat-map: each input row is repeated once per position of the
// arrays (or maps) its expressions compute, zipped side by side: as many rows as the longest has
// elements, the shorter ones padded with NULL (a NULL array counts as empty). An array gives its
// element (the element's fields, when the elements are ROWs), a map its key and value (entries in
// key order); WITH ORDINALITY adds the 1-based position. An optional condition (a join's ON)
// keeps only the rows it holds TRUE for; an outer UNNEST (LEFT JOIN UNNEST ... ON ...) keeps each
// input row that gets no row, with NULLs in the UNNEST's columns. The operator is linear (each
// output row depends on one input row, weights pass through), so it is its own incremental
// version and keeps no state.
#pragma once

#include <vector>

#include "core/circuit/operator.h"
#include "core/expr/expr.h"

namespace fld {

class UnnestOp : public Operator {
 public:
  // `args` (ARRAYs or MAPs) are evaluated over the input. The output is the input's first `keep`
  // columns, then each argument's column(s), then the ordinality (BIGINT) when `ordinality`.
  // `on` (may be null) is evaluated over the output row followed by the input's columns after
  // `keep` (which the planner adds for NOW()'s clock); `outer` pads input rows without a match.
  UnnestOp(std::vector<BoundExprPtr> args, bool ordinality, size_t keep, BoundExprPtr on, bool outer,
           std::vector<PhysType> output_types);
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "unnest"; }
  std::string Describe() const override;

 private:
  std::vector<BoundExprPtr> args_;
  bool ordinality_;
  size_t keep_;
  BoundExprPtr on_;
  bool outer_;
  std::vector<PhysType> output_types_;
};

}  // namespace fld
