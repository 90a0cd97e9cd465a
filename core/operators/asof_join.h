// As-of join, incremental: `l [LEFT] ASOF JOIN r MATCH_CONDITION l.ts >= r.ts ON l.k = r.k`.
//
// Each left row is joined with at most one right row: among the right rows with the same key
// whose match column is <= the left row's (< for a strict `>` condition), the one with the
// largest match value; ties on the match value go to the right row that sorts last (column by
// column, NULL first). Output rows are the left columns then the right columns; the weight is
// the left row's times the matched right row's (as Feldera's operator computes it). A left row
// with no match is dropped (inner form) or padded with NULLs (LEFT form). NULL keys and NULL
// match values never match.
//
//        ΔL ──► affected left times ◄── ΔR (each changed right time R affects the left rows
//                     │                      from R up to the next right time)
//         -old matches of those rows, fold ΔL and ΔR in, +new matches
//
// A step re-emits only the left rows whose match may have changed: the rows of ΔL, and for each
// right change at time R the left rows of that key whose time lies between R and the next right
// time of the key (before or after the step). Their old output is retracted and their new
// output inserted, so the result is the change of the as-of join.
// State: both sides integrated, per key, ordered by the match column (then by the row): per key
// a B-tree of order keys (core/zset/order_key.h) whose sort part is the match value, so a key's
// rows of one time are consecutive and the last of them is the one a tie goes to; a row of a few
// small columns is inline in the tree's node (no heap node per row or per time). With
// waterlines on both match columns, left rows below the smaller one are discarded, as Feldera
// does: no future left change has such a time, and no future right change can become their
// match (it would need a right time at or below theirs). Right rows below it are discarded too,
// except, per key, those of the last time below it, which later left rows may still match.
// Each side's rows of one key are one keyed entry (core/circuit/partitions.h, stored keys 'L' /
// 'R' + key): a checkpoint saves the keys a step changed, and memory may hold only those in use,
// the others read back from the store when a step reaches them (discarding behind the waterlines
// sees the keys in memory).
#pragma once

#include <absl/container/btree_map.h>

#include <memory>
#include <optional>

#include "core/circuit/operator.h"
#include "core/circuit/partitions.h"
#include "core/circuit/waterline.h"
#include "core/types/types.h"
#include "core/zset/order_key.h"

namespace fld {

class AsofJoinOp : public Operator {
 public:
  // `left_ts` / `right_ts`: the match columns (same type on both sides). strict: `>` instead of `>=`.
  AsofJoinOp(std::vector<SqlType> left_types, std::vector<SqlType> right_types, std::vector<int> left_keys,
             std::vector<int> right_keys, int left_ts, int right_ts, bool strict, bool pad_left);
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return pad_left_ ? "left_asof_join" : "asof_join"; }
  std::string Describe() const override;
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;
  bool HasKeyedState() const override { return true; }
  void TrackChanges() override;
  void SaveChanges(StateWriter& w, StateDelta& d) override;
  void BeginRestore(StateReader& r) override;
  void RestoreEntry(std::string_view key, std::string_view value) override;
  bool CanBackState() const override { return true; }
  void BackState(StateSource* source, uint32_t node, bool all_stored) override;
  void StateCommitted(bool evict) override;
  size_t StateMemoryBytes() const override;
  int left_ts() const { return left_.ts; }
  int right_ts() const { return right_.ts; }
  // Waterlines of the left and right match columns (core/circuit/waterline.h).
  void SetWaterlines(WaterlineRef left, WaterlineRef right) {
    left_waterline_ = std::move(left);
    right_waterline_ = std::move(right);
  }

 private:
  // A key's rows on one side: order key (the match value, then the row's other columns) ->
  // weight (never 0).
  using Rows = absl::btree_map<InlineKey, int64_t, InlineKeyLess>;
  struct Keyed {
    Rows rows;
    size_t heap = 0;  // bytes the keys too long to be inline hold
  };
  // A row matched on the right: its order key and weight.
  using Match = std::optional<std::pair<std::string_view, int64_t>>;
  struct Side {
    Side(const char* prefix, AsofJoinOp* op);
    std::vector<SqlType> types;
    std::vector<PhysType> phys;
    std::vector<int> keys;
    int ts = -1;
    std::vector<SortKey> order;  // the match column, ascending, NULL first
    Partitions<Keyed> trace;     // key encoding -> rows
    // The match value's part of an order key of this side.
    std::string_view TimeOf(std::string_view okey) const {
      return okey.substr(0, OrderKeySortBytes(okey, order, phys));
    }
  };
  // Adds w to the row whose order key is okey among the key's rows.
  static void Add(Side* side, const std::string& key, const std::string& okey, int64_t w);
  // A side's stored form of a key's rows (the form of checkpoints before rows were order keys):
  // U64 times, then per time its EncodeRowValue, U64 rows and per row its EncodeRowValue and
  // weight. And back (a corruption error when malformed).
  void EncodeKeyed(const Side& side, const Keyed& k, StateWriter& w) const;
  void DecodeKeyed(const Side& side, StateReader& r, Keyed* k) const;
  // Reads a side as SaveState writes it (the keys all changed).
  void RestoreSide(StateReader& r, Side* side);
  // The right row the left rows of time `t` (a match value's order key) match in `right` (null
  // when none).
  Match MatchOf(const Keyed* right, std::string_view t) const;
  void Emit(std::string_view lkey, int64_t lw, const Match& match, int64_t sign, BatchBuilder* out) const;
  // Discards what the waterlines allow, then ends the step on both sides' partitions.
  void EndStep();

  Side left_, right_;
  bool strict_, pad_left_;
  WaterlineRef left_waterline_, right_waterline_;
  std::string gc_bound_;                             // the waterline of the last discarding (encoded)
  mutable std::vector<Value> left_row_, right_row_;  // Emit's buffers
};

}  // namespace fld
