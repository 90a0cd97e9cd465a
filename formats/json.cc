#include "formats/json.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/types/variant.h"

namespace fld {

namespace {

using Json = nlohmann::json;

const char* JsonTypeName(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "a number";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "an object";
    default:
      return "a value";
  }
}

std::string Shorten(std::string s) {
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

// Converts one JSON value to the physical value of `type`. On failure returns false with *why set
// to "expected X but found Y".
bool Convert(const Json& j, const SqlType& type, Value* out, std::string* why) {
  const std::string tname = type.WithNullable(true).ToString();
  auto fail = [&] {
    *why = fmt::format("expected {} but found {} ({})", tname,
                       Shorten(j.dump(-1, ' ', false, Json::error_handler_t::replace)), JsonTypeName(j));
    return false;
  };
  if (j.is_null()) {
    if (type.nullable) {
      *out = Value::Null();
      return true;
    }
    *why = fmt::format("expected {} but found null, and the column is NOT NULL", tname);
    return false;
  }
  switch (type.id) {
    case TypeId::kBoolean:
      if (!j.is_boolean()) return fail();
      *out = Value::Int(j.get<bool>() ? 1 : 0);
      return true;
    case TypeId::kTinyInt:
    case TypeId::kSmallInt:
    case TypeId::kInteger:
    case TypeId::kBigInt: {
      std::string text;
      if (j.is_number_unsigned())
        text = fmt::format("{}", j.get<uint64_t>());
      else if (j.is_number_integer())
        text = fmt::format("{}", j.get<int64_t>());
      else if (j.is_number_float() && std::trunc(j.get<double>()) == j.get<double>() &&
               std::fabs(j.get<double>()) < 9.2e18)
        text = fmt::format("{}", static_cast<int64_t>(j.get<double>()));
      else
        return fail();
      if (!ParseValue(text, type, out)) return fail();
      return true;
    }
    case TypeId::kDecimal: {
      std::string text;
      if (j.is_number_unsigned())
        text = fmt::format("{}", j.get<uint64_t>());
      else if (j.is_number_integer())
        text = fmt::format("{}", j.get<int64_t>());
      else if (j.is_number_float()) {
        double d = j.get<double>();
        text = fmt::format("{}", d);  // shortest form: 12.5 stays "12.5", not 12.4999...
        if (text.find_first_of("eE") != std::string::npos) text = fmt::format("{:.{}f}", d, type.scale + 1);
      } else if (j.is_string())
        text = j.get_ref<const std::string&>();
      else
        return fail();
      if (!ParseValue(text, type, out)) return fail();
      return true;
    }
    case TypeId::kReal:
    case TypeId::kDouble:
      if (j.is_number()) {
        double d = j.get<double>();
        *out = Value::Double(type.id == TypeId::kReal ? static_cast<double>(static_cast<float>(d)) : d);
        return true;
      }
      if (j.is_string() && ParseValue(j.get_ref<const std::string&>(), type, out)) return true;
      return fail();
    case TypeId::kChar:
    case TypeId::kVarchar:
      if (!j.is_string()) return fail();
      *out = Value::String(j.get<std::string>());
      return true;
    case TypeId::kDate:
    case TypeId::kTime:
    case TypeId::kTimestamp:
      if (!j.is_string() || !ParseValue(j.get_ref<const std::string&>(), type, out)) return fail();
      return true;
    case TypeId::kBinary:
    case TypeId::kVarbinary: {
      // An array of byte values (Feldera's form) or a string of hex digits.
      if (j.is_string()) {
        if (!ParseValue(j.get_ref<const std::string&>(), type, out)) return fail();
        return true;
      }
      if (!j.is_array()) return fail();
      std::string bytes;
      for (const auto& b : j) {
        if (!b.is_number_integer() || b.get<int64_t>() < 0 || b.get<int64_t>() > 255) return fail();
        bytes.push_back(static_cast<char>(b.get<int64_t>()));
      }
      *out = Value::String(std::move(bytes));
      return true;
    }
    case TypeId::kUuid: {
      // Its text, or (as Feldera also reads) an array of its 16 byte values.
      if (j.is_string()) {
        if (!ParseValue(j.get_ref<const std::string&>(), type, out)) return fail();
        return true;
      }
      if (!j.is_array() || j.size() != 16) return fail();
      std::string bytes;
      for (const auto& b : j) {
        if (!b.is_number_integer() || b.get<int64_t>() < 0 || b.get<int64_t>() > 255) return fail();
        bytes.push_back(static_cast<char>(b.get<int64_t>()));
      }
      *out = Value::String(std::move(bytes));
      return true;
    }
    case TypeId::kArray: {
      if (!j.is_array()) return fail();
      const SqlType& et = (*type.fields)[0];
      std::vector<Value> elements(j.size());
      for (size_t i = 0; i < j.size(); ++i)
        if (!Convert(j[i], et.WithNullable(true), &elements[i], why)) return false;
      *out = Value::String(EncodeArrayValue(elements, et));
      return true;
    }
    case TypeId::kMap: {
      // A JSON object; keys convert from their text.
      if (!j.is_object()) return fail();
      const SqlType& kt = (*type.fields)[0];
      std::vector<std::pair<Value, Value>> entries;
      for (auto it = j.begin(); it != j.end(); ++it) {
        Value k, v;
        if (!ParseValue(it.key(), kt, &k)) return fail();
        if (!Convert(it.value(), (*type.fields)[1].WithNullable(true), &v, why)) return false;
        entries.emplace_back(std::move(k), std::move(v));
      }
      *out = Value::String(EncodeMapValue(std::move(entries), type));
      return true;
    }
    case TypeId::kVariant: {
      // Any JSON value (a JSON null is VARIANT null only inside; a field's null is SQL NULL).
      std::string v;
      if (!ParseJsonVariant(j.dump(-1, ' ', false, Json::error_handler_t::replace), &v)) return fail();
      *out = Value::String(std::move(v));
      return true;
    }
    case TypeId::kRow: {
      // An object keyed by the field names (case-insensitive; a missing field is NULL).
      if (!j.is_object()) return fail();
      std::vector<Value> fields(type.fields->size());
      for (const auto& [key, val] : j.items()) {
        size_t i = 0;
        while (i < fields.size() && !EqualsIgnoreCase(type.FieldName(i), key)) ++i;
        if (i == fields.size()) return fail();
        if (!Convert(val, (*type.fields)[i].WithNullable(true), &fields[i], why)) return false;
      }
      *out = Value::String(EncodeRowValue(fields, *type.fields));
      return true;
    }
    case TypeId::kNull:
    case TypeId::kIntervalDayTime:  // no table column is an INTERVAL (as in Feldera)
    case TypeId::kIntervalYearMonth:
      return fail();
    case TypeId::kGeometry:  // its WKT text, `POINT (x y)`
      if (!j.is_string() || !ParseValue(j.get_ref<const std::string&>(), type, out)) return fail();
      return true;
  }
  return fail();
}

// 1-based offset of the key "name" in the line, for error positions (1 when not found verbatim).
size_t KeyColumn(std::string_view line, std::string_view key) {
  std::string quoted = fmt::format("\"{}\"", key);
  size_t p = line.find(quoted);
  return p == std::string_view::npos ? 1 : p + 1;
}

// The text of the number after "key": in the line ("" when not found); callers check that it is
// the number the parser read.
std::string RawNumberOf(std::string_view line, std::string_view key) {
  const std::string quoted = fmt::format("\"{}\"", key);
  for (size_t p = line.find(quoted); p != std::string_view::npos; p = line.find(quoted, p + 1)) {
    size_t q = p + quoted.size();
    while (q < line.size() && (line[q] == ' ' || line[q] == '\t')) ++q;
    if (q >= line.size() || line[q] != ':') continue;
    ++q;
    while (q < line.size() && (line[q] == ' ' || line[q] == '\t')) ++q;
    size_t e = q;
    while (e < line.size() && (std::isdigit(static_cast<unsigned char>(line[e])) || line[e] == '-' || line[e] == '+' ||
                               line[e] == '.' || line[e] == 'e' || line[e] == 'E'))
      ++e;
    if (e > q) return std::string(line.substr(q, e - q));
  }
  return "";
}

// "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..." -> "syntax error ..."
std::string ParseErrorText(const std::string& what) {
  size_t p = what.find("column ");
  if (p != std::string::npos) {
    p = what.find(": ", p);
    if (p != std::string::npos) return what.substr(p + 2);
  }
  return what;
}

void AppendJson(const Value& v, const SqlType& type, std::string* out) {
  if (v.IsNull()) {
    out->append("null");
    return;
  }
  switch (type.id) {
    case TypeId::kBoolean:
      out->append(v.i ? "true" : "false");
      return;
    case TypeId::kTinyInt:
    case TypeId::kSmallInt:
    case TypeId::kInteger:
    case TypeId::kBigInt:
    case TypeId::kDecimal:
      out->append(FormatValue(v, type));
      return;
    case TypeId::kReal:
    case TypeId::kDouble:
      if (std::isfinite(v.d))
        out->append(FormatValue(v, type));
      else
        out->append("\"" + FormatValue(v, type) + "\"");
      return;
    case TypeId::kChar:
    case TypeId::kVarchar:
      out->append(Json(v.s).dump(-1, ' ', false, Json::error_handler_t::replace));
      return;
    case TypeId::kBinary:
    case TypeId::kVarbinary:
      out->push_back('[');
      for (size_t i = 0; i < v.s.size(); ++i)
        fmt::format_to(std::back_inserter(*out), "{}{}", i ? "," : "", static_cast<unsigned char>(v.s[i]));
      out->push_back(']');
      return;
    case TypeId::kArray: {
      std::vector<Value> elements = DecodeArrayValue(v.s, (*type.fields)[0]);
      out->push_back('[');
      for (size_t i = 0; i < elements.size(); ++i) {
        if (i) out->push_back(',');
        AppendJson(elements[i], (*type.fields)[0], out);
      }
      out->push_back(']');
      return;
    }
    case TypeId::kVariant:
      out->append(VariantToJson(v.s));
      return;
    case TypeId::kMap: {
      // An object keyed by the keys' text.
      const SqlType& kt = (*type.fields)[0];
      out->push_back('{');
      bool first = true;
      for (const auto& [k, val] : DecodeMapValue(v.s, type)) {
        if (!first) out->push_back(',');
        first = false;
        out->append(Json(FormatValue(k, kt)).dump(-1, ' ', false, Json::error_handler_t::replace));
        out->push_back(':');
        AppendJson(val, (*type.fields)[1], out);
      }
      out->push_back('}');
      return;
    }
    case TypeId::kRow: {
      // An object keyed EXPR$0, EXPR$1, ... (Feldera's names for the fields of ROW(...)).
      std::vector<Value> fields = DecodeRowValue(v.s, *type.fields);
      out->push_back('{');
      for (size_t i = 0; i < fields.size(); ++i) {
        out->append(i ? ",\"" : "\"");
        out->append(type.FieldName(i));
        out->append("\":");
        AppendJson(fields[i], (*type.fields)[i], out);
      }
      out->push_back('}');
      return;
    }
    default:
      out->append("\"" + FormatValue(v, type) + "\"");
      return;
  }
}

}  // namespace

bool JsonToValue(const Json& j, const SqlType& type, Value* out, std::string* why) {
  return Convert(j, type, out, why);
}

void AppendJsonValue(const Value& v, const SqlType& type, std::string* out) {
  AppendJson(v, type, out);
}

JsonParser::JsonParser(const Schema& schema, JsonUpdateFormat update_format, bool inserts_only)
    : schema_(schema), update_format_(update_format), inserts_only_(inserts_only) {
  for (size_t c = 0; c < schema_.size(); ++c) index_.emplace(ToLower(schema_.fields[c].name), static_cast<int>(c));
  row_.resize(schema_.size());
  seen_.resize(schema_.size());
}

struct JsonParser::Fast {
  simdjson::dom::parser parser;
  std::string lower;
  // The last record's field names as written and their columns, in its order: records of one
  // stream mostly spell their fields alike, so a field is matched by comparing its name with
  // the one at its position in the last record, without lower-casing or hashing it.
  std::vector<std::pair<std::string, int>> last;
};

JsonParser::~JsonParser() = default;
JsonParser::JsonParser(JsonParser&&) noexcept = default;

bool JsonParser::Parse(std::string_view line, BatchBuilder* out, FormatError* error) {
  return ParseFast(line, out) || ParseSlow(line, out, error);
}

namespace {

// The plain conversions of the fast path; false for anything else (the slow path decides).
bool ConvertFast(simdjson::dom::element j, const SqlType& type, Value* out) {
  using simdjson::dom::element_type;
  const element_type t = j.type();
  if (t == element_type::NULL_VALUE) {
    if (!type.nullable) return false;
    *out = Value::Null();
    return true;
  }
  switch (type.id) {
    case TypeId::kBoolean:
      if (t != element_type::BOOL) return false;
      *out = Value::Int(bool(j) ? 1 : 0);
      return true;
    case TypeId::kTinyInt:
    case TypeId::kSmallInt:
    case TypeId::kInteger:
    case TypeId::kBigInt: {
      if (t != element_type::INT64) return false;
      const int64_t v = int64_t(j);
      if (!IntegerFits(v, type.id)) return false;
      *out = Value::Int(v);
      return true;
    }
    case TypeId::kDecimal: {
      if (t != element_type::INT64 && t != element_type::STRING) return false;
      if (t == element_type::INT64) {
        const fmt::format_int text{static_cast<int64_t>(j)};
        return ParseValue(std::string_view(text.data(), text.size()), type, out);
      }
      return ParseValue(std::string_view(j), type, out);
    }
    case TypeId::kReal:
    case TypeId::kDouble: {
      double d;
      if (t == element_type::DOUBLE)
        d = double(j);
      else if (t == element_type::INT64)
        d = static_cast<double>(int64_t(j));
      else
        return false;
      *out = Value::Double(type.id == TypeId::kReal ? static_cast<double>(static_cast<float>(d)) : d);
      return true;
    }
    case TypeId::kChar:
    case TypeId::kVarchar:
      if (t != element_type::STRING) return false;
      *out = Value::String(std::string(std::string_view(j)));
      return true;
    case TypeId::kDate:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kUuid:
      return t == element_type::STRING && ParseValue(std::string_view(j), type, out);
    default:
      return false;
  }
}

}  // namespace

bool JsonParser::ParseFast(std::string_view line, BatchBuilder* out) {
  if (!fast_) fast_ = std::make_unique<Fast>();
  simdjson::dom::element doc;
  if (fast_->parser.parse(line.data(), line.size(), true).get(doc) != simdjson::SUCCESS) return false;
  simdjson::dom::object row;
  if (doc.get(row) != simdjson::SUCCESS) return false;
  int64_t weight = 1;
  if (update_format_ == JsonUpdateFormat::kInsertDelete) {
    if (row.size() != 1) return false;
    auto field = *row.begin();
    if (field.key == "insert")
      weight = 1;
    else if (field.key == "delete" && !inserts_only_)
      weight = -1;
    else
      return false;
    if (field.value.get(row) != simdjson::SUCCESS) return false;
  }
  std::fill(seen_.begin(), seen_.end(), 0);
  std::string& lower = fast_->lower;
  auto& last = fast_->last;
  size_t at = 0;  // the field's position in the record
  for (auto field : row) {
    int c;
    if (at < last.size() && last[at].first == field.key) {
      c = last[at].second;
    } else {
      lower.assign(field.key);
      for (char& ch : lower)
        if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');  // (ToLower's C-locale tolower)
      auto found = index_.find(lower);
      if (found == index_.end()) return false;
      c = found->second;
      last.resize(at + 1);
      last[at] = {std::string(field.key), c};
    }
    ++at;
    if (seen_[c]) return false;  // a repeated column: the slow path decides
    if (!ConvertFast(field.value, schema_.fields[c].type, &row_[c])) return false;
    seen_[c] = 1;
  }
  for (size_t c = 0; c < schema_.size(); ++c) {
    if (seen_[c]) continue;
    if (schema_.fields[c].default_value)
      row_[c] = *schema_.fields[c].default_value;
    else if (schema_.fields[c].type.nullable)
      row_[c] = Value::Null();
    else
      return false;
  }
  for (size_t c = 0; c < schema_.size(); ++c) out->col(c).Append(row_[c]);
  out->AddWeight(weight);
  return true;
}

bool JsonParser::ParseSlow(std::string_view line, BatchBuilder* out, FormatError* error) {
  Json doc;
  try {
    doc = Json::parse(line.begin(), line.end());
  } catch (const Json::parse_error& e) {
    error->message = "invalid JSON: " + ParseErrorText(e.what());
    error->column = e.byte == 0 ? 1 : e.byte;
    return false;
  }
  if (!doc.is_object()) {
    error->message = fmt::format("expected a JSON object but found {}", JsonTypeName(doc));
    error->column = 1;
    return false;
  }
  const Json* row = &doc;
  int64_t weight = 1;
  if (update_format_ == JsonUpdateFormat::kInsertDelete) {
    if (doc.size() != 1 || (!doc.contains("insert") && !doc.contains("delete"))) {
      error->message = "expected {\"insert\": {...}} or {\"delete\": {...}}";
      error->column = 1;
      return false;
    }
    auto it = doc.begin();
    weight = it.key() == "insert" ? 1 : -1;
    if (weight < 0 && inserts_only_) {
      error->message = "a {\"delete\": ...} record for an append_only table (it accepts inserts only)";
      error->column = 1;
      return false;
    }
    row = &it.value();
    if (!row->is_object()) {
      error->message = fmt::format("expected a JSON object after \"{}\" but found {}", it.key(), JsonTypeName(*row));
      error->column = KeyColumn(line, it.key());
      return false;
    }
  }
  std::fill(seen_.begin(), seen_.end(), 0);
  std::string why, lower;
  for (auto it = row->begin(); it != row->end(); ++it) {
    lower = ToLower(it.key());
    auto found = index_.find(lower);
    if (found == index_.end()) {
      std::string names;
      for (const auto& f : schema_.fields) names += (names.empty() ? "" : ", ") + f.name;
      error->message = fmt::format("unknown field '{}' (columns: {})", it.key(), names);
      error->column = KeyColumn(line, it.key());
      return false;
    }
    int c = found->second;
    if (seen_[c]) {
      error->message = fmt::format("field '{}' is given twice (column names ignore case)", it.key());
      error->column = KeyColumn(line, it.key());
      return false;
    }
    const SqlType& ctype = schema_.fields[c].type;
    if (ctype.IsWideDecimal() && it.value().is_number_float()) {
      // nlohmann reads the number as a double: take its digits from the line instead.
      std::string raw = RawNumberOf(line, it.key());
      Value exact;
      if (!raw.empty() && std::strtod(raw.c_str(), nullptr) == it.value().get<double>() &&
          ParseValue(raw, ctype, &exact)) {
        row_[c] = std::move(exact);
        seen_[c] = 1;
        continue;
      }
    }
    if (!Convert(it.value(), schema_.fields[c].type, &row_[c], &why)) {
      error->message = fmt::format("{} in field '{}'", why, schema_.fields[c].name);
      error->column = KeyColumn(line, it.key());
      return false;
    }
    seen_[c] = 1;
  }
  for (size_t c = 0; c < schema_.size(); ++c) {
    if (seen_[c]) continue;
    if (schema_.fields[c].default_value) {
      row_[c] = *schema_.fields[c].default_value;
      continue;
    }
    if (!schema_.fields[c].type.nullable) {
      error->message = fmt::format("missing field '{}' (a NOT NULL column)", schema_.fields[c].name);
      error->column = 1;
      return false;
    }
    row_[c] = Value::Null();
  }
  for (size_t c = 0; c < schema_.size(); ++c) out->col(c).Append(row_[c]);
  out->AddWeight(weight);
  return true;
}

JsonWriter::JsonWriter(const Schema& schema) : schema_(schema) {
  for (const auto& f : schema_.fields)
    keys_.push_back(Json(f.name).dump(-1, ' ', false, Json::error_handler_t::replace) + ":");
}

void JsonWriter::AppendRow(const Batch& b, size_t r, std::string* out) const {
  const int64_t w = b.weights[r];
  if (w == 0) return;
  size_t start = out->size();
  out->append(w > 0 ? "{\"insert\":{" : "{\"delete\":{");
  for (size_t c = 0; c < schema_.size(); ++c) {
    if (c > 0) out->push_back(',');
    out->append(keys_[c]);
    const Column& col = *b.cols[c];
    const SqlType& type = schema_.fields[c].type;
    if (col.IsNull(r)) {
      out->append("null");
      continue;
    }
    switch (type.id) {
      case TypeId::kBoolean:
        out->append(col.i64[r] ? "true" : "false");
        break;
      case TypeId::kTinyInt:
      case TypeId::kSmallInt:
      case TypeId::kInteger:
      case TypeId::kBigInt:
        fmt::format_to(std::back_inserter(*out), "{}", col.i64[r]);
        break;
      case TypeId::kDecimal:
        out->append(FormatValue(col.Get(r), type));
        break;
      case TypeId::kReal:
      case TypeId::kDouble: {
        double d = col.f64[r] == 0 ? 0.0 : col.f64[r];  // -0.0 is 0
        if (std::isfinite(d) && type.id == TypeId::kReal)
          fmt::format_to(std::back_inserter(*out), "{}", static_cast<float>(d));  // shortest float form
        else if (std::isfinite(d))
          fmt::format_to(std::back_inserter(*out), "{}", d);
        else
          fmt::format_to(std::back_inserter(*out), "\"{}\"", FormatValue(Value::Double(d), type));
        break;
      }
      case TypeId::kChar:
      case TypeId::kVarchar:
        out->append(Json(col.str[r]).dump(-1, ' ', false, Json::error_handler_t::replace));
        break;
      case TypeId::kBinary:
      case TypeId::kVarbinary:
      case TypeId::kRow:
      case TypeId::kArray:
      case TypeId::kMap:
      case TypeId::kVariant:
        AppendJson(col.Get(r), type, out);
        break;
      default: {
        out->push_back('"');
        out->append(FormatValue(col.Get(r), type));
        out->push_back('"');
        break;
      }
    }
  }
  out->append("}}\n");
  // Weights beyond +-1 repeat the line.
  const uint64_t copies = w > 0 ? static_cast<uint64_t>(w) : static_cast<uint64_t>(-(w + 1)) + 1;
  if (copies > 1) {
    const std::string line = out->substr(start);
    for (uint64_t k = 1; k < copies; ++k) out->append(line);
  }
}

}  // namespace fld
