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
// State: the input integrated, per key, ordered by timestamp: per key a B-tree of the timestamp
// (8 bytes, big-endian, sign flipped: bytes order as the times) followed by the row (compact
// encoding, core/zset/batch.h) -> weight, inline in the tree's node up to 23 bytes, no heap node
// per time or row. Each key is one keyed entry (core/circuit/partitions.h): a checkpoint saves the
// keys a step changed, and memory may hold only those in use, the others read back from the
// store when a change reaches them (discarding behind the waterline sees the keys in memory).
// With a waterline W on the
// timestamp column (core/circuit/waterline.h), a session whose last timestamp is at most W - gap
// can no longer change (a future row at t >= W merges only with rows after t - gap), so it is
// discarded. Every later change of the output, retractions included, is of a session that ends
// after W (it holds a time t >= W, or held a row less than gap before one), so W is also a
// waterline of window_end, which lets an aggregate grouped by it discard its groups; the other
// columns have none (an extended session retracts rows of any age).
#pragma once

#include <absl/container/btree_map.h>

#include <optional>
#include <string>
#include <vector>

#include "core/circuit/operator.h"
#include "core/circuit/partitions.h"
#include "core/circuit/waterline.h"
#include "core/types/types.h"
#include "core/zset/order_key.h"

namespace fld {

// A key's rows: timestamp (8 bytes) then row -> weight (never 0).
struct SessionKey {
  absl::btree_map<InlineKey, int64_t, InlineKeyLess> rows;
  size_t heap = 0;  // bytes the keys too long to be inline hold
};

class SessionOp : public PartitionedOperator<SessionKey> {
 public:
  // `input`: the input's column types; `ts_column`: a TIMESTAMP column; `keys`: the key columns;
  // `gap` in microseconds (> 0).
  SessionOp(std::vector<PhysType> input, int ts_column, std::vector<int> keys, int64_t gap);
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "session"; }
  std::string Describe() const override;
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;
  void BeginRestore(StateReader& r) override;
  int ts_column() const { return ts_; }
  void SetWaterline(WaterlineRef w) { waterline_ = std::move(w); }

 private:
  using Rows = decltype(SessionKey::rows);
  // Emits the rows of `rows` at times in [lo, hi] with their sessions' bounds, times `sign`.
  void EmitRange(const Rows& rows, int64_t lo, int64_t hi, int64_t sign, BatchBuilder* out) const;
  void CollectGarbage();
  // A key's stored form (U64 times, then per time the I64 time, U64 rows and per row its
  // encoding and weight) and back (a corruption error when malformed).
  void EncodeKey(const SessionKey& k, StateWriter& w) const;
  void DecodeKey(StateReader& r, SessionKey* k) const;
  // Reads SaveState's form (the keys all changed).
  void RestoreWhole(StateReader& r);

  std::vector<PhysType> input_;
  int ts_;
  std::vector<int> keys_;
  int64_t gap_;
  WaterlineRef waterline_;
  std::optional<int64_t> gc_bound_;  // the waterline of the last discarding
  // (parts_: key encoding -> rows by time)
};

}  // namespace fld
