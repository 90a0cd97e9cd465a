#include "core/operators/distinct.h"

#include <algorithm>
#include <cstring>

namespace fld {

Batch DistinctOp::Step(std::span<const Batch* const> inputs) {
  Batch delta = Consolidate(*inputs[0]);
  std::vector<uint32_t> sel;
  std::vector<int64_t> out_w;
  std::string key;
  for (size_t r = 0; r < delta.size(); ++r) {
    key.clear();
    EncodeRow(&key, delta, r);
    uint32_t slot = Locate(key);
    int64_t before = 0;
    if (slot != ArenaMap::kNone) std::memcpy(&before, weights_.Value(slot).data(), 8);
    const int64_t after = before + delta.weights[r];
    if (slot == ArenaMap::kNone) {
      if (after != 0) {
        weights_.Insert(key, std::string_view(reinterpret_cast<const char*>(&after), 8));
        gc_.Added(key);
      }
    } else if (after == 0) {
      gc_.Removed(key);
      stored_.Erased(key);
      weights_.Erase(slot);
    } else {
      std::memcpy(weights_.MutableValue(slot), &after, 8);
    }
    if (before <= 0 && after > 0) {
      sel.push_back(static_cast<uint32_t>(r));
      out_w.push_back(1);
    } else if (before > 0 && after <= 0) {
      sel.push_back(static_cast<uint32_t>(r));
      out_w.push_back(-1);
    }
  }
  Batch out = Gather(delta, sel);
  out.weights = std::move(out_w);
  for (auto& k : gc_.TakeBelow()) {
    uint32_t slot = weights_.Find(k);
    if (slot != ArenaMap::kNone) {
      stored_.Erased(k);
      weights_.Erase(slot);
    } else {
      stored_.EraseStoreOnly(std::move(k));
    }
  }
  return out;
}

uint32_t DistinctOp::Locate(std::string_view key) {
  uint32_t slot = weights_.Find(key);
  if (slot != ArenaMap::kNone) return slot;
  return stored_.Load(weights_, key, [&](const std::string& value) {
    if (value.size() != 8)
      Fail(ErrorKind::kCorruption, "a distinct operator's stored weight has {} bytes", value.size());
    weights_.Insert(key, value);
  });
}

void DistinctOp::StateCommitted(bool evict) {
  if (!stored_.Committed() || !evict) return;
  stored_.Evicted(weights_.EvictClean([](uint32_t) {}));
}

std::string DistinctOp::Describe() const {
  if (!gc_.active()) return Name();
  return "distinct (discards rows below the waterline of $" + std::to_string(gc_.column()) + ")";
}

void DistinctOp::SaveState(StateWriter& w) const {
  if (stored_.backed())
    Fail(ErrorKind::kRuntime, "distinct: the whole state of a store-backed distinct is in the store");
  SaveWeights(w, weights_);
}

void DistinctOp::RestoreState(StateReader& r) {
  BeginRestore(r);
  uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    std::string k = r.Str();
    const int64_t w = r.I64();
    RestoreEntry(k, std::string_view(reinterpret_cast<const char*>(&w), 8));
  }
  // Every entry stays changed: the next SaveChanges writes them all.
}

// Keyed state: row encoding -> 8-byte weight, no header.
void DistinctOp::SaveChanges(StateWriter&, StateDelta& d) {
  stored_.SaveChanges(weights_, d);
}

void DistinctOp::BeginRestore(StateReader&) {
  weights_.Clear();
  gc_.Clear();
  stored_.Reset();
}

void DistinctOp::RestoreEntry(std::string_view key, std::string_view value) {
  if (value.size() != 8) Fail(ErrorKind::kCorruption, "a distinct operator's stored weight has {} bytes", value.size());
  weights_.Insert(key, value);
  gc_.Added(std::string(key));
}

}  // namespace fld
