#include "formats/result_format.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "formats/json.h"

namespace fld {

bool ParseResultFormat(const std::string& name, ResultFormat* out) {
  if (name == "table")
    *out = ResultFormat::kTable;
  else if (name == "csv")
    *out = ResultFormat::kCsv;
  else if (name == "json")
    *out = ResultFormat::kJson;
  else
    return false;
  return true;
}

namespace {

std::string CsvField(const std::string& s) {
  bool quote = s.find_first_of(",\"\r\n") != std::string::npos || (!s.empty() && (s.front() == ' ' || s.back() == ' '));
  if (!quote) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// Display width of a UTF-8 string (code points; good enough for alignment of typical data).
size_t Width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

nlohmann::json JsonValue(const Value& v, const SqlType& t) {
  if (v.IsNull()) return nullptr;
  if (t.id == TypeId::kBoolean) return v.i != 0;
  if (t.IsInteger()) return v.i;
  if (t.IsFloat()) return v.d;
  if (t.id == TypeId::kDecimal) return nlohmann::json::parse(FormatValue(v, t));
  if (t.IsBinary() || t.id == TypeId::kArray || t.id == TypeId::kRow || t.id == TypeId::kMap ||
      t.id == TypeId::kVariant) {
    // Byte arrays, arrays and objects, as the JSON output connector writes them.
    std::string text;
    AppendJsonValue(v, t, &text);
    return nlohmann::json::parse(text);
  }
  return FormatValue(v, t);
}

}  // namespace

void PrintResult(std::ostream& os, const Schema& schema, const std::vector<std::vector<Value>>& rows,
                 ResultFormat format) {
  const size_t nc = schema.size();
  switch (format) {
    case ResultFormat::kCsv: {
      for (size_t c = 0; c < nc; ++c) os << (c ? "," : "") << CsvField(schema.fields[c].name);
      os << "\n";
      for (const auto& row : rows) {
        for (size_t c = 0; c < nc; ++c) {
          if (c) os << ",";
          if (!row[c].IsNull()) os << CsvField(FormatValue(row[c], schema.fields[c].type));
        }
        os << "\n";
      }
      return;
    }
    case ResultFormat::kJson: {
      for (const auto& row : rows) {
        nlohmann::ordered_json o = nlohmann::ordered_json::object();
        for (size_t c = 0; c < nc; ++c) o[schema.fields[c].name] = JsonValue(row[c], schema.fields[c].type);
        os << o.dump() << "\n";
      }
      return;
    }
    case ResultFormat::kTable: {
      std::vector<std::vector<std::string>> cells;
      std::vector<size_t> width(nc);
      for (size_t c = 0; c < nc; ++c) width[c] = Width(schema.fields[c].name);
      for (const auto& row : rows) {
        cells.emplace_back();
        for (size_t c = 0; c < nc; ++c) {
          cells.back().push_back(row[c].IsNull() ? "NULL" : FormatValue(row[c], schema.fields[c].type));
          width[c] = std::max(width[c], Width(cells.back().back()));
        }
      }
      auto rule = [&] {
        os << "+";
        for (size_t c = 0; c < nc; ++c) os << std::string(width[c] + 2, '-') << "+";
        os << "\n";
      };
      auto line = [&](const std::vector<std::string>& v, bool header) {
        os << "|";
        for (size_t c = 0; c < nc; ++c) {
          bool right = !header && (schema.fields[c].type.IsNumeric());
          std::string pad(width[c] - Width(v[c]), ' ');
          os << " " << (right ? pad + v[c] : v[c] + pad) << " |";
        }
        os << "\n";
      };
      std::vector<std::string> names;
      for (const auto& f : schema.fields) names.push_back(f.name);
      rule();
      line(names, true);
      rule();
      for (const auto& r : cells) line(r, false);
      rule();
      os << "(" << rows.size() << (rows.size() == 1 ? " row)" : " rows)") << "\n";
      return;
    }
  }
}

}  // namespace fld
