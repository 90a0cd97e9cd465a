// Tests for SESSION windows (core/operators/session.h and their planning): the operator against a
// from-scratch sessionization of the accumulated input (Calcite's algorithm: each row opens
// [ts, ts + gap), overlapping windows of a key merge) over random insert/delete steps, with a
// save/restore in the middle; the SQL forms (positional, named, without a key) against sessions
// worked out by hand and checked with PostgreSQL's gaps-and-islands query; state discarding
// behind a LATENESS waterline (in the operator and in an aggregate grouped by window_end).
#include "core/operators/session.h"

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.h"
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

// Rows (k, ts, v): sessions per k over ts, recomputed from scratch.
ZSet NaiveSessions(const ZSet& input, int64_t gap, bool keyed) {
  std::map<Value, std::vector<std::pair<Row, int64_t>>> by_key;  // NULL keys together
  for (const auto& [r, w] : input)
    if (!r[1].IsNull()) by_key[keyed ? r[0] : Value::Int(0)].push_back({r, w});
  ZSet out;
  for (auto& [k, rows] : by_key) {
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first[1].i < b.first[1].i; });
    // Windows [ts, ts + gap) merged while the next one starts before the current one ends.
    size_t i = 0;
    while (i < rows.size()) {
      int64_t start = rows[i].first[1].i, end = start + gap;
      size_t j = i + 1;
      while (j < rows.size() && rows[j].first[1].i < end) end = std::max(end, rows[j++].first[1].i + gap);
      for (size_t m = i; m < j; ++m) {
        Row o = rows[m].first;
        o.push_back(Value::Int(start));
        o.push_back(Value::Int(end));
        AddInto(&out, o, rows[m].second);
      }
      i = j;
    }
  }
  return out;
}

Batch MakeBatch(const std::vector<std::pair<Row, int64_t>>& rows) {
  std::vector<PhysType> types(3, PhysType::kI64);
  BatchBuilder b(types);
  for (const auto& [r, w] : rows) b.AppendRow(r, w);
  return b.Finish();
}

TEST_CASE("SESSION matches a from-scratch sessionization under random inserts and deletes", "[session]") {
  for (int variant = 0; variant < 4; ++variant) {
    const bool keyed = variant & 1;
    const int64_t gap = variant & 2 ? 5 : 2;
    std::mt19937_64 rng(77 + variant);
    auto make = [&] {
      return std::make_unique<SessionOp>(std::vector<PhysType>(3, PhysType::kI64), 1,
                                         keyed ? std::vector<int>{0} : std::vector<int>{}, gap);
    };
    auto op = make();
    op->TrackChanges();
    // Incremental checkpoints at random steps, applied to a map standing for the store.
    std::map<std::string, std::string> store;
    std::string header;
    auto checkpoint = [&] {
      header.clear();
      StateWriter hw(&header);
      StateDelta d;
      op->SaveChanges(hw, d);
      d.ForEach([&](std::string_view k, std::string_view v, bool put) {
        if (put)
          store[std::string(k)] = std::string(v);
        else
          store.erase(std::string(k));
      });
    };
    ZSet input, integrated;
    auto rnd = [&](int n) { return static_cast<int>(rng() % n); };
    auto value = [&](int n, int null_pct) { return rnd(100) < null_pct ? Value::Null() : Value::Int(rnd(n)); };
    for (int step = 0; step < 400; ++step) {
      std::vector<std::pair<Row, int64_t>> d;
      int changes = rnd(5);
      for (int i = 0; i < changes; ++i) {
        if (!input.empty() && rnd(3) == 0) {  // delete an existing row (some of its copies)
          auto it = input.begin();
          std::advance(it, rnd(static_cast<int>(input.size())));
          Row r = it->first;
          d.push_back({r, -1});
          AddInto(&input, r, -1);
        } else {
          Row r{value(3, 10), value(40, 5), value(3, 20)};
          int64_t w = 1 + rnd(2);
          d.push_back({r, w});
          AddInto(&input, r, w);
        }
      }
      Batch b = MakeBatch(d);
      const Batch* ins[] = {&b};
      Batch out = op->Step(ins);
      for (size_t r = 0; r < out.size(); ++r) {
        Row row;
        for (size_t c = 0; c < out.width(); ++c) row.push_back(out.Get(c, r));
        AddInto(&integrated, row, out.weights[r]);
      }
      REQUIRE(integrated == NaiveSessions(input, gap, keyed));
      if (step == 200) {  // continue in a restored copy
        std::string blob;
        StateWriter w(&blob);
        op->SaveState(w);
        op = make();
        StateReader rd(blob);
        op->RestoreState(rd);
        REQUIRE(rd.AtEnd());
        op->TrackChanges();
        store.clear();
        checkpoint();  // (the restored state is all changed: stored whole)
      }
      if (step > 200 && rnd(4) == 0) checkpoint();
      if (step == 300) {  // continue in a copy restored from the incremental checkpoints
        checkpoint();
        op = make();
        op->TrackChanges();
        StateReader hr(header);
        op->BeginRestore(hr);
        for (const auto& [k, v] : store) op->RestoreEntry(k, v);
        op->EndRestore();
        REQUIRE(!store.empty());
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

// The expected sessions below are PostgreSQL 15's answer to the gaps-and-islands form of the
// same question over the same rows:
//   WITH m AS (SELECT *, CASE WHEN ts - LAG(ts) OVER (PARTITION BY u ORDER BY ts) < interval '10
//     minutes' THEN 0 ELSE 1 END AS new FROM clicks), s AS (SELECT *, SUM(new) OVER (PARTITION
//     BY u ORDER BY ts) AS id FROM m)
//   SELECT u, MIN(ts), MAX(ts) + interval '10 minutes', COUNT(*) FROM s GROUP BY u, id;
TEST_CASE("SESSION in SQL: per-key sessions, merged by an insert and split by a delete", "[session]") {
  Db db(
      "CREATE TABLE clicks (u INT, ts TIMESTAMP, page VARCHAR);"
      "CREATE MATERIALIZED VIEW s AS SELECT u, window_start, window_end, COUNT(*) AS n FROM TABLE(SESSION(TABLE "
      "clicks, DESCRIPTOR(ts), DESCRIPTOR(u), INTERVAL '10' MINUTES)) GROUP BY u, window_start, window_end;"
      "CREATE MATERIALIZED VIEW named AS SELECT * FROM TABLE(SESSION(\"DATA\" => TABLE clicks, \"TIMECOL\" => "
      "DESCRIPTOR(ts), \"SIZE\" => INTERVAL '10' MINUTES, \"KEY\" => DESCRIPTOR(u)));"
      "CREATE MATERIALIZED VIEW all_users AS SELECT page, window_start, window_end FROM TABLE(SESSION(TABLE clicks, "
      "DESCRIPTOR(ts), INTERVAL '10' MINUTES)) AS w WHERE w.u = 1 OR w.u = 2;");
  db.Push(
      "INSERT INTO clicks VALUES (1, '2024-01-01 10:00:00', 'a'), (1, '2024-01-01 10:09:59', 'b'), "
      "(1, '2024-01-01 10:25:00', 'c'), (2, '2024-01-01 10:05:00', 'd'), (2, NULL, 'e');");
  db.Step();
  CHECK(db.Rows("s") == std::vector<std::string>{"1|2024-01-01 10:00:00|2024-01-01 10:19:59|2",
                                                 "1|2024-01-01 10:25:00|2024-01-01 10:35:00|1",
                                                 "2|2024-01-01 10:05:00|2024-01-01 10:15:00|1"});
  CHECK(db.Rows("named").size() == 4);
  // Without a key: a, d, b chain (gaps under 10 minutes); c is 15:01 after b.
  CHECK(db.Rows("all_users") == std::vector<std::string>{"a|2024-01-01 10:00:00|2024-01-01 10:19:59",
                                                         "b|2024-01-01 10:00:00|2024-01-01 10:19:59",
                                                         "c|2024-01-01 10:25:00|2024-01-01 10:35:00",
                                                         "d|2024-01-01 10:00:00|2024-01-01 10:19:59"});
  // 10:17 merges user 1's two sessions (7:01 after b, 8:00 before c); exactly 10 minutes is a gap.
  db.Push("INSERT INTO clicks VALUES (1, '2024-01-01 10:17:00', 'f'), (2, '2024-01-01 10:15:00', 'g');");
  db.Step();
  CHECK(db.Rows("s") == std::vector<std::string>{"1|2024-01-01 10:00:00|2024-01-01 10:35:00|4",
                                                 "2|2024-01-01 10:05:00|2024-01-01 10:15:00|1",
                                                 "2|2024-01-01 10:15:00|2024-01-01 10:25:00|1"});
  // Deleting b splits it again: a alone, then f and c.
  db.Push("INSERT INTO clicks VALUES (1, '2024-01-01 10:09:59', 'b');", -1);
  db.Step();
  CHECK(db.Rows("s") == std::vector<std::string>{"1|2024-01-01 10:00:00|2024-01-01 10:10:00|1",
                                                 "1|2024-01-01 10:17:00|2024-01-01 10:35:00|2",
                                                 "2|2024-01-01 10:05:00|2024-01-01 10:15:00|1",
                                                 "2|2024-01-01 10:15:00|2024-01-01 10:25:00|1"});
}

TEST_CASE("SESSION refuses bad arguments by name", "[session]") {
  const std::string t = "CREATE TABLE c (u INT, ts TIMESTAMP, n BIGINT);";
  CHECK_THAT(ErrorOf(t + "CREATE VIEW v AS SELECT * FROM TABLE(SESSION(TABLE c, DESCRIPTOR(n), INTERVAL '1' MINUTE))"),
             Catch::Contains("must be a TIMESTAMP"));
  CHECK_THAT(ErrorOf(t + "CREATE VIEW v AS SELECT * FROM TABLE(SESSION(TABLE c, DESCRIPTOR(ts), DESCRIPTOR(x), "
                         "INTERVAL '1' MINUTE))"),
             Catch::Contains("x"));
  CHECK_THAT(ErrorOf(t + "CREATE VIEW v AS SELECT * FROM TABLE(SESSION(TABLE c, DESCRIPTOR(ts), DESCRIPTOR(u)))"),
             Catch::Contains("SESSION needs its SIZE argument"));
  CHECK_THAT(ErrorOf(t + "CREATE VIEW v AS SELECT * FROM TABLE(SESSION(TABLE c, DESCRIPTOR(ts), INTERVAL '0' MINUTE))"),
             Catch::Contains("sizes must be positive"));
  CHECK_THAT(ErrorOf(t + "CREATE VIEW v AS SELECT * FROM TABLE(SESSION(TABLE c, DESCRIPTOR(ts), INTERVAL '1' MONTH))"),
             Catch::Contains("months"));
}

TEST_CASE("SESSION over a LATENESS column discards finished sessions and keeps the same results", "[session]") {
  auto run = [](const std::string& lateness, int steps, std::vector<std::string>* rows) {
    Db db("CREATE TABLE t (u INT, ts TIMESTAMP NOT NULL " + lateness +
          ");"
          "CREATE MATERIALIZED VIEW s AS SELECT u, window_start, window_end, COUNT(*) AS n FROM TABLE(SESSION(TABLE t, "
          "DESCRIPTOR(ts), DESCRIPTOR(u), INTERVAL '30' SECONDS)) GROUP BY u, window_start, window_end;");
    int64_t second = 0;
    for (int s = 0; s < steps; ++s) {
      std::string ins = "INSERT INTO t VALUES ";
      for (int i = 0; i < 10; ++i) {
        // Bursts: 20 rows 5 s apart per user, then a 60 s pause.
        second += (s * 10 + i) % 20 == 0 ? 60 : 5;
        char ts[80];
        std::snprintf(ts, sizeof ts, "(%d, '2024-01-%02d %02d:%02d:%02d')", i % 2, static_cast<int>(1 + second / 86400),
                      static_cast<int>(second / 3600 % 24), static_cast<int>(second / 60 % 60),
                      static_cast<int>(second % 60));
        ins += (i ? ", " : "") + std::string(ts);
      }
      db.Push(ins + ";");
      db.Step();
    }
    if (rows) *rows = db.Rows("s");
    return db.StateBytes();
  };
  std::vector<std::string> with, without;
  size_t short_run = run("LATENESS INTERVAL '1' MINUTE", 40, nullptr);
  size_t long_run = run("LATENESS INTERVAL '1' MINUTE", 400, &with);
  size_t unbounded = run("", 400, &without);
  INFO("state bytes: 40 steps " << short_run << ", 400 steps " << long_run << ", without LATENESS " << unbounded);
  CHECK(with == without);
  CHECK(with.size() == 400u);  // 200 bursts, 2 users each
  CHECK(with[0] == "0|2024-01-01 00:01:00|2024-01-01 00:03:00|10");
  CHECK(long_run < short_run * 2);
  CHECK(unbounded > long_run * 3);
}

}  // namespace
}  // namespace fld
