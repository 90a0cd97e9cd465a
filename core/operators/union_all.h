// UNION ALL: the sum of its inputs' changes (linear, stateless). Also used with a negated
// second input for EXCEPT ALL style differences.
#pragma once

#include "core/circuit/operator.h"

namespace fld {

class UnionAllOp : public Operator {
 public:
  explicit UnionAllOp(std::vector<int64_t> signs = {}) : signs_(std::move(signs)) {}
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "union_all"; }

 private:
  std::vector<int64_t> signs_;  // per input: +1 (default) or -1
};

}  // namespace fld
