// sqllogictest files: records, parsed from text.
//
//   statement ok|error          query <types> <nosort|rowsort|valuesort> [label]
//   <sql, one or more lines>    <sql, one or more lines>
//                               ----
//                               <expected values, one per line, or "N values hashing to <md5>">
//
// plus `hash-threshold N`, `halt`, and `skipif <engine>` / `onlyif <engine>` lines before a
// record. Records are separated by blank lines; lines starting with '#' between records are
// comments. CRLF line ends are accepted.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fld::slt {

struct Record {
  enum class Kind { kStatement, kQuery, kHashThreshold, kHalt };
  Kind kind = Kind::kStatement;
  int line = 0;                                          // 1-based line of the record's first line (after conditions)
  std::vector<std::pair<bool, std::string>> conditions;  // (onlyif?, engine) in order
  // statement
  bool expect_error = false;
  // query
  std::string types;      // one letter per column: I, R, T
  std::string sort_mode;  // nosort, rowsort, valuesort
  std::string label;
  std::vector<std::string> expected;  // lines after ----
  // both
  std::string sql;
  int threshold = 0;  // hash-threshold
};

// Parses a whole file. Malformed records throw std::runtime_error naming the line.
std::vector<Record> ParseRecords(std::string_view text);

// Whether the conditions let `engine` run the record.
bool RunsOn(const Record& r, std::string_view engine);

}  // namespace fld::slt
