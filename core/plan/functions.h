// The scalar function library: one table maps each SQL function name (LOWER, SUBSTRING, POWER,
// ARRAY_CONTAINS, ...) to its binder rule (how many arguments, which implicit casts, which
// result type, as Feldera documents them) and its evaluator (a ScalarFunction, core/expr/expr.h,
// computing one row's value). Adding a function is one row of that table.
//
// The parser writes SQL's keyword call forms as plain calls (core/sql/ast.h: SUBSTRING(s FROM a
// FOR b), POSITION(a IN b), TRIM(LEADING c FROM s), ARRAY[...], a[i], x.field), so they are rows
// of the table too.
//
// Semantics follow Feldera's SQL reference; where it says nothing, PostgreSQL's. Characters are
// UTF-8 code points (LENGTH('josé') is 4); LOWER/UPPER/INITCAP change ASCII and Latin-1 letters
// only. Regular expressions (RLIKE, REGEXP_REPLACE) are ECMAScript's (std::regex), close to the
// Java syntax Feldera uses for the common constructs.
#pragma once

#include <string_view>
#include <vector>

#include "core/expr/expr.h"
#include "core/sql/ast.h"

namespace fld::plan {

class Binder;

struct FunctionDef;
// Binds a call whose arguments are bound already; errors point at call.pos.
using BindRule = BoundExprPtr (*)(const Binder& b, const FunctionDef& def, const sql::Expr& call,
                                  std::vector<BoundExprPtr> args);

struct FunctionDef {
  std::string_view name;  // upper case
  int min_args;
  int max_args;  // -1: any number
  BindRule bind;
  ScalarFunction fn;  // the evaluator the rule's calls use (fn.eval may be null for rules that
                      // build other expressions, e.g. MOD)
};

// The library function named `upper_name`, or null.
const FunctionDef* FindFunction(std::string_view upper_name);

// Binds a call of a library function: checks the argument count, then applies def's rule.
BoundExprPtr BindLibraryCall(const Binder& b, const FunctionDef& def, const sql::Expr& call,
                             std::vector<BoundExprPtr> args);

// Refuses a call of a library function that is not supported yet ("X is not supported yet"),
// before its arguments are bound (they may be syntax only those functions take); returns for
// any other call.
void RefuseUnsupported(const Binder& b, const sql::Expr& call);

// Field `field` of a ROW-typed expression (x.field), or an error at pos.
// Field i of a ROW value (NULL when the row is NULL).
BoundExprPtr RowField(BoundExprPtr row, size_t i);
BoundExprPtr BindFieldAccess(const Binder& b, BoundExprPtr row, std::string_view field, sql::Pos pos);

}  // namespace fld::plan
