// NOW(), temporal filters and emit_final (core/operators/temporal_filter.h, emit_final.h):
// views maintained over random insert/delete steps and clock moves equal a recomputation from
// scratch over the accumulated input at the step's time, across a save and restore; the
// temporal filters keep only the rows they must act on; what is not supported is refused by name.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <random>
#include <set>
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

// A map standing for the checkpoint store: Checkpoint applies a circuit's incremental save (each
// node's erases and puts) and keeps its header; Restore reads them into a fresh circuit.
struct KeyedStore {
  std::map<int, std::map<std::string, std::string>> entries;
  std::string header;
  void Checkpoint(Circuit& c) {
    std::vector<std::pair<int, StateDelta>> deltas;
    header.clear();
    c.SaveChanges(&header, &deltas);
    for (const auto& [node, d] : deltas)
      d.ForEach([&, node = node](std::string_view k, std::string_view v, bool put) {
        if (put)
          entries[node][std::string(k)] = std::string(v);
        else
          entries[node].erase(std::string(k));
      });
  }
  void Restore(Circuit& fresh) {
    fresh.TrackChanges();
    fresh.RestoreKeyed(
        header,
        [&](int node, const Circuit::EntrySink& sink) {
          for (const auto& [k, v] : entries[node]) sink(k, v);
        },
        nullptr);
  }
};

// A fresh circuit of `program` continuing c: its state restored from `store` after a last
// checkpoint (keyed), or from c's whole saved state (store null); its materialized contents c's.
std::unique_ptr<Circuit> Continue(const std::string& program, Circuit& c, KeyedStore* store) {
  auto fresh = Compile(program);
  if (store) {
    store->Checkpoint(c);
    store->Restore(*fresh);
  } else {
    std::string state;
    c.SaveState(&state);
    fresh->RestoreState(state);
  }
  for (size_t r = 0; r < c.relations().size(); ++r)
    if (c.relations()[r].materialized) fresh->LoadContents(static_cast<int>(r), c.Contents(static_cast<int>(r)));
  return fresh;
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

// A table with a PRIMARY KEY and a LATENESS column: rows later than the lateness are dropped
// before they reach the table's key -> row state (an insert or a delete alike), as in a table
// without a key.
TEST_CASE("a PRIMARY KEY table drops rows past its LATENESS", "[lateness]") {
  auto circuit = Compile(R"(CREATE TABLE t(k INT NOT NULL PRIMARY KEY, ts TIMESTAMP NOT NULL LATENESS INTERVAL 1 HOUR,
  v INT NOT NULL);
CREATE MATERIALIZED VIEW n AS SELECT COUNT(*) AS c, SUM(v) AS s FROM t;)");
  const int table = circuit->FindRelation("t");
  const int64_t kHour = 3600 * kSec;
  auto push = [&](std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> rows) {
    BatchBuilder b(circuit->relations()[table].schema.PhysTypes());
    for (auto [k, ts, v, w] : rows) b.AppendRow(Row{Value::Int(k), Value::Int(ts), Value::Int(v)}, w);
    circuit->Push(table, b.Finish());
    circuit->Step();
  };
  push({{1, 10 * kHour, 5, 1}});
  push({{2, 1 * kHour, 7, 1}});                // late: dropped
  push({{1, 2 * kHour, 9, 1}});                // late: does not replace key 1's row
  push({{3, 10 * kHour - kHour / 2, 11, 1}});  // within the lateness
  push({{1, 1 * kHour, 5, -1}});               // a late delete: dropped too
  ZSet want;
  AddInto(&want, Row{Value::Int(2), Value::Int(16)}, 1);
  CHECK(Contents(*circuit, "n") == want);
  ZSet table_want;
  AddInto(&table_want, Row{Value::Int(1), Value::Int(10 * kHour), Value::Int(5)}, 1);
  AddInto(&table_want, Row{Value::Int(3), Value::Int(10 * kHour - kHour / 2), Value::Int(11)}, 1);
  CHECK(Contents(*circuit, "t") == table_want);
}

}  // namespace

TEST_CASE("temporal filters follow NOW() over random steps, across save and restore", "[now]") {
  // Restored from the whole state, and from incremental checkpoints (keyed state: each saved
  // change applied to a map standing for the store).
  for (bool keyed : {false, true}) {
    INFO((keyed ? "incremental checkpoints" : "whole state"));
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
    KeyedStore store;
    auto checkpoint = [&] { store.Checkpoint(*circuit); };
    if (keyed) circuit->TrackChanges();
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
      if (keyed && rng() % 3 == 0) checkpoint();
      if (step == 40) {
        // Continue in a fresh circuit from the saved state and the materialized contents.
        circuit = Continue(program, *circuit, keyed ? &store : nullptr);
        restored = true;
      }
    }
    CHECK(restored);
  }
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

// Monotone AND-ed comparisons, also in HAVING and next to conditions that need the clock join,
// stay temporal filters; only the other uses of NOW() join the rows with the clock.
TEST_CASE("temporal filters stay the plan for monotone conditions; the rest joins the clock", "[now]") {
  auto count = [](const std::string& view, int* filters, int* joins) {
    auto c = Compile("CREATE TABLE t(k INT, ts TIMESTAMP);\n" + view);
    *filters = *joins = 0;
    for (size_t i = 0; i < c->num_nodes(); ++i) {
      if (dynamic_cast<const TemporalFilterOp*>(&c->op(static_cast<int>(i)))) ++*filters;
      if (c->op(static_cast<int>(i)).Name() == "cross_join") ++*joins;
    }
  };
  int f = 0, j = 0;
  count("CREATE VIEW v AS SELECT * FROM t WHERE ts BETWEEN NOW() - INTERVAL 1 HOUR AND NOW() AND k = 1", &f, &j);
  CHECK((f == 2 && j == 0));
  count("CREATE VIEW v AS SELECT k, MAX(ts) AS m FROM t GROUP BY k HAVING MAX(ts) >= NOW() - INTERVAL 1 HOUR", &f, &j);
  CHECK((f == 1 && j == 0));
  count("CREATE VIEW v AS SELECT * FROM t WHERE ts >= NOW() - INTERVAL 1 HOUR AND (ts < NOW() OR k = 1)", &f, &j);
  CHECK((f == 1 && j == 1));
  count("CREATE VIEW v AS SELECT k, NOW() AS n FROM t WHERE ts >= NOW() - INTERVAL 1 HOUR", &f, &j);
  CHECK((f == 1 && j == 1));
}

// NOW() elsewhere than in a temporal filter: the planner joins the rows with the clock. Each
// view's contents at every step equal a recomputation here from the accumulated input with NOW()
// the step's time (the expected values below are computed from the SQL's meaning, not by fld).
TEST_CASE("NOW() in any position follows the clock over random steps, across save and restore", "[now]") {
  const std::string program = R"(CREATE TABLE t(k INT, ts TIMESTAMP);
CREATE TABLE u(id INT, k INT, lo TIMESTAMP NOT NULL, hi TIMESTAMP NOT NULL);
CREATE MATERIALIZED VIEW age AS SELECT k, TIMESTAMPDIFF(SECOND, ts, NOW()) AS age FROM t;
CREATE MATERIALIZED VIEW either AS SELECT k, ts FROM t WHERE ts >= NOW() - INTERVAL 10 SECONDS OR k = 1;
CREATE MATERIALIZED VIEW fresh AS SELECT k, COUNT(*) AS n FROM t GROUP BY k
  HAVING MAX(ts) > NOW() - INTERVAL 5 SECONDS AND COUNT(*) > EXTRACT(SECOND FROM NOW()) % 3;
CREATE MATERIALIZED VIEW bucket AS SELECT w, COUNT(*) AS n
  FROM (SELECT CASE WHEN ts < NOW() THEN 'past' ELSE 'next' END AS w FROM t) s GROUP BY w;
CREATE MATERIALIZED VIEW outside AS SELECT t.k, u.id FROM t JOIN u ON t.k = u.k AND (NOW() < u.lo OR NOW() > u.hi);
CREATE MATERIALIZED VIEW total AS SELECT SUM(CASE WHEN ts > NOW() - INTERVAL 7 SECONDS THEN 1 ELSE 0 END) AS recent,
  NOW() AS at FROM t;
CREATE MATERIALIZED VIEW parity AS SELECT k FROM t WHERE k > EXTRACT(SECOND FROM CURRENT_TIMESTAMP) % 4;
CREATE MATERIALIZED VIEW unnested AS SELECT k, x FROM t
  LEFT JOIN UNNEST(SEQUENCE(0, EXTRACT(SECOND FROM NOW()) % 3)) AS z(x) ON x < k AND x <> EXTRACT(SECOND FROM NOW()) % 2;)";
  auto circuit = Compile(program);
  REQUIRE(circuit->UsesNow());
  const int t = circuit->FindRelation("t"), u = circuit->FindRelation("u");
  std::mt19937 rng(29);
  ZSet live_t, live_u;  // (k, ts); (id, k, lo, hi)
  int64_t now = 1000 * kSec;
  bool restored = false;
  auto change = [&](int rel, ZSet* live, auto make) {
    BatchBuilder b(circuit->relations()[rel].schema.PhysTypes());
    const int n = static_cast<int>(rng() % 4);
    for (int i = 0; i < n; ++i) {
      Row r = make();
      int64_t w = 1;
      if (!live->empty() && rng() % 3 == 0) {
        auto it = live->begin();
        std::advance(it, rng() % live->size());
        r = it->first;
        w = -1;
      }
      b.AppendRow(r, w);
      AddInto(live, r, w);
    }
    circuit->Push(rel, b.Finish());
  };
  auto maybe_null = [&](Value v) { return rng() % 10 == 0 ? Value::Null() : v; };
  for (int step = 0; step < 70; ++step) {
    if (step % 6 != 5) {  // some steps only move the clock
      change(t, &live_t, [&] {
        return Row{maybe_null(Value::Int(static_cast<int64_t>(rng() % 5))),
                   maybe_null(Value::Int(now + (static_cast<int64_t>(rng() % 30) - 20) * kSec))};
      });
      change(u, &live_u, [&] {
        const int64_t lo = now + (static_cast<int64_t>(rng() % 20) - 10) * kSec;
        return Row{Value::Int(static_cast<int64_t>(rng() % 100)),
                   maybe_null(Value::Int(static_cast<int64_t>(rng() % 5))), Value::Int(lo),
                   Value::Int(lo + static_cast<int64_t>(rng() % 10) * kSec)};
      });
    }
    now += static_cast<int64_t>(rng() % 4) * kSec;
    circuit->SetNow(now);
    circuit->Step();
    REQUIRE(circuit->Now() == now);
    const int64_t sec = (now / kSec) % 60;
    ZSet age, either, fresh, bucket, outside, total, parity, unnested;
    std::map<Value, std::pair<int64_t, std::optional<int64_t>>> groups;  // k -> (count, max ts)
    std::map<std::string, int64_t> words;
    int64_t recent = 0, rows = 0;
    for (const auto& [r, w] : live_t) {
      const Value& k = r[0];
      const Value& ts = r[1];
      AddInto(&age, Row{k, ts.IsNull() ? Value::Null() : Value::Int((now - ts.i) / kSec)}, w);
      if ((!ts.IsNull() && ts.i >= now - 10 * kSec) || (!k.IsNull() && k.i == 1)) AddInto(&either, r, w);
      auto& g = groups[k];
      g.first += w;
      if (!ts.IsNull()) g.second = std::max(g.second.value_or(ts.i), ts.i);
      words[!ts.IsNull() && ts.i < now ? "past" : "next"] += w;
      if (!ts.IsNull() && ts.i > now - 7 * kSec) recent += w;
      rows += w;
      if (!k.IsNull() && k.i > sec % 4) AddInto(&parity, Row{k}, w);
      bool matched = false;
      for (int64_t x = 0; x <= sec % 3; ++x)
        if (!k.IsNull() && x < k.i && x != sec % 2) {
          AddInto(&unnested, Row{k, Value::Int(x)}, w);
          matched = true;
        }
      if (!matched) AddInto(&unnested, Row{k, Value::Null()}, w);
      for (const auto& [ur, uw] : live_u)
        if (!k.IsNull() && !ur[1].IsNull() && ur[1].i == k.i && (now < ur[2].i || now > ur[3].i))
          AddInto(&outside, Row{k, ur[0]}, w * uw);
    }
    for (const auto& [k, g] : groups)
      if (g.second && *g.second > now - 5 * kSec && g.first > sec % 3) AddInto(&fresh, Row{k, Value::Int(g.first)}, 1);
    for (const auto& [word, n] : words)
      if (n != 0) AddInto(&bucket, Row{Value::String(word), Value::Int(n)}, 1);
    AddInto(&total, Row{rows == 0 ? Value::Null() : Value::Int(recent), Value::Int(now)}, 1);
    INFO("step " << step);
    CHECK(Show(Contents(*circuit, "age")) == Show(age));
    CHECK(Show(Contents(*circuit, "either")) == Show(either));
    CHECK(Show(Contents(*circuit, "fresh")) == Show(fresh));
    CHECK(Show(Contents(*circuit, "bucket")) == Show(bucket));
    CHECK(Show(Contents(*circuit, "outside")) == Show(outside));
    CHECK(Show(Contents(*circuit, "total")) == Show(total));
    CHECK(Show(Contents(*circuit, "parity")) == Show(parity));
    CHECK(Show(Contents(*circuit, "unnested")) == Show(unnested));
    if (step == 35) {
      std::string state;
      circuit->SaveState(&state);
      auto fresh_circuit = Compile(program);
      fresh_circuit->RestoreState(state);
      for (size_t r = 0; r < circuit->relations().size(); ++r)
        if (circuit->relations()[r].materialized)
          fresh_circuit->LoadContents(static_cast<int>(r), circuit->Contents(static_cast<int>(r)));
      circuit = std::move(fresh_circuit);
      restored = true;
    }
  }
  CHECK(restored);
}

// A recursive view reading NOW(): reachability over the edges valid at the step's time, equal to a
// naive fixed point here at every step.
TEST_CASE("NOW() in a recursive view follows the clock", "[now][recursive]") {
  const std::string program = R"(CREATE TABLE e(a INT NOT NULL, b INT NOT NULL, ts TIMESTAMP NOT NULL);
DECLARE RECURSIVE VIEW reach(a INT NOT NULL, b INT NOT NULL);
CREATE MATERIALIZED VIEW reach AS SELECT a, b FROM e WHERE ts >= NOW() - INTERVAL 8 SECONDS
  UNION SELECT reach.a, e.b FROM reach JOIN e ON reach.b = e.a
  WHERE e.ts >= NOW() - INTERVAL 8 SECONDS OR e.a = EXTRACT(SECOND FROM NOW()) % 5;)";
  auto circuit = Compile(program);
  REQUIRE(circuit->UsesNow());
  const int e = circuit->FindRelation("e");
  std::mt19937 rng(7);
  ZSet live;
  int64_t now = 2000 * kSec;
  for (int step = 0; step < 50; ++step) {
    BatchBuilder b(circuit->relations()[e].schema.PhysTypes());
    for (int i = 0, n = static_cast<int>(rng() % 3); i < n; ++i) {
      Row r{Value::Int(static_cast<int64_t>(rng() % 6)), Value::Int(static_cast<int64_t>(rng() % 6)),
            Value::Int(now - static_cast<int64_t>(rng() % 6) * kSec)};
      int64_t w = 1;
      if (!live.empty() && rng() % 3 == 0) {
        auto it = live.begin();
        std::advance(it, rng() % live.size());
        r = it->first;
        w = -1;
      }
      b.AppendRow(r, w);
      AddInto(&live, r, w);
    }
    circuit->Push(e, b.Finish());
    now += static_cast<int64_t>(rng() % 3) * kSec;
    circuit->SetNow(now);
    circuit->Step();
    const int64_t sec = (now / kSec) % 60;
    std::set<std::pair<int64_t, int64_t>> reach;
    for (const auto& [r, w] : live)
      if (r[2].i >= now - 8 * kSec) reach.insert({r[0].i, r[1].i});
    for (bool grew = true; grew;) {
      grew = false;
      auto snapshot = reach;
      for (const auto& [a, m] : snapshot)
        for (const auto& [r, w] : live)
          if (r[0].i == m && (r[2].i >= now - 8 * kSec || r[0].i == sec % 5))
            grew = reach.insert({a, r[1].i}).second || grew;
    }
    ZSet want;
    for (const auto& [a, c] : reach) AddInto(&want, Row{Value::Int(a), Value::Int(c)}, 1);
    INFO("step " << step);
    CHECK(Show(Contents(*circuit, "reach")) == Show(want));
  }
}

TEST_CASE("NOW() where it cannot be evaluated is refused by name", "[now]") {
  const std::string t = "CREATE TABLE t(k INT, ts TIMESTAMP);\n";
  CHECK(CompileError(t + "CREATE VIEW v AS SELECT * FROM t WHERE ts >= NOW() - INTERVAL 7 DAYS").empty());
  CHECK(CompileError(t + "CREATE VIEW v AS SELECT NOW() AS n, k FROM t WHERE ts = NOW() OR k = 1").empty());
  CHECK(CompileError(t + "CREATE VIEW v AS SELECT * FROM t, UNNEST(ARRAY[NOW()]) AS x(n)").empty());
  CHECK_THAT(CompileError("CREATE TABLE t(k INT, ts TIMESTAMP DEFAULT NOW());"),
             Contains("a DEFAULT must be a constant"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT * FROM t WHERE ts >= NOW(3)"), Contains("takes no arguments"));
}

// emit_final: the view's contents are those of the same view without it restricted to the rows
// whose column lies below the waterline; nothing emitted is ever retracted.
TEST_CASE("emit_final emits exactly the rows below the waterline, once", "[emit_final]") {
  // Restored from the whole state, and from incremental checkpoints (keyed state).
  for (bool keyed : {false, true}) {
    INFO((keyed ? "incremental checkpoints" : "whole state"));
    const std::string program = R"(CREATE TABLE purchase(ts TIMESTAMP NOT NULL LATENESS INTERVAL 1 HOUR, amount BIGINT);
CREATE MATERIALIZED VIEW daily AS SELECT TIMESTAMP_TRUNC(ts, DAY) AS d, SUM(amount) AS total
  FROM purchase GROUP BY TIMESTAMP_TRUNC(ts, DAY);
CREATE MATERIALIZED VIEW daily_final WITH ('emit_final' = 'd') AS SELECT TIMESTAMP_TRUNC(ts, DAY) AS d,
  SUM(amount) AS total FROM purchase GROUP BY TIMESTAMP_TRUNC(ts, DAY);)";
    auto circuit = Compile(program);
    KeyedStore store;
    auto checkpoint = [&] { store.Checkpoint(*circuit); };
    if (keyed) circuit->TrackChanges();
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
      if (keyed && rng() % 3 == 0) checkpoint();
      if (step == 30) {
        circuit = Continue(program, *circuit, keyed ? &store : nullptr);
      }
    }
    CHECK(Contents(*circuit, "daily_final").size() >= 10);
  }
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
