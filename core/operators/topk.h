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
// input, kept sorted per partition), walks the first rows of each touched partition again and
// emits the difference between the old and the new window: a step costs
// O(|delta| log |state| + touched partitions * (m + n)), whatever the size of the input.
// Order: the keys in turn (ASC or DESC; NULL sorts as the smallest value unless NULLS FIRST /
// LAST says otherwise, as in Feldera), then the whole row, so that ties at the window's edge are
// broken the same way on every run and after every restore.
// State: the integrated input (row -> weight) per partition, each partition one keyed entry
// (core/circuit/partitions.h): a checkpoint saves the partitions a step changed, and memory may
// hold only those in use, the others read back from the store when a change reaches them. The
// windows are recomputed from the contents when a partition is restored or read back.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/circuit/operator.h"
#include "core/circuit/partitions.h"

namespace fld {

struct SortKey {
  int column = 0;
  bool desc = false;
  bool nulls_first = true;
};

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

// A partition's rows sorted by the keys then the whole row, with their weights (top-K, windows).
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

// One partition of a top-K: its integrated input, sorted, and the window last emitted.
struct TopKPartition {
  SortedRows contents;
  std::map<std::vector<Value>, int64_t> window;  // output row -> copies
};

class TopKOp : public PartitionedOperator<TopKPartition> {
 public:
  // `partition` (input columns): the per-partition form; `rank` not kNone appends the rank.
  TopKOp(std::vector<PhysType> types, std::vector<SortKey> keys, int64_t limit, int64_t offset,
         std::vector<int> partition = {}, RankKind rank = RankKind::kNone);
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "topk"; }
  std::string Describe() const override;
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;
  void BeginRestore(StateReader& r) override;

 private:
  using Row = std::vector<Value>;
  using Contents = SortedRows;
  using Part = TopKPartition;
  // The current window of one partition: output row -> copies.
  std::map<Row, int64_t> Window(const Contents& contents) const;
  std::string PartitionKey(const Row& row) const;
  // Reads the whole state as SaveState writes it (the partitions all changed).
  void RestoreWhole(StateReader& r);

  std::vector<PhysType> types_, out_types_;
  std::vector<SortKey> keys_;
  int64_t limit_, offset_;
  std::vector<int> partition_;
  RankKind rank_;
  size_t row_bytes_ = 0;  // memory per row held, roughly
  // (parts_: partition key encoding -> contents and window)
};

}  // namespace fld
