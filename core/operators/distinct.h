// Distinct: a row is in the output iff its integrated weight is positive. Per changed row it
// compares the old and new integrated weight and emits +1 (0 -> positive) or -1 (positive -> 0).
// State: the integrated input (row encoding -> weight, in an ArenaMap). With a waterline on a column, the rows
// below it (which no future change can reach) are discarded after each step.
#pragma once

#include "core/circuit/operator.h"
#include "core/circuit/waterline.h"
#include "core/zset/arena_map.h"

namespace fld {

class DistinctOp : public Operator {
 public:
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "distinct"; }
  std::string Describe() const override;
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;
  bool HasKeyedState() const override { return true; }
  void TrackChanges() override { weights_.TrackErasures(true); }
  void SaveChanges(StateWriter& w, StateDelta& d) override;
  void BeginRestore(StateReader& r) override;
  void RestoreEntry(std::string_view key, std::string_view value) override;
  void EndRestore() override { weights_.ClearChanges(); }
  void SetWaterline(int col, WaterlineRef w) { gc_ = WaterlineIndex(col, std::move(w)); }

 private:
  ArenaMap weights_;  // row encoding -> int64 weight (never 0)
  WaterlineIndex gc_;
};

}  // namespace fld
