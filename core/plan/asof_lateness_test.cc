// Tests for ASOF JOIN (core/operators/asof_join.h) and LATENESS with waterlines
// (core/operators/lateness.h, core/circuit/waterline.h, core/plan/waterlines.h).
// The as-of join is checked against a naive recomputation (for every left row, scan every right
// row) over random insert/delete sequences, with a save/restore in the middle; lateness against
// Feldera's documented example; state discarding by the size of the saved operator state over a
// long stream, with the results checked against sums computed here.
#include <catch2/catch.hpp>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/operators/asof_join.h"
#include "core/plan/planner.h"
#include "core/sql/parser.h"

namespace fld {
namespace {

using Row = std::vector<Value>;
using ZSet = std::map<Row, int64_t>;

void AddInto(ZSet* z, const Row& r, int64_t w) {
  auto& x = (*z)[r];
  x += w;
  if (x == 0) z->erase(r);
}

Batch MakeBatch(size_t width, const std::vector<std::pair<Row, int64_t>>& rows) {
  std::vector<PhysType> types(width, PhysType::kI64);
  BatchBuilder b(types);
  for (const auto& [r, w] : rows) b.AppendRow(r, w);
  return b.Finish();
}

// Left rows (k, ts, v), right rows (k, ts, v): l ASOF JOIN r on k, l.ts >= r.ts (or >).
ZSet NaiveAsof(const ZSet& left, const ZSet& right, bool strict, bool pad) {
  ZSet out;
  for (const auto& [l, lw] : left) {
    const Row* best = nullptr;
    int64_t bw = 0;
    if (!l[0].IsNull() && !l[1].IsNull()) {
      for (const auto& [r, rw] : right) {
        if (r[0].IsNull() || r[1].IsNull() || r[0] != l[0]) continue;
        if (strict ? !(r[1] < l[1]) : (l[1] < r[1])) continue;
        // The largest time, ties to the row that sorts last.
        if (!best || (*best)[1] < r[1] || ((*best)[1] == r[1] && *best < r)) {
          best = &r;
          bw = rw;
        }
      }
    }
    Row o = l;
    if (best) {
      o.insert(o.end(), best->begin(), best->end());
      AddInto(&out, o, lw * bw);
    } else if (pad) {
      o.resize(6);
      AddInto(&out, o, lw);
    }
  }
  return out;
}

TEST_CASE("as-of join matches a naive recomputation under random inserts and deletes", "[asof]") {
  SqlType bigint = SqlType::Of(TypeId::kBigInt);
  std::vector<SqlType> types(3, bigint);
  for (int variant = 0; variant < 4; ++variant) {
    const bool strict = variant & 1, pad = variant & 2;
    std::mt19937_64 rng(1234 + variant);
    auto make = [&] {
      return std::make_unique<AsofJoinOp>(types, types, std::vector<int>{0}, std::vector<int>{0}, 1, 1, strict, pad);
    };
    auto op = make();
    ZSet left, right, integrated;
    auto rnd = [&](int n) { return static_cast<int>(rng() % n); };
    auto value = [&](int n, int null_pct) { return rnd(100) < null_pct ? Value::Null() : Value::Int(rnd(n)); };
    for (int step = 0; step < 300; ++step) {
      std::vector<std::pair<Row, int64_t>> dl, dr;
      for (int side = 0; side < 2; ++side) {
        ZSet& z = side ? right : left;
        auto& d = side ? dr : dl;
        int changes = rnd(4);
        for (int i = 0; i < changes; ++i) {
          if (!z.empty() && rnd(3) == 0) {  // delete an existing row
            auto it = z.begin();
            std::advance(it, rnd(static_cast<int>(z.size())));
            d.push_back({it->first, -1});
            AddInto(&z, it->first, -1);
          } else {
            Row r{value(3, 10), value(8, 10), value(3, 20)};
            d.push_back({r, 1});
            AddInto(&z, r, 1);
          }
        }
      }
      Batch bl = MakeBatch(3, dl), br = MakeBatch(3, dr);
      const Batch* ins[] = {&bl, &br};
      Batch out = op->Step(ins);
      for (size_t r = 0; r < out.size(); ++r) {
        Row row;
        for (size_t c = 0; c < out.width(); ++c) row.push_back(out.Get(c, r));
        AddInto(&integrated, row, out.weights[r]);
      }
      REQUIRE(integrated == NaiveAsof(left, right, strict, pad));
      if (step == 150) {  // continue in a restored copy
        std::string blob;
        StateWriter w(&blob);
        op->SaveState(w);
        op = make();
        StateReader rd(blob);
        op->RestoreState(rd);
        REQUIRE(rd.AtEnd());
      }
    }
  }
}

// A program fed step by step with INSERT statements.
class Db {
 public:
  explicit Db(std::string program) : program_(std::move(program)) {
    auto stmts = sql::ParseProgram(program_);
    circuit_ = plan::CompileProgram(stmts, program_, {}, nullptr);
  }
  void Push(const std::string& inserts, int64_t weight = 1) {
    for (const auto& st : sql::ParseProgram(inserts)) {
      int t = circuit_->FindRelation(st.insert->table);
      REQUIRE(t >= 0);
      Batch b = plan::RowsFromInsert(*st.insert, circuit_->relations()[t].schema, inserts, {});
      for (auto& w : b.weights) w = weight;
      circuit_->Push(t, std::move(b));
    }
  }
  void Step() { circuit_->Step(); }
  Circuit& circuit() { return *circuit_; }
  std::vector<std::string> Rows(const std::string& view) const {
    int r = circuit_->FindRelation(view);
    REQUIRE(r >= 0);
    const Schema& schema = circuit_->relations()[r].schema;
    Batch b = circuit_->Contents(r);
    std::vector<std::string> out;
    for (size_t i = 0; i < b.size(); ++i) {
      std::string row;
      for (size_t k = 0; k < b.width(); ++k) {
        if (k) row += '|';
        row += FormatValue(b.Get(k, i), schema.fields[k].type);
      }
      for (int64_t w = 0; w < b.weights[i]; ++w) out.push_back(row);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  size_t StateBytes() const {
    std::string s;
    circuit_->SaveState(&s);
    return s.size();
  }

 private:
  std::string program_;
  std::unique_ptr<Circuit> circuit_;
};

std::string ErrorOf(const std::string& program) {
  try {
    Db db(program);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("ASOF JOIN in SQL: Feldera's form, the inner form, hidden key expressions", "[asof]") {
  Db db(
      "CREATE TABLE purchase (ts BIGINT, customer_id INT, amount INT);"
      "CREATE TABLE customer (ts BIGINT, customer_id INT, address VARCHAR);"
      "CREATE MATERIALIZED VIEW l AS SELECT purchase.ts, purchase.customer_id, customer.address FROM purchase "
      "LEFT ASOF JOIN customer MATCH_CONDITION(purchase.ts >= customer.ts) "
      "ON purchase.customer_id = customer.customer_id;"
      "CREATE MATERIALIZED VIEW i AS SELECT p.ts, c.address FROM purchase p ASOF JOIN customer c "
      "MATCH_CONDITION c.ts < p.ts ON c.customer_id + 0 = p.customer_id;");
  db.Push("INSERT INTO customer VALUES (10, 1, 'home'), (20, 1, 'work'), (15, 2, 'shop');");
  db.Push("INSERT INTO purchase VALUES (5, 1, 1), (10, 1, 2), (19, 1, 3), (20, 1, 4), (30, 2, 5), (40, 3, 6);");
  db.Step();
  CHECK(db.Rows("l") ==
        std::vector<std::string>{"10|1|home", "19|1|home", "20|1|work", "30|2|shop", "40|3|NULL", "5|1|NULL"});
  CHECK(db.Rows("i") == std::vector<std::string>{"19|home", "20|home", "30|shop"});
  // A right change re-matches only the left rows it affects.
  db.Push("INSERT INTO customer VALUES (12, 1, 'moved');");
  db.Push("INSERT INTO customer VALUES (10, 1, 'home');", -1);
  db.Step();
  CHECK(db.Rows("l") ==
        std::vector<std::string>{"10|1|NULL", "19|1|moved", "20|1|work", "30|2|shop", "40|3|NULL", "5|1|NULL"});
}

TEST_CASE("ASOF JOIN refuses what it does not support by name", "[asof]") {
  const std::string t = "CREATE TABLE a (ts INT, k INT); CREATE TABLE b (ts INT, k INT);";
  CHECK_THAT(ErrorOf(t + "CREATE VIEW v AS SELECT * FROM a LEFT ASOF JOIN b MATCH_CONDITION a.ts <= b.ts ON a.k = b.k"),
             Catch::Contains("matching a later right row"));
  CHECK_THAT(ErrorOf(t + "CREATE VIEW v AS SELECT * FROM a LEFT ASOF JOIN b MATCH_CONDITION a.ts >= b.ts ON a.k < b.k"),
             Catch::Contains("ON condition must be equalities"));
  CHECK_THAT(ErrorOf(t + "CREATE VIEW v AS SELECT * FROM a LEFT ASOF JOIN b MATCH_CONDITION a.ts = b.ts ON a.k = b.k"),
             Catch::Contains("MATCH_CONDITION compares a left expression with a right one"));
  CHECK_THAT(ErrorOf(t + "CREATE VIEW v AS SELECT * FROM a LEFT ASOF JOIN b ON a.k = b.k"),
             Catch::Contains("MATCH_CONDITION"));
}

TEST_CASE("LATENESS drops rows behind the waterline of earlier steps (Feldera's example)", "[lateness]") {
  // Feldera's documented example with times in minutes and a lateness of 60.
  const std::string program =
      "CREATE TABLE t (ts BIGINT NOT NULL LATENESS 60, place VARCHAR);"
      "CREATE MATERIALIZED VIEW v AS SELECT * FROM t;";
  const char* rows[] = {"(0, 'home')", "(60, 'office')", "(10, 'shop')", "(120, 'home')", "(20, 'friend')"};
  Db steps(program);
  for (const char* r : rows) {
    steps.Push(std::string("INSERT INTO t VALUES ") + r + ";");
    steps.Step();
  }
  CHECK(steps.Rows("v") == std::vector<std::string>{"0|home", "10|shop", "120|home", "60|office"});
  CHECK(steps.circuit().LateRecords() == 1);
  // All in one step: nothing is late (the waterline moves after the step).
  Db one(program);
  for (const char* r : rows) one.Push(std::string("INSERT INTO t VALUES ") + r + ";");
  one.Step();
  CHECK(one.Rows("v").size() == 5);
  CHECK(one.circuit().LateRecords() == 0);
}

TEST_CASE("LATENESS INTERVAL on a TIMESTAMP column (Feldera's example as documented)", "[lateness]") {
  // Feldera's example: a lateness of one hour; the row 50 minutes behind the latest is kept, the
  // row 100 minutes behind is dropped.
  const std::string program =
      "CREATE TABLE t (ts TIMESTAMP NOT NULL LATENESS INTERVAL '1' HOUR, place VARCHAR);"
      "CREATE MATERIALIZED VIEW v AS SELECT place FROM t;";
  const char* rows[] = {"('2020-01-01 00:00:00', 'home')", "('2020-01-01 01:00:00', 'office')",
                        "('2020-01-01 00:10:00', 'shop')", "('2020-01-01 02:00:00', 'home')",
                        "('2020-01-01 00:20:00', 'friend')"};
  Db steps(program);
  for (const char* r : rows) {
    steps.Push(std::string("INSERT INTO t VALUES ") + r + ";");
    steps.Step();
  }
  CHECK(steps.Rows("v") == std::vector<std::string>{"home", "home", "office", "shop"});
  CHECK(steps.circuit().LateRecords() == 1);
}

TEST_CASE("a TUMBLE aggregate over a TIMESTAMP LATENESS column keeps its state flat", "[lateness]") {
  auto run = [](const std::string& lateness, int steps) {
    Db db("CREATE TABLE t (ts TIMESTAMP NOT NULL " + lateness +
          ", v INT);"
          "CREATE MATERIALIZED VIEW w AS SELECT TUMBLE_START(ts, INTERVAL '1' MINUTE) AS s, COUNT(*) AS n, SUM(v) AS "
          "total FROM t GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE);");
    int64_t second = 0, sum = 0;
    for (int s = 0; s < steps; ++s) {
      std::string ins = "INSERT INTO t VALUES ";
      for (int i = 0; i < 10; ++i, ++second) {
        char ts[64];
        std::snprintf(ts, sizeof ts, "('2024-01-%02d %02d:%02d:%02d', %d)", static_cast<int>(1 + second / 86400),
                      static_cast<int>(second / 3600 % 24), static_cast<int>(second / 60 % 60),
                      static_cast<int>(second % 60), static_cast<int>(second % 7));
        ins += (i ? ", " : "") + std::string(ts);
        sum += second % 7;
      }
      db.Push(ins + ";");
      db.Step();
    }
    // Every window is kept in the materialized view; only the aggregate's state is discarded.
    int64_t n = 0, total = 0;
    for (const auto& r : db.Rows("w")) {
      auto a = r.find('|'), b = r.rfind('|');
      n += std::stoll(r.substr(a + 1, b - a - 1));
      total += std::stoll(r.substr(b + 1));
    }
    CHECK(n == steps * 10);
    CHECK(total == sum);
    CHECK(db.Rows("w").size() == static_cast<size_t>((steps * 10 + 59) / 60));
    return db.StateBytes();
  };
  size_t short_run = run("LATENESS INTERVAL '2' MINUTE", 60);
  size_t long_run = run("LATENESS INTERVAL '2' MINUTE", 600);
  size_t unbounded = run("", 600);
  INFO("state bytes: 60 steps " << short_run << ", 600 steps " << long_run << ", without LATENESS " << unbounded);
  CHECK(long_run < short_run * 2);
  CHECK(unbounded > long_run * 3);
}

TEST_CASE("LATENESS on a view, and the waterline survives save and restore", "[lateness]") {
  const std::string program =
      "CREATE TABLE t (ts BIGINT, v INT);"
      "CREATE MATERIALIZED VIEW w AS SELECT ts * 2 AS t2, v FROM t;"
      "LATENESS w.t2 10;";
  Db a(program);
  a.Push("INSERT INTO t VALUES (100, 1);");
  a.Step();
  std::string state;
  a.circuit().SaveState(&state);
  Db b(program);
  b.circuit().RestoreState(state);
  b.circuit().LoadContents(b.circuit().FindRelation("w"), a.circuit().Contents(a.circuit().FindRelation("w")));
  b.Push("INSERT INTO t VALUES (94, 2), (95, 3), (NULL, 4);");  // 188 < 200 - 10: late; 190 is not
  b.Step();
  CHECK(b.Rows("w") == std::vector<std::string>{"190|3", "200|1", "NULL|4"});
  CHECK(b.circuit().LateRecords() == 1);
}

TEST_CASE("WATERMARK holds rows until input reaches their value + W, across save and restore", "[lateness]") {
  const std::string program =
      "CREATE TABLE t (ts BIGINT WATERMARK 10, v INT);"
      "CREATE MATERIALIZED VIEW v AS SELECT * FROM t;";
  Db a(program);
  auto step = [](Db& db, const std::string& values) {
    if (!values.empty()) db.Push("INSERT INTO t VALUES " + values + ";");
    db.Step();
  };
  step(a, "(0, 1), (NULL, 2)");  // NULL is never held
  CHECK(a.Rows("v") == std::vector<std::string>{"NULL|2"});
  step(a, "(15, 3)");  // 15 >= 0 + 10 arrives: 0 leaves at the next step
  CHECK(a.Rows("v") == std::vector<std::string>{"NULL|2"});
  step(a, "(12, 4)");
  CHECK(a.Rows("v") == std::vector<std::string>{"0|1", "NULL|2"});
  step(a, "(30, 5)");
  CHECK(a.Rows("v") == std::vector<std::string>{"0|1", "NULL|2"});
  std::string state;
  a.circuit().SaveState(&state);
  Db b(program);
  b.circuit().RestoreState(state);
  b.circuit().LoadContents(b.circuit().FindRelation("v"), a.circuit().Contents(a.circuit().FindRelation("v")));
  step(b, "");  // 30 was seen: 12 and 15 leave, 30 stays held
  CHECK(b.Rows("v") == std::vector<std::string>{"0|1", "12|4", "15|3", "NULL|2"});
  CHECK_THAT(ErrorOf("CREATE TABLE t (a INT WATERMARK 1, b INT WATERMARK 2)"),
             Catch::Contains("more than one WATERMARK column"));
  CHECK_THAT(ErrorOf("CREATE TABLE t (ts TIMESTAMP WATERMARK 5)"), Catch::Contains("must be a day-time INTERVAL"));
}

TEST_CASE("LATENESS errors name what is wrong", "[lateness]") {
  CHECK_THAT(ErrorOf("CREATE TABLE t (ts TIMESTAMP LATENESS INTERVAL '1' MONTH)"),
             Catch::Contains("must be a day-time INTERVAL"));
  CHECK_THAT(ErrorOf("CREATE TABLE t (ts TIMESTAMP LATENESS 5)"), Catch::Contains("must be a day-time INTERVAL"));
  CHECK_THAT(ErrorOf("CREATE TABLE t (d DATE LATENESS INTERVAL '1' HOUR)"), Catch::Contains("whole days"));
  CHECK_THAT(ErrorOf("CREATE TABLE t (s VARCHAR LATENESS 5)"), Catch::Contains("numeric or date/time column"));
  CHECK_THAT(ErrorOf("CREATE TABLE t (x INT LATENESS -5)"), Catch::Contains("must not be negative"));
  CHECK_THAT(ErrorOf("CREATE TABLE t (x INT); LATENESS v.x 5;"), Catch::Contains("not a view of this program"));
  CHECK_THAT(ErrorOf("CREATE TABLE t (x INT); CREATE VIEW v AS SELECT x FROM t; LATENESS v.y 5;"),
             Catch::Contains("has no column 'y'"));
}

// Feeds `steps` steps of 20 rows with increasing times into t(ts, k, v) and returns the saved
// operator state's size; checks the windowed sums against sums computed here.
size_t StreamState(const std::string& lateness, int steps) {
  Db db("CREATE TABLE t (ts BIGINT NOT NULL " + lateness +
        ", k INT, v INT);"
        "CREATE VIEW win AS SELECT ts / 100 AS bucket, k, SUM(v) AS s, MAX(v) AS m FROM t GROUP BY ts / 100, k;"
        "CREATE VIEW d AS SELECT DISTINCT ts, k FROM t;"
        "CREATE TABLE side (ts BIGINT NOT NULL " +
        lateness +
        ", k INT, name VARCHAR);"
        "CREATE VIEW aj AS SELECT t.ts, side.name FROM t LEFT ASOF JOIN side MATCH_CONDITION t.ts >= side.ts "
        "ON t.k = side.k;"
        "CREATE MATERIALIZED VIEW last_windows AS SELECT bucket, SUM(s) AS s FROM win WHERE bucket >= " +
        std::to_string(steps * 20 / 100 - 3) +
        " GROUP BY bucket;"
        "CREATE VIEW per_b AS SELECT ts / 100 AS b, COUNT(*) AS n FROM t GROUP BY ts / 100;"
        "CREATE VIEW side_b AS SELECT ts / 100 AS b, COUNT(*) AS m FROM side GROUP BY ts / 100;"
        "CREATE MATERIALIZED VIEW joined AS SELECT COALESCE(per_b.b, side_b.b), n, m FROM per_b FULL JOIN side_b ON "
        "per_b.b = side_b.b "
        "WHERE COALESCE(per_b.b, side_b.b) >= " +
        std::to_string(steps * 20 / 100 - 3) + ";");
  std::map<int64_t, std::pair<int64_t, int64_t>> counts;  // bucket -> rows of t, rows of side
  std::map<int64_t, int64_t> expect;
  int64_t ts = 0;
  for (int s = 0; s < steps; ++s) {
    std::string ins = "INSERT INTO t VALUES ";
    for (int i = 0; i < 20; ++i, ++ts) {
      int64_t v = (ts * 7) % 13;
      ins += (i ? ", (" : "(") + std::to_string(ts) + ", " + std::to_string(ts % 3) + ", " + std::to_string(v) + ")";
      expect[ts / 100] += v;
      counts[ts / 100].first++;
    }
    counts[ts / 100].second++;
    db.Push(ins + ";");
    db.Push("INSERT INTO side VALUES (" + std::to_string(ts) + ", " + std::to_string(s % 3) + ", 'x');");
    db.Step();
  }
  std::vector<std::string> want;
  for (const auto& [b, sum] : expect)
    if (b >= steps * 20 / 100 - 3) want.push_back(std::to_string(b) + "|" + std::to_string(sum));
  std::sort(want.begin(), want.end());
  CHECK(db.Rows("last_windows") == want);
  want.clear();
  for (const auto& [b, nm] : counts) {
    if (b < steps * 20 / 100 - 3) continue;
    auto show = [](int64_t x) { return x ? std::to_string(x) : std::string("NULL"); };
    want.push_back(std::to_string(b) + "|" + show(nm.first) + "|" + show(nm.second));
  }
  std::sort(want.begin(), want.end());
  CHECK(db.Rows("joined") == want);
  return db.StateBytes();
}

TEST_CASE("operators discard state behind the waterline: state stays flat over an endless stream", "[lateness]") {
  size_t short_run = StreamState("LATENESS 50", 100);
  size_t long_run = StreamState("LATENESS 50", 1000);
  size_t unbounded = StreamState("", 1000);
  INFO("state bytes: 100 steps " << short_run << ", 1000 steps " << long_run << ", without LATENESS " << unbounded);
  CHECK(long_run < short_run * 2);
  CHECK(unbounded > long_run * 5);
}

}  // namespace
}  // namespace fld
