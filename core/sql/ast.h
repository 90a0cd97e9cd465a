// The syntax tree of fld's SQL (Feldera's dialect, the subset fld runs, plus what sqllogictest
// files use). Produced by the parser (core/sql/parser.h), consumed by the binder/planner
// (core/plan). Nodes own their children. Every node records the position of its first token so
// later errors can point at the SQL.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/types/types.h"

namespace fld::sql {

// A position in the SQL text: 1-based line and column, 0-based byte offset.
struct Pos {
  int line = 1;
  int col = 1;
  size_t offset = 0;
};

struct Query;
struct Expr;
struct WindowSpec;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind : uint8_t {
  kLiteral,     // lit_kind, text
  kColumnRef,   // qualifier (may be empty), name
  kStar,        // `*` or `t.*` in a select list (qualifier), or COUNT(*) argument
  kUnary,       // op in {kNeg, kPlus, kNot}; args[0]
  kBinary,      // op; args[0], args[1]
  kFunction,    // name (upper case), args; distinct; star_arg for COUNT(*); filter; over. The parser
                // writes SQL's special call forms as plain calls: ARRAY[a, b] is ARRAY(a, b),
                // a[i] ITEM(a, i), SUBSTRING(s FROM a FOR b) SUBSTRING(s, a, b), POSITION(a IN b)
                // POSITION(a, b), TRIM(LEADING c FROM s) TRIM('LEADING', c, s), OVERLAY(s
                // PLACING r FROM a FOR b) OVERLAY(s, r, a, b), s [NOT] RLIKE p [NOT] RLIKE(s, p),
                // and a ROW's field x.f `$FIELD`(x) with text "f".
  kCase,        // args: [operand if has_operand] then WHEN, THEN pairs, then ELSE if has_else
  kCast,        // args[0] AS cast_type; safe_cast for SAFE_CAST
  kBetween,     // args[0] [NOT] BETWEEN args[1] AND args[2]; negated
  kInList,      // args[0] [NOT] IN (args[1..]); negated
  kInQuery,     // args[0] [NOT] IN (subquery); negated
  kExists,      // [NOT] EXISTS (subquery); negated
  kSubquery,    // (subquery) used as a scalar
  kIsNull,      // args[0] IS [NOT] NULL; negated means IS NOT NULL
  kLike,        // args[0] [NOT] LIKE args[1] [ESCAPE args[2]]; negated
  kIsBool,      // args[0] IS [NOT] TRUE/FALSE; bool_value, negated
  kIsDistinct,  // args[0] IS [NOT] DISTINCT FROM args[1]; negated = IS NOT DISTINCT FROM
  kLambda,      // name -> args[0] ((name, text) -> args[0] with two parameters): only as an argument of a
                // higher-order function (ARRAY_EXISTS)
};

// Time syntax: EXTRACT(unit FROM x) is a kFunction with args unit (a kColumnRef), x;
// FLOOR/CEIL(x TO unit) one with args x, unit and text "TO"; `(a - b) unit` is a kCast to an
// INTERVAL type whose args[0] is the subtraction.
enum class LiteralKind : uint8_t {
  kNull,
  kBoolean,    // text "TRUE" / "FALSE"
  kInteger,    // text: digits only (a leading minus is a unary operator)
  kDecimal,    // text with a '.', e.g. "12.50", ".5"
  kDouble,     // text with an exponent, e.g. "1e3", "2.5E-3"
  kString,     // text: the unquoted, unescaped contents
  kDate,       // DATE '2024-01-01': text is the quoted part
  kTime,       // TIME '12:00:00'
  kTimestamp,  // TIMESTAMP '2024-01-01 12:00:00'
  kBinary,     // X'0A1b': text is the hex digits
  kUuid,       // UUID '123e4567-e89b-12d3-a456-426655440000': text is the quoted part
  kInterval,   // INTERVAL '1 10:30' DAY TO MINUTE / INTERVAL 2 SECOND: text is the value, cast_type its type
};

enum class Op : uint8_t {
  kNone,
  // unary
  kNeg,
  kPlus,
  kNot,
  // binary arithmetic
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kConcat,
  // comparison
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  // logic
  kAnd,
  kOr,
};

struct Expr {
  ExprKind kind = ExprKind::kLiteral;
  Pos pos;
  LiteralKind lit_kind = LiteralKind::kNull;
  std::string text;       // literal text
  std::string qualifier;  // column ref / star qualifier (as written, case kept)
  std::string name;       // column name (as written) / function name (upper case)
  // The column reference's name, or the field of a field access `$FIELD`, was a quoted
  // identifier: a VARIANT's field `v.f` is v['f'] with an unquoted f lower-cased (Feldera).
  bool quoted = false;
  Op op = Op::kNone;
  std::vector<ExprPtr> args;
  bool distinct = false;     // aggregate DISTINCT
  bool star_arg = false;     // COUNT(*)
  bool negated = false;      // NOT BETWEEN / NOT IN / IS NOT NULL / NOT LIKE / NOT EXISTS
  bool has_operand = false;  // CASE x WHEN ...
  bool has_else = false;
  bool bool_value = false;  // IS [NOT] TRUE / FALSE
  SqlType cast_type;        // CAST target (nullable = true); an INTERVAL literal's type
  bool safe_cast = false;   // SAFE_CAST: NULL instead of an error when the value does not convert
  std::unique_ptr<Query> subquery;
  ExprPtr filter;                    // aggregate call: FILTER (WHERE filter)
  std::unique_ptr<WindowSpec> over;  // window function call: f(...) OVER (...) or OVER name
};

enum class JoinType : uint8_t { kInner, kLeft, kRight, kFull, kCross };

struct TableRef {
  // kWindow: TABLE(TUMBLE(TABLE t, DESCRIPTOR(c), size [, offset])), HOP(..., slide, size
  // [, offset]) or SESSION(..., [DESCRIPTOR(k, ...),] size): `name` is TUMBLE, HOP or SESSION,
  // `left` the input (a kTable or kSubquery), `using_cols` the descriptor's column, `window_args`
  // the interval arguments in positional order, `window_keys` SESSION's key columns.
  enum class Kind : uint8_t { kTable, kSubquery, kJoin, kWindow, kUnnest };
  Kind kind = Kind::kTable;
  Pos pos;
  std::string name;   // kTable: the relation name as written
  std::string alias;  // optional for kTable, kSubquery
  std::unique_ptr<Query> subquery;
  bool lateral = false;  // kSubquery: LATERAL (query), which may read the FROM items before it
  // kJoin
  JoinType join_type = JoinType::kInner;
  bool natural = false;
  std::unique_ptr<TableRef> left, right;
  ExprPtr on;                           // ON condition (may be null)
  std::vector<std::string> using_cols;  // USING (a, b)
  std::vector<ExprPtr> window_args;     // kWindow
  std::vector<std::string> window_keys;
  // [LEFT] ASOF JOIN: join_type kLeft or kInner; `on` holds the equalities.
  ExprPtr match_condition;  // MATCH_CONDITION (expr); non-null only for ASOF joins
  Pos asof_pos;             // of MATCH_CONDITION
  // kUnnest: UNNEST(e, ...) [WITH ORDINALITY] [AS] alias [(column_names)]: `unnest` holds the
  // arrays or maps, zipped side by side.
  std::vector<ExprPtr> unnest;
  bool with_ordinality = false;
  std::vector<std::string> column_names;
};

struct SelectItem {
  ExprPtr expr;       // kStar for `*` / `t.*`
  std::string alias;  // empty when none was given
  Pos pos;
};

struct OrderItem {
  ExprPtr expr;
  bool desc = false;
  std::optional<bool> nulls_first;
};

// A window: OVER ([name] [PARTITION BY ...] [ORDER BY ...] [frame]), OVER name, or the body of
// WINDOW name AS (...). Without a frame clause the default applies (RANGE BETWEEN UNBOUNDED
// PRECEDING AND CURRENT ROW with ORDER BY, the whole partition without).
enum class FrameUnit : uint8_t { kRows, kRange, kGroups };
// EXCLUDE in a frame clause (NO OTHERS, the default, excludes nothing).
enum class FrameExclude : uint8_t { kNoOthers, kCurrentRow, kGroup, kTies };
struct FrameBound {
  enum class Kind : uint8_t { kUnboundedPreceding, kPreceding, kCurrentRow, kFollowing, kUnboundedFollowing };
  Kind kind = Kind::kCurrentRow;
  Pos pos;
  ExprPtr offset;  // kPreceding / kFollowing: the constant offset
};
struct WindowSpec {
  Pos pos;
  std::string ref;  // the named window it starts from (WINDOW clause), or empty
  std::vector<ExprPtr> partition_by;
  std::vector<OrderItem> order_by;
  bool has_frame = false;
  FrameUnit unit = FrameUnit::kRange;
  FrameBound start, end;
  FrameExclude exclude = FrameExclude::kNoOthers;
};

struct Select {
  Pos pos;
  bool distinct = false;  // SELECT DISTINCT (SELECT ALL is the default)
  std::vector<SelectItem> items;
  std::vector<std::unique_ptr<TableRef>> from;  // comma-separated list; empty = no FROM
  ExprPtr where;
  std::vector<ExprPtr> group_by;
  // GROUPING SETS / ROLLUP / CUBE / `()`: the grouping sets, each a list of indices into
  // group_by (several GROUP BY elements multiply out into their cross product). Empty for a plain
  // GROUP BY, which is one set of all of group_by.
  std::vector<std::vector<int>> grouping_sets;
  ExprPtr having;
  std::vector<std::pair<std::string, std::unique_ptr<WindowSpec>>> windows;  // WINDOW name AS (...), ...
};

enum class SetOp : uint8_t { kUnion, kExcept, kIntersect };

// WITH name [(columns)] AS (query): a common table expression, visible to the later ones and
// to the query it belongs to.
struct CommonTableExpr {
  Pos pos;
  std::string name;
  std::vector<std::string> column_names;  // empty: the query's own names
  std::unique_ptr<Query> query;
};

// A query: either one SELECT or a set operation over two queries, with optional ORDER BY / LIMIT,
// and the common table expressions of a leading WITH.
struct Query {
  Pos pos;
  std::vector<CommonTableExpr> with;
  std::unique_ptr<Select> select;  // set when this is a plain SELECT (or VALUES-free SELECT)
  // set operation (when select is null)
  SetOp set_op = SetOp::kUnion;
  bool set_all = false;
  std::unique_ptr<Query> left, right;
  std::vector<OrderItem> order_by;
  std::optional<int64_t> limit;
  std::optional<int64_t> offset;
};

struct ColumnDef {
  Pos pos;
  std::string name;
  SqlType type;  // nullable = false when NOT NULL or PRIMARY KEY was given
  bool primary_key = false;
  ExprPtr default_value;  // DEFAULT <constant expression>, or null
  std::string lateness;   // LATENESS <expression> as written (bound by the planner), or empty
  Pos lateness_pos;       // of the expression
  std::string watermark;  // WATERMARK <expression> as written, or empty
  Pos watermark_pos;
};

// 'key' = 'value' in WITH (...). value is the unquoted string.
struct Property {
  Pos pos;        // of the key
  Pos value_pos;  // of the value's opening quote
  std::string key;
  std::string value;
};

struct CreateTable {
  std::string name;
  std::vector<ColumnDef> columns;
  std::vector<std::string> primary_key;  // from PRIMARY KEY (..) or column-level PRIMARY KEY
  std::vector<Property> properties;
};

struct CreateView {
  std::string name;
  bool materialized = false;
  bool local = false;
  std::vector<std::string> column_names;  // CREATE VIEW v (a, b) AS ...
  std::unique_ptr<Query> query;
  std::vector<Property> properties;
  size_t query_begin = 0, query_end = 0;  // byte range of the query text
};

struct Insert {
  std::string table;
  std::vector<std::string> columns;        // empty = all, in table order
  std::vector<std::vector<ExprPtr>> rows;  // VALUES (...), (...)
  std::unique_ptr<Query> query;            // INSERT INTO t SELECT ...
};

struct Delete {
  std::string table;
  ExprPtr where;  // may be null
};

// CREATE FUNCTION name(param type, ...) RETURNS type [AS body]. Without a body the function is
// implemented outside SQL (a user-defined function library).
struct CreateFunction {
  Pos pos;
  std::string name;
  std::vector<std::pair<std::string, SqlType>> params;
  SqlType result;
  ExprPtr body;  // null: external
};

struct Statement {
  enum class Kind : uint8_t {
    kCreateTable,
    kCreateView,
    kInsert,
    kDelete,
    kQuery,  // a bare SELECT
    kDropTable,
    kDropView,
    kCreateIndex,           // parsed and ignored
    kSet,                   // SET key = value: accepted and ignored (Feldera's compiler options)
    kLateness,              // LATENESS view.column <expression>
    kDeclareRecursiveView,  // DECLARE RECURSIVE VIEW v (columns): create_table holds name and columns
    kCreateFunction,
    kCreateType,  // CREATE TYPE: the parser resolves the type names, nothing else to do
  };
  Kind kind = Kind::kQuery;
  Pos pos;
  size_t begin = 0, end = 0;  // byte range of the statement's text (without the ';')
  std::unique_ptr<CreateTable> create_table;
  std::unique_ptr<CreateView> create_view;
  std::unique_ptr<Insert> insert;
  std::unique_ptr<Delete> del;
  std::unique_ptr<Query> query;
  std::unique_ptr<CreateFunction> create_function;
  std::string drop_name;
  bool if_exists = false;
  // kLateness: LATENESS view.column <expression>; the expression as written and its position.
  std::string lateness_view, lateness_column, lateness_text;
  Pos lateness_pos;
};

}  // namespace fld::sql
