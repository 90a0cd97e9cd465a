// JSON lines <-> rows of a schema (Feldera's "insert_delete" and "raw" update formats).
//
// Input: one line holds one JSON object. With update format insert_delete (the default) it is
// {"insert": {row}} (weight +1) or {"delete": {row}} (weight -1); with raw the object is the row
// to insert. A row's keys match column names case-insensitively; a missing column takes its
// DEFAULT, else NULL when nullable. A missing NOT NULL column without DEFAULT, an unknown key, or a value of the wrong
// JSON type is an error naming the field, and the builder is left unchanged. Accepted JSON types per column: numbers
// for numeric columns (DECIMAL also as a string "12.50", DOUBLE/REAL also as "NaN", "Infinity"), strings for
// CHAR/VARCHAR/DATE/TIME/TIMESTAMP (text parsed with ParseValue), true/false for BOOLEAN, arrays of byte values (or hex
// strings) for BINARY/VARBINARY, arrays for ARRAY columns, null for any nullable column.
//
// Output: a row of weight w becomes |w| lines {"insert": {...}} (w > 0) or {"delete": {...}}
// (w < 0); keys are the schema's column names in order; numbers are JSON numbers (DECIMAL with
// its scale: 12.50), dates and times strings as FormatValue writes them, booleans true/false,
// binary strings arrays of byte values, ARRAY values arrays, ROW values objects keyed EXPR$0, EXPR$1...
// Input is parsed with simdjson (its DOM parser, reused across lines); a line it rejects, or a
// value that needs more than a plain conversion (numbers written as floats in integer or DECIMAL
// columns, binary, arrays), goes through nlohmann-json, which also writes every error message,
// so both paths accept the same lines with the same values and report errors the same way.
// Output and string escaping use nlohmann-json.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/types/schema.h"
#include "core/zset/batch.h"
#include "formats/csv.h"  // FormatError

namespace fld {

enum class JsonUpdateFormat : uint8_t { kInsertDelete, kRaw };

class JsonParser {
 public:
  // inserts_only: the table is append_only, and a {"delete": ...} record is malformed.
  explicit JsonParser(const Schema& schema, JsonUpdateFormat update_format = JsonUpdateFormat::kInsertDelete,
                      bool inserts_only = false);
  ~JsonParser();
  JsonParser(JsonParser&&) noexcept;

  // Parses one line and appends its row to `out` (columns in schema order). Returns false and fills
  // *error (message and 1-based character offset) when the line is malformed; `out` is unchanged.
  bool Parse(std::string_view line, BatchBuilder* out, FormatError* error);

 private:
  struct Fast;
  bool ParseFast(std::string_view line, BatchBuilder* out);  // false: let ParseSlow decide
  bool ParseSlow(std::string_view line, BatchBuilder* out, FormatError* error);
  std::unique_ptr<Fast> fast_;
  Schema schema_;
  JsonUpdateFormat update_format_;
  bool inserts_only_;
  std::unordered_map<std::string, int> index_;  // lower-case column name -> column
  std::vector<Value> row_;
  std::vector<uint8_t> seen_;
};

// One JSON value as the physical value of `type`, accepting what a row's field accepts (above).
// False with *why ("expected X but found Y") when it does not convert.
bool JsonToValue(const nlohmann::json& j, const SqlType& type, Value* out, std::string* why);

// One value of `type` as the JSON text JsonWriter writes for it.
void AppendJsonValue(const Value& v, const SqlType& type, std::string* out);

class JsonWriter {
 public:
  explicit JsonWriter(const Schema& schema);

  // The line(s) for row r of `b`: |weight| lines, each ending in '\n'.
  void AppendRow(const Batch& b, size_t r, std::string* out) const;

 private:
  Schema schema_;
  std::vector<std::string> keys_;  // "\"name\":" per column, escaped once
};

}  // namespace fld
