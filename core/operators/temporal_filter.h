// NOW() and temporal filters (Feldera's): NOW() is the physical time of the step, a TIMESTAMP that
// the controller sets before every step (and journals, so a replay sees the same times) and that
// never goes backwards. A condition comparing a row's value with an expression of NOW() alone,
// `ts >= NOW() - INTERVAL 7 DAYS`, makes rows enter and leave a view as time passes, with no new
// input.
//
// The clock is a one-row relation (ClockOp, a source node of the circuit) whose change each step
// is {-old time, +new time}. A temporal filter (TemporalFilterOp) reads it and the rows' changes,
// and keeps the rows it still has to act on ordered by their compared value, so that advancing
// the clock costs in proportion to the rows that cross the bound, not to the table:
//   - a lower bound (`x > b`, `x >= b`): the rows passing it; as b grows, those falling below it
//     are retracted and forgotten (they can never pass again);
//   - an upper bound (`x < b`, `x <= b`): the rows not passing it yet; as b grows, those it
//     reaches are emitted and forgotten (they pass for good).
// A NULL x never passes. Before the clock is first set every bound is -infinity (nothing is
// below a lower bound, nothing passes an upper one). Several temporal conditions AND-ed are
// several filters in a row. NOW() anywhere else (a select list, OR-ed or non-monotone conditions)
// is planned as a join of the rows with the clock's relation (core/plan, Planner::AddMap).
// State: the clock's time (ClockOp); the bound and the kept rows (TemporalFilterOp), the rows
// ordered by the compared value (core/circuit/ordered_rows.h). Keyed state: the header holds the
// bound, each kept row is an entry, and a checkpoint writes the rows kept or forgotten since the
// last one. (A checkpoint written before that holds the rows in the header, after the bound:
// they are read and written out as entries at the next checkpoint.)
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/circuit/operator.h"
#include "core/circuit/ordered_rows.h"
#include "core/expr/expr.h"

namespace fld {

// Whether e reads NOW().
bool ContainsNow(const BoundExpr& e);

// A copy of e reading column `column` (a TIMESTAMP) where e reads NOW().
BoundExprPtr ReplaceNow(const BoundExpr& e, int column);

// A temporal condition in normal form: `row cmp bound`, cmp one of kLt, kLe, kGt, kGe; `row`
// reads the input's columns and not NOW(); `bound` reads only NOW(), as column 0 (a TIMESTAMP),
// and never decreases as it grows.
struct TemporalBound {
  BoundExprPtr row;
  ExprOp cmp = ExprOp::kGe;
  BoundExprPtr bound;
  std::string text;  // the condition as written in plans: "($2 >= (NOW() - 7 days))"
};

// The normal form of a condition `x cmp f(NOW())` or `f(NOW()) cmp x`, or nullopt when c is not
// one.
std::optional<TemporalBound> MatchTemporalBound(const BoundExpr& c);

class ClockOp : public Operator {
 public:
  // The time (microseconds since the epoch, UTC) of the next step; a time before the current one
  // is taken as the current one.
  void Set(int64_t micros);
  std::optional<int64_t> value() const { return value_; }
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "clock"; }
  std::string Describe() const override { return "clock NOW()"; }
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;

 private:
  std::optional<int64_t> value_, next_;
};

class TemporalFilterOp : public Operator {
 public:
  // inputs: the rows' changes (columns `types`), the clock's.
  TemporalFilterOp(std::vector<PhysType> types, TemporalBound bound);
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "temporal filter"; }
  std::string Describe() const override { return "temporal filter " + b_.text; }
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;
  bool HasKeyedState() const override { return true; }
  void TrackChanges() override { kept_.Track(); }
  void SaveChanges(StateWriter& w, StateDelta& d) override;
  void BeginRestore(StateReader& r) override;
  void RestoreEntry(std::string_view key, std::string_view value) override;
  size_t kept_rows() const { return kept_.size(); }

 private:
  bool Passes(const Value& x) const;
  bool lower() const { return b_.cmp == ExprOp::kGt || b_.cmp == ExprOp::kGe; }
  // The bound: the header of the keyed state and the start of SaveState's form.
  void SaveBound(StateWriter& w) const;
  void RestoreBound(StateReader& r);

  std::vector<PhysType> types_;
  TemporalBound b_;
  std::optional<Value> bound_;  // unset: -infinity
  // The rows passing a lower bound, or not yet passing an upper one, by the compared value.
  OrderedRows kept_;
};

}  // namespace fld
