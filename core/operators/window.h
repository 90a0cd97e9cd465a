// Window functions (f(...) OVER (PARTITION BY p ORDER BY o [frame])), incremental.
//
// Output: every input row (each copy) with one more column per window function, computed over
// the row's partition (the rows equal on the partition columns) sorted by the order keys, ties
// broken by the whole row as in top-K (core/operators/topk.h), so the numbering of peers is the
// same on every run and after every restore. Functions:
//   - ROW_NUMBER (1, 2, ... in order), RANK (1 + the rows sorting strictly before the row's
//     peers, the rows equal on the order keys), DENSE_RANK (the number of peer groups up to the
//     row's); BIGINT;
//   - LAG(x, k, d) / LEAD(x, k, d): x of the row k positions before / after, d where there is
//     none (k a constant, default 1; d evaluated at the current row, default NULL);
//   - FIRST_VALUE(x) / LAST_VALUE(x): x at the first / last row of the frame (NULL if empty);
//     NTH_VALUE(x, k): x at the frame's k-th row (NULL if it has fewer);
//   - NTILE(k): the rows in order cut into k buckets as equal as can be, the first ones one row
//     larger (INTEGER 1..k); PERCENT_RANK: (RANK - 1) / (rows - 1), 0 for a single row;
//     CUME_DIST: the rows up to the row's last peer / rows (both DOUBLE);
//   - COUNT(*), COUNT, SUM, AVG, MIN, MAX over the frame, with the types and rules of GROUP BY
//     aggregation (core/operators/aggregate.h): SUM of integers BIGINT (overflow an error), of
//     DECIMALs DECIMAL(38, s) (exact), AVG in the argument's type; NULL over a frame holding no
//     non-NULL value (COUNT 0).
// Frames (PostgreSQL's semantics): ROWS between UNBOUNDED PRECEDING, n PRECEDING, CURRENT ROW,
// n FOLLOWING, UNBOUNDED FOLLOWING (positions); RANGE with the same bounds over the single order
// key's value (v - n .. v + n, mirrored for DESC; CURRENT ROW means the row's peers; a row whose
// key is NULL has its NULL peers as offset frame). RANGE offsets over DATE and TIMESTAMP keys
// are INTERVALs: day-time ones move the instant (a DATE counts as its midnight, so
// `INTERVAL '36' HOUR PRECEDING` from a date reaches back 1 day), year-month ones the calendar
// date (the day clamped to the month's last); over TIME a day-time INTERVAL, without wrapping
// around midnight. The default frame is RANGE UNBOUNDED PRECEDING .. CURRENT ROW with ORDER BY
// and the whole partition without.
// Per step: the change is split by partition; each touched partition's output is computed before
// and after folding in its rows and the difference is emitted (-old +new, rows in partition
// order, one copy per output row), so a step costs in proportion to the touched partitions'
// sizes (n log n each), not to the whole input.
// State: the integrated input per partition, kept sorted (row -> weight).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/circuit/operator.h"
#include "core/operators/aggregate.h"
#include "core/operators/topk.h"

namespace fld {

enum class WindowFnKind : uint8_t {
  kRowNumber,
  kRank,
  kDenseRank,
  kLag,
  kLead,
  kFirstValue,
  kLastValue,
  kAggregate,  // agg.kind: COUNT(*), COUNT, SUM, AVG, MIN, MAX
  kNtile,
  kPercentRank,
  kCumeDist,
  kNthValue,
};

struct WindowBound {
  enum class Kind : uint8_t { kUnboundedPreceding, kPreceding, kCurrentRow, kFollowing, kUnboundedFollowing };
  // A RANGE offset: a number in the physical form of the order key's type (also a day-time
  // INTERVAL over TIME), or an INTERVAL over DATE / TIMESTAMP: microseconds or months.
  enum class Offset : uint8_t { kNumber, kMicros, kMonths };
  Kind kind = Kind::kCurrentRow;
  int64_t rows = 0;  // ROWS: the offset
  Value range;       // RANGE: the offset
  Offset offset = Offset::kNumber;
};

struct WindowFn {
  WindowFnKind kind = WindowFnKind::kRowNumber;
  AggSpec agg;            // kAggregate: kind, arg (input column), arg_type, result_type
  int arg = -1;           // LAG/LEAD/FIRST_VALUE/LAST_VALUE: the value column
  int64_t offset = 1;     // LAG/LEAD; NTILE's bucket count, NTH_VALUE's position (both >= 1)
  int default_col = -1;   // LAG/LEAD: the default column, -1 for NULL
  bool rows = false;      // ROWS frame (else RANGE)
  bool date_key = false;  // RANGE over a DATE order key (days; INTERVAL offsets are compared in time)
  WindowBound start{WindowBound::Kind::kUnboundedPreceding, 0, {}}, end{WindowBound::Kind::kCurrentRow, 0, {}};
  PhysType result = PhysType::kI64;
};

class WindowOp : public Operator {
 public:
  WindowOp(std::vector<PhysType> in_types, std::vector<int> partition, std::vector<SortKey> order,
           std::vector<WindowFn> fns);
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "window"; }
  std::string Describe() const override;
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;

  const std::vector<PhysType>& out_types() const { return out_types_; }

 private:
  using Row = std::vector<Value>;
  using Contents = std::map<Row, int64_t, SortedRowLess>;
  // One output row: an input row (one copy) and the values of the functions.
  struct Out {
    const Row* row;
    std::vector<Value> vals;
  };
  // The output of one partition, sorted by input row order, then values.
  std::vector<Out> Compute(const Contents& part) const;
  std::string PartitionKey(const Row& row) const;

  std::vector<PhysType> in_types_, out_types_;
  std::vector<int> partition_;
  std::vector<SortKey> order_;
  std::vector<WindowFn> fns_;
  std::map<std::string, Contents> parts_;  // partition key encoding -> sorted rows
};

}  // namespace fld
