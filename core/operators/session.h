// SESSION windows (TABLE(SESSION(data, DESCRIPTOR(ts), DESCRIPTOR(key, ...), gap))), incremental.
//
// Calcite's semantics: per key (the descriptor's columns; NULL keys form one key, as equal
// values), the rows ordered by their timestamp form sessions: a row joins the session of the
// row before it when its timestamp is less than `gap` after it (each row opens the window
// [ts, ts + gap), overlapping windows merge). Every row is emitted once, with its session's
// window_start (the first timestamp) and window_end (the last timestamp + gap) appended as two
// TIMESTAMP columns. A row with a NULL timestamp belongs to no session. Without key columns the
// whole relation is one key.
//
// Incremental: an insert can merge sessions, a delete can split one, so a change at time t can
// move the bounds of every row of the sessions around it. Per key with changes, the operator
// takes the sessions of the union of the old times and the changed ones: adding points only
// merges sessions, so each such union session is made of whole sessions before the step and
// whole sessions after it. It retracts the old output of the union sessions holding a changed
// time, folds the changes in, and emits their new output; other sessions do not change.
// State: the input integrated, per key, ordered by timestamp. With a waterline W on the
// timestamp column (core/circuit/waterline.h), a session whose last timestamp is at most W - gap
// can no longer change (a future row at t >= W merges only with rows after t - gap), so it is
// discarded. Every later change of the output, retractions included, is of a session that ends
// after W (it holds a time t >= W, or held a row less than gap before one), so W is also a
// waterline of window_end, which lets an aggregate grouped by it discard its groups; the other
// columns have none (an extended session retracts rows of any age).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/circuit/operator.h"
#include "core/circuit/waterline.h"
#include "core/types/types.h"

namespace fld {

class SessionOp : public Operator {
 public:
  // `input`: the input's column types; `ts_column`: a TIMESTAMP column; `keys`: the key columns;
  // `gap` in microseconds (> 0).
  SessionOp(std::vector<PhysType> input, int ts_column, std::vector<int> keys, int64_t gap);
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "session"; }
  std::string Describe() const override;
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;
  int ts_column() const { return ts_; }
  void SetWaterline(WaterlineRef w) { waterline_ = std::move(w); }

 private:
  using Rows = std::map<std::string, int64_t>;  // EncodeRow(row) -> weight
  using Times = std::map<int64_t, Rows>;        // timestamp -> rows
  // Emits the rows of `times` in [lo, hi] with their sessions' bounds, times `sign`.
  void EmitRange(const Times& times, int64_t lo, int64_t hi, int64_t sign, BatchBuilder* out) const;
  void CollectGarbage();

  std::vector<PhysType> input_;
  int ts_;
  std::vector<int> keys_;
  int64_t gap_;
  std::unordered_map<std::string, Times> trace_;  // key encoding -> rows by time
  WaterlineRef waterline_;
  std::optional<int64_t> gc_bound_;  // the waterline of the last discarding
};

}  // namespace fld
