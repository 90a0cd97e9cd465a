// The SQL parser: text -> syntax tree (core/sql/ast.h). Hand-written recursive descent, so
// errors can name the exact token, what was expected there, and draw a caret under it.
//
// Errors are thrown as fld::Error(ErrorKind::kUsage, msg) where msg looks like
//   bank.yaml:14:22: error: expected ')' but found ','
//      14 |   SELECT a, FROM t
//         |             ^
// Positions are mapped through SourceInfo, so SQL embedded in a YAML block scalar reports the
// line and column in the YAML file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/sql/ast.h"

namespace fld::sql {

// Where the SQL text came from, for error messages.
struct SourceInfo {
  std::string name = "<sql>";  // file name shown in errors
  int first_line = 1;          // line number (in `name`) of the SQL text's first line
  int column_offset = 0;       // added to every column (indentation of a YAML block scalar)
};

// Parses a whole program: statements separated by ';' (a trailing ';' is optional).
std::vector<Statement> ParseProgram(std::string_view sql, const SourceInfo& src = {});

// Parses exactly one query (SELECT ... / set operations / ORDER BY / LIMIT), with an optional
// trailing ';'.
std::unique_ptr<Query> ParseQuery(std::string_view sql, const SourceInfo& src = {});

// Formats an error pointing at `pos` of `sql` (used by the parser and by the binder/planner,
// which report semantic errors such as unknown columns the same way).
std::string FormatSqlError(std::string_view sql, const SourceInfo& src, Pos pos, std::string_view message);

}  // namespace fld::sql
