// CSV records <-> rows of a schema (RFC 4180).
//
// Input: one record is parsed into one row appended to a BatchBuilder with weight +1 (or, when the
// parser is told the record carries a trailing weight field, that weight). Fields are separated
// by the delimiter; a field that starts with '"' is quoted, may contain delimiters, line breaks
// and "" (one quote). An empty *unquoted* field is NULL whatever the column type (a NOT NULL
// string column takes it as the empty string); a quoted "" is the empty string. Values are parsed
// with fld::ParseValue; ARRAY, MAP and ROW values are JSON text read as the JSON format reads
// them (`"[1, 2]"`, `"{""a"": 1}"`; a ROW an object keyed by field names). A record may leave
// out trailing columns that all have a DEFAULT (they take it). A bad record leaves the builder
// untouched and reports a message plus the 1-based character offset of the offending field
// within the record.
//
// Output: one row becomes one line: the columns in schema order, then the weight. NULL is an
// empty field; strings are quoted when they are empty or contain the delimiter, a quote, CR/LF,
// or leading/trailing blanks, so parsing the line back yields the same row.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "core/types/schema.h"
#include "core/zset/batch.h"

namespace fld {

// A record that could not be parsed: what is wrong and where (1-based character offset of the
// field, or of the offending character for syntax errors, within the record text).
struct FormatError {
  std::string message;
  size_t column = 1;
};

struct CsvOptions {
  char delimiter = ',';
  // The record has one more field after the columns: its integer weight (what CsvWriter writes).
  bool weight_field = false;
  // Records of integer columns take a one-pass path (CsvParser::ParseInts) where they can; false
  // sends every record through the general one (tests compare the two).
  bool integer_fast_path = true;
};

class CsvParser {
 public:
  explicit CsvParser(const Schema& schema, CsvOptions options = {});

  // Parses one record (without its line terminator) and appends it to `out` (whose columns must be
  // the schema's). Returns false and fills *error when the record is malformed; `out` is then
  // unchanged.
  bool Parse(std::string_view record, BatchBuilder* out, FormatError* error);

 private:
  struct RawField {
    std::string_view text;  // points into the record or into unescaped_
    bool quoted = false;
    size_t column = 1;  // 1-based offset of the field's first character
  };
  bool Split(std::string_view record, FormatError* error);
  // The common record of a schema of integer columns: one unquoted decimal field per column,
  // parsed in one pass straight into the columns. Anything else (quotes, spaces, a '+', an empty
  // field, 19 digits or more, a value out of its type's range, another count of fields) returns
  // false with nothing appended, for the general path (which accepts or reports it).
  bool ParseInts(std::string_view record, BatchBuilder* out);

  Schema schema_;
  CsvOptions options_;
  std::vector<RawField> fields_;
  std::deque<std::string> unescaped_;  // one buffer per field that needed unescaping (stable addresses)
  std::vector<Value> row_;
  // ParseInts: each column's type (empty: the schema has a column of another type), and the
  // record's values until all are parsed.
  std::vector<TypeId> int_types_;
  std::vector<int64_t> ints_;
};

// True when `text` ends inside a quoted field, i.e. the record continues on the next line.
bool CsvInsideQuotes(std::string_view text);

class CsvWriter {
 public:
  explicit CsvWriter(const Schema& schema, CsvOptions options = {});

  // The column names then "weight", as one line.
  void AppendHeader(std::string* out) const;
  // Row r of `b` (columns in schema order) then its weight, as one line ending in '\n'.
  void AppendRow(const Batch& b, size_t r, std::string* out) const;

 private:
  void AppendText(std::string_view s, std::string* out) const;

  Schema schema_;
  CsvOptions options_;
};

}  // namespace fld
