// EXCEPT ALL / INTERSECT ALL: multiset difference and intersection of two inputs. A row's output
// multiplicity is max(l - r, 0) (EXCEPT ALL) or min(l, r) (INTERSECT ALL) of its integrated
// multiplicities on the left and right, as in PostgreSQL (a multiplicity below zero counts as
// zero). Per changed row it emits the change of that function. State: both integrated inputs
// (row encoding -> (left weight, right weight)).
#pragma once

#include <unordered_map>
#include <utility>

#include "core/circuit/operator.h"

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

 private:
  int64_t Multiplicity(std::pair<int64_t, int64_t> lr) const;
  Kind kind_;
  std::unordered_map<std::string, std::pair<int64_t, int64_t>> weights_;
};

}  // namespace fld
