// The planner: turns a SQL program (CREATE TABLE / CREATE VIEW statements) into a circuit of
// incremental operators, and a query into a sub-circuit.
//
// FROM lists with WHERE are planned as a join graph: single-relation conjuncts are pushed down
// as filters, equalities between two relations become equi-join keys, and relations are joined
// greedily along those keys (a cross product only where no equality connects them). Aggregate
// blocks become map (group keys + arguments) -> aggregate -> map (select list, HAVING).
// Views over views reuse the view's node, so shared sub-expressions are computed once.
//
// Subqueries in expressions (scalar, [NOT] IN (SELECT ...), [NOT] EXISTS) are decorrelated into
// joins, aggregates and distinct, so they stay incremental. A correlated subquery is planned once
// over its domain D = DISTINCT of the enclosing block's columns it reads (D joins its FROM like
// one more table, so `inner.k = outer.k` becomes an equi-join key), grouped by D's columns, and
// joined back to the enclosing block on them (NULL-safe). A subquery that is a global aggregate
// keeps its one row per domain value even where no row matches (COUNT 0, other aggregates NULL).
// Scalar subqueries returning more than one row are a run-time error. WITH queries are planned
// once and shared by every reference. Outer joins take any ON condition: equalities between the
// sides become keys; the rest filters the matches, and the padded rows are the rows of a side
// with no match (an anti-join against the DISTINCT matched rows).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/circuit/circuit.h"
#include "core/plan/binder.h"
#include "core/sql/ast.h"
#include "core/sql/parser.h"

namespace fld::plan {

class Planner {
 public:
  Planner(Circuit* circuit, std::string_view sql, sql::SourceInfo src);

  // Adds a table (source node, upsert for a primary key, integrate when materialized).
  int AddTable(const sql::Statement& stmt);
  // Adds a table with a given schema (ad-hoc queries over stored relations).
  int AddStoredTable(const std::string& name, const Schema& schema);
  int AddView(const sql::Statement& stmt);
  // CREATE FUNCTION: known to the views planned after it; one without a body is listed in the
  // circuit's external functions.
  void DeclareFunction(const sql::Statement& stmt);
  // Names that exist but cannot be read (not materialized): selecting them fails with `hint`.
  void AddUnavailable(std::string name, std::string hint);

  // Plans a query; returns its output node and fills the output schema.
  int PlanQuery(const sql::Query& q, Schema* schema);

 private:
  struct Plan {
    int node = -1;
    Scope scope;
  };
  Plan PlanQueryBlock(const sql::Query& q);
  Plan PlanSelect(const sql::Select& s);
  // `domain`: the correlation domain of a subquery (joined as the first FROM item), or null.
  Plan PlanFrom(const std::vector<std::unique_ptr<sql::TableRef>>& from, const std::vector<const sql::Expr*>& conj,
                const Plan* domain);
  // Plans the subqueries of e (not those nested in them) as columns of *p, registered with the
  // binder, so that binding e over p->scope afterwards reads them.
  // `agg`: set when *p is an aggregate's output, over which the left side of IN binds.
  void PlanSubqueries(const sql::Expr& e, Plan* p, AggContext* agg = nullptr);
  void PlanSubquery(const sql::Expr& e, Plan* p, AggContext* agg);
  // Adds to used[i] the columns of chain[i] that q reads (q's own FROM shadows them; the
  // innermost scope is last).
  void FreeRefs(const sql::Query& q, std::vector<const Scope*>* chain, std::vector<std::set<int>>* used);
  void FreeRefsExpr(const sql::Expr& e, const Scope& local, std::vector<const Scope*>* chain,
                    std::vector<std::set<int>>* used);
  // Pushes q's WITH queries (planned once) onto the visible names; returns how many.
  size_t PushCtes(const sql::Query& q);
  // Keys matching columns `lc` of l with `rc` of r where NULL matches NULL.
  std::vector<std::pair<BoundExprPtr, BoundExprPtr>> NullSafeKeys(const Scope& l, const std::vector<int>& lc,
                                                                  const Scope& r, const std::vector<int>& rc) const;
  // An outer join whose ON condition has parts (`residual`, over left then right columns) that
  // are not keys: the inner matches plus each side's unmatched rows padded with NULLs.
  Plan GeneralOuterJoin(Plan left, Plan right, std::vector<std::pair<BoundExprPtr, BoundExprPtr>> keys,
                        const std::vector<const sql::Expr*>& residual, bool pad_left, bool pad_right, sql::Pos pos);
  Plan Distinct(Plan p);
  Plan Project(const Plan& p, std::vector<BoundExprPtr> proj, std::vector<ScopeColumn> cols);
  Plan PlanTableRef(const sql::TableRef& t);
  Plan PlanTableRefUncached(const sql::TableRef& t);
  Plan PlanJoinRef(const sql::TableRef& t);
  // A plan of one row and no column (SELECT without FROM, a leading UNNEST).
  Plan OneRow();
  // UNNEST(t.unnest) applied to every row of `left` (see core/operators/unnest.h).
  Plan Unnest(Plan left, const sql::TableRef& t);
  // The output holds the left columns (plus hidden key columns: *left_width of them in all),
  // then the right's.
  Plan Join(Plan left, Plan right, std::vector<std::pair<BoundExprPtr, BoundExprPtr>> keys, bool pad_left,
            bool pad_right, sql::Pos pos, size_t* left_width = nullptr);
  Plan Filter(Plan p, BoundExprPtr pred);
  Plan ExceptOrIntersect(Plan l, Plan r, sql::SetOp op, sql::Pos pos);
  Plan Cast(Plan p, const std::vector<SqlType>& types, sql::Pos pos);
  // Adds ORDER BY ... LIMIT / OFFSET of a view's query over `node` (whose columns are `schema`).
  int TopK(int node, const Schema& schema, const sql::Query& q);
  int Materialize(int node, const std::vector<PhysType>& types);
  std::vector<PhysType> Types(const Scope& s) const;

  Circuit* circuit_;
  SqlContext ctx_;
  Binder binder_;
  std::vector<std::pair<std::string, std::string>> unavailable_;
  int constant_node_ = -1;
  // The correlation domain of the subquery block PlanSelect plans next (taken on entry).
  const Plan* domain_ = nullptr;
  int query_depth_ = 0;
  // Scopes of the blocks whose subqueries are being planned (outermost first), so that a FROM
  // subquery or an ON condition reading them is refused by name.
  std::vector<const Scope*> enclosing_;
  bool ReadsEnclosing(
      const sql::Expr& ref) const;  // PlanQuery nesting; the plan caches below live for one outermost query
  // WITH queries in scope (innermost last) and the plans made once per WITH query / FROM item.
  std::vector<std::pair<std::string, const Plan*>> ctes_;
  std::map<const sql::CommonTableExpr*, Plan> cte_plans_;
  std::map<const sql::TableRef*, Plan> ref_plans_;
};

// Compiles a whole program. Only CREATE TABLE and CREATE [MATERIALIZED] VIEW are allowed.
std::unique_ptr<Circuit> CompileProgram(const std::vector<sql::Statement>& program, std::string_view sql,
                                        const sql::SourceInfo& src, ThreadPool* pool);

// The rows of INSERT INTO t VALUES (...), each value a constant expression, as a batch over
// the table's schema.
Batch RowsFromInsert(const sql::Insert& ins, const Schema& schema, std::string_view sql, const sql::SourceInfo& src);

// Standard SQL lets the ORDER BY of a plain SELECT (no DISTINCT, no set operation) sort by
// expressions over the FROM columns (or aggregates) that the select list does not output;
// OrderAndLimit sorts only by output columns. This moves such ORDER BY items into q's select
// list as extra trailing columns (named `$order$1`, ...) and makes the ORDER BY items refer to
// them. Returns how many columns it appended: drop that many trailing columns from the rows
// OrderAndLimit returns. Items that are positions, output names, or expressions over output
// names stay as they are.
size_t AppendOrderByColumns(sql::Query* q);

// Applies ORDER BY / LIMIT / OFFSET of q to a query result (consolidated contents): rows are
// expanded by weight, sorted, cut. ORDER BY items may name output columns, aliases or positions,
// or be expressions over them.
// Without NULLS FIRST/LAST, NULL sorts as the largest value (PostgreSQL, Feldera): last when
// ascending, first when descending. NullOrder::kSmallest sorts it as the smallest value instead
// (SQLite, MySQL): first when ascending, last when descending.
enum class NullOrder : uint8_t { kLargest, kSmallest };
std::vector<std::vector<Value>> OrderAndLimit(const Batch& result, const Schema& schema, const sql::Query& q,
                                              std::string_view sql, const sql::SourceInfo& src);
std::vector<std::vector<Value>> OrderAndLimit(const Batch& result, const Schema& schema, const sql::Query& q,
                                              std::string_view sql, const sql::SourceInfo& src, NullOrder nulls);

}  // namespace fld::plan
