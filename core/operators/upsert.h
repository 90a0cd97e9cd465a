// Upsert: the input of a table with a PRIMARY KEY. An inserted row whose key exists replaces the
// old row (emits -old, +new); a deleted row removes whatever row has its key (emits -old, or
// nothing when the key is absent). Changes within a step apply in order. State: key -> row.
#pragma once

#include <unordered_map>

#include "core/circuit/operator.h"

namespace fld {

class UpsertOp : public Operator {
 public:
  UpsertOp(std::vector<PhysType> types, std::vector<int> key_cols)
      : types_(std::move(types)), key_cols_(std::move(key_cols)) {}
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "upsert"; }
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;

 private:
  std::vector<PhysType> types_;
  std::vector<int> key_cols_;
  std::unordered_map<std::string, std::string> rows_;  // key encoding -> row encoding
};

}  // namespace fld
