// Waterlines (Feldera's term): a waterline of a relation's column is a value W such that every
// future change of the relation (insert or delete) has a value >= W in that column, or NULL.
//
// Where they come from: a LATENESS annotation on a table column (or `LATENESS view.col expr;`)
// puts a lateness operator (core/operators/lateness.h) after the relation; it drops the rows
// behind the waterline and, after each step, advances the waterline to (the largest value it
// has let through) - lateness. That value lives in a WaterlineCell.
//
// How they propagate (decided by the planner, evaluated at run time): a column computed by a
// monotone (non-decreasing) function f of a column with waterline W has waterline f(W), because
// every future value x >= W gives f(x) >= f(W). So waterlines pass through filters and
// projections that keep the column, through CAST(ts AS DATE), `ts + c`, `ts / c` (c > 0) and
// window bucket functions, and through GROUP BY keys to an aggregate's output (a group only
// changes when a row of it does). They do not pass through joins (an old row of one side can
// meet a new row of the other; but an as-of join's left match column keeps the smaller of its
// two match columns' waterlines: a left row's output changes only with it or a right row at or
// before its time) nor temporal filters (which retract old rows as time passes). A WaterlineRef is a cell
// plus the function applied to it.
//
// Who uses them: operators whose state holds values of such a column discard the entries below
// the waterline, which no future change can reach: aggregates (groups), DISTINCT (rows), joins
// on a key column with waterlines on both sides (both sides' rows below the smaller one), the
// as-of join (left rows, and right rows but the last), SESSION windows (finished sessions),
// OVER windows ordered by such a column (rows no future frame reaches).
// Discarding is not deleting: it changes no output.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/expr/expr.h"
#include "core/types/types.h"

namespace fld {

struct WaterlineCell {
  bool known = false;  // false until the first step that saw a value
  Value value;         // physical form of the column's type
};

class WaterlineRef {
 public:
  WaterlineRef() = default;  // no waterline
  WaterlineRef(std::shared_ptr<const WaterlineCell> cell, SqlType type) : cell_(std::move(cell)), type_(type) {}
  bool valid() const { return cell_ != nullptr; }
  // The waterline of f(column), where f reads column `col` of its input and IsMonotoneIn(f, col).
  WaterlineRef Through(const BoundExpr& f, int col) const;
  // The smaller of two waterlines (of one type): what bounds the changes of both.
  static WaterlineRef Min(WaterlineRef a, WaterlineRef b);
  // The current value, or nullopt while unknown (or when f of it is NULL or fails).
  std::optional<Value> Current() const;
  std::string ToString() const;

 private:
  std::shared_ptr<const WaterlineCell> cell_;
  SqlType type_;                                  // of the cell's column
  std::shared_ptr<const BoundExpr> fn_;           // over column 0 (the cell's value); null: identity
  std::shared_ptr<const WaterlineRef> min_with_;  // set: the minimum of this and *min_with_
};

// The entries of an operator's state (keyed by a row encoding, core/zset/batch.h) ordered by the
// value of the encoding's column `col`, which has a waterline, so that discarding the entries
// below the waterline costs in proportion to what is discarded. Entries whose value is NULL are
// never discarded.
class WaterlineIndex {
 public:
  WaterlineIndex() = default;
  WaterlineIndex(int col, WaterlineRef w) : col_(col), w_(std::move(w)) {}
  bool active() const { return w_.valid(); }
  int column() const { return col_; }
  const WaterlineRef& waterline() const { return w_; }
  void Added(const std::string& key);
  void Removed(const std::string& key);
  // The keys whose value lies below the current waterline, taken out of the index.
  std::vector<std::string> TakeBelow();
  void Clear() { entries_.clear(); }

 private:
  Value ValueOf(const std::string& key) const;
  int col_ = -1;
  WaterlineRef w_;
  std::set<std::pair<Value, std::string>> entries_;
};

// Whether e reads column `col` (and no other) and never decreases as that column grows: the
// column itself, order-keeping CASTs between numeric and date/time types, `+`/`-` of a constant,
// `*` or `/` by a positive constant.
bool IsMonotoneIn(const BoundExpr& e, int col);

// The column e reads when it reads exactly one, else -1.
int SingleColumn(const BoundExpr& e);

}  // namespace fld
