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
//     non-NULL value (COUNT 0); STDDEV/VARIANCE over DECIMALs exactly as GROUP BY computes them
//     (the window's STDDEV/VARIANCE over integers and floats is a MomentOp, core/operators/moment.h);
//   - DISTINCT aggregates (COUNT, SUM, AVG, STDDEV/VARIANCE over each distinct value once);
//   - ARRAY_AGG(x): x of the frame's rows in frame order, NULLs included (ARRAY_AGG(DISTINCT x):
//     the distinct values in order); MAP_AGG(k, v): an entry per non-NULL k, the largest v of a
//     key winning, as in GROUP BY; both NULL over a frame with no rows, both skip the rows whose
//     FILTER column (agg.filter) is not TRUE.
//     These are computed from each frame's values: a sliding multiset with exact running sums
//     (integers, decimals) where the frame's ends only move forward, the frame's rows one by one
//     under EXCLUDE and for ARRAY_AGG / MAP_AGG.
// Frames (PostgreSQL's semantics): ROWS between UNBOUNDED PRECEDING, n PRECEDING, CURRENT ROW,
// n FOLLOWING, UNBOUNDED FOLLOWING (positions); GROUPS with the same bounds counted in peer
// groups (n PRECEDING starts at the first row of the peer group n groups back, n FOLLOWING ends
// at the last row of the group n ahead); RANGE with the same bounds over the single order
// key's value (v - n .. v + n, mirrored for DESC; CURRENT ROW means the row's peers; a row whose
// key is NULL has its NULL peers as offset frame). RANGE offsets over DATE and TIMESTAMP keys
// are INTERVALs: day-time ones move the instant (a DATE counts as its midnight, so
// `INTERVAL '36' HOUR PRECEDING` from a date reaches back 1 day), year-month ones the calendar
// date (the day clamped to the month's last); over TIME a day-time INTERVAL, without wrapping
// around midnight. The default frame is RANGE UNBOUNDED PRECEDING .. CURRENT ROW with ORDER BY
// and the whole partition without. EXCLUDE CURRENT ROW / GROUP / TIES takes the row itself /
// its peer group / its peers but itself out of the frame (NO OTHERS, the default: nothing).
// Per step: the change is split by partition. In each touched partition only the rows whose
// output may change are recomputed: those whose frame (or LAG/LEAD row) may hold a changed row,
// for ranking functions the rows from the first change on, for NTILE, PERCENT_RANK and
// CUME_DIST (which depend on the partition's size) all. Their output before and after folding
// in the change is computed over just the rows it reads (the frames of those rows) and the
// difference is emitted (-old +new, one copy per output row). So a change costs in proportion to
// the rows it reaches (plus a walk over the partition's rows before it for the ranking
// functions), not to the partition.
// Bounded state: when the first ORDER BY key (ascending) has a waterline (core/circuit/waterline.h)
// every future change lies at or after it, so a row whose output no such change can reach is
// final, and a final row that no other row still to change reads can be discarded (as Feldera
// does). The rows kept are those of the last frame extent behind the waterline, so the state of a
// partition stays bounded however long the stream. Discarding needs frames that do not reach
// to an unbounded end and, unless the key is NOT NULL, RANGE frames only (a NULL key could enter
// anywhere else); it is off with NTILE, PERCENT_RANK and CUME_DIST. Each partition remembers how
// many rows and peer groups it discarded (ROW_NUMBER, RANK and DENSE_RANK count them). Touched
// partitions are cleaned after each step, and a few untouched ones per step in turn.
// State: the integrated input per partition, kept sorted: a B-tree of order keys
// (core/zset/order_key.h: the ORDER BY keys, then the rest of the row, as bytes that memcmp orders
// as the ORDER BY then the whole row does) -> weight, a row of a few small columns inline in the
// tree's node, no heap node or vector of Values per row; a step decodes only the rows its walks
// reach (once each). And the discarded counts; each partition is one keyed entry (core/circuit/partitions.h): a
// checkpoint saves the partitions a step changed, and memory may hold only those in use, the others read back from the
// store when a change reaches them (the sweep that cleans untouched partitions sees those in
// memory).
#pragma once

#include <absl/container/btree_map.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/circuit/operator.h"
#include "core/circuit/partitions.h"
#include "core/circuit/waterline.h"
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
  kAggregate,  // agg.kind: COUNT(*), COUNT, SUM, AVG, MIN, MAX, STDDEV/VARIANCE, ARRAY_AGG, MAP_AGG
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
  AggSpec agg;           // kAggregate: kind, arg (input column), arg_type, result_type
  int arg = -1;          // LAG/LEAD/FIRST_VALUE/LAST_VALUE: the value column
  int64_t offset = 1;    // LAG/LEAD; NTILE's bucket count, NTH_VALUE's position (both >= 1)
  int default_col = -1;  // LAG/LEAD: the default column, -1 for NULL
  bool rows = false;     // ROWS frame (else RANGE, or GROUPS with `groups`)
  bool groups = false;   // GROUPS frame (offsets in `rows` of the bounds)
  enum class Exclude : uint8_t { kNoOthers, kCurrentRow, kGroup, kTies } exclude = Exclude::kNoOthers;
  bool date_key = false;  // RANGE over a DATE order key (days; INTERVAL offsets are compared in time)
  WindowBound start{WindowBound::Kind::kUnboundedPreceding, 0, {}}, end{WindowBound::Kind::kCurrentRow, 0, {}};
  PhysType result = PhysType::kI64;
};

// One partition of a window operator: its rows, sorted (order key -> weight, never 0), and what
// was discarded behind the waterline.
struct WindowPartition {
  absl::btree_map<InlineKey, int64_t, InlineKeyLess> rows;
  size_t heap = 0;  // bytes the keys too long to be inline hold
  int64_t dropped_rows = 0, dropped_groups = 0;
};

class WindowOp : public PartitionedOperator<WindowPartition> {
 public:
  WindowOp(std::vector<PhysType> in_types, std::vector<int> partition, std::vector<SortKey> order,
           std::vector<WindowFn> fns);
  ~WindowOp() override;
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "window"; }
  std::string Describe() const override;
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;
  void BeginRestore(StateReader& r) override;

  const std::vector<PhysType>& out_types() const { return out_types_; }
  const std::vector<SortKey>& order() const { return order_; }
  // The first order key never holds NULL (lets rows be discarded under ROWS frames and ranking).
  void SetOrderKeyNotNull(bool v) { key_not_null_ = v; }
  // The waterline of the first order key: rows behind it that no future change can reach are
  // discarded (when the functions and frames allow it; see above).
  void SetWaterline(WaterlineRef w);
  bool discards() const { return gc_; }
  // The rows kept, over all partitions (for tests).
  size_t StateRows() const;

 private:
  using Row = std::vector<Value>;
  using Contents = decltype(WindowPartition::rows);
  using Part = WindowPartition;
  class RowCache;
  // One output row: an input row (one copy) and the values of the functions.
  struct Out {
    const Row* row;
    std::vector<Value> vals;
  };
  // Where a row `src` lies from a row `of` in the partition: after it or not, peers, and the
  // distance in rows (copies) and peer groups (0 for the same row / group), never more than the
  // true one.
  struct Rel {
    bool after = false, peer = false;
    int64_t dist = 0, gdist = 0;
  };
  // The output of rows[lo, hi), where `rows` (copies in partition order) is a slice of the
  // partition holding every row those outputs read; base / base_groups: the rows and peer groups
  // of the partition before the slice.
  std::vector<Out> Compute(const std::vector<const Row*>& rows, size_t lo, size_t hi, int64_t base,
                           int64_t base_groups) const;
  // Whether the output of a row whose first order key is `of` may depend on a row `src` (key
  // `src_key`) at `rel` from it. `context`: what the row reads (ranking functions read only counts
  // of the rows before them), else whether a change of src may change the output.
  bool Depends(const Value& of, const Value& src_key, const Rel& rel, bool context) const;
  // Discards the rows of p behind the waterline that nothing still reads; returns whether it did.
  bool Collect(Part& p) const;
  // The sort part of a row's order key (the ORDER BY values: peers share it).
  std::string_view SortPart(const InlineKey& okey) const {
    const std::string_view v = okey.view();
    return v.substr(0, OrderKeySortBytes(v, order_, in_types_));
  }
  // Adds w to the row whose order key is okey (keeping an entry of weight 0: the caller erases it).
  static Contents::iterator AddRow(Part* p, std::string_view okey, int64_t w);
  // Reads a stored row (the row encoding) as an order key, checked against the columns.
  void StoredRowKey(std::string_view enc, std::string* okey) const;
  std::string PartitionKey(const Row& row) const;
  // Reads the whole state as SaveState writes it (the partitions all changed).
  void RestoreWhole(StateReader& r);
  Value Key(const Row& row) const { return order_.empty() ? Value::Null() : row[order_[0].column]; }

  std::vector<PhysType> in_types_, out_types_;
  std::vector<int> partition_;
  std::vector<SortKey> order_;
  std::vector<WindowFn> fns_;
  bool key_not_null_ = false;
  bool need_base_ = false;  // a ranking function: counts of the rows before a slice
  bool gc_ = false;
  WaterlineRef waterline_;
  std::string sweep_next_;  // the next untouched partition to clean
  // The rows a step's walks decode (RowCache in window.cc), kept for their buffers.
  std::unique_ptr<RowCache> cache_;
  // (parts_: partition key encoding -> sorted rows)
};

}  // namespace fld
