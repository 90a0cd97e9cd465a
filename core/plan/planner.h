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
// with no match (an anti-join against the DISTINCT matched rows). GROUPING SETS / ROLLUP / CUBE
// are one aggregate per set, unioned; EXCEPT ALL / INTERSECT ALL one multiset operator. Recursive
// views (DECLARE RECURSIVE VIEW) are one fixed point node over a nested circuit planned from the
// group's queries (see DeclareRecursiveView).
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
  // `LATENESS view.column expr;` statements, applied when their view is added (they may come
  // before or after it).
  void SetViewLateness(std::vector<const sql::Statement*> stmts) { view_lateness_ = std::move(stmts); }
  // CREATE FUNCTION: known to the views planned after it; one without a body is listed in the
  // circuit's external functions.
  void DeclareFunction(const sql::Statement& stmt);
  // Names that exist but cannot be read (not materialized): selecting them fails with `hint`.
  void AddUnavailable(std::string name, std::string hint);

  // Plans a query; returns its output node and fills the output schema.
  int PlanQuery(const sql::Query& q, Schema* schema);

  // DECLARE RECURSIVE VIEW. The views defined after it that read a declared view (directly or
  // through other such views) form a recursive group, built once every declared view of the
  // group is defined: the views that a declared view reads (transitively) are computed together
  // by one fixed point node (core/circuit/fixed_point.h) as DISTINCT sets; the others are
  // planned after it as ordinary views. A view's query must give its declared column names;
  // its types are cast to the declared ones.
  void DeclareRecursiveView(const sql::Statement& stmt);
  // Ends a program: a declared view never defined is an error.
  void Finish();
  // The most iterations a recursive group may need in one step (a run-time error beyond).
  static constexpr size_t kMaxRecursionIterations = 1000;

 private:
  struct Plan {
    int node = -1;
    Scope scope;
  };
  Plan PlanQueryBlock(const sql::Query& q);
  Plan PlanSelect(const sql::Select& s);
  // `domain`: the correlation domain of a subquery (joined as the first FROM item), or null.
  // The ON conjuncts with subqueries of inner joins it plans as WHERE conjuncts (in a correlated
  // subquery) go to *subq_conj, which the caller applies after.
  Plan PlanFrom(const std::vector<std::unique_ptr<sql::TableRef>>& from, const std::vector<const sql::Expr*>& conj,
                const Plan* domain, std::vector<const sql::Expr*>* subq_conj);
  // Joins FROM items (each a plan) along the equalities of `conj` (see PlanFrom); the first is
  // a correlation domain when `domain_first`.
  Plan JoinItems(std::vector<Plan> items, std::vector<sql::Pos> item_pos, const std::vector<const sql::Expr*>& conj,
                 bool domain_first);
  // LATERAL (subquery) `t` joined to `left` (inner, or LEFT JOIN with pad_left; `on` may be
  // null): the subquery is decorrelated over the columns of `left` it reads.
  Plan LateralJoin(Plan left, const sql::TableRef& t, bool pad_left, const sql::Expr* on, sql::Pos pos);
  // A LATERAL subquery joined with USING or NATURAL (INNER or LEFT JOIN).
  Plan LateralUsing(const sql::TableRef& t, const Plan* left_plan);
  // The merged columns of a USING / NATURAL join whose output `out` holds the left's columns
  // (left_width of them, hidden keys included), then the right's: (left, right) column pairs
  // and their types before the join.
  Plan MergeUsing(Plan out, const std::vector<std::pair<int, int>>& using_idx, const std::vector<SqlType>& left_types,
                  const std::vector<SqlType>& right_types, size_t left_width, bool pad_left, bool pad_right,
                  sql::Pos pos);
  bool IsLateral(const sql::TableRef& t) const;
  // An inner or cross join (no USING, NATURAL, ASOF, UNNEST or LATERAL right side).
  bool IsInnerTree(const sql::TableRef& t) const;
  // The items of a tree of inner joins (t itself when it is no such join) and their ON conjuncts.
  void FlattenInner(const sql::TableRef& t, std::vector<const sql::TableRef*>* items,
                    std::vector<const sql::Expr*>* ons) const;
  // Whether q reads a column of the blocks whose subqueries are being planned.
  bool ReadsEnclosingQuery(const sql::Query& q);
  // The columns of a query's output, by name only (types unknown), qualified by `alias`: what a
  // LATERAL item offers the names of its query before it can be planned.
  // (`chain` and `used` as for FreeRefs, which a `*` walks the FROM items of q for.)
  std::vector<ScopeColumn> SyntacticColumns(const sql::Query& q, const std::string& alias,
                                            std::vector<const Scope*>* chain, std::vector<std::set<int>>* used);
  // The columns of s's FROM items; a LATERAL item's query is walked for FreeRefs on the way.
  Scope LocalScope(const sql::Select& s, std::vector<const Scope*>* chain, std::vector<std::set<int>>* used);
  // q planned once over its correlation domain D = DISTINCT of the columns `corr` of `outer`
  // (D is its first FROM item, its aggregates group by D, ORDER BY ... LIMIT is taken per D
  // value): D's columns, then q's output.
  Plan PlanOverDomain(const sql::Query& q, const Plan& outer, const std::vector<int>& corr);
  // ORDER BY ... LIMIT / OFFSET of q over p, per value of its first `lead` columns.
  Plan LimitPerDomain(Plan p, const sql::Query& q, size_t lead);
  // ARRAY(subquery) (planner_array_subquery.cc): `body` is the subquery's plan, its first k
  // columns the domain's (cut by its LIMIT / OFFSET when `limited`); returns [domain columns,
  // the array of the rest's first column].
  Plan ArrayOfRows(Plan body, const sql::Query& q, size_t k, bool limited, sql::Pos pos);
  // Plans the subqueries of e (not those nested in them) as columns of *p, registered with the
  // binder, so that binding e over p->scope afterwards reads them.
  // `agg`: set when *p is an aggregate's output, over which the left side of IN binds.
  void PlanSubqueries(const sql::Expr& e, Plan* p, AggContext* agg = nullptr);
  void PlanSubquery(const sql::Expr& e, Plan* p, AggContext* agg);
  // e = (x1, ..., xn) [NOT] IN (subquery), the subquery planned as `body` ([domain columns (the
  // columns `corr` of *p), its n columns]): its value as a hidden column of *p.
  void RowIn(const sql::Expr& e, Plan* p, AggContext* agg, const Plan& body, const std::vector<int>& corr);
  // p filtered by the condition c; c's subqueries are planned over p's rows (and their columns
  // dropped after).
  Plan FilterWithSubqueries(Plan p, const sql::Expr& c);
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
  // Window function calls of s's select list (planner_window.cc): computed by window operators
  // as hidden columns appended to `from`, and registered with the binder.
  // `agg`: set when s has GROUP BY / aggregates; the window calls then read the aggregate's
  // output (`from`) through the block's keys and aggregates.
  Plan PlanWindows(const sql::Select& s, Plan from, AggContext* agg = nullptr);
  // The first columns of PlanWindows' input that lead every window's PARTITION BY: a correlated
  // subquery's domain (each outer row's window is over its own rows).
  size_t window_lead_ = 0;
  // GROUP BY HOP(...) / SESSION(...) (planner_group_window.cc): `from` with each row's windows
  // appended as hidden columns (a HOP row once per window), noted in *agg; `from` itself when
  // s groups by neither.
  Plan PlanGroupWindow(const sql::Select& s, Plan from, bool correlated, AggContext* agg);
  // Notes the Top-K pattern `SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (...) AS rn ...)
  // WHERE rn <= N` (also RANK, DENSE_RANK, <, =): the call is then planned as a per-partition
  // top-K, which keeps only the first rows of each partition in its output.
  void NoteRankLimit(const sql::Select& s, const std::vector<const sql::Expr*>& conj);
  // The aggregate of a block with GROUPING SETS / ROLLUP / CUBE or GROUPING(...) calls.
  int GroupingSets(int pre_node, const std::vector<PhysType>& pre_types, const std::vector<AggSpec>& specs,
                   const AggContext& agg, const std::vector<std::vector<int>>& sets,
                   const std::vector<PhysType>& out_types, const std::vector<int>* set_pre_nodes = nullptr);
  // In a correlated subquery (`from` led by the domain's columns): agg_plan (the grouping sets'
  // union) with the rows of the sets that hold only the domain's keys added for the domain values
  // no row of `from` has (see planner.cc).
  int EmptySetsOverDomain(const Plan& agg_plan, const Plan& domain, const Plan& from,
                          const std::vector<PhysType>& pre_types, const std::vector<AggSpec>& specs,
                          const AggContext& agg, const std::vector<std::vector<int>>& sets);
  Plan Distinct(Plan p);
  Plan Project(const Plan& p, std::vector<BoundExprPtr> proj, std::vector<ScopeColumn> cols);
  Plan PlanTableRef(const sql::TableRef& t);
  Plan PlanTableRefUncached(const sql::TableRef& t);
  // `left_plan`: t's left side as planned already (joined with more items), or null.
  // `right_plan`: t's right side as planned already, or null; `extra_keys`: join keys beyond
  // t's own (over left_plan, right_plan).
  Plan PlanJoinRef(const sql::TableRef& t, const Plan* left_plan = nullptr, const Plan* right_plan = nullptr,
                   std::vector<std::pair<BoundExprPtr, BoundExprPtr>> extra_keys = {});
  // A RIGHT or FULL JOIN t whose ON condition reads the enclosing query's columns, over the
  // correlation domain: the domain's columns (each output row's own), then t's.
  Plan RightFullOverDomain(const Plan& domain, const sql::TableRef& t);
  // A LEFT, RIGHT or FULL JOIN whose ON condition reads a column of an enclosing query (not of
  // its sides).
  bool OuterOnReadsEnclosing(const sql::TableRef& t);
  Plan PlanWindowRef(const sql::TableRef& t);
  // A plan of one row and no column (SELECT without FROM, a leading UNNEST).
  Plan OneRow();
  // UNNEST(t.unnest...) applied to every row of `left` (see core/operators/unnest.h).
  // `outer` keeps the rows of `left` that get no row (LEFT JOIN UNNEST ... ON `on`), padded with NULLs.
  Plan Unnest(Plan left, const sql::TableRef& t, bool outer = false, const sql::Expr* on = nullptr);
  // The output holds the left columns (plus hidden key columns: *left_width of them in all),
  // then the right's.
  // Coerces each pair of key expressions (left, right) to their common type and makes every key
  // a column of its side: a plain column stays, another expression becomes a hidden column
  // appended to its side's plan. The key column indices go to lk and rk.
  void KeyColumns(std::vector<std::pair<BoundExprPtr, BoundExprPtr>>& keys, Plan& left, Plan& right, sql::Pos pos,
                  std::vector<int>* lk, std::vector<int>* rk);
  Plan Join(Plan left, Plan right, std::vector<std::pair<BoundExprPtr, BoundExprPtr>> keys, bool pad_left,
            bool pad_right, sql::Pos pos, size_t* left_width = nullptr);
  // l [LEFT] ASOF JOIN r MATCH_CONDITION l.ts >= r.ts ON l.k = r.k (t.match_condition set).
  Plan AsofJoin(Plan left, Plan right, const sql::TableRef& t);
  Plan Filter(Plan p, BoundExprPtr pred);
  // A filter + map node (core/operators/map.h) over `input`. When its expressions read NOW(), it
  // reads `input` joined with the clock's one-row relation (JoinClock) and NOW() reads the
  // clock's column: each clock tick retracts the rows computed with the old time and inserts
  // those computed with the new one, so its output is always what a query run from scratch at
  // that time gives.
  int AddMap(BoundExprPtr pred, std::vector<BoundExprPtr> proj, int input, std::vector<PhysType> types);
  // `input` cross-joined with the clock: its columns, then NOW() (a TIMESTAMP); one per input.
  int JoinClock(int input);
  std::map<int, int> clock_joins_;
  // The node whose output is the clock's change each step: the circuit's clock, or in a
  // recursive group's nested circuit the input that the outer clock feeds (clock_input_).
  int ClockNode() { return clock_input_ >= 0 ? clock_input_ : circuit_->ClockNode(); }
  int clock_input_ = -1;
  Plan ExceptOrIntersect(Plan l, Plan r, sql::SetOp op, sql::Pos pos);
  Plan Cast(Plan p, const std::vector<SqlType>& types, sql::Pos pos);
  // Plans a view's query, with its ORDER BY ... LIMIT / OFFSET (see TopK); returns its node.
  int PlanViewQuery(const sql::Query& q, Schema* schema);
  // Adds ORDER BY ... LIMIT / OFFSET of a view's query over `node` (whose columns are `schema`,
  // ending with the sort columns AppendOrderByColumns added, which it drops from node and schema).
  // `lead`: the first columns are a correlation domain's (not named by ORDER BY): the top-K is
  // then taken per value of them (a correlated or LATERAL subquery with LIMIT).
  int TopK(int node, Schema* schema, const sql::Query& q, size_t lead = 0);
  int Materialize(int node, const std::vector<PhysType>& types);
  // A lateness operator (core/operators/lateness.h) after `node` for the columns (index, the
  // lateness expression as written, its position) of `schema`; returns its node.
  struct LatenessSpec {
    int column;
    std::string text;
    sql::Pos pos;
  };
  int AddLateness(int node, const Schema& schema, const std::vector<LatenessSpec>& specs);
  // The constant of a LATENESS or WATERMARK (`what`) on column f, in f's physical form.
  Value BindDelay(const Field& f, const std::string& text, sql::Pos pos, std::string_view what);
  std::vector<PhysType> Types(const Scope& s) const;

  // The open recursive group: its DECLARE statements and the views that joined it, in order.
  struct RecursiveGroup {
    std::vector<const sql::Statement*> declared;
    std::vector<const sql::Statement*> views;
    std::set<std::string> names;  // upper case: declared views and views that joined
  };
  RecursiveGroup recursive_;
  void BuildRecursiveGroup();
  friend struct RecursiveInstance;

  Circuit* circuit_;
  SqlContext ctx_;
  Binder binder_;
  // The CREATE FUNCTION statements planned so far, with their external function objects (null
  // for SQL-bodied ones): a recursive group's nested copies declare them again.
  std::vector<std::pair<const sql::Statement*, std::shared_ptr<ExternalFunction>>> functions_;
  std::vector<std::pair<std::string, std::string>> unavailable_;
  std::vector<const sql::Statement*> view_lateness_;
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
  std::map<const sql::Expr*, int64_t> rank_limits_;  // ranking calls only rows ranked <= N of are read
};

// Every relation name a query reads (upper case; the names of its WITH queries too).
void CollectRelationNames(const sql::Query& q, std::set<std::string>* out);

// Every relation name a query reads (upper case; the names of its WITH queries too).
void CollectRelationNames(const sql::Query& q, std::set<std::string>* out);

// Compiles a whole program. Only CREATE TABLE, CREATE [MATERIALIZED] VIEW and DECLARE RECURSIVE
// VIEW are allowed.
std::unique_ptr<Circuit> CompileProgram(const std::vector<sql::Statement>& program, std::string_view sql,
                                        const sql::SourceInfo& src, ThreadPool* pool);

// The rows of INSERT INTO t VALUES (...), each value a constant expression, as a batch over
// the table's schema.
Batch RowsFromInsert(const sql::Insert& ins, const Schema& schema, std::string_view sql, const sql::SourceInfo& src);

// Standard SQL lets the ORDER BY of a plain SELECT (no DISTINCT, no set operation) sort by
// expressions over the FROM columns (or aggregates) that the select list does not output;
// OrderAndLimit sorts only by output columns. This moves such ORDER BY items into q's select
// list as extra trailing columns (named `$order$1`, ...: kOrderColumnPrefix) and makes the ORDER BY items refer to
// them. Returns how many columns it appended: drop that many trailing columns from the rows
// OrderAndLimit returns. Items that are positions, output names, or expressions over output
// names stay as they are.
size_t AppendOrderByColumns(sql::Query* q);
inline constexpr std::string_view kOrderColumnPrefix = "$order$";

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
