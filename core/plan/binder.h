// The binder: resolves names and types in SQL expressions, producing BoundExprs
// (core/expr/expr.h) over a Scope (the columns a query block can see).
//
// Type rules (documented in fld-pipeline(5)):
//   - integer op integer -> the wider integer type; with DECIMAL -> DECIMAL; with REAL/DOUBLE ->
//     DOUBLE; integer division truncates toward zero; x / 0 and x % 0 are NULL;
//   - comparisons convert both sides to a common type; a string literal compared with a
//     date/time converts to that type; a string literal compared with a number is the number it
//     spells, and one that spells none (and any binary literal) is unequal to every number and
//     orders after them all, as in SQLite (see ConstantVersusNumber);
//   - x IN () is FALSE and x NOT IN () TRUE, whatever x (SQLite's empty list);
//   - COALESCE drops the arguments after the first that cannot be NULL, CASE the WHENs whose
//     condition is fixed FALSE or NULL and all after one fixed TRUE (never evaluated; in an
//     aggregate block they may read columns that are not grouped);
//   - BETWEEN, IN (list), NULLIF are rewritten to comparisons, so NULL logic is the
//     comparisons' three-valued logic;
//   - ROW values compare as in PostgreSQL (CompareRows): two row constructors field by field with
//     SQL's NULL rules, other ROW values as composite values;
//   - v.field on a VARIANT is v['field'] (an unquoted name lower-cased, as Feldera does); a
//     lambda's body may read the query's columns, which the call receives as extra arguments.
// Semantic errors (unknown column, ambiguous name, type mismatch) point at the SQL like syntax
// errors do.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/expr/expr.h"
#include "core/operators/aggregate.h"
#include "core/sql/ast.h"
#include "core/sql/parser.h"

namespace fld::plan {

struct ScopeColumn {
  std::string qualifier;  // table name or alias; empty for derived columns
  std::string name;
  SqlType type;
  bool hidden = false;  // helper columns (join keys): never resolved by name nor in `*`
  // A join's USING / NATURAL column of one side: `t.a` still names it, but a bare `a` (and an
  // unqualified `*`) means the merged column.
  bool qualified_only = false;
  // A column of an enclosing query that a correlated subquery reads (the subquery's domain):
  // resolved only when no column of the subquery's own FROM has the name; never in `*`.
  bool correlated = false;
  // Whether `*` (qualifier empty) or `q.*` expands to this column.
  bool InStar(std::string_view q) const;
};

struct Scope {
  std::vector<ScopeColumn> cols;
};

// Where SQL text came from; every error is formatted against it.
struct SqlContext {
  std::string_view sql;
  sql::SourceInfo src;
  [[noreturn]] void Error(sql::Pos pos, std::string_view msg) const;
};

// State of an aggregate query block while its select list and HAVING are bound.
struct AggContext {
  const Scope* input = nullptr;           // the FROM scope
  std::vector<BoundExprPtr> group_exprs;  // bound over `input`
  std::vector<AggSpec> aggs;              // arg/key/filter: indices fixed up by the planner
  std::vector<BoundExprPtr> args;         // per aggregate, bound over `input`: its argument (or null),
  std::vector<BoundExprPtr> keys;         // the ARG_MIN/ARG_MAX ordering argument (or null),
  std::vector<BoundExprPtr> filters;      // the FILTER (WHERE ...) condition (or null)
  // Aggregate slots that are GROUPING(...) / GROUPING_ID(...) calls, with their arguments as
  // indices into group_exprs: no aggregate computes them; the planner gives each grouping set's
  // rows the constant bit mask (1 where the argument is not in the set, first argument highest).
  // GROUP_ID() is such a slot with the single argument kGroupId: its value in a grouping set's
  // rows is the number of earlier grouping sets with the same keys (0 for the first copy), as in
  // Calcite and Oracle.
  static constexpr int kGroupId = -1;
  std::map<size_t, std::vector<int>> grouping_calls;
  // GROUP BY HOP(...) / SESSION(...) (planner_group_window.cc): the call, its arguments (bound
  // over `input`; intervals as literals), and the hidden input columns holding each row's window
  // start and end (both GROUP BY keys), which HOP_START/HOP_END, SESSION_START/SESSION_END read.
  const sql::Expr* window_call = nullptr;
  std::vector<BoundExprPtr> window_args;
  int window_start = -1, window_end = -1;
  // With GROUPING SETS: `window_node` is the input with its windows; window_input(items) plans the
  // input of the grouping set of those GROUP BY items (its own sessions; HOP's windows, or the
  // rows once each with NULL windows when the set leaves the window out).
  int window_node = -1;
  std::function<int(const std::vector<int>& items)> window_input;
  // A window aggregate (SUM(...) OVER ...) in an aggregate block: its arguments bind through
  // the block's GROUP BY keys and aggregates (BindAggregate(arg, outer)).
  AggContext* outer = nullptr;
  // Subqueries planned over `input` (one value per input row: in GROUP BY keys and aggregate
  // arguments), which bind over `input` like its columns.
  std::set<const sql::Expr*> input_subqueries;
};

bool IsAggregateName(std::string_view upper_name);
bool ContainsAggregate(const sql::Expr& e);  // aggregate calls, not window calls (f(...) OVER ...)
// Functions that exist only as window functions (ROW_NUMBER, RANK, LAG, ...).
bool IsWindowOnlyName(std::string_view upper_name);
// Whether e holds a window function call (f(...) OVER ...).
bool ContainsWindow(const sql::Expr& e);
// Whether e holds a scalar subquery, [NOT] IN (SELECT ...) or [NOT] EXISTS.
bool ContainsSubquery(const sql::Expr& e);
// The subquery expressions of e (not those nested in a subquery's query).
void SubqueryNodes(const sql::Expr& e, std::set<const sql::Expr*>* out);

class Binder {
 public:
  explicit Binder(const SqlContext& ctx) : ctx_(ctx) {}

  // Binds e over `scope`. Aggregate calls are errors here.
  BoundExprPtr Bind(const sql::Expr& e, const Scope& scope);
  // Binds e in an aggregate block: group expressions and aggregate calls become references to
  // the aggregate's output columns (group keys first, then aggregates).
  BoundExprPtr BindAggregate(const sql::Expr& e, AggContext* agg);
  // Binds a boolean predicate (WHERE, HAVING, ON); errors unless its type is BOOLEAN.
  BoundExprPtr BindPredicate(const sql::Expr& e, const Scope& scope);
  // NOW() (CURRENT_TIMESTAMP, LOCALTIMESTAMP) may appear in the expressions bound from now on
  // (queries: the planner evaluates it, see Planner::AddMap); elsewhere (INSERT ... VALUES) it is
  // refused.
  void AllowNow() { now_allowed_ = true; }

  // Index of the column `qualifier.name` in scope, or an error at pos.
  int Resolve(const Scope& scope, std::string_view qualifier, std::string_view name, sql::Pos pos) const;
  // Like Resolve but returns -1 when absent (still errors when ambiguous).
  int TryResolve(const Scope& scope, std::string_view qualifier, std::string_view name, sql::Pos pos) const;

  // Subquery expressions (scalar, IN, EXISTS) and window function calls are planned by the
  // planner, which computes each as a column of the block's plan and registers it here; binding
  // the expression then reads it.
  void SetSubqueryColumn(const sql::Expr* e, int index, SqlType type);

  // Converts e to `target` (folding literals).
  BoundExprPtr Coerce(BoundExprPtr e, const SqlType& target, sql::Pos pos) const;
  // A type both a and b convert to, or an error at pos.
  SqlType CommonType(const SqlType& a, const SqlType& b, sql::Pos pos) const;
  // Whether `constant` is a string or binary literal compared with a value of numeric type
  // `other`. Then *number is the numeric literal the string spells (SQLite's numeric text:
  // optional spaces and sign, digits with an optional point and exponent), or null when it
  // spells none or is binary: such a constant equals no number and orders after every one.
  bool ConstantVersusNumber(const BoundExpr& constant, const SqlType& other, BoundExprPtr* number) const;

  const SqlContext& ctx() const { return ctx_; }

  // a op b for the arithmetic operators (the type rules above).
  BoundExprPtr Arith(ExprOp op, BoundExprPtr a, BoundExprPtr b, sql::Pos pos) const;

  // CREATE FUNCTION: a function with a SQL body is inlined at each call (the arguments cast to
  // the parameter types, the result to the return type); one without a body is an external
  // function (returned, so the caller can list it for the pipeline to implement).
  // `shared`, when given, is the external function object to use (a recursive group's nested
  // copies share their program's, which the run binds to its library).
  std::shared_ptr<ExternalFunction> DeclareFunction(const sql::CreateFunction& f,
                                                    std::shared_ptr<ExternalFunction> shared = nullptr);

 private:
  struct UserFunction {
    std::string name;
    std::vector<SqlType> params;
    SqlType result;
    BoundExprPtr body;  // over the parameters as columns 0..n-1; null for an external function
    std::shared_ptr<ExternalFunction> external;
  };
  BoundExprPtr CallUserFunction(const UserFunction& f, const sql::Expr& call, std::vector<BoundExprPtr> args) const;

  using ChildBinder = std::function<BoundExprPtr(const sql::Expr&)>;
  BoundExprPtr BindWith(const sql::Expr& e, const Scope* scope, const ChildBinder& child);
  BoundExprPtr BindLiteral(const sql::Expr& e) const;
  BoundExprPtr Compare(ExprOp op, BoundExprPtr a, BoundExprPtr b, sql::Pos pos) const;
  // a op b for ROW values; `nested`: fields of a ROW, compared as composite values.
  BoundExprPtr CompareRows(ExprOp op, BoundExprPtr a, BoundExprPtr b, sql::Pos pos, bool nested) const;
  // a op b for non-NULL ROW values compared as composite values (see CompareRows).
  BoundExprPtr CompareComposite(ExprOp op, const BoundExpr& a, const BoundExpr& b, sql::Pos pos) const;
  // CASE, with `child` binding its parts; a WHEN whose condition is fixed at planning time as
  // FALSE or NULL never runs its value, nor does anything after one fixed as TRUE: those values
  // are bound by `dead`, for their types only, and dropped.
  BoundExprPtr BindCase(const sql::Expr& e, const ChildBinder& child, const ChildBinder& dead);
  // COALESCE over bound arguments; those after `keep` only give their types to the result.
  BoundExprPtr Coalesce(std::vector<BoundExprPtr> args, size_t keep, const sql::Expr& e) const;
  // COALESCE in an aggregate block: the arguments after the first one that cannot be NULL are
  // bound over the input only for their types. Null when e is no COALESCE call.
  BoundExprPtr CoalesceInAggregate(const sql::Expr& e, AggContext* agg);
  // MAP[...], e[i], CARDINALITY, MAP_* and the VARIANT/JSON functions; null for other names.
  BoundExprPtr BindCollectionFunction(const sql::Expr& e, std::vector<BoundExprPtr>& args) const;
  // The column references in a lambda's body that name none of `params` (its parameter and
  // those of lambdas inside it): the outer columns it reads.
  static void OuterReferences(const sql::Expr& e, std::vector<std::string> params, std::vector<const sql::Expr*>* out);
  // v.field on a VARIANT: v['field'], the name lower-cased unless it was quoted.
  BoundExprPtr VariantField(BoundExprPtr v, std::string_view field, bool quoted) const;
  BoundExprPtr Logic(ExprOp op, BoundExprPtr a, BoundExprPtr b, sql::Pos pos) const;
  BoundExprPtr RequireBool(BoundExprPtr e, sql::Pos pos) const;
  BoundExprPtr AggregateCall(const sql::Expr& e, AggContext* agg);
  BoundExprPtr GroupingCall(const sql::Expr& e, AggContext* agg);
  int TryResolveAmong(const Scope& scope, std::string_view qualifier, std::string_view name, sql::Pos pos,
                      bool correlated) const;
  // Dates, times and intervals (bind_time.cc). Each returns null when e (the operands) is not
  // its business.
  BoundExprPtr BindTimeFunction(const sql::Expr& e, const ChildBinder& child);
  BoundExprPtr TimeArith(ExprOp op, BoundExprPtr& a, BoundExprPtr& b, sql::Pos pos) const;
  BoundExprPtr BindIntervalCast(const sql::Expr& e, const ChildBinder& child);
  // TUMBLE_START / TUMBLE_END in an aggregate block: the GROUP BY TUMBLE(...) key (plus size).
  BoundExprPtr GroupWindowBound(const sql::Expr& e, AggContext* agg);
  BoundExprPtr CoerceSameNull(BoundExprPtr e, const SqlType& target, sql::Pos pos) const;
  BoundExprPtr WindowStart(const sql::Expr& e, const ChildBinder& child, BoundExprPtr* size);
  BoundExprPtr WindowEnd(BoundExprPtr start, BoundExprPtr size) const;

 public:
  // The arguments of HOP(ts, slide, size [, offset]) or SESSION(ts, gap) (and of their _START /
  // _END functions): ts bound over `scope`, the intervals as literals (constant, positive, all
  // in months or all in microseconds; SESSION's in microseconds).
  std::vector<BoundExprPtr> BindGroupWindowArgs(const sql::Expr& e, const Scope& scope);

 private:
  const SqlContext& ctx_;
  std::vector<std::pair<const sql::Expr*, std::pair<int, SqlType>>> subquery_columns_;
  std::vector<UserFunction> functions_;
  bool now_allowed_ = false;
};

}  // namespace fld::plan
