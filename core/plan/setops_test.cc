// Property tests for GROUPING SETS / ROLLUP / CUBE, EXCEPT ALL / INTERSECT ALL and recursive
// views (core/plan): programs are compiled into circuits and fed random sequences of inserts and
// deletes; after every step each view's contents must equal a from-scratch evaluation written
// here (naive loops over the current tables, sharing no code with the planner). Saving the
// circuit's state at a random step and restoring it into a fresh circuit must continue with the
// same contents. Expected answers against PostgreSQL are in tests/slt/regress. Fixed seeds.
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/plan/planner.h"
#include "core/sql/parser.h"

namespace fld::plan {
namespace {

using Int = std::optional<int64_t>;  // nullopt = NULL
using Row = std::vector<Int>;
using Table = std::vector<Row>;  // a bag: one entry per copy
using Naive = std::function<std::vector<std::string>(const std::vector<Table>&)>;

std::string Show(const Int& v) {
  return v ? std::to_string(*v) : "NULL";
}
std::string Cat(const Row& r) {
  std::string s;
  for (size_t i = 0; i < r.size(); ++i) s += (i ? "|" : "") + Show(r[i]);
  return s;
}

Batch ToBatch(const Table& t, size_t width, int64_t w) {
  std::vector<PhysType> types(width, PhysType::kI64);
  BatchBuilder b(types);
  for (const auto& r : t) {
    std::vector<Value> vals;
    for (const auto& v : r) vals.push_back(v ? Value::Int(*v) : Value::Null());
    b.AppendRow(vals, w);
  }
  return b.Finish();
}

std::vector<std::string> Contents(const Circuit& c, const std::string& view) {
  int r = c.FindRelation(view);
  REQUIRE(r >= 0);
  Batch b = c.Contents(r);
  std::vector<std::string> out;
  for (size_t i = 0; i < b.size(); ++i) {
    REQUIRE(b.weights[i] > 0);
    Row row;
    for (size_t k = 0; k < b.width(); ++k) {
      Value v = b.Get(k, i);
      row.push_back(v.IsNull() ? Int() : Int(v.i));
    }
    for (int64_t w = 0; w < b.weights[i]; ++w) out.push_back(Cat(row));
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Case {
  std::string view;
  Naive naive;
};

// Runs `program` (tables named in `tables`, all columns INT) over random steps of inserts and
// deletes of rows from `value`; after every step each case's view must equal its naive result.
void CheckRandom(const std::string& program, const std::vector<std::pair<std::string, size_t>>& tables,
                 const std::vector<Case>& cases, const std::function<Int(std::mt19937_64&)>& value, uint64_t seed,
                 int iterations = 30, int steps = 8, int max_changes = 5) {
  auto stmts = sql::ParseProgram(program);
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  for (int iteration = 0; iteration < iterations; ++iteration) {
    auto circuit = CompileProgram(stmts, program, {}, nullptr);
    std::unique_ptr<Circuit> restored;
    const int restore_at = pick(steps);
    std::vector<Table> current(tables.size());
    for (int step = 0; step < steps; ++step) {
      for (size_t ti = 0; ti < tables.size(); ++ti) {
        Table ins, del;
        int n = pick(max_changes + 1);
        for (int i = 0; i < n; ++i) {
          Table& cur = current[ti];
          if (!cur.empty() && pick(3) == 0) {
            size_t j = static_cast<size_t>(pick(static_cast<int>(cur.size())));
            del.push_back(cur[j]);
            cur.erase(cur.begin() + static_cast<long>(j));
          } else {
            Row r;
            for (size_t c = 0; c < tables[ti].second; ++c) r.push_back(value(rng));
            ins.push_back(r);
            cur.push_back(r);
          }
        }
        int rel = circuit->FindRelation(tables[ti].first);
        for (Circuit* c : {circuit.get(), restored.get()}) {
          if (!c) continue;
          c->Push(rel, ToBatch(ins, tables[ti].second, 1));
          c->Push(rel, ToBatch(del, tables[ti].second, -1));
        }
      }
      circuit->Step();
      if (restored) restored->Step();
      for (const auto& cs : cases) {
        std::string shown;
        for (size_t ti = 0; ti < tables.size(); ++ti) {
          shown += "\n" + tables[ti].first + ":";
          for (const auto& r : current[ti]) shown += " (" + Cat(r) + ")";
        }
        INFO("iteration " << iteration << " step " << step << " view " << cs.view << shown);
        std::vector<std::string> want = cs.naive(current);
        std::sort(want.begin(), want.end());
        REQUIRE(Contents(*circuit, cs.view) == want);
        if (restored) REQUIRE(Contents(*restored, cs.view) == want);
      }
      if (step == restore_at) {
        std::string state;
        circuit->SaveState(&state);
        restored = CompileProgram(stmts, program, {}, nullptr);
        restored->RestoreState(state);
        for (size_t r = 0; r < circuit->relations().size(); ++r)
          if (circuit->relations()[r].materialized)
            restored->LoadContents(static_cast<int>(r), circuit->Contents(static_cast<int>(r)));
      }
    }
  }
}

Int SmallValue(std::mt19937_64& rng) {
  int k = std::uniform_int_distribution<int>(0, 4)(rng);
  return k == 0 ? Int() : Int(k - 1);  // NULL, 0, 1, 2, 3
}

// ---------------------------------------------------------------------------- grouping sets

// GROUP BY GROUPING SETS over t(a, b, c): per set (which of a, b it keeps), per group, COUNT(*),
// SUM(c) and GROUPING(a, b). `sets` lists masks: bit 1 = a kept, bit 0 = b kept.
std::vector<std::string> NaiveGroupingSets(const Table& t, const std::vector<int>& sets) {
  std::vector<std::string> out;
  for (int set : sets) {
    const bool keep_a = set & 2, keep_b = set & 1;
    std::map<std::pair<Int, Int>, std::pair<int64_t, Int>> groups;
    for (const auto& r : t) {
      auto& g = groups[{keep_a ? r[0] : Int(), keep_b ? r[1] : Int()}];
      ++g.first;
      if (r[2]) g.second = g.second.value_or(0) + *r[2];
    }
    if (set == 0 && groups.empty()) groups[{Int(), Int()}] = {0, Int()};  // () has its row over no rows
    for (const auto& [k, v] : groups)
      out.push_back(Cat({k.first, k.second, v.first, v.second, Int((keep_a ? 0 : 2) + (keep_b ? 0 : 1))}));
  }
  return out;
}

TEST_CASE("grouping sets: ROLLUP, CUBE and GROUPING SETS equal a naive evaluation at every step", "[planner]") {
  const std::string cols = "SELECT a, b, COUNT(*), SUM(c), GROUPING(a, b) FROM t GROUP BY ";
  const std::string program =
      "CREATE TABLE t (a INT, b INT, c INT);"
      "CREATE MATERIALIZED VIEW r AS " +
      cols + "ROLLUP(a, b);" + "CREATE MATERIALIZED VIEW c AS " + cols + "CUBE(a, b);" +
      "CREATE MATERIALIZED VIEW g AS " + cols + "GROUPING SETS ((b), (a, b), (b));" + "CREATE MATERIALIZED VIEW m AS " +
      cols + "a, ROLLUP(b);";
  CheckRandom(program, {{"t", 3}},
              {{"r",
                [](const std::vector<Table>& in) {
                  return NaiveGroupingSets(in[0], {3, 2, 0});
                }},
               {"c",
                [](const std::vector<Table>& in) {
                  return NaiveGroupingSets(in[0], {3, 2, 1, 0});
                }},
               {"g",
                [](const std::vector<Table>& in) {
                  return NaiveGroupingSets(in[0], {1, 3, 1});
                }},
               {"m",
                [](const std::vector<Table>& in) {
                  return NaiveGroupingSets(in[0], {3, 2});
                }}},
              SmallValue, 20261203);
}

TEST_CASE("grouping sets: refused where not supported, errors name the problem", "[planner]") {
  auto error_of = [](const std::string& program) -> std::string {
    try {
      CompileProgram(sql::ParseProgram(program), program, {}, nullptr);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  const std::string t = "CREATE TABLE t (a INT, b INT);";
  CHECK_THAT(error_of(t + "CREATE VIEW v AS SELECT GROUPING(b) FROM t GROUP BY ROLLUP(a)"),
             Catch::Contains("must be GROUP BY expressions"));
  CHECK_THAT(error_of(t + "CREATE VIEW v AS SELECT a, GROUP_ID() FROM t GROUP BY ROLLUP(a)"),
             Catch::Contains("GROUP_ID is not supported yet"));
  CHECK_THAT(error_of(t + "CREATE VIEW v AS SELECT a FROM t WHERE a IN (SELECT b FROM t u WHERE u.a = t.a "
                          "GROUP BY ROLLUP(b))"),
             Catch::Contains("correlated subquery are not supported yet"));
  CHECK_THAT(error_of(t + "CREATE VIEW v AS SELECT b, COUNT(*) FROM t GROUP BY ROLLUP(a)"),
             Catch::Contains("column 'b' must appear in GROUP BY"));
  CHECK_THAT(error_of(t + "CREATE VIEW v AS SELECT a FROM t GROUP BY CUBE(a, b, a, b, a, b, a, b, a, b, a, b, a)"),
             Catch::Contains("CUBE takes at most 12 elements"));
}

// ------------------------------------------------------------------ EXCEPT ALL / INTERSECT ALL

std::vector<std::string> NaiveBag(const Table& l, const Table& r, bool except) {
  std::map<Row, std::pair<int64_t, int64_t>> m;
  for (const auto& row : l) ++m[row].first;
  for (const auto& row : r) ++m[row].second;
  std::vector<std::string> out;
  for (const auto& [row, n] : m) {
    int64_t k = except ? std::max<int64_t>(n.first - n.second, 0) : std::min(n.first, n.second);
    for (int64_t i = 0; i < k; ++i) out.push_back(Cat(row));
  }
  return out;
}

TEST_CASE("EXCEPT ALL / INTERSECT ALL equal the multiset difference / intersection at every step", "[planner]") {
  const std::string program =
      "CREATE TABLE t (a INT, b INT); CREATE TABLE u (x INT, y INT);"
      "CREATE MATERIALIZED VIEW e AS SELECT a, b FROM t EXCEPT ALL SELECT x, y FROM u;"
      "CREATE MATERIALIZED VIEW i AS SELECT a, b FROM t INTERSECT ALL SELECT x, y FROM u;"
      "CREATE MATERIALIZED VIEW f AS SELECT x, y FROM u EXCEPT ALL SELECT a, b FROM t;";
  auto small = [](std::mt19937_64& rng) -> Int {
    int k = std::uniform_int_distribution<int>(0, 2)(rng);
    return k == 0 ? Int() : Int(k);
  };
  CheckRandom(program, {{"t", 2}, {"u", 2}},
              {{"e", [](const std::vector<Table>& in) { return NaiveBag(in[0], in[1], true); }},
               {"i", [](const std::vector<Table>& in) { return NaiveBag(in[0], in[1], false); }},
               {"f", [](const std::vector<Table>& in) { return NaiveBag(in[1], in[0], true); }}},
              small, 20261204, 30, 8, 6);
}

}  // namespace
}  // namespace fld::plan
