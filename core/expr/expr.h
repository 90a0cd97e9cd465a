// Bound scalar expressions and their vectorized evaluation.
//
// The binder (core/plan) turns SQL syntax into a BoundExpr tree whose every node has a resolved
// SqlType and whose column references are indices into the input batch. Evaluate() computes a
// whole column for a batch at once: dispatch on the operator and type happens once per node per
// batch; the per-row loops are plain loops over vectors with no virtual calls or allocation
// (strings aside).
//
// NULL semantics are SQL's: arithmetic and comparisons with a NULL operand are NULL; AND/OR use
// three-valued logic; a filter keeps only rows whose predicate is TRUE.
// Division or modulo by zero yields NULL (as SQLite and MySQL do; PostgreSQL and Feldera raise
// an error). Integer overflow raises fld::Error(kRuntime), and so does a DECIMAL result that does
// not fit its type (the error names the value). DECIMAL arithmetic is exact in 128 bits (256 bits
// for the intermediate products of * and /); / truncates to the result's scale.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/types/types.h"
#include "core/zset/batch.h"

namespace fld {

enum class ExprOp : uint8_t {
  kColumn,   // column_index
  kLiteral,  // literal (already in the physical form of `type`)
  kNeg,
  kNot,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kConcat,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIsDistinct,  // a IS DISTINCT FROM b (never NULL)
  kAnd,
  kOr,
  kIsNull,
  kIsNotNull,
  kIsTrue,
  kIsFalse,  // x IS TRUE / x IS FALSE (never NULL); NOT wraps them for IS NOT
  kCase,     // args: cond1, val1, cond2, val2, ..., [else]; has_else
  kCast,     // args[0] to `type`
  kCoalesce,
  kAbs,
  kLike,      // args[0] LIKE args[1] [ESCAPE args[2]]
  kSafeCast,  // args[0] to `type`, NULL where it does not convert
  kRow,       // ROW(args...): the encoded row (never NULL; see EncodeRowValue)
  // A scalar subquery's value: args[1], after checking that args[0], the number of rows the
  // subquery returned, is at most 1 (more is a run-time error, as in PostgreSQL).
  kScalarSubquery,
  // A date/time/interval function (core/expr/time.h): args[0] names it and its unit.
  kTimeFunc,
  kMapValue,        // MAP[k1, v1, k2, v2, ...]
  kItem,            // args[0][args[1]]: ARRAY (1-based), MAP or VARIANT element; NULL when absent
  kCardinality,     // CARDINALITY(map or array)
  kMapContainsKey,  // MAP_CONTAINS_KEY(map, key)
  kMapKeys,         // MAP_KEYS(map): the keys in order, an ARRAY
  kMapValues,       // MAP_VALUES(map): the values in key order, an ARRAY
  kParseJson,       // PARSE_JSON(string): a VARIANT, NULL when the text is not JSON
  kToJson,          // TO_JSON(variant): a VARCHAR
  kTypeOf,          // TYPEOF(variant): the runtime type's name
  // A library function (`function`, see core/plan/functions.h) or a user-defined function
  // implemented outside SQL (`external`), applied row by row to args.
  kCall,
  // NOW(): the step's clock (a TIMESTAMP). Never evaluated row by row: the planner turns a
  // condition comparing a row to an expression of it into a temporal filter
  // (core/operators/temporal_filter.h), which evaluates it over the clock's value.
  kNow,
};

struct BoundExpr;

// A scalar function of the library: `eval` computes one row's result from its arguments (in
// the physical form of the call's argument types). A strict function is not called for a row
// with a NULL argument: the result is NULL.
struct ScalarFunction {
  const char* name;
  bool strict;
  Value (*eval)(std::span<const Value> args, const BoundExpr& call);
};

// A function declared in SQL without a body (`CREATE FUNCTION f(a T) RETURNS R;`), implemented
// outside: the pipeline sets `impl` before the circuit runs (see pipelines/udf.h).
struct ExternalFunction {
  std::string name;
  std::vector<SqlType> params;
  SqlType result;
  std::function<Value(std::span<const Value>)> impl;  // unset until the implementation is loaded
};

struct BoundExpr {
  ExprOp op = ExprOp::kLiteral;
  SqlType type;
  int column_index = -1;
  Value literal;
  bool has_else = false;
  std::vector<std::unique_ptr<BoundExpr>> args;
  const ScalarFunction* function = nullptr;    // kCall of a library function
  std::shared_ptr<ExternalFunction> external;  // kCall of an external function
  // kCall of a higher-order library function (ARRAY_EXISTS, TRANSFORM): the lambda's body, whose
  // column 0 is the array element and columns 1... the outer values it reads, args[1...] of the
  // call (it reads no column of the call's input itself).
  std::shared_ptr<const BoundExpr> lambda;

  std::unique_ptr<BoundExpr> Clone() const;
  // Structural equality (same tree, same types, same literals).
  bool Equals(const BoundExpr& o) const;
  bool IsConstant() const;  // no column references
  // Human-readable form for plans: "($0 + 1)".
  std::string ToString() const;
};

using BoundExprPtr = std::unique_ptr<BoundExpr>;

BoundExprPtr MakeColumn(int index, SqlType type);
BoundExprPtr MakeLiteral(Value v, SqlType type);
BoundExprPtr MakeCall(ExprOp op, SqlType type, std::vector<BoundExprPtr> args);

// Evaluates e over every row of b. The result has b.size() rows.
ColumnPtr Evaluate(const BoundExpr& e, const Batch& b);
// Evaluates a constant expression (no column references) to a Value.
Value EvaluateConstant(const BoundExpr& e);
// Indices of the rows of b for which the boolean predicate is TRUE.
std::vector<uint32_t> SelectTrue(const BoundExpr& pred, const Batch& b);

// Converts a value between types the way CAST does; throws fld::Error(kRuntime) when the value
// does not fit (e.g. CAST('abc' AS INT)).
Value CastValue(const Value& v, const SqlType& from, const SqlType& to);

}  // namespace fld
