// Watermark: the operator after a table with a WATERMARK column (Feldera's experimental rule).
//
// A row whose value X in the column is more than the watermark W ahead of what earlier steps
// have seen is held back: it enters the circuit at the first step whose earlier input reached
// X + W, as if it had just arrived (so LATENESS, which comes after this operator, judges it
// then). Rows of the current step are held like the others; a NULL value is never held. Deletes
// are held like inserts. Held rows leave in order of their value, then of arrival.
// State: the largest value seen and the held rows.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/circuit/operator.h"

namespace fld {

class WatermarkOp : public Operator {
 public:
  // `delay`: W in the column's physical form (int64 units of its type, or a double).
  WatermarkOp(std::vector<PhysType> types, int column, Value delay)
      : types_(std::move(types)), column_(column), delay_(std::move(delay)) {}
  bool PreservesInserts() const override { return true; }
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "watermark"; }
  std::string Describe() const override;
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;

 private:
  std::vector<PhysType> types_;
  int column_;
  Value delay_;
  std::optional<Value> max_;                                            // over earlier steps
  std::map<Value, std::vector<std::pair<std::string, int64_t>>> held_;  // value -> (row encoding, weight)
};

}  // namespace fld
