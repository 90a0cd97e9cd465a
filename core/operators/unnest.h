// UNNEST(array) in FROM, as a flat-map: each input row is repeated once per element of the array
// its expression computes, with the element appended (its fields, when the elements are ROWs)
// and, WITH ORDINALITY, the element's 1-based index. A NULL or empty array yields no row. The
// operator is linear (each output row depends on one input row, weights pass through), so it
// is its own incremental version and keeps no state.
#pragma once

#include <vector>

#include "core/circuit/operator.h"
#include "core/expr/expr.h"

namespace fld {

class UnnestOp : public Operator {
 public:
  // `array` is evaluated over the input; the output is the input's columns, then the element's
  // column(s), then the ordinality (BIGINT) when `ordinality`.
  UnnestOp(BoundExprPtr array, bool ordinality, std::vector<PhysType> output_types);
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "unnest"; }
  std::string Describe() const override;

 private:
  BoundExprPtr array_;
  bool ordinality_;
  std::vector<PhysType> output_types_;
};

}  // namespace fld
