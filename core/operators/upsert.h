// Upsert: the input of a table with a PRIMARY KEY. An inserted row whose key exists replaces the
// old row (emits -old, +new); a deleted row removes whatever row has its key (emits -old, or
// nothing when the key is absent; an inserted row equal to the key's row is no change). Changes
// within a step apply in order, and the output lists each input row's changes in input order
// (whatever the number of workers), unconsolidated: a key written twice in a step gives both
// replacements.
//
// State: key -> row, both in the compact row encoding (core/zset/batch.h), in an ArenaMap (no
// heap node per key). With a ThreadPool of more than one worker the keys are sharded across the
// workers (core/zset/exchange.h: KeyShard of the key's encoding): a step encodes the keys of its
// rows in parallel slices, then each worker applies the rows of its keys in input order (a key's
// changes all reach one worker, in order), prefetching the table slots and records some rows
// ahead.
// Keyed state (core/circuit/operator.h): one entry per key (key encoding -> row), no header; a
// checkpoint writes the keys changed since the last one. It can be backed by the store: memory
// then caches the rows, a miss reads the stored one, and a lazy restore loads nothing. A
// checkpoint written before the state was keyed holds the whole state in the header
// (SaveState's form: the count, then key and row per key): it is read whole and written out at
// the next checkpoint.
// The rows held are the table's contents (the integral of the output): IntegralContents lists
// them, for a checkpoint to write the materialized table from them rather than from its changes.
#pragma once

#include <vector>

#include "core/circuit/operator.h"
#include "core/common/thread_pool.h"
#include "core/zset/arena_map.h"

namespace fld {

class UpsertOp : public Operator {
 public:
  UpsertOp(std::vector<PhysType> types, std::vector<int> key_cols, ThreadPool* pool = nullptr);
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "upsert"; }
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
  // The table's rows are the output's integral (listable while no entry was evicted).
  std::optional<size_t> IntegralRows() const override;
  std::vector<Batch> IntegralContents(ThreadPool* pool) const override;
  void PinIntegral(bool pin) override { pinned_ = pin; }

 private:
  // A worker's part of the keys: those KeyShard maps to it.
  struct alignas(64) Shard {  // (cache-line aligned: see AggregateOp::Shard)
    ArenaMap rows;            // key encoding -> row encoding (both compact)
    StoredEntries stored;
  };
  // The keys of a slice of one step's rows (from row `first` on): the k-th row's key is bytes
  // [ends[k - 1], ends[k]) of `bytes` (from 0 for k = 0), with its ArenaMap::Hash and its shard.
  struct Keys {
    size_t first = 0;
    std::string bytes;
    std::vector<uint32_t> ends, hashes;
    std::vector<uint8_t> shards;
    std::string_view Key(size_t k) const {
      const uint32_t from = k == 0 ? 0 : ends[k - 1];
      return std::string_view(bytes).substr(from, ends[k] - from);
    }
  };
  // Encodes the keys of rows [keys->first, to) of `in`.
  void EncodeKeys(const Batch& in, size_t to, Keys* keys) const;
  // Applies the rows of `in` whose key is in shard `s`, in order (`keys`: the slices' keys, in
  // row order), appending the output to *out and, per input row that gave output rows, the row
  // and their number to *from (MergeByKey's groups, core/zset/exchange.h).
  void StepShard(uint32_t s, const Batch& in, const std::vector<Keys>& keys, BatchBuilder* out,
                 std::vector<std::pair<uint32_t, uint32_t>>* from);
  // The slot of `key` in the shard: in memory, else read back from the store (when it may hold
  // it), else kNone.
  uint32_t Locate(Shard& sh, std::string_view key, uint32_t hash);
  Shard& ShardOf(std::string_view key);
  bool pinned_ = false;  // PinIntegral: StateCommitted evicts nothing
  // A stored or saved row, checked against the columns (a corruption error otherwise).
  void CheckRow(std::string_view row) const;
  // Reads SaveState's form (the keys all changed).
  void RestoreWhole(StateReader& r);

  std::vector<PhysType> types_;
  std::vector<int> key_cols_;
  ThreadPool* pool_;
  std::vector<Shard> shards_;
};

}  // namespace fld
