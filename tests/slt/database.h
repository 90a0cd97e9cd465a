// The database a sqllogictest file builds, and how queries run over it.
//
// The runner keeps what the file's statements created: table definitions with their rows, and
// view definitions, in creation order. Each query compiles a fresh circuit from them plus
// `CREATE MATERIALIZED VIEW slt_q AS <query without ORDER BY / LIMIT>` and feeds every table's
// rows in three steps, so the engine's incremental operators (not a batch evaluator) compute
// the answer:
//   step 1: the first third of each table's rows;
//   step 2: the second third, plus a "garbage" copy of 1-2 existing rows (keyed tables: an
//           upsert of an existing row by itself, which must change nothing);
//   step 3: the last third, and the garbage rows deleted again (weight -1; not for keyed tables).
// The final contents of slt_q are the answer; ORDER BY / LIMIT / OFFSET are applied afterwards
// with SQLite's NULL ordering (NULL is the smallest value).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/circuit/circuit.h"
#include "core/sql/ast.h"
#include "core/sql/parser.h"
#include "core/types/schema.h"
#include "core/zset/batch.h"

namespace fld::slt {

// Where a failing statement or query failed.
enum class Stage {
  kParse,     // the SQL parser rejected the text
  kPlan,      // binding / planning (CREATE, the query's compilation)
  kRun,       // evaluating (a runtime error in an operator or expression)
  kInternal,  // an exception that is not fld::Error: an engine bug
};

class StageError : public std::runtime_error {
 public:
  StageError(Stage stage, const std::string& msg) : std::runtime_error(msg), stage_(stage) {}
  Stage stage() const { return stage_; }

 private:
  Stage stage_;
};

struct QueryResult {
  Schema schema;
  std::vector<std::vector<Value>> rows;  // in query order (ORDER BY applied), expanded by weight
};

class Database {
 public:
  // Executes a statement (CREATE TABLE / VIEW / INDEX, INSERT, DELETE, UPDATE, DROP, SELECT).
  // Throws StageError when it fails.
  void Execute(const std::string& sql, const sql::SourceInfo& src);
  // Whether the last Execute() was an INSERT that replaced rows of a keyed table (fld upserts
  // on a primary key; SQLite raises a constraint error).
  bool last_insert_upserted() const { return last_insert_upserted_; }
  // Runs a query incrementally over the current contents. Throws StageError.
  QueryResult Query(const std::string& sql, const sql::SourceInfo& src);

 private:
  struct Entry {
    bool is_table = true;
    std::string name;
    std::string sql;      // the CREATE statement's text
    sql::SourceInfo src;  // where it came from (for error messages)
    sql::Statement stmt;  // parsed from `sql`
    // tables
    Schema schema;
    bool keyed = false;
    std::vector<int> key_cols;
    Batch rows;  // current contents, one row per copy (weight 1)
  };

  Entry* Find(std::string_view name);
  void AddEntry(std::unique_ptr<Entry> e);
  // A circuit holding every table and view (tables' relation indices in *tables, per entry).
  std::unique_ptr<Circuit> Build(std::vector<int>* table_rel);
  // Pushes every table's rows in three steps (see the file comment).
  void Feed(Circuit* c, const std::vector<int>& table_rel);
  // Plans `q` as the materialized view slt_q over the current database, feeds it, and returns
  // its consolidated contents (which must have no negative weight).
  Batch Evaluate(std::unique_ptr<sql::Query> q, const std::string& sql, const sql::SourceInfo& src, Schema* schema);
  Batch EvaluateText(const std::string& sql, const sql::SourceInfo& src, Schema* schema);
  // The rows of INSERT INTO t SELECT ..., converted to t's column types.
  Batch InsertSelect(Entry* t, sql::Insert& ins, const std::string& sql, const sql::SourceInfo& src);
  // Removes every copy of each row of `gone` from t's rows.
  void RemoveRows(Entry* t, const Batch& gone);
  void Update(const std::string& sql, const sql::SourceInfo& src);

  std::vector<std::unique_ptr<Entry>> entries_;  // creation order
  bool last_insert_upserted_ = false;
};

}  // namespace fld::slt
