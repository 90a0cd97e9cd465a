// Printing query results for people and scripts: an aligned text table (like psql and duckdb),
// CSV with a header line, or JSON lines (one object per row).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/types/schema.h"

namespace fld {

enum class ResultFormat : uint8_t { kTable, kCsv, kJson };

// Parses "table" | "csv" | "json"; returns false for anything else.
bool ParseResultFormat(const std::string& name, ResultFormat* out);

void PrintResult(std::ostream& os, const Schema& schema, const std::vector<std::vector<Value>>& rows,
                 ResultFormat format);

}  // namespace fld
