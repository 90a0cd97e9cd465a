// NOW(), temporal filters and emit_final (core/operators/temporal_filter.h, emit_final.h):
// views maintained over random insert/delete steps and clock moves equal a recomputation from
// scratch over the accumulated input at the step's time, across a save and restore; the
// temporal filters keep only the rows they must act on; what is not supported is refused by name.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/operators/emit_final.h"
#include "core/operators/temporal_filter.h"
#include "core/plan/planner.h"
#include "core/sql/parser.h"

namespace fld {
namespace {

using Catch::Matchers::Contains;

std::unique_ptr<Circuit> Compile(const std::string& program) {
  return plan::CompileProgram(sql::ParseProgram(program), program, {}, nullptr);
}

std::string CompileError(const std::string& program) {
  try {
    Compile(program);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

constexpr int64_t kSec = 1'000'000;

using Row = std::vector<Value>;
using ZSet = std::map<Row, int64_t>;

void AddInto(ZSet* z, const Row& r, int64_t w) {
  auto& x = (*z)[r];
  x += w;
  if (x == 0) z->erase(r);
}

ZSet Contents(const Circuit& c, const char* view) {
  Batch b = c.Contents(c.FindRelation(view));
  ZSet out;
  for (size_t i = 0; i < b.size(); ++i) {
    Row r;
    for (size_t k = 0; k < b.width(); ++k) r.push_back(b.Get(k, i));
    AddInto(&out, r, b.weights[i]);
  }
  return out;
}

std::string Show(const ZSet& z) {
  std::string s;
  for (const auto& [r, w] : z) {
    s += "(";
    for (const auto& v : r)
      s += (v.IsNull() ? std::string("NULL") : v.kind == Value::Kind::kInt ? std::to_string(v.i) : v.s) + " ";
    s += fmt::format(") x{}\n", w);
  }
  return s;
}

}  // namespace

TEST_CASE("temporal filters follow NOW() over random steps, across save and restore", "[now]") {
  const std::string program = R"(CREATE TABLE t(k INT, ts TIMESTAMP);
CREATE MATERIALIZED VIEW recent AS SELECT * FROM t WHERE ts >= NOW() - INTERVAL 10 SECONDS;
CREATE MATERIALIZED VIEW soon AS SELECT k, ts FROM t WHERE ts <= NOW() + INTERVAL 3 SECONDS AND k > 0;
CREATE MATERIALIZED VIEW flipped AS SELECT k FROM t WHERE NOW() - INTERVAL 5 SECONDS < ts;
CREATE MATERIALIZED VIEW band AS SELECT k, COUNT(*) AS n FROM t
  WHERE ts BETWEEN NOW() - INTERVAL 20 SECONDS AND NOW() GROUP BY k;)";
  auto circuit = Compile(program);
  REQUIRE(circuit->UsesNow());
  const int table = circuit->FindRelation("t");
  std::mt19937 rng(11);
  ZSet live;  // (k, ts)
  int64_t now = 1000 * kSec, clock = 0;
  bool restored = false;
  for (int step = 0; step < 80; ++step) {
    BatchBuilder b(circuit->relations()[table].schema.PhysTypes());
    const int n = step % 7 == 3 ? 0 : static_cast<int>(rng() % 6);  // some steps only move the clock
    for (int i = 0; i < n; ++i) {
      if (!live.empty() && rng() % 3 == 0) {
        auto it = live.begin();
        std::advance(it, rng() % live.size());
        Row r = it->first;
        b.AppendRow(r, -1);
        AddInto(&live, r, -1);
      } else {
        Value k = rng() % 9 == 0 ? Value::Null() : Value::Int(static_cast<int64_t>(rng() % 4));
        Value ts = rng() % 13 == 0 ? Value::Null() : Value::Int(now + (static_cast<int64_t>(rng() % 40) - 25) * kSec);
        Row r{k, ts};
        b.AppendRow(r, 1);
        AddInto(&live, r, 1);
      }
    }
    circuit->Push(table, b.Finish());
    if (rng() % 5 != 0) now += static_cast<int64_t>(rng() % 4) * kSec;
    const int64_t set = rng() % 10 == 0 ? now - 50 * kSec : now;  // a clock going back is held
    clock = std::max(clock, set);
    circuit->SetNow(set);
    circuit->Step();
    REQUIRE(circuit->Now() == clock);
    ZSet recent, soon, flipped, band;
    std::map<Value, int64_t> counts;
    const int64_t at = clock;
    for (const auto& [r, w] : live) {
      if (r[1].IsNull()) continue;
      const int64_t ts = r[1].i;
      if (ts >= at - 10 * kSec) AddInto(&recent, r, w);
      if (ts <= at + 3 * kSec && !r[0].IsNull() && r[0].i > 0) AddInto(&soon, r, w);
      if (at - 5 * kSec < ts) AddInto(&flipped, Row{r[0]}, w);
      if (ts >= at - 20 * kSec && ts <= at) counts[r[0]] += w;
    }
    for (const auto& [k, c] : counts)
      if (c != 0) AddInto(&band, Row{k, Value::Int(c)}, 1);
    INFO("step " << step);
    CHECK(Show(Contents(*circuit, "recent")) == Show(recent));
    CHECK(Show(Contents(*circuit, "soon")) == Show(soon));
    CHECK(Show(Contents(*circuit, "flipped")) == Show(flipped));
    CHECK(Show(Contents(*circuit, "band")) == Show(band));
    if (step == 40) {
      // Continue in a fresh circuit from the saved state and the materialized contents.
      std::string state;
      circuit->SaveState(&state);
      auto fresh = Compile(program);
      fresh->RestoreState(state);
      for (size_t r = 0; r < circuit->relations().size(); ++r)
        if (circuit->relations()[r].materialized)
          fresh->LoadContents(static_cast<int>(r), circuit->Contents(static_cast<int>(r)));
      circuit = std::move(fresh);
      restored = true;
    }
  }
  CHECK(restored);
}

TEST_CASE("a lower temporal bound keeps only the rows still inside it", "[now]") {
  auto circuit = Compile(R"(CREATE TABLE t(ts TIMESTAMP NOT NULL);
CREATE VIEW recent AS SELECT * FROM t WHERE ts >= NOW() - INTERVAL 10 SECONDS;)");
  const TemporalFilterOp* op = nullptr;
  for (size_t i = 0; i < circuit->num_nodes(); ++i)
    if (auto* f = dynamic_cast<const TemporalFilterOp*>(&circuit->op(static_cast<int>(i)))) op = f;
  REQUIRE(op != nullptr);
  const int table = circuit->FindRelation("t");
  for (int64_t s = 0; s < 1000; ++s) {
    BatchBuilder b(circuit->relations()[table].schema.PhysTypes());
    b.AppendRow(Row{Value::Int(s * kSec)}, 1);
    circuit->Push(table, b.Finish());
    circuit->SetNow(s * kSec);
    circuit->Step();
  }
  CHECK(op->kept_rows() == 11);  // the last 11 seconds' rows; the rest left as time passed
  CHECK(circuit->Delta(circuit->FindRelation("recent")).size() == 2);  // one in, one out
}

TEST_CASE("NOW() outside a temporal filter is refused by name", "[now]") {
  const std::string t = "CREATE TABLE t(k INT, ts TIMESTAMP);\n";
  CHECK(CompileError(t + "CREATE VIEW v AS SELECT * FROM t WHERE ts >= NOW() - INTERVAL 7 DAYS").empty());
  CHECK(CompileError(t + "CREATE VIEW v AS SELECT * FROM t WHERE ts > CURRENT_TIMESTAMP() AND k = 1").empty());
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT NOW() AS n FROM t"),
             Contains("NOW() is supported only in temporal filters yet"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT * FROM t WHERE ts >= NOW() OR k = 1"),
             Contains("NOW() is supported only in temporal filters yet"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT * FROM t WHERE ts = NOW()"),
             Contains("NOW() is supported only in temporal filters yet"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT * FROM t WHERE k > EXTRACT(HOUR FROM NOW())"),
             Contains("NOW() is supported only in temporal filters yet"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT COUNT(*) FROM t GROUP BY k HAVING MAX(ts) > NOW()"),
             Contains("NOW() is supported only in temporal filters yet"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT * FROM t WHERE ts >= NOW(3)"), Contains("takes no arguments"));
}

// emit_final: the view's contents are those of the same view without it restricted to the rows
// whose column lies below the waterline; nothing emitted is ever retracted.
TEST_CASE("emit_final emits exactly the rows below the waterline, once", "[emit_final]") {
  const std::string program = R"(CREATE TABLE purchase(ts TIMESTAMP NOT NULL LATENESS INTERVAL 1 HOUR, amount BIGINT);
CREATE MATERIALIZED VIEW daily AS SELECT TIMESTAMP_TRUNC(ts, DAY) AS d, SUM(amount) AS total
  FROM purchase GROUP BY TIMESTAMP_TRUNC(ts, DAY);
CREATE MATERIALIZED VIEW daily_final WITH ('emit_final' = 'd') AS SELECT TIMESTAMP_TRUNC(ts, DAY) AS d,
  SUM(amount) AS total FROM purchase GROUP BY TIMESTAMP_TRUNC(ts, DAY);)";
  auto circuit = Compile(program);
  const int table = circuit->FindRelation("purchase");
  const int final_rel = circuit->FindRelation("daily_final");
  std::mt19937 rng(5);
  const int64_t kHour = 3600 * kSec, kDay = 24 * kHour;
  int64_t max_ts = 0;
  bool seen = false;
  for (int step = 0; step < 60; ++step) {
    BatchBuilder b(circuit->relations()[table].schema.PhysTypes());
    const int n = static_cast<int>(rng() % 5);
    for (int i = 0; i < n; ++i) {
      // Within the lateness of the largest time so far (never dropped), drifting forward.
      int64_t ts = seen ? max_ts - kHour + static_cast<int64_t>(rng() % (6 * 3600)) * kSec : 0;
      b.AppendRow(Row{Value::Int(ts), Value::Int(static_cast<int64_t>(rng() % 100))}, 1);
      max_ts = seen ? std::max(max_ts, ts) : ts;
      seen = true;
    }
    circuit->Push(table, b.Finish());
    circuit->Step();
    for (size_t i = 0; i < circuit->Delta(final_rel).size(); ++i)
      CHECK(circuit->Delta(final_rel).weights[i] == 1);  // only insertions, never a retraction
    ZSet want;
    if (seen) {
      const int64_t w = max_ts - kHour;
      const int64_t wd = w - ((w % kDay) + kDay) % kDay;  // TIMESTAMP_TRUNC(waterline, DAY)
      for (const auto& [r, c] : Contents(*circuit, "daily"))
        if (r[0].i < wd) AddInto(&want, r, c);
    }
    INFO("step " << step);
    CHECK(Show(Contents(*circuit, "daily_final")) == Show(want));
    if (step == 30) {
      std::string state;
      circuit->SaveState(&state);
      auto fresh = Compile(program);
      fresh->RestoreState(state);
      for (size_t r = 0; r < circuit->relations().size(); ++r)
        if (circuit->relations()[r].materialized)
          fresh->LoadContents(static_cast<int>(r), circuit->Contents(static_cast<int>(r)));
      circuit = std::move(fresh);
    }
  }
  CHECK(Contents(*circuit, "daily_final").size() >= 10);
}

TEST_CASE("emit_final errors name what is wrong", "[emit_final]") {
  const std::string t = "CREATE TABLE t(ts TIMESTAMP NOT NULL LATENESS INTERVAL 1 HOUR, u TIMESTAMP, x INT);\n";
  CHECK(CompileError(t + "CREATE VIEW v WITH ('emit_final' = 'ts') AS SELECT ts, x FROM t").empty());
  CHECK_THAT(CompileError(t + "CREATE VIEW v WITH ('emit_final' = 'y') AS SELECT ts, x FROM t"),
             Contains("emit_final: view 'v' has no column 'y'"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v WITH ('emit_final' = 'u') AS SELECT u, x FROM t"),
             Contains("emit_final: column 'u' of view 'v' has no waterline"));
}

}  // namespace fld
