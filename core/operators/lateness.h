// Lateness: the operator after a table (or a view) with LATENESS columns (Feldera's rule).
//
// Per annotated column it keeps the largest value it has let through; after each step the
// column's waterline (core/circuit/waterline.h) becomes that value minus the lateness. A row
// whose value in any annotated column lies below the waterline of the steps before is "too
// late": it is dropped (inserts and deletes alike, as if the change never happened) and counted.
// A NULL value is never late and never moves the waterline. Within one step every row is
// judged against the same waterline, so how input is cut into steps decides what is late, as in
// Feldera ("the waterline is updated after each step").
// State: per column the largest value seen, and the count of dropped rows.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/circuit/operator.h"
#include "core/circuit/waterline.h"

namespace fld {

class LatenessOp : public Operator {
 public:
  struct Annotated {
    int index = -1;  // column
    std::string name;
    SqlType type;
    Value lateness;  // in the column's physical form: int64 units of the type, or a double
  };
  LatenessOp(std::vector<PhysType> types, std::vector<Annotated> cols);
  bool PreservesInserts() const override { return true; }
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "lateness"; }
  std::string Describe() const override;
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;

  // The waterline of annotated column i (of the constructor's list).
  WaterlineRef Waterline(size_t i) const { return WaterlineRef(cells_[i], cols_[i].type); }
  const std::vector<Annotated>& columns() const { return cols_; }
  uint64_t late_records() const { return late_; }

 private:
  void Publish();

  std::vector<PhysType> types_;
  std::vector<Annotated> cols_;
  std::vector<std::shared_ptr<WaterlineCell>> cells_;
  std::vector<std::optional<Value>> max_;  // per column; unset until a non-NULL value passed
  uint64_t late_ = 0;
};

}  // namespace fld
