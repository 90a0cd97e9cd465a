// Integrate (I): the running sum of a change stream, i.e. a materialized relation's contents.
// Its output is its input (it is a sink that also passes the change through); Contents() gives
// the integrated rows. State: row encoding -> weight in an ArenaMap, rows of weight 0 removed.
// KeepNothing() turns it into a pass-through for callers that keep the contents elsewhere (a
// pipeline's state store holds every materialized relation): no memory per row, no work.
#pragma once

#include "core/circuit/operator.h"
#include "core/zset/arena_map.h"

namespace fld {

class IntegrateOp : public Operator {
 public:
  explicit IntegrateOp(std::vector<PhysType> types) : types_(std::move(types)) {}
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "integrate"; }
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;
  Batch Contents() const;  // sorted by row encoding
  // Replaces the contents (restoring a checkpoint, whose relations are stored on their own).
  void Load(const Batch& contents);
  size_t size() const { return rows_.size(); }
  void KeepNothing() {
    keep_ = false;
    rows_.Clear();
  }
  bool keeps() const { return keep_; }

 private:
  std::vector<PhysType> types_;
  void AddRow(std::string_view key, int64_t w);
  ArenaMap rows_;  // row encoding -> int64 weight (never 0)
  bool keep_ = true;
};

}  // namespace fld
