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
#include <sstream>
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

// GROUP_ID(): NaiveGroupingSets per set, each row followed by the number of earlier sets with
// the same keys (Calcite's and Oracle's GROUP_ID).
std::vector<std::string> NaiveGroupIds(const Table& t, const std::vector<int>& sets) {
  std::vector<std::string> out;
  for (size_t i = 0; i < sets.size(); ++i) {
    const int64_t id = std::count(sets.begin(), sets.begin() + static_cast<std::ptrdiff_t>(i), sets[i]);
    for (const auto& row : NaiveGroupingSets(t, {sets[i]})) out.push_back(row + "|" + std::to_string(id));
  }
  return out;
}

TEST_CASE("grouping sets: GROUP_ID numbers repeated grouping sets, at every step", "[planner]") {
  const std::string cols = "SELECT a, b, COUNT(*), SUM(c), GROUPING(a, b), GROUP_ID() FROM t GROUP BY ";
  const std::string program =
      "CREATE TABLE t (a INT, b INT, c INT);"
      "CREATE MATERIALIZED VIEW g AS " +
      cols + "GROUPING SETS ((b), (a, b), (b), (b, a), ());" + "CREATE MATERIALIZED VIEW r AS " + cols +
      "a, ROLLUP(a, b);" + "CREATE MATERIALIZED VIEW p AS " + cols + "a, b;";
  CheckRandom(program, {{"t", 3}},
              {{"g",
                [](const std::vector<Table>& in) {
                  return NaiveGroupIds(in[0], {1, 3, 1, 3, 0});
                }},
               // a, ROLLUP(a, b): (a, a, b), (a, a), (a) = (a, b), (a), (a).
               {"r",
                [](const std::vector<Table>& in) {
                  return NaiveGroupIds(in[0], {3, 2, 2});
                }},
               {"p", [](const std::vector<Table>& in) { return NaiveGroupIds(in[0], {3}); }}},
              SmallValue, 20261204);
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
  CHECK_THAT(error_of(t + "CREATE VIEW v AS SELECT a, GROUP_ID(a) FROM t GROUP BY ROLLUP(a)"),
             Catch::Contains("GROUP_ID takes no arguments"));
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

// ------------------------------------------------------------------------- recursive views

bool SameNonNull(const Int& a, const Int& b) {
  return a && b && *a == *b;
}

// Transitive closure of the edges (a, b): E, then (x, z) for (x, y) in TC and (y, z) in E.
std::set<Row> NaiveClosure(const Table& edges) {
  std::set<Row> tc(edges.begin(), edges.end());
  for (bool grew = true; grew;) {
    grew = false;
    std::vector<Row> add;
    for (const auto& p : tc)
      for (const auto& e : edges)
        if (SameNonNull(p[1], e[0]) && !tc.contains({p[0], e[1]})) add.push_back({p[0], e[1]});
    for (auto& r : add) grew = tc.insert(r).second || grew;
  }
  return tc;
}

std::vector<std::string> Strings(const std::set<Row>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(Cat(r));
  return out;
}

Int NodeValue(std::mt19937_64& rng) {
  int k = std::uniform_int_distribution<int>(0, 12)(rng);
  return k == 0 ? Int() : Int(k % 6);  // mostly 0..5, sometimes NULL
}

TEST_CASE("recursive views: transitive closure equals a naive fixed point at every step", "[planner][recursive]") {
  const std::string program =
      "CREATE TABLE e (a INT, b INT);"
      "DECLARE RECURSIVE VIEW tc (x INT, y INT);"
      "CREATE MATERIALIZED VIEW tc AS SELECT a AS x, b AS y FROM e UNION SELECT tc.x, e.b FROM tc JOIN e ON tc.y = "
      "e.a;"
      // Feldera's documented form: a local view inside the cycle, UNION ALL made a set.
      "DECLARE RECURSIVE VIEW closure (x INT, y INT);"
      "CREATE LOCAL VIEW step AS SELECT e.a AS x, closure.y FROM e JOIN closure ON e.b = closure.x;"
      "CREATE MATERIALIZED VIEW closure AS (SELECT a AS x, b AS y FROM e) UNION ALL (SELECT * FROM step);"
      // An ordinary view over the recursion, defined before the group is complete.
      "DECLARE RECURSIVE VIEW r (x INT, y INT);"
      "CREATE MATERIALIZED VIEW fanout AS SELECT x, COUNT(*) AS n FROM r GROUP BY x;"
      "CREATE VIEW r AS SELECT * FROM tc;";
  auto closure = [](const std::vector<Table>& in) { return Strings(NaiveClosure(in[0])); };
  auto fanout = [](const std::vector<Table>& in) {
    std::map<Int, int64_t> n;
    for (const auto& r : NaiveClosure(in[0])) ++n[r[0]];
    std::vector<std::string> out;
    for (const auto& [x, c] : n) out.push_back(Cat({x, c}));
    return out;
  };
  CheckRandom(program, {{"e", 2}}, {{"tc", closure}, {"closure", closure}, {"fanout", fanout}}, NodeValue, 20261205, 40,
              10, 4);
}

TEST_CASE("recursive views: mutual recursion equals a naive fixed point at every step", "[planner][recursive]") {
  // Nodes reached from 0 by a path of even / odd length.
  const std::string program =
      "CREATE TABLE e (a INT, b INT);"
      "DECLARE RECURSIVE VIEW even (n INT);"
      "DECLARE RECURSIVE VIEW odd (n INT);"
      "CREATE MATERIALIZED VIEW odd AS SELECT e.b AS n FROM even JOIN e ON even.n = e.a;"
      "CREATE MATERIALIZED VIEW even AS SELECT 0 AS n UNION SELECT e.b AS n FROM odd JOIN e ON odd.n = e.a;";
  auto naive = [](const Table& e, int parity) {
    // A NULL node is reached (e.b may be NULL) but leads nowhere.
    std::set<std::pair<Int, int>> seen{{Int(0), 0}};
    std::vector<std::pair<Int, int>> todo{{Int(0), 0}};
    while (!todo.empty()) {
      auto [n, p] = todo.back();
      todo.pop_back();
      for (const auto& r : e)
        if (SameNonNull(r[0], n) && seen.insert({r[1], 1 - p}).second) todo.push_back({r[1], 1 - p});
    }
    std::vector<std::string> out;
    for (const auto& [n, p] : seen)
      if (p == parity) out.push_back(Show(n));
    return out;
  };
  CheckRandom(program, {{"e", 2}},
              {{"even", [&](const std::vector<Table>& in) { return naive(in[0], 0); }},
               {"odd", [&](const std::vector<Table>& in) { return naive(in[0], 1); }}},
              NodeValue, 20261206, 40, 10, 4);
}

TEST_CASE("recursive views: a non-monotonic recursion that settles equals iteration from empty",
          "[planner][recursive]") {
  // w = the values a of s whose predecessor a - 1 is not in w: each iteration can remove rows
  // the one before added.
  const std::string program =
      "CREATE TABLE s (a INT);"
      "DECLARE RECURSIVE VIEW w (n INT);"
      "CREATE MATERIALIZED VIEW w AS SELECT a AS n FROM s WHERE NOT EXISTS (SELECT 1 FROM w WHERE w.n = s.a - 1);";
  auto naive = [](const std::vector<Table>& in) {
    std::set<Row> w;
    for (int i = 0; i < 100; ++i) {
      std::set<Row> next;
      for (const auto& r : in[0]) {
        bool pred = false;
        for (const auto& x : w) pred = pred || (r[0] && SameNonNull(x[0], Int(*r[0] - 1)));
        if (!pred) next.insert(r);
      }
      if (next == w) break;
      w = std::move(next);
    }
    return Strings(w);
  };
  auto value = [](std::mt19937_64& rng) -> Int {
    int k = std::uniform_int_distribution<int>(0, 8)(rng);
    return k == 0 ? Int() : Int(k);
  };
  CheckRandom(program, {{"s", 1}}, {{"w", naive}}, value, 20261207, 40, 10, 4);
}

TEST_CASE("recursive views: a spreadsheet-like recursion through a LEFT JOIN equals iteration from empty",
          "[planner][recursive]") {
  // A cell's total is its value plus the total of the (earlier) cell it refers to: the LEFT
  // JOIN's padded rows disappear as the referenced totals appear, a non-monotonic step.
  const std::string program =
      "CREATE TABLE cells (id INT, ref INT, v INT);"
      "DECLARE RECURSIVE VIEW val (id INT, total INT);"
      "CREATE LOCAL VIEW w AS SELECT c.id, c.v, val.total FROM cells c LEFT JOIN val ON c.ref = val.id AND c.ref < "
      "c.id;"
      "CREATE MATERIALIZED VIEW val AS SELECT id, v + COALESCE(total, 0) AS total FROM w;"
      "CREATE MATERIALIZED VIEW sums AS SELECT SUM(total) AS s, COUNT(*) AS n FROM val;";
  auto naive_val = [](const Table& cells) {
    std::set<Row> x;
    for (int i = 0; i < 100; ++i) {
      std::set<Row> next;
      for (const auto& c : cells) {
        auto total = [&](const Int& t) { return c[2] ? Int(*c[2] + t.value_or(0)) : Int(); };
        bool matched = false;
        if (c[1] && c[0] && *c[1] < *c[0])
          for (const auto& r : x)
            if (SameNonNull(r[0], c[1])) {
              matched = true;
              next.insert({c[0], total(r[1])});
            }
        if (!matched) next.insert({c[0], total(Int())});
      }
      if (next == x) break;
      x = std::move(next);
    }
    return x;
  };
  CheckRandom(program, {{"cells", 3}},
              {{"val", [&](const std::vector<Table>& in) { return Strings(naive_val(in[0])); }},
               {"sums",
                [&](const std::vector<Table>& in) {
                  Int sum;
                  int64_t n = 0;
                  for (const auto& r : naive_val(in[0])) {
                    ++n;
                    if (r[1]) sum = sum.value_or(0) + *r[1];
                  }
                  return std::vector<std::string>{Cat({sum, n})};
                }}},
              SmallValue, 20261208, 40, 10, 4);
}

std::string RunError(const std::string& program, const std::string& inserts = "") {
  try {
    auto circuit = CompileProgram(sql::ParseProgram(program), program, {}, nullptr);
    for (const auto& st : sql::ParseProgram(inserts)) {
      int t = circuit->FindRelation(st.insert->table);
      circuit->Push(t, RowsFromInsert(*st.insert, circuit->relations()[t].schema, inserts, {}));
    }
    circuit->Step();
    circuit->Step();
  } catch (const Error& e) {
    return std::string(e.kind() == ErrorKind::kRuntime ? "runtime: " : "usage: ") + e.what();
  }
  return "";
}

TEST_CASE("recursive views: no fixed point is a run-time error, bad declarations are refused", "[planner][recursive]") {
  // Never terminates: a new number every iteration.
  CHECK_THAT(RunError("DECLARE RECURSIVE VIEW c (n INT); CREATE VIEW c AS SELECT 0 AS n UNION SELECT n + 1 AS n "
                      "FROM c;"),
             Catch::StartsWith("runtime: recursive view 'c' did not reach a fixed point within 1000 iterations"));
  // Never settles: {1}, {}, {1}, ...
  CHECK_THAT(RunError("CREATE TABLE t (a INT); DECLARE RECURSIVE VIEW o (n INT);"
                      "CREATE VIEW o AS SELECT a AS n FROM t EXCEPT SELECT n FROM o;",
                      "INSERT INTO t VALUES (1)"),
             Catch::StartsWith("runtime: recursive view 'o' did not reach a fixed point"));
  const std::string t = "CREATE TABLE t (a INT NOT NULL, b INT);";
  CHECK_THAT(RunError(t + "DECLARE RECURSIVE VIEW v (a INT);"), Catch::Contains("declared but never defined"));
  CHECK_THAT(RunError(t + "DECLARE RECURSIVE VIEW v (a INT); CREATE VIEW v AS SELECT a, b FROM t"),
             Catch::Contains("declared with 1 columns but its query has 2"));
  CHECK_THAT(RunError(t + "DECLARE RECURSIVE VIEW v (x INT); CREATE VIEW v AS SELECT a FROM t"),
             Catch::Contains("is declared as 'x' but its query names it 'a'"));
  CHECK_THAT(RunError(t + "DECLARE RECURSIVE VIEW v (b INT NOT NULL); CREATE VIEW v AS SELECT b FROM t"),
             Catch::Contains("declared NOT NULL but its query can give NULL"));
  CHECK_THAT(RunError(t + "DECLARE RECURSIVE VIEW t (a INT);"), Catch::Contains("named 't' already exists"));
  CHECK_THAT(RunError(t + "DECLARE RECURSIVE VIEW v (a INT PRIMARY KEY);"),
             Catch::Contains("take a name, a type and NOT NULL only"));
  // A declared view whose query needs no recursion still works, and the types are cast.
  CHECK(RunError(t + "DECLARE RECURSIVE VIEW v (a BIGINT); CREATE VIEW v AS SELECT a FROM t") == "");
}

TEST_CASE("recursive views: a one-edge change after a large graph costs little", "[planner][recursive]") {
  const std::string program =
      "CREATE TABLE e (a INT, b INT);"
      "DECLARE RECURSIVE VIEW reach (n INT);"
      "CREATE MATERIALIZED VIEW reach AS SELECT 0 AS n UNION SELECT e.b AS n FROM reach JOIN e ON reach.n = e.a;";
  auto circuit = CompileProgram(sql::ParseProgram(program), program, {}, nullptr);
  // A binary tree of 4095 nodes: depth 12.
  Table edges;
  for (int64_t i = 1; i < 4095; ++i) edges.push_back({(i - 1) / 2, i});
  const int re = circuit->FindRelation("e"), rr = circuit->FindRelation("reach");
  circuit->Push(re, ToBatch(edges, 2, 1));
  circuit->Step();
  REQUIRE(circuit->Contents(rr).size() == 4095);
  // Cutting one leaf's edge removes one node; adding it back returns it.
  circuit->Push(re, ToBatch({{2046, 4094}}, 2, -1));
  circuit->Step();
  CHECK(Consolidate(circuit->Delta(rr)).size() == 1);
  CHECK(circuit->Contents(rr).size() == 4094);
  circuit->Push(re, ToBatch({{2046, 4094}}, 2, 1));
  circuit->Step();
  CHECK(Consolidate(circuit->Delta(rr)).size() == 1);
  CHECK(circuit->Contents(rr).size() == 4095);
  // Cutting the root's left edge removes a whole subtree (2047 nodes).
  circuit->Push(re, ToBatch({{0, 1}}, 2, -1));
  circuit->Step();
  CHECK(circuit->Contents(rr).size() == 2048);
}

TEST_CASE("recursive views: closure and reachability equal PostgreSQL's WITH RECURSIVE at every step",
          "[planner][recursive]") {
  static const char* const kSteps =
#include "core/plan/recursive_pg.inc"
      ;
  const std::string program =
      "CREATE TABLE e (a INT, b INT);"
      "DECLARE RECURSIVE VIEW tc (x INT, y INT);"
      "CREATE MATERIALIZED VIEW tc AS SELECT a AS x, b AS y FROM e UNION SELECT tc.x, e.b FROM tc JOIN e ON tc.y = "
      "e.a;"
      "DECLARE RECURSIVE VIEW reach (n INT);"
      "CREATE MATERIALIZED VIEW reach AS SELECT 0 AS n UNION SELECT e.b AS n FROM reach JOIN e ON reach.n = e.a;";
  const auto stmts = sql::ParseProgram(program);
  std::unique_ptr<Circuit> circuit;
  Table ins, del;
  int steps = 0;
  std::istringstream in(kSteps);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string word;
    ls >> word;
    if (word == "step") {
      // Every 15 steps PostgreSQL's table starts empty again.
      if (steps++ % 15 == 0) circuit = CompileProgram(stmts, program, {}, nullptr);
      continue;
    }
    if (word == "+" || word == "-") {
      int64_t a, b;
      ls >> a >> b;
      (word == "+" ? ins : del).push_back({a, b});
      continue;
    }
    if (word == "tc") {
      const int e = circuit->FindRelation("e");
      circuit->Push(e, ToBatch(ins, 2, 1));
      circuit->Push(e, ToBatch(del, 2, -1));
      ins.clear();
      del.clear();
      circuit->Step();
    }
    std::vector<std::string> want;
    const size_t width = word == "tc" ? 2 : 1;
    for (Row r;; r.clear()) {
      int64_t v;
      for (size_t i = 0; i < width && ls >> v; ++i) r.push_back(v);
      if (r.size() < width) break;
      want.push_back(Cat(r));
    }
    std::sort(want.begin(), want.end());
    INFO("step " << steps << ": " << line);
    REQUIRE(Contents(*circuit, word) == want);
  }
  CHECK(steps == 90);
}

}  // namespace
}  // namespace fld::plan
