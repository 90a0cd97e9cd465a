#include "tests/feldera/aggtest.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/circuit/circuit.h"
#include "core/common/error.h"
#include "core/plan/planner.h"
#include "core/sql/parser.h"
#include "core/types/schema.h"
#include "formats/json.h"

namespace fld::feldera {

namespace {

using Json = nlohmann::json;

// The message of an fld::Error without its "<sql>:3:7: error: " prefix and without the quoted
// SQL line and caret that follow it.
std::string FirstLine(const std::string& what) {
  std::string line = what.substr(0, what.find('\n'));
  size_t p = line.find(": error: ");
  if (p != std::string::npos) line = line.substr(p + 9);
  return line;
}

// "12.500" -> "12.5", "-0.00" -> "0", "007" -> "7": a decimal's text without padding.
std::string NormalizeDecimal(std::string s) {
  bool neg = !s.empty() && s[0] == '-';
  if (neg || (!s.empty() && s[0] == '+')) s.erase(0, 1);
  size_t dot = s.find('.');
  std::string ip = dot == std::string::npos ? s : s.substr(0, dot);
  std::string fp = dot == std::string::npos ? "" : s.substr(dot + 1);
  while (!fp.empty() && fp.back() == '0') fp.pop_back();
  while (ip.size() > 1 && ip[0] == '0') ip.erase(0, 1);
  if (ip.empty()) ip = "0";
  std::string out = fp.empty() ? ip : ip + "." + fp;
  if (neg && out != "0") out = "-" + out;
  return out;
}

std::string CanonDouble(double d) {
  return fmt::format("{:.6g}", d);
}

std::string Hex(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

// A value of `type` as compared text.
std::string Canon(const Value& v, const SqlType& type) {
  if (v.IsNull()) return "NULL";
  if (type.id == TypeId::kArray) {
    std::vector<Value> e = DecodeArrayValue(v.s, (*type.fields)[0]);
    std::string out = "[";
    for (size_t i = 0; i < e.size(); ++i) out += (i ? ", " : "") + Canon(e[i], (*type.fields)[0]);
    return out + "]";
  }
  if (type.id == TypeId::kRow) {
    std::vector<Value> f = DecodeRowValue(v.s, *type.fields);
    std::string out = "{";
    for (size_t i = 0; i < f.size(); ++i) out += (i ? ", " : "") + Canon(f[i], (*type.fields)[i]);
    return out + "}";
  }
  switch (type.id) {
    case TypeId::kBoolean:
      return v.i ? "true" : "false";
    case TypeId::kDecimal:
      return NormalizeDecimal(FormatValue(v, type));
    case TypeId::kReal:
    case TypeId::kDouble:
      return CanonDouble(v.d);
    case TypeId::kBinary:
    case TypeId::kVarbinary:
      return Hex(v.s);
    default:
      break;
  }
  if (v.kind == Value::Kind::kString) return v.s;
  return FormatValue(v, type);
}

// An expected JSON value as compared text, read as a value of the view column's `type`.
std::string CanonJson(const Json& j, const SqlType& type) {
  if (j.is_null()) return "NULL";
  if (type.id == TypeId::kArray && j.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < j.size(); ++i) out += (i ? ", " : "") + CanonJson(j[i], (*type.fields)[0]);
    return out + "]";
  }
  if (type.id == TypeId::kRow && j.is_object() && j.size() == type.fields->size()) {
    // Fields are named EXPR$0, EXPR$1, ... in order.
    std::string out = "{";
    for (size_t i = 0; i < type.fields->size(); ++i) {
      std::string key = fmt::format("EXPR${}", i);
      if (!j.contains(key)) return j.dump();
      out += (i ? ", " : "") + CanonJson(j[key], (*type.fields)[i]);
    }
    return out + "}";
  }
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  if (type.IsFloat() && j.is_number()) return CanonDouble(j.get<double>());
  if (type.id == TypeId::kDecimal) {
    if (j.is_object() && j.contains("decimal") && j["decimal"].is_string())
      return NormalizeDecimal(j["decimal"].get<std::string>());
    if (j.is_number_integer()) return NormalizeDecimal(fmt::format("{}", j.get<int64_t>()));
    if (j.is_number()) return NormalizeDecimal(fmt::format("{}", j.get<double>()));
  }
  if (j.is_number_integer()) return fmt::format("{}", j.get<int64_t>());
  if (j.is_number_unsigned()) return fmt::format("{}", j.get<uint64_t>());
  if (j.is_number_float()) return CanonDouble(j.get<double>());
  if (j.is_object() && j.contains("bytes") && j.size() == 1) return j["bytes"].get<std::string>();
  if (type.IsBinary() && j.is_array()) {
    std::string bytes;
    for (const auto& b : j) bytes.push_back(static_cast<char>(b.get<int>()));
    return Hex(bytes);
  }
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (type.IsTemporal()) {
      Value v;
      if (ParseValue(s, type, &v)) return FormatValue(v, type);
    }
    return s;
  }
  return j.dump();
}

struct Table {
  std::string name;
  std::string sql;
  sql::Statement stmt;
  Schema schema;
  Batch rows;         // the table's data, one row per copy
  std::string error;  // why the table cannot be used (empty when it can)
};

// Batch rows [begin, end) with every weight set to `weight`.
Batch Slice(const Batch& b, std::vector<uint32_t> sel, int64_t weight) {
  Batch out = Gather(b, sel);
  out.weights.assign(sel.size(), weight);
  return out;
}

std::vector<uint32_t> Range(size_t begin, size_t end) {
  std::vector<uint32_t> v;
  for (size_t i = begin; i < end; ++i) v.push_back(static_cast<uint32_t>(i));
  return v;
}

Table LoadTable(const Json& entry) {
  Table t;
  t.sql = entry.at("sql").get<std::string>();
  try {
    std::vector<sql::Statement> prog = sql::ParseProgram(t.sql);
    if (prog.size() != 1 || prog[0].kind != sql::Statement::Kind::kCreateTable)
      Fail(ErrorKind::kUsage, "expected one CREATE TABLE statement");
    t.stmt = std::move(prog[0]);
    t.name = t.stmt.create_table->name;
    Circuit tmp;
    plan::Planner p(&tmp, t.sql, {});
    int r = p.AddTable(t.stmt);
    t.schema = tmp.relations()[r].schema;
    BatchBuilder b(t.schema.PhysTypes());
    JsonParser parser(t.schema, JsonUpdateFormat::kRaw);
    for (const auto& row : entry.at("data")) {
      FormatError err;
      if (!parser.Parse(row.dump(), &b, &err)) Fail(ErrorKind::kUsage, "data: {}", err.message);
    }
    t.rows = b.Finish();
  } catch (const Error& e) {
    t.error = FirstLine(e.what());
    if (t.name.empty()) {
      // Name it anyway, so views reading it report its error.
      std::string s = t.sql;
      size_t p = ToUpper(s).find("TABLE");
      if (p != std::string::npos) {
        size_t b = s.find_first_not_of(" \t\r\n", p + 5);
        size_t e2 = s.find_first_of(" \t\r\n(", b);
        if (b != std::string::npos) t.name = s.substr(b, e2 - b);
      }
    }
  }
  return t;
}

// The expected rows of a view entry, as JSON.
Json ExpectedRows(const Json& entry) {
  if (entry.contains("data")) return entry["data"];
  return Json::parse(PythonLiteralToJson(entry.at("data_unparsed").get<std::string>()));
}

CaseResult RunView(const Json& entry, const std::vector<Table>& tables) {
  CaseResult res;
  res.name = entry.at("class").get<std::string>();
  Json expected;
  try {
    expected = ExpectedRows(entry);
  } catch (const std::exception& e) {
    res.reason = fmt::format("runner: cannot read the expected rows: {}", e.what());
    return res;
  }
  if (expected.is_array() && expected.empty()) {
    res.skipped = true;
    res.reason = "expected rows are empty (not captured by the extraction)";
    return res;
  }
  const std::string sql = entry.at("sql").get<std::string>();
  Circuit c;
  std::vector<std::pair<int, const Table*>> inputs;
  int view = -1;
  try {
    for (const Table& t : tables) {
      if (!t.error.empty()) continue;
      plan::Planner p(&c, t.sql, {});
      inputs.emplace_back(p.AddTable(t.stmt), &t);
    }
    std::vector<sql::Statement> prog = sql::ParseProgram(sql);
    if (prog.size() != 1 || prog[0].kind != sql::Statement::Kind::kCreateView)
      Fail(ErrorKind::kUsage, "expected one CREATE VIEW statement");
    prog[0].create_view->materialized = true;
    plan::Planner p(&c, sql, {});
    view = p.AddView(prog[0]);
  } catch (const Error& e) {
    std::string msg = FirstLine(e.what());
    for (const Table& t : tables) {
      if (t.error.empty()) continue;
      if (msg.find(fmt::format("unknown table or view '{}'", t.name)) != std::string::npos) {
        res.reason = fmt::format("table {}: {}", t.name, t.error);
        return res;
      }
    }
    res.reason = msg;
    return res;
  }
  Batch contents;
  try {
    // step 1: the first half; step 2: the second half and copies of one or two rows;
    // step 3: the copies and the first half deleted; step 4: the first half inserted again.
    std::vector<std::vector<Batch>> steps(4);
    for (const auto& [rel, t] : inputs) {
      const size_t n = t->rows.size(), h = n / 2;
      std::vector<uint32_t> garbage;
      if (n > 0) garbage.push_back(0);
      if (n > 1) garbage.push_back(static_cast<uint32_t>(h));
      steps[0].push_back(Slice(t->rows, Range(0, h), 1));
      std::vector<Batch> s2{Slice(t->rows, Range(h, n), 1), Slice(t->rows, garbage, 1)};
      steps[1].push_back(Concat(s2));
      std::vector<Batch> s3{Slice(t->rows, garbage, -1), Slice(t->rows, Range(0, h), -1)};
      steps[2].push_back(Concat(s3));
      steps[3].push_back(Slice(t->rows, Range(0, h), 1));
    }
    for (auto& step : steps) {
      for (size_t i = 0; i < inputs.size(); ++i)
        if (!step[i].empty()) c.Push(inputs[i].first, std::move(step[i]));
      c.Step();
    }
    contents = c.Contents(view);
  } catch (const Error& e) {
    res.reason = "run: " + FirstLine(e.what());
    return res;
  }
  const Schema& schema = c.relations()[view].schema;
  std::vector<std::string> got, want;
  for (size_t r = 0; r < contents.size(); ++r) {
    if (contents.weights[r] <= 0) {
      res.reason = fmt::format("the view holds a row with weight {}", contents.weights[r]);
      return res;
    }
    std::string row;
    for (size_t k = 0; k < schema.size(); ++k)
      row += (k ? " | " : "") + Canon(contents.Get(k, r), schema.fields[k].type);
    for (int64_t w = 0; w < contents.weights[r]; ++w) got.push_back(row);
  }
  for (const auto& obj : expected) {
    if (!obj.is_object() || obj.size() != schema.size()) {
      res.reason = fmt::format("columns differ: expected {}, view has {}", obj.dump(), schema.size());
      return res;
    }
    std::string row;
    for (size_t k = 0; k < schema.size(); ++k) {
      const Json* v = nullptr;
      for (auto it = obj.begin(); it != obj.end(); ++it)
        if (EqualsIgnoreCase(it.key(), schema.fields[k].name)) v = &it.value();
      if (!v) {
        res.reason = fmt::format("columns differ: no expected value for column '{}'", schema.fields[k].name);
        return res;
      }
      row += (k ? " | " : "") + CanonJson(*v, schema.fields[k].type);
    }
    want.push_back(row);
  }
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  if (got != want) {
    std::string g, w;
    for (const auto& s : got) g += "\n    got  " + s;
    for (const auto& s : want) w += "\n    want " + s;
    res.reason = "wrong result" + w + g;
    return res;
  }
  res.passed = true;
  return res;
}

}  // namespace

std::string PythonLiteralToJson(const std::string& text) {
  std::string out;
  size_t i = 0;
  auto read_string = [&]() {
    char q = text[i++];
    std::string s;
    while (i < text.size() && text[i] != q) {
      if (text[i] == '\\' && i + 1 < text.size()) ++i;
      s.push_back(text[i++]);
    }
    if (i >= text.size()) Fail(ErrorKind::kUsage, "unterminated string in a Python literal");
    ++i;
    return s;
  };
  auto call_arg = [&](size_t name_len) {
    i += name_len;
    if (i >= text.size() || text[i] != '(') Fail(ErrorKind::kUsage, "expected '(' in a Python literal");
    ++i;
    if (i >= text.size() || (text[i] != '\'' && text[i] != '"'))
      Fail(ErrorKind::kUsage, "expected a string argument in a Python literal");
    std::string s = read_string();
    if (i >= text.size() || text[i] != ')') Fail(ErrorKind::kUsage, "expected ')' in a Python literal");
    ++i;
    return s;
  };
  auto starts = [&](std::string_view w) { return text.compare(i, w.size(), w) == 0; };
  while (i < text.size()) {
    char ch = text[i];
    if (ch == '\'' || ch == '"') {
      out += Json(read_string()).dump();
    } else if (starts("None")) {
      out += "null";
      i += 4;
    } else if (starts("True")) {
      out += "true";
      i += 4;
    } else if (starts("False")) {
      out += "false";
      i += 5;
    } else if (starts("bytes.fromhex")) {
      out += Json{{"bytes", call_arg(13)}}.dump();
    } else if (starts("ts(")) {
      std::string s = call_arg(2);
      std::replace(s.begin(), s.end(), 'T', ' ');
      out += Json(s).dump();
    } else if (starts("t(")) {
      out += Json(call_arg(1)).dump();
    } else if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') {
      Fail(ErrorKind::kUsage, "unknown name in a Python literal at '{}'", text.substr(i, 20));
    } else {
      out.push_back(ch);
      ++i;
    }
  }
  return out;
}

std::vector<CaseResult> RunCorpus(const std::string& path, const std::string& filter) {
  std::ifstream in(path);
  if (!in) Fail(ErrorKind::kIo, "cannot read {}", path);
  std::vector<Json> entries;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      entries.push_back(Json::parse(line));
    } catch (const std::exception& e) {
      Fail(ErrorKind::kCorruption, "{}: invalid JSON line: {}", path, e.what());
    }
  }
  std::vector<Table> tables;
  for (const auto& e : entries)
    if (e.value("kind", "") == "table") tables.push_back(LoadTable(e));
  std::vector<CaseResult> results;
  for (const auto& e : entries) {
    if (e.value("kind", "") != "view") continue;
    if (!filter.empty() && e.value("class", "").find(filter) == std::string::npos) continue;
    results.push_back(RunView(e, tables));
  }
  return results;
}

}  // namespace fld::feldera
