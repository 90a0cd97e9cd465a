// Source: the input node of a table. Each step it emits the changes pushed since the last step
// (concatenated in push order). Stateless.
#pragma once

#include <vector>

#include "core/circuit/operator.h"

namespace fld {

class SourceOp : public Operator {
 public:
  explicit SourceOp(std::vector<PhysType> types) : types_(std::move(types)) {}
  void Feed(std::vector<Batch> batches) { pending_ = std::move(batches); }
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "source"; }

 private:
  std::vector<PhysType> types_;
  std::vector<Batch> pending_;
};

}  // namespace fld
