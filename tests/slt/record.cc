#include "tests/slt/record.h"

#include <sstream>
#include <stdexcept>

namespace fld::slt {

namespace {

std::vector<std::string> Words(std::string_view line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t b = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > b) out.emplace_back(line.substr(b, i - b));
  }
  return out;
}

bool Blank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

}  // namespace

std::vector<Record> ParseRecords(std::string_view text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view l = text.substr(pos, nl - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines.emplace_back(l);
    pos = nl + 1;
  }
  auto fail = [](size_t i, const std::string& msg) {
    throw std::runtime_error("line " + std::to_string(i + 1) + ": " + msg);
  };
  std::vector<Record> out;
  size_t i = 0;
  const size_t n = lines.size();
  while (i < n) {
    if (Blank(lines[i]) || lines[i][0] == '#') {
      ++i;
      continue;
    }
    Record r;
    std::vector<std::string> w = Words(lines[i]);
    while (!w.empty() && (w[0] == "skipif" || w[0] == "onlyif")) {
      if (w.size() < 2) fail(i, "'" + w[0] + "' needs an engine name");
      r.conditions.emplace_back(w[0] == "onlyif", w[1]);
      ++i;
      while (i < n && !Blank(lines[i]) && lines[i][0] == '#') ++i;
      if (i >= n || Blank(lines[i])) fail(i, "a condition must be followed by a record");
      w = Words(lines[i]);
    }
    r.line = static_cast<int>(i + 1);
    const std::string& head = w[0];
    auto read_sql = [&](bool stop_at_dashes) {
      std::string sql;
      while (i < n && !Blank(lines[i])) {
        if (stop_at_dashes && lines[i] == "----") break;
        if (!sql.empty()) sql += '\n';
        sql += lines[i];
        ++i;
      }
      return sql;
    };
    if (head == "statement") {
      if (w.size() < 2 || (w[1] != "ok" && w[1] != "error")) fail(i, "expected 'statement ok' or 'statement error'");
      r.kind = Record::Kind::kStatement;
      r.expect_error = w[1] == "error";
      ++i;
      r.sql = read_sql(false);
    } else if (head == "query") {
      if (w.size() < 2) fail(i, "'query' needs column types");
      r.kind = Record::Kind::kQuery;
      r.types = w[1];
      r.sort_mode = w.size() >= 3 ? w[2] : "nosort";
      if (r.sort_mode != "nosort" && r.sort_mode != "rowsort" && r.sort_mode != "valuesort")
        fail(i, "unknown sort mode '" + r.sort_mode + "'");
      if (w.size() >= 4) r.label = w[3];
      ++i;
      r.sql = read_sql(true);
      if (i < n && lines[i] == "----") {
        ++i;
        while (i < n && !Blank(lines[i])) r.expected.push_back(lines[i++]);
      }
    } else if (head == "hash-threshold") {
      if (w.size() < 2) fail(i, "'hash-threshold' needs a number");
      r.kind = Record::Kind::kHashThreshold;
      r.threshold = std::stoi(w[1]);
      ++i;
    } else if (head == "halt") {
      r.kind = Record::Kind::kHalt;
      ++i;
    } else {
      fail(i, "unknown record type '" + head + "'");
    }
    if (r.sql.empty() && (r.kind == Record::Kind::kStatement || r.kind == Record::Kind::kQuery))
      fail(r.line - 1, "record without SQL");
    out.push_back(std::move(r));
  }
  return out;
}

bool RunsOn(const Record& r, std::string_view engine) {
  for (const auto& [only, name] : r.conditions) {
    if (only && name != engine) return false;
    if (!only && name == engine) return false;
  }
  return true;
}

}  // namespace fld::slt
