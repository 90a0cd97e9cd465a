// The planner: turns a SQL program (CREATE TABLE / CREATE VIEW statements) into a circuit of
// incremental operators, and a query into a sub-circuit.
//
// FROM lists with WHERE are planned as a join graph: single-relation conjuncts are pushed down
// as filters, equalities between two relations become equi-join keys, and relations are joined
// greedily along those keys (a cross product only where no equality connects them). Aggregate
// blocks become map (group keys + arguments) -> aggregate -> map (select list, HAVING).
// Views over views reuse the view's node, so shared sub-expressions are computed once.
#pragma once

#include <memory>
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
  Plan PlanFrom(const std::vector<std::unique_ptr<sql::TableRef>>& from, const sql::Expr* where);
  Plan PlanTableRef(const sql::TableRef& t);
  Plan PlanJoinRef(const sql::TableRef& t);
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
