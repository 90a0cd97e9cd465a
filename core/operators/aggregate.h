// GROUP BY aggregation, incremental.
//
// Input columns: the group key columns first (num_keys of them), then the aggregates' argument
// columns (AggSpec::arg indexes the input). Output: one row per group, the key columns then one
// column per aggregate. Per step:
//   1. pre-aggregate the change batch by group (a 64K-row batch over 9 groups touches state 9
//      times); a single integer key takes a vectorized fast path with no per-row hashing of
//      strings when its values span a small range;
//   2. for each changed group, in key order: compute the old output row, fold in the partial,
//      compute the new row, and emit (-1 old, +1 new) when they differ.
// COUNT, SUM and AVG are linear (count, non-NULL count, sum); MIN, MAX and every DISTINCT
// aggregate keep per group an ordered multiset value -> weight, so deletions stay right.
// A group whose row weight returns to 0 disappears. Without GROUP BY (global) the output always
// has exactly one row, emitted at the first step even when the input is empty.
// SUM(integer) is BIGINT; AVG is DOUBLE (PostgreSQL and DuckDB compute a fractional average;
// Feldera truncates integer averages); integer sums that overflow 64 bits raise an error.
#pragma once

#include <map>
#include <unordered_map>

#include "core/circuit/operator.h"
#include "core/common/thread_pool.h"
#include "core/types/types.h"

namespace fld {

enum class AggKind : uint8_t { kCountStar, kCount, kSum, kAvg, kMin, kMax };

struct AggSpec {
  AggKind kind = AggKind::kCountStar;
  bool distinct = false;
  int arg = -1;  // input column (not for COUNT(*))
  SqlType arg_type;
  SqlType result_type;
};

class AggregateOp : public Operator {
 public:
  // `pool` (may be null) pre-aggregates large batches in parallel, in fixed-size slices merged in
  // slice order, so the result does not depend on the number of threads.
  AggregateOp(std::vector<PhysType> in_types, int num_keys, std::vector<AggSpec> aggs, ThreadPool* pool = nullptr);
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return num_keys_ == 0 ? "aggregate(global)" : "aggregate"; }
  std::string Describe() const override;
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;

 private:
  struct Acc {
    int64_t count = 0;                // weighted count of non-NULL values
    int64_t isum = 0;                 // exact sum (integers, decimals in units of the scale)
    double dsum = 0;                  // floating sum
    std::map<Value, int64_t> values;  // MIN/MAX/DISTINCT: value -> weight (no zero weights)
  };
  struct Group {
    int64_t rows = 0;
    std::vector<Acc> accs;
  };
  bool UsesMultiset(const AggSpec& a) const { return a.distinct || a.kind == AggKind::kMin || a.kind == AggKind::kMax; }
  Value Result(const AggSpec& a, const Group& g, const Acc& acc) const;
  // Fast path for one integer key spanning a small range and linear aggregates: group ids are
  // key - min, no hashing. Returns false when the batch does not qualify.
  bool SmallKeyPreaggregate(const Batch& in, std::vector<std::string>* keys, std::vector<Group>* partial) const;
  void Fold(Group* into, const Group& partial) const;

  std::vector<PhysType> in_types_;
  ThreadPool* pool_ = nullptr;
  int num_keys_;
  std::vector<AggSpec> aggs_;
  std::vector<PhysType> out_types_;
  std::unordered_map<std::string, Group> groups_;  // key encoding -> group
  bool initialized_ = false;                       // global: the initial row was emitted
};

}  // namespace fld
