// Constant: emits a fixed batch at the first step and nothing after (the change of a constant
// relation, e.g. the single row a SELECT without FROM reads). State: whether it has emitted.
#pragma once

#include "core/circuit/operator.h"

namespace fld {

class ConstantOp : public Operator {
 public:
  explicit ConstantOp(Batch batch) : batch_(std::move(batch)) {}
  Batch Step(std::span<const Batch* const>) override {
    if (emitted_) {
      Batch empty;
      for (const auto& c : batch_.cols) empty.cols.push_back(std::make_shared<Column>(c->phys));
      return empty;
    }
    emitted_ = true;
    return batch_;
  }
  std::string Name() const override { return "constant"; }
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override { w.U64(emitted_); }
  void RestoreState(StateReader& r) override { emitted_ = r.U64() != 0; }

 private:
  Batch batch_;
  bool emitted_ = false;
};

}  // namespace fld
