// Top-K: ORDER BY ... LIMIT n [OFFSET m] of a view, and the per-partition top-K of
// `ROW_NUMBER() / RANK() / DENSE_RANK() OVER (PARTITION BY p ORDER BY o) <= n`, maintained
// incrementally.
//
// Without a partition key the output is the Z-set of the rows at positions m .. m+n-1 of the
// input's integrated contents sorted by the keys (each row counted as many times as its weight).
// With a partition key (and a rank kind) the contents are split by the partition columns and
// the output is, per partition, every row whose rank is at most n, with the rank appended as a
// last BIGINT column (with a partition key and no rank kind, LIMIT n OFFSET m applies to each
// partition and no column is appended): ROW_NUMBER numbers the copies 1, 2, ...; RANK is 1 + the number of rows
// sorting strictly before the row's peers (rows equal on the keys); DENSE_RANK counts the peer
// groups up to the row's. Per step the operator folds the change into its state (the integrated
// input, kept sorted per partition): per touched partition (the step's rows grouped by
// partition, each partition found once) it walks the first rows before and after folding in its
// rows and emits the difference between the two windows: a step costs
// O(|delta| log |state| + touched partitions * (m + n)), whatever the size of the input. The
// emitted windows are not kept: the old one is the window of the contents before the step.
// Order: the keys in turn (ASC or DESC; NULL sorts as the smallest value unless NULLS FIRST /
// LAST says otherwise, as in Feldera), then the whole row, so that ties at the window's edge are
// broken the same way on every run and after every restore.
// State: the integrated input (row -> weight) per partition, each partition one keyed entry
// (core/circuit/partitions.h): a checkpoint saves the partitions a step changed, and memory may
// hold only those in use, the others read back from the store when a change reaches them. In
// memory a partition's rows are order keys (core/zset/order_key.h) in a B-tree; stored, the rows
// in the row encoding, in order.
#pragma once

#include <absl/container/btree_map.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/circuit/operator.h"
#include "core/circuit/partitions.h"
#include "core/common/thread_pool.h"
#include "core/zset/exchange.h"
#include "core/zset/order_key.h"

namespace fld {

// Compares two rows by the sort keys alone: < 0 when a sorts first, 0 when they are peers.
int CompareByKeys(const std::vector<SortKey>& keys, const std::vector<Value>& a, const std::vector<Value>& b);

// Orders rows by the sort keys, then by the whole row (a total order, the same on every run).
struct SortedRowLess {
  const std::vector<SortKey>* keys;
  bool operator()(const std::vector<Value>& a, const std::vector<Value>& b) const {
    int c = CompareByKeys(*keys, a, b);
    return c != 0 ? c < 0 : a < b;
  }
};

// A partition's rows sorted by the keys then the whole row, with their weights: the order and the
// stored form of top-K's and window functions' partitions (which keep order keys in memory; tests
// check those against this map).
using SortedRows = std::map<std::vector<Value>, int64_t, SortedRowLess>;
// The stored form of one partition's rows: U64 count, then per row in order its values' encoding
// (EncodeValue) and weight. SaveRow writes one row's part.
void SaveRow(const std::vector<Value>& row, int64_t weight, StateWriter& w);
void SaveSortedRows(const SortedRows& rows, StateWriter& w);
// Reads SaveSortedRows' form into *rows; a row without `width` values is corruption (`what`
// names the operator).
void LoadSortedRows(StateReader& r, size_t width, const char* what, SortedRows* rows);

// The number a ranking function gives each row of a sorted partition.
enum class RankKind : uint8_t { kNone, kRowNumber, kRank, kDenseRank };

// One partition of a top-K: its integrated input, sorted: each row's order key
// (core/zset/order_key.h) -> its weight (never 0). A B-tree of byte strings, inline up to 23
// bytes (a row of a few small integers): no heap node and no vector of Values per row, and a
// comparison is a memcmp within the tree's node.
struct TopKPartition {
  absl::btree_map<InlineKey, int64_t, InlineKeyLess> contents;
  size_t heap_bytes = 0;  // bytes the keys hold outside the tree (those too long to be inline)
  // Whether the window last computed is full: its rows take every place the window has, so a
  // change only to rows sorting after `edge` leaves it as it is (and a step whose rows all do
  // walks no window). `edge`: the order key of the window's last row, or its sort part for RANK
  // and DENSE_RANK (whose ties at the edge are in the window too). Not full when unknown (a
  // partition read back from the store).
  bool full = false;
  InlineKey edge;
  // Rows added with positive weights while the window was full, all sorting after its edge (most
  // rows of a top-K over an append-only input): kept here unsorted rather than inserted into
  // `contents` (a B-tree insert was half of a 10M-bid top 3's time). Adding rows leaves a full
  // window full and moves its edge only earlier, so no window can reach these before a step
  // brings a negative weight to the partition, which inserts them first. A key may be here more
  // than once, or in contents too: weights add. mutable: whole-partition readers (saves) sort it
  // in place. Weight 1 each (rows of other positive weights go into contents).
  mutable std::vector<InlineKey> pending;
};

// With a ThreadPool of more than one worker and a partition key, the partitions are sharded by
// key (core/zset/exchange.h): a step splits its rows by partition key, each worker steps its
// shard's partitions, and the outputs merge in partition key order, as one shard gives them, so
// outputs, saved and stored state do not depend on the number of workers.
class TopKOp : public Operator {
 public:
  // `partition` (input columns): the per-partition form; `rank` not kNone appends the rank.
  TopKOp(std::vector<PhysType> types, std::vector<SortKey> keys, int64_t limit, int64_t offset,
         std::vector<int> partition = {}, RankKind rank = RankKind::kNone, ThreadPool* pool = nullptr);
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "topk"; }
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

 private:
  using Row = std::vector<Value>;
  using Part = TopKPartition;
  using Shard = Partitions<Part>;
  // A row of a window: the row (its order key), its rank (ROW_NUMBER, RANK or DENSE_RANK; 0
  // without) and its copies.
  struct WindowRow {
    InlineKey row;
    int64_t rank, copies;
  };
  // The output order of window rows: by order key (the window's order), then rank.
  static bool Before(const WindowRow& a, const WindowRow& b) {
    const int c = a.row.view().compare(b.row.view());
    return c != 0 ? c < 0 : a.rank < b.rank;
  }
  // The current window of one partition into *w (cleared first), in output order (Before).
  // Walks the partition's first rows only (those up to the last one the window holds) and
  // decodes none. With `edge` not null, sets *edge and *full as TopKPartition's fields mean.
  void Window(const Part& part, std::vector<WindowRow>* w, InlineKey* edge = nullptr, bool* full = nullptr) const;
  // Whether a change to the row whose order key is `key` leaves the partition's window as it is
  // (the window is full and the row sorts after its edge).
  bool PastWindow(const Part& part, std::string_view key) const;
  // Steps the rows `rows` of `in` (sorted by partition key; pkeys[r]: row r's) in one shard:
  // appends the output to *out and, when `emitted` is not null, per partition in key order its
  // key (a view of pkeys) and the number of output rows it gave (MergeByKey's groups).
  void StepRows(Shard& shard, const Batch& in, const std::vector<std::string>& pkeys, std::span<const uint32_t> rows,
                BatchBuilder* out, std::vector<std::pair<std::string_view, uint32_t>>* emitted) const;
  Shard& ShardOf(std::string_view pkey) { return *shards_[KeyShard(pkey, static_cast<uint32_t>(shards_.size()))]; }
  std::string PartitionKey(const Row& row) const;
  // Adds weight w to the row whose order key is `key`.
  static void AddRow(Part* part, std::string_view key, int64_t w);
  // Sorts the partition's pending rows by order key (in place: they are the same rows).
  static void SortPending(const Part& part);
  // Inserts the partition's pending rows into its contents.
  static void FlushPending(Part* part);
  // f(order key, weight) for each row of the partition, contents and pending summed, in order;
  // rows whose weights sum to 0 skipped.
  template <typename F>
  static void ForEachRow(const Part& part, F f);
  // The stored form of a partition (SaveSortedRows') and back.
  void EncodePart(const Part& part, std::string* out) const;
  void DecodePart(std::string_view value, Part* part) const;
  // A stored row (row encoding) checked against the columns (a corruption error otherwise).
  Row StoredRow(std::string_view enc) const;
  // Reads the whole state as SaveState writes it (the partitions all changed).
  void RestoreWhole(StateReader& r);

  std::vector<PhysType> types_, out_types_;
  std::vector<SortKey> keys_;
  int64_t limit_, offset_;
  std::vector<int> partition_;
  RankKind rank_;
  ThreadPool* pool_;
  // Partition key encoding -> its contents; one shard per worker (one without a pool or without
  // a partition key).
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace fld
