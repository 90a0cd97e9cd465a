#include "core/operators/upsert.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/common/error.h"
#include "core/zset/exchange.h"

namespace fld {

namespace {

// Rows per slice of the keys' encoding (a step below this encodes them on its own thread).
constexpr size_t kSliceRows = 4096;

}  // namespace

UpsertOp::UpsertOp(std::vector<PhysType> types, std::vector<int> key_cols, ThreadPool* pool)
    : types_(std::move(types)), key_cols_(std::move(key_cols)), pool_(pool) {
  const size_t shards = pool_ ? std::min<size_t>(pool_->workers(), 256) : 1;
  shards_.resize(std::max<size_t>(shards, 1));
}

std::string UpsertOp::Describe() const {
  std::string s = "upsert KEY";
  for (int c : key_cols_) s += fmt::format(" ${}", c);
  if (shards_.size() > 1) s += fmt::format(" ({} shards)", shards_.size());
  return s;
}

UpsertOp::Shard& UpsertOp::ShardOf(std::string_view key) {
  return shards_[KeyShard(key, static_cast<uint32_t>(shards_.size()))];
}

void UpsertOp::EncodeKeys(const Batch& in, size_t to, Keys* keys) const {
  const uint32_t shards = static_cast<uint32_t>(shards_.size());
  for (size_t r = keys->first; r < to; ++r) {
    const size_t from = keys->bytes.size();
    for (int c : key_cols_) EncodeCompactValue(&keys->bytes, *in.cols[c], r);
    const std::string_view key = std::string_view(keys->bytes).substr(from);
    keys->ends.push_back(static_cast<uint32_t>(keys->bytes.size()));
    keys->hashes.push_back(ArenaMap::Hash(key));
    keys->shards.push_back(static_cast<uint8_t>(shards == 1 ? 0 : KeyShard(key, shards)));
  }
}

uint32_t UpsertOp::Locate(Shard& sh, std::string_view key, uint32_t hash) {
  const uint32_t slot = sh.rows.Find(key, hash);
  if (slot != ArenaMap::kNone) return slot;
  return sh.stored.Load(sh.rows, key, [&](const std::string& value) {
    CheckRow(value);
    sh.rows.Insert(key, value);
  });
}

void UpsertOp::CheckRow(std::string_view row) const {
  if (!RowEncodingFits(row, types_))
    Fail(ErrorKind::kCorruption, "a primary key's stored row is malformed or does not fit the table's columns");
}

void UpsertOp::StepShard(uint32_t s, const Batch& in, const std::vector<Keys>& keys, BatchBuilder* out,
                         std::vector<std::pair<uint32_t, uint32_t>>* from) {
  Shard& sh = shards_[s];
  // This shard's rows, in input order (a row of weight 0 is no change, not a delete).
  struct Mine {
    uint32_t row, hash;
    std::string_view key;
  };
  std::vector<Mine> mine;
  for (const Keys& k : keys)
    for (size_t i = 0; i < k.hashes.size(); ++i)
      if (k.shards[i] == s && in.weights[k.first + i] != 0)
        mine.push_back({static_cast<uint32_t>(k.first + i), k.hashes[i], k.Key(i)});
  // A lookup is two cache misses (the slot, then the record): the slots are fetched some rows
  // ahead, the records nearer.
  constexpr size_t kSlotAhead = 16, kRecordAhead = 8;
  for (size_t i = 0; i < std::min(kSlotAhead, mine.size()); ++i) sh.rows.Prefetch(mine[i].hash);
  std::string row;
  for (size_t i = 0; i < mine.size(); ++i) {
    if (i + kSlotAhead < mine.size()) sh.rows.Prefetch(mine[i + kSlotAhead].hash);
    if (i + kRecordAhead < mine.size()) sh.rows.PrefetchRecord(mine[i + kRecordAhead].hash);
    const auto [r, hash, key] = mine[i];
    const uint32_t slot = Locate(sh, key, hash);
    uint32_t emitted = 0;
    auto retract = [&] {
      DecodeRowInto(sh.rows.Value(slot), out, 0);
      out->AddWeight(-1);
      ++emitted;
    };
    if (in.weights[r] > 0) {
      row.clear();
      for (size_t c = 0; c < in.cols.size(); ++c) EncodeCompactValue(&row, *in.cols[c], r);
      if (slot != ArenaMap::kNone && sh.rows.Value(slot) == row) continue;  // the same row again
      if (slot != ArenaMap::kNone) retract();
      out->AppendFrom(in, r, 1);
      ++emitted;
      if (slot != ArenaMap::kNone)
        sh.rows.Assign(slot, row);
      else
        sh.rows.Insert(key, row);
    } else if (slot != ArenaMap::kNone) {
      retract();
      sh.stored.Erased(key);
      sh.rows.Erase(slot);
    }
    if (emitted > 0) from->emplace_back(r, emitted);
  }
}

Batch UpsertOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  if (in.empty()) return EmptyBatch(types_);
  const size_t n = in.size();
  const bool parallel = pool_ && pool_->workers() > 1;
  const size_t slices = parallel ? (n + kSliceRows - 1) / kSliceRows : 1;
  std::vector<Keys> keys(slices);
  auto encode = [&](size_t i) {
    keys[i].first = i * kSliceRows;
    EncodeKeys(in, slices == 1 ? n : std::min(n, (i + 1) * kSliceRows), &keys[i]);
  };
  if (slices > 1)
    pool_->ParallelFor(slices, encode);
  else
    encode(0);
  const uint32_t shards = static_cast<uint32_t>(shards_.size());
  std::vector<Batch> outs(shards);
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> from(shards);
  auto step = [&](size_t s) {
    BatchBuilder b(types_);
    std::vector<std::pair<uint32_t, uint32_t>> rows;  // (this thread's: see AggregateOp::Step)
    StepShard(static_cast<uint32_t>(s), in, keys, &b, &rows);
    outs[s] = b.Finish();
    from[s] = std::move(rows);
  };
  if (shards == 1) {
    step(0);
    return std::move(outs[0]);
  }
  pool_->ParallelFor(shards, step);
  // The shards' outputs merged by the input row each came from: the order one shard gives.
  return GatherRows(outs, MergeByKey(from), types_, pool_);
}

void UpsertOp::SaveState(StateWriter& w) const {
  std::vector<std::pair<std::string_view, std::string_view>> all;
  for (const Shard& sh : shards_) {
    if (sh.stored.backed())
      Fail(ErrorKind::kRuntime, "upsert: the whole state of a store-backed primary key is in the store");
    sh.rows.ForEachSlot([&](uint32_t s) { all.emplace_back(sh.rows.Key(s), sh.rows.Value(s)); });
  }
  std::sort(all.begin(), all.end());
  w.U64(all.size());
  for (const auto& [key, row] : all) {
    w.Str(key);
    w.Str(row);
  }
}

void UpsertOp::RestoreState(StateReader& r) {
  for (Shard& sh : shards_) {
    sh.rows.Clear();
    sh.stored.Reset();
  }
  RestoreWhole(r);
}

void UpsertOp::RestoreWhole(StateReader& r) {
  const uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    const std::string_view stored_key = r.View();
    const std::string_view row = r.View();
    // (checkpoints before the state was keyed hold the keys and rows in the row encoding)
    if (!RowEncodingValid(stored_key)) Fail(ErrorKind::kCorruption, "a primary key's saved key is malformed");
    CheckRow(row);
    const std::string key = CompactRow(stored_key);
    Shard& sh = ShardOf(key);
    const uint32_t slot = sh.rows.Find(key);
    if (slot != ArenaMap::kNone) Fail(ErrorKind::kCorruption, "a primary key's saved state holds a key twice");
    sh.rows.Insert(key, CompactRow(row));
  }
}

void UpsertOp::TrackChanges() {
  for (Shard& sh : shards_) {
    sh.rows.TrackErasures(true);
    sh.stored.Track();
  }
}

// Keyed state: key encoding -> row encoding, no header.
void UpsertOp::SaveChanges(StateWriter&, StateDelta& d) {
  SaveShardChanges(pool_, shards_.size(), d, [&](size_t i, StateDelta& p) {
    Shard& sh = shards_[i];
    sh.stored.SaveChanges(sh.rows, p);
  });
}

void UpsertOp::BeginRestore(StateReader& r) {
  for (Shard& sh : shards_) {
    sh.rows.Clear();
    sh.stored.Reset();
  }
  if (!r.AtEnd()) RestoreWhole(r);  // (stays changed: the next checkpoint stores it keyed)
}

void UpsertOp::RestoreEntry(std::string_view key, std::string_view value) {
  if (!RowEncodingValid(key)) Fail(ErrorKind::kCorruption, "a primary key's stored key is malformed");
  CheckRow(value);
  Shard& sh = ShardOf(key);
  if (sh.rows.Find(key) != ArenaMap::kNone)
    Fail(ErrorKind::kCorruption, "a primary key's stored state holds a key twice");
  sh.rows.MarkClean(sh.rows.Insert(key, value));  // as stored
}

void UpsertOp::BackState(StateSource* source, uint32_t node, bool all_stored) {
  for (Shard& sh : shards_) sh.stored.Attach(source, node, all_stored);
}

void UpsertOp::StateCommitted(bool evict) {
  for (Shard& sh : shards_) {
    if (!sh.stored.Committed() || !evict || pinned_) continue;
    sh.stored.Evicted(sh.rows.EvictClean([](uint32_t) {}));
  }
}

std::optional<size_t> UpsertOp::IntegralRows() const {
  size_t n = 0;
  for (const Shard& sh : shards_) {
    if (sh.stored.backed()) return std::nullopt;  // some rows may be only in the store
    n += sh.rows.size();
  }
  return n;
}

std::vector<Batch> UpsertOp::IntegralContents(ThreadPool* pool) const {
  if (!IntegralRows()) Fail(ErrorKind::kRuntime, "upsert: the table's rows are not all in memory");
  std::vector<Batch> parts(shards_.size());
  auto decode = [&](size_t i) {
    const ArenaMap& rows = shards_[i].rows;
    BatchBuilder b(types_);
    rows.ForEachSlot([&](uint32_t s) {
      DecodeRowInto(rows.Value(s), &b, 0);
      b.AddWeight(1);
    });
    parts[i] = b.Finish();
  };
  if (pool && shards_.size() > 1)
    pool->ParallelFor(shards_.size(), decode);
  else
    for (size_t i = 0; i < shards_.size(); ++i) decode(i);
  return parts;
}

size_t UpsertOp::StateMemoryBytes() const {
  size_t n = 0;
  for (const Shard& sh : shards_) n += sh.rows.MemoryBytes();
  return n;
}

}  // namespace fld
