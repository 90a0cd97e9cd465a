#include "tests/slt/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include "core/common/md5.h"
#include "tests/slt/database.h"
#include "tests/slt/record.h"

namespace fld::slt {

namespace {

// SQLite's REAL -> INTEGER conversion: truncate toward zero, saturating.
int64_t DoubleToInt(double d) {
  if (std::isnan(d)) return 0;
  if (d <= -9223372036854775808.0) return INT64_MIN;
  if (d >= 9223372036854775807.0) return INT64_MAX;
  return static_cast<int64_t>(d);
}

// SQLite's TEXT -> INTEGER conversion: the longest integer prefix (after spaces), else 0.
int64_t TextToInt(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  __int128 v = 0;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    v = v * 10 + (s[i] - '0');
    if (v > static_cast<__int128>(INT64_MAX) + 1) break;
  }
  if (neg) v = -v;
  if (v > INT64_MAX) return INT64_MAX;
  if (v < INT64_MIN) return INT64_MIN;
  return static_cast<int64_t>(v);
}

double TextToDouble(const std::string& s) {
  return std::strtod(s.c_str(), nullptr);
}

double AsDouble(const Value& v, const SqlType& t) {
  switch (v.kind) {
    case Value::Kind::kDouble:
      return v.d;
    case Value::Kind::kString:
      return TextToDouble(v.s);
    case Value::Kind::kInt:
      if (t.id == TypeId::kDecimal) return static_cast<double>(v.i) / static_cast<double>(Pow10(t.scale));
      return static_cast<double>(v.i);
    case Value::Kind::kNull:
      break;
  }
  return 0;
}

// A REAL as SQLite prints it as text ("%!.15g": always with a decimal point).
std::string SqliteReal(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Inf" : "-Inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", d);
  std::string s = buf;
  size_t e = s.find('e');
  std::string mant = e == std::string::npos ? s : s.substr(0, e);
  std::string exp = e == std::string::npos ? "" : s.substr(e);
  if (mant.find('.') == std::string::npos) mant += ".0";
  return mant + exp;
}

}  // namespace

std::string FormatSltValue(const Value& v, const SqlType& t, char letter) {
  if (v.IsNull()) return "NULL";
  // SQLite stores dates and times as text: in a numeric column they convert like text.
  if (t.IsTemporal() && letter != 'T')
    return FormatSltValue(Value::String(FormatValue(v, t)), SqlType::Of(TypeId::kVarchar), letter);
  // Values stored as bytes that are not text (DECIMAL above 18 digits, ARRAY, MAP, ROW ...):
  // their text form, as SQLite would hold them.
  if (v.kind == Value::Kind::kString && !t.IsString() && !t.IsBinary())
    return FormatSltValue(Value::String(FormatValue(v, t)), SqlType::Of(TypeId::kVarchar), letter);
  if (letter == 'I') {
    int64_t x;
    if (v.kind == Value::Kind::kDouble)
      x = DoubleToInt(v.d);
    else if (v.kind == Value::Kind::kString)
      x = TextToInt(v.s);
    else if (t.id == TypeId::kDecimal)
      x = v.i / Pow10(t.scale);
    else
      x = v.i;
    return fmt::format("{}", x);
  }
  if (letter == 'R') {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", AsDouble(v, t));
    return buf;
  }
  std::string s;
  if (v.kind == Value::Kind::kString)
    s = v.s;
  else if (t.id == TypeId::kBoolean)
    s = v.i ? "1" : "0";  // SQLite has no booleans
  else if (v.kind == Value::Kind::kDouble || t.id == TypeId::kDecimal)
    s = SqliteReal(AsDouble(v, t));
  else
    s = FormatValue(v, t);
  if (s.empty()) return "(empty)";
  for (char& c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) c = '@';
  }
  return s;
}

namespace {

// The message of an fld error without its location and caret lines.
std::string ShortMessage(const std::string& what) {
  std::string m = what;
  size_t e = m.find("error: ");
  if (e != std::string::npos) m = m.substr(e + 7);
  size_t nl = m.find('\n');
  if (nl != std::string::npos) m = m.substr(0, nl);
  return m;
}

// A message with quoted names and numbers masked, to group failures by kind.
std::string Category(const std::string& msg) {
  std::string out;
  for (size_t i = 0; i < msg.size(); ++i) {
    char c = msg[i];
    if (c == '\'') {
      size_t j = msg.find('\'', i + 1);
      if (j != std::string::npos) {
        out += "'…'";
        i = j;
        continue;
      }
    }
    if (c == '(' && msg.compare(i, 11, "(available:") == 0) break;
    if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i + 1 < msg.size() && std::isdigit(static_cast<unsigned char>(msg[i + 1]))) ++i;
      out += "N";
      continue;
    }
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

const char* StageName(Stage s) {
  switch (s) {
    case Stage::kParse:
      return "parse error";
    case Stage::kPlan:
      return "planning error";
    case Stage::kRun:
      return "runtime error";
    case Stage::kInternal:
      return "internal error";
  }
  return "error";
}

// Why an error is a skip rather than a failure, or nullopt. Skips are only for features fld
// says it does not support yet, SQL syntax that only SQLite/MySQL accept, and documented
// dialect differences; every other error is a failure.
std::optional<std::string> SkipReason(const StageError& e, const std::string& sql) {
  std::string msg = ShortMessage(e.what());
  if (msg.find("not supported yet") != std::string::npos) return "not supported yet: " + Category(msg);
  // x'0A0B': SQLite's BLOB literal; fld has no BLOB type.
  static const std::regex kBlob(R"((^|[^A-Za-z0-9_])[xX]'[0-9A-Fa-f]*')");
  if (e.stage() == Stage::kParse && std::regex_search(sql, kBlob)) return "non-fld syntax: BLOB literal x'..' (SQLite)";
  // SQLite lets an aggregate query read columns that are neither grouped nor aggregated (it
  // takes them from an arbitrary row of the group); standard SQL and PostgreSQL reject the query,
  // as fld does.
  if (e.stage() == Stage::kPlan &&
      msg.find("must appear in GROUP BY or be used in an aggregate function") != std::string::npos)
    return "dialect difference: SQLite accepts non-grouped columns outside aggregates (standard SQL: error)";
  // SQLite converts text to a number by its type affinity rules (e.g. storing 'abc' in an
  // INTEGER column); standard SQL (and PostgreSQL) reject a string literal that is no number
  // where a number is expected, as fld does outside comparisons.
  if (e.stage() == Stage::kPlan && msg.starts_with("cannot cast VARCHAR '") &&
      (msg.ends_with("to INTEGER") || msg.ends_with("to BIGINT") || msg.ends_with("to DOUBLE")))
    return "dialect difference: SQLite compares text with numbers (standard SQL: error)";
  // Likewise a BLOB literal compared with a number (PostgreSQL: no operator bytea = integer).
  if (e.stage() == Stage::kPlan && msg.starts_with("cannot combine ") && msg.find("VARBINARY") != std::string::npos &&
      std::regex_search(sql, kBlob))
    return "dialect difference: SQLite compares BLOBs with numbers (standard SQL: error)";
  return std::nullopt;
}

struct Outcome {
  enum class Kind { kPass, kFail, kSkip } kind = Kind::kPass;
  std::string reason;  // skip / failure category
  std::string detail;  // failure detail for --verbose
};

std::string Join(const std::vector<std::string>& v, size_t limit) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < limit; ++i) s += "    " + v[i] + "\n";
  if (v.size() > limit) s += fmt::format("    ... ({} more)\n", v.size() - limit);
  return s;
}

// Compares a result with the record's expectation; on a mismatch fills *detail and *reason.
bool Matches(const Record& r, const QueryResult& res, std::string* detail, std::string* reason) {
  const size_t ncols = res.schema.size();
  if (ncols != r.types.size()) {
    *reason = "wrong number of columns";
    *detail = fmt::format("the query returns {} columns but the record expects {}", ncols, r.types.size());
    return false;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : res.rows) {
    std::vector<std::string> vals;
    for (size_t k = 0; k < ncols; ++k) vals.push_back(FormatSltValue(row[k], res.schema.fields[k].type, r.types[k]));
    rows.push_back(std::move(vals));
  }
  std::vector<std::string> values;
  if (r.sort_mode == "rowsort") std::sort(rows.begin(), rows.end());
  for (const auto& row : rows)
    for (const auto& v : row) values.push_back(v);
  if (r.sort_mode == "valuesort") std::sort(values.begin(), values.end());

  bool ok = false;
  unsigned long long n_expected = 0;
  char hash[64] = {0};
  const bool hashed = r.expected.size() == 1 && std::isdigit(static_cast<unsigned char>(r.expected[0][0])) &&
                      std::sscanf(r.expected[0].c_str(), "%llu values hashing to %32s", &n_expected, hash) == 2;
  if (!hashed) n_expected = r.expected.size();
  if (hashed) {
    Md5 md5;
    for (const auto& v : values) {
      md5.Update(v);
      md5.Update("\n");
    }
    std::string got = md5.HexDigest();
    ok = n_expected == values.size() && got == hash;
    if (!ok)
      *detail = fmt::format("  expected: {}\n  actual:   {} values hashing to {}\n", r.expected[0], values.size(), got);
  } else {
    ok = values == r.expected;
    if (!ok && !rows.empty() && r.expected.size() == rows.size()) {
      // Some files list a row per line, values separated by spaces.
      ok = true;
      for (size_t i = 0; ok && i < rows.size(); ++i) {
        std::string line;
        for (size_t k = 0; k < rows[i].size(); ++k) line += (k ? " " : "") + rows[i][k];
        ok = line == r.expected[i];
      }
    }
    if (!ok) *detail = "  expected:\n" + Join(r.expected, 40) + "  actual:\n" + Join(values, 40);
  }
  if (!ok) *reason = values.size() != n_expected ? "wrong result (value count)" : "wrong result";
  return ok;
}

// SQLite gives UNION, EXCEPT and INTERSECT the same precedence and applies them left to right;
// standard SQL (and fld) binds INTERSECT tighter. When the two groupings can differ (an
// INTERSECT after a UNION or EXCEPT), returns the query with SQLite's grouping spelled out in
// parentheses.
std::optional<std::string> SqliteCompoundGrouping(const std::string& sql) {
  struct Op {
    size_t begin, end;  // the operator's text, with ALL / DISTINCT
    std::string word;
  };
  std::vector<Op> ops;
  size_t suffix = std::string::npos;  // a trailing ORDER BY / LIMIT of the whole compound
  auto word_at = [&](size_t i) {
    size_t j = i;
    while (j < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[j])) || sql[j] == '_')) ++j;
    std::string w = sql.substr(i, j - i);
    for (char& c : w) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return std::make_pair(w, j);
  };
  int depth = 0;
  for (size_t i = 0; i < sql.size(); ++i) {
    char c = sql[i];
    if (c == '\'' || c == '"') {
      for (++i; i < sql.size() && sql[i] != c; ++i) {
      }
      continue;
    }
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth != 0 || !std::isalpha(static_cast<unsigned char>(c))) continue;
    if (i > 0 && (std::isalnum(static_cast<unsigned char>(sql[i - 1])) || sql[i - 1] == '_')) continue;
    auto [w, j] = word_at(i);
    if (w == "UNION" || w == "EXCEPT" || w == "INTERSECT") {
      size_t k = j;
      while (k < sql.size() && std::isspace(static_cast<unsigned char>(sql[k]))) ++k;
      auto [next, after] = word_at(k);
      size_t end = (next == "ALL" || next == "DISTINCT") ? after : j;
      ops.push_back({i, end, w});
      suffix = std::string::npos;
      i = end - 1;
    } else if ((w == "ORDER" || w == "LIMIT") && !ops.empty() && suffix == std::string::npos) {
      suffix = i;
    }
    if (j > i + 1) i = j - 1;
  }
  bool differs = false;
  for (size_t k = 1; k < ops.size(); ++k)
    if (ops[k].word == "INTERSECT") {
      for (size_t m = 0; m < k; ++m) differs = differs || ops[m].word != "INTERSECT";
    }
  if (!differs) return std::nullopt;
  const size_t body_end = suffix == std::string::npos ? sql.size() : suffix;
  std::string acc = "(" + sql.substr(0, ops[0].begin) + ")";
  for (size_t k = 0; k < ops.size(); ++k) {
    size_t part_end = k + 1 < ops.size() ? ops[k + 1].begin : body_end;
    acc = "(" + acc + " " + sql.substr(ops[k].begin, ops[k].end - ops[k].begin) + " (" +
          sql.substr(ops[k].end, part_end - ops[k].end) + "))";
  }
  return acc + (suffix == std::string::npos ? "" : " " + sql.substr(suffix));
}

Outcome RunQuery(Database& db, const Record& r, const sql::SourceInfo& src) {
  Outcome out;
  QueryResult res;
  try {
    res = db.Query(r.sql, src);
  } catch (const StageError& e) {
    if (auto reason = SkipReason(e, r.sql)) {
      out.kind = Outcome::Kind::kSkip;
      out.reason = *reason;
      out.detail = e.what();
      return out;
    }
    out.kind = Outcome::Kind::kFail;
    out.reason = std::string(StageName(e.stage())) + ": " + Category(ShortMessage(e.what()));
    out.detail = e.what();
    return out;
  }
  if (Matches(r, res, &out.detail, &out.reason)) return out;
  out.kind = Outcome::Kind::kFail;
  // A dialect difference only when SQLite's grouping of the same query gives the expected answer.
  if (auto grouped = SqliteCompoundGrouping(r.sql)) {
    try {
      std::string detail, reason;
      if (Matches(r, db.Query(*grouped, src), &detail, &reason)) {
        out.kind = Outcome::Kind::kSkip;
        out.reason =
            "dialect difference: SQLite applies UNION/EXCEPT/INTERSECT left to right (standard: INTERSECT first)";
      }
    } catch (const StageError&) {
    }
  }
  return out;
}

Outcome RunStatement(Database& db, const Record& r, const sql::SourceInfo& src) {
  Outcome out;
  try {
    db.Execute(r.sql, src);
  } catch (const StageError& e) {
    // The expected error must be an fld::Error; an internal error (another exception) is a bug.
    if (r.expect_error && e.stage() != Stage::kInternal) return out;
    if (auto reason = SkipReason(e, r.sql)) {
      out.kind = Outcome::Kind::kSkip;
      out.reason = *reason;
      out.detail = e.what();
      return out;
    }
    out.kind = Outcome::Kind::kFail;
    out.reason = std::string(StageName(e.stage())) + ": " + Category(ShortMessage(e.what()));
    out.detail = e.what();
    return out;
  }
  if (r.expect_error) {
    out.kind = Outcome::Kind::kFail;
    out.reason = "statement succeeded but an error was expected";
    if (db.last_insert_upserted()) {
      out.kind = Outcome::Kind::kSkip;
      out.reason = "dialect difference: INSERT of an existing primary key upserts (SQLite: constraint error)";
    }
  }
  return out;
}

// What a `halt` that applies to `engine` says, with the number of query records it leaves out.
std::string HaltNote(const Record& halt, const std::vector<Record>& records, size_t at, const std::string& engine) {
  std::string who = "for every engine";
  if (!halt.conditions.empty()) {
    std::string only, except;
    for (const auto& [onlyif, name] : halt.conditions) {
      std::string& list = onlyif ? only : except;
      list += (list.empty() ? "" : ", ") + name;
    }
    who = !only.empty() ? "for " + only : "for engines other than " + except;
  }
  int left = 0;
  for (size_t i = at + 1; i < records.size(); ++i)
    left += records[i].kind == Record::Kind::kQuery && RunsOn(records[i], engine);
  return fmt::format("halted by the file {} at line {} ({} query records not run; --past-halt runs them)", who,
                     halt.line, left);
}

}  // namespace

FileResult RunFile(const std::string& path, const Options& opts) {
  FileResult fr;
  fr.path = path;
  auto t0 = std::chrono::steady_clock::now();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fr.error = "cannot read " + path;
    return fr;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::vector<Record> records;
  try {
    records = ParseRecords(ss.str());
  } catch (const std::exception& e) {
    fr.error = path + ": " + e.what();
    return fr;
  }
  Database db;
  for (size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    if (r.kind == Record::Kind::kHalt) {
      if (!RunsOn(r, opts.engine)) continue;
      if (opts.past_halt) continue;
      fr.halted = HaltNote(r, records, i, opts.engine);
      break;
    }
    if (r.kind == Record::Kind::kHashThreshold) continue;
    if (!RunsOn(r, opts.engine)) continue;
    const bool is_query = r.kind == Record::Kind::kQuery;
    if (opts.only_line && is_query && r.line != opts.only_line) continue;
    sql::SourceInfo src;
    src.name = path;
    src.first_line = r.line + 1;
    auto start = std::chrono::steady_clock::now();
    Outcome o = is_query ? RunQuery(db, r, src) : RunStatement(db, r, src);
    if (opts.timing)
      fr.timings.emplace_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), r.line);
    switch (o.kind) {
      case Outcome::Kind::kPass:
        ++(is_query ? fr.pass : fr.stmt_ok);
        break;
      case Outcome::Kind::kSkip:
        ++(is_query ? fr.skip : fr.stmt_skip);
        ++fr.skip_reasons[o.reason];
        if (opts.verbose) {
          std::printf("%s:%d: SKIP (%s)\n", path.c_str(), r.line, o.reason.c_str());
          if (!o.detail.empty()) std::printf("%s%s", o.detail.c_str(), o.detail.back() == '\n' ? "" : "\n");
        }
        break;
      case Outcome::Kind::kFail:
        ++(is_query ? fr.fail : fr.stmt_fail);
        ++fr.fail_reasons[o.reason];
        if (opts.verbose) {
          std::printf("%s:%d: FAIL (%s)\n%s\n", path.c_str(), r.line, o.reason.c_str(), r.sql.c_str());
          if (!o.detail.empty()) std::printf("%s%s", o.detail.c_str(), o.detail.back() == '\n' ? "" : "\n");
          std::printf("\n");
        }
        break;
    }
  }
  fr.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return fr;
}

}  // namespace fld::slt
