// EXCEPT ALL / INTERSECT ALL: multiset difference and intersection of two inputs. A row's output
// multiplicity is max(l - r, 0) (EXCEPT ALL) or min(l, r) (INTERSECT ALL) of its integrated
// multiplicities on the left and right, as in PostgreSQL (a multiplicity below zero counts as
// zero). Per changed row it emits the change of that function.
// State: both integrated inputs, row -> (left weight, right weight), in an ArenaMap (the row in
// the compact row encoding, core/zset/batch.h; no heap node per row). Keyed state
// (core/circuit/operator.h): one entry per row, no header, a checkpoint writes the rows changed
// since the last one; it can be backed by the store (memory a cache of the rows, a miss read
// back, a lazy restore loading nothing). A checkpoint written before the state was keyed holds
// the whole state in the header: it is read whole and written keyed at the next checkpoint.
#pragma once

#include <utility>

#include "core/circuit/operator.h"
#include "core/zset/arena_map.h"

namespace fld {

class BagSetOp : public Operator {
 public:
  enum class Kind : uint8_t { kExceptAll, kIntersectAll };
  explicit BagSetOp(Kind kind) : kind_(kind) {}
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return kind_ == Kind::kExceptAll ? "except_all" : "intersect_all"; }
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
  bool CanBackState() const override { return true; }
  void BackState(StateSource* source, uint32_t node, bool all_stored) override {
    stored_.Attach(source, node, all_stored);
  }
  void StateCommitted(bool evict) override;
  size_t StateMemoryBytes() const override { return weights_.MemoryBytes(); }

 private:
  int64_t Multiplicity(std::pair<int64_t, int64_t> lr) const;
  // The slot of row `key`: in memory, else read back from the store (when it may hold it), else
  // kNone.
  uint32_t Locate(std::string_view key);
  // Reads SaveState's form (the rows all changed).
  void RestoreWhole(StateReader& r);
  Kind kind_;
  ArenaMap weights_;  // compact row encoding -> (left, right) weights, 16 bytes, not both 0
  StoredEntries stored_;
};

}  // namespace fld
