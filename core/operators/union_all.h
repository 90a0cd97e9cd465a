// UNION ALL: the sum of its inputs' changes (linear, stateless). Also used with a negated
// second input for EXCEPT ALL style differences.
#pragma once

#include <algorithm>

#include "core/circuit/operator.h"

namespace fld {

class UnionAllOp : public Operator {
 public:
  explicit UnionAllOp(std::vector<int64_t> signs = {}) : signs_(std::move(signs)) {}
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "union_all"; }
  bool PreservesInserts() const override {
    return std::all_of(signs_.begin(), signs_.end(), [](int64_t s) { return s > 0; });
  }

 private:
  std::vector<int64_t> signs_;  // per input: +1 (default) or -1
};

}  // namespace fld
