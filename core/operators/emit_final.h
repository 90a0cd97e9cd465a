// emit_final (Feldera's view property `'emit_final' = 'col'`): the view emits a row only once it
// is final, i.e. once the waterline of `col` (core/circuit/waterline.h) has passed the row's
// value: no future change can then touch the row, so it is never retracted or updated.
//
// The operator holds the view's changes (consolidated, ordered by `col`) until the waterline
// passes them, after each step's change is in: a row whose `col` lies below the waterline is
// emitted and forgotten, so the state is the rows not final yet and releasing costs in
// proportion to what is released. A row whose `col` is NULL is never final. Its output is the
// full view's contents restricted to `col` below the waterline, whatever the steps.
// State: the held rows, ordered by `col` (core/circuit/ordered_rows.h), as keyed state: one entry
// per row, no header; a checkpoint writes the rows held or released since the last one. (A
// checkpoint written before that holds the rows in the header: they are read and written out as
// entries at the next checkpoint.)
#pragma once

#include <string>
#include <vector>

#include "core/circuit/operator.h"
#include "core/circuit/ordered_rows.h"
#include "core/circuit/waterline.h"

namespace fld {

class EmitFinalOp : public Operator {
 public:
  EmitFinalOp(std::vector<PhysType> types, int col, std::string col_name, WaterlineRef w);
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "emit final"; }
  std::string Describe() const override;
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;
  bool HasKeyedState() const override { return true; }
  void TrackChanges() override { held_.Track(); }
  void SaveChanges(StateWriter& w, StateDelta& d) override { held_.SaveChanges(d); }
  void BeginRestore(StateReader& r) override;
  void RestoreEntry(std::string_view key, std::string_view value) override { held_.RestoreEntry(key, value); }
  size_t held_rows() const { return held_.size(); }

 private:
  std::vector<PhysType> types_;
  int col_;
  std::string col_name_;
  WaterlineRef w_;
  OrderedRows held_;  // by the value of `col`
};

}  // namespace fld
