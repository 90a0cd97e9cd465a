// Distinct: a row is in the output iff its integrated weight is positive. Per changed row it
// compares the old and new integrated weight and emits +1 (0 -> positive) or -1 (positive -> 0).
// State: the integrated input (row encoding -> weight, in an ArenaMap). With a waterline on a column, the rows
// below it (which no future change can reach) are discarded after each step. It can be backed by
// the store (operator.h): memory then caches the weights, a miss reads the stored one; with a
// waterline, the index of the live rows stays in memory, so a stored row the waterline passes is
// erased from the store at the next checkpoint.
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
  void TrackChanges() override {
    weights_.TrackErasures(true);
    stored_.Track();
  }
  void SaveChanges(StateWriter& w, StateDelta& d) override;
  void BeginRestore(StateReader& r) override;
  void RestoreEntry(std::string_view key, std::string_view value) override;
  void EndRestore() override { weights_.ClearChanges(); }
  void SetWaterline(int col, WaterlineRef w) { gc_ = WaterlineIndex(col, std::move(w)); }
  bool CanBackState() const override { return true; }
  void RestoreStoredKey(std::string_view key) override { gc_.Added(std::string(key)); }
  void BackState(StateSource* source, uint32_t node, bool all_stored) override {
    stored_.Attach(source, node, all_stored);
  }
  void StateCommitted(bool evict) override;
  size_t StateMemoryBytes() const override { return weights_.MemoryBytes(); }

 private:
  // The slot of `key`: in memory, else read back from the store (when it may hold it), else kNone.
  uint32_t Locate(std::string_view key);
  ArenaMap weights_;  // row encoding -> int64 weight (never 0)
  WaterlineIndex gc_;
  StoredEntries stored_;
};

}  // namespace fld
