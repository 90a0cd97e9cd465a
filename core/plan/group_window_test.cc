// Property tests for group windows and window functions over aggregates (core/plan): GROUP BY
// HOP(...) / SESSION(...) with their _START/_END functions, TUMBLE and HOP sized in months
// (calendar-aligned: windows start on the first of a month, counted from 1970-01), and window
// functions (RANK, SUM(SUM(...)) OVER ...) in a query with GROUP BY. Programs are compiled into
// circuits and fed random inserts and deletes; after every step each view must equal a
// from-scratch evaluation written here (naive loops over the current rows; months through
// std::chrono's calendar, sharing no code with the engine). The circuit's state is saved at a
// random step and restored into a fresh circuit, which must go on with the same contents.
// Answers against PostgreSQL 15 are in tests/slt/regress/group_windows.test.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
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
struct Row {
  Int k, ts, v;  // ts: microseconds since 1970-01-01
};
using Naive = std::function<std::vector<std::string>(const std::vector<Row>&)>;

constexpr int64_t kSec = 1000000;
constexpr int64_t kDay = 86400 * kSec;

std::string Show(const Int& v) {
  return v ? std::to_string(*v) : "NULL";
}
template <typename... T>
std::string Cat(const T&... v) {
  std::string s;
  ((s += (s.empty() ? "" : "|") + Show(Int(v))), ...);
  return s;
}

// The month holding ts (months since 1970-01) and the microsecond at which month m begins, by
// std::chrono's civil calendar.
int64_t MonthOf(int64_t ts) {
  using namespace std::chrono;
  int64_t days = ts >= 0 ? ts / kDay : -((-ts + kDay - 1) / kDay);
  year_month_day ymd{sys_days{std::chrono::days{days}}};
  return (static_cast<int64_t>(static_cast<int>(ymd.year())) - 1970) * 12 +
         static_cast<int64_t>(static_cast<unsigned>(ymd.month())) - 1;
}
int64_t MonthStart(int64_t m) {
  using namespace std::chrono;
  int64_t y = m >= 0 ? m / 12 : -((-m + 11) / 12);
  unsigned mo = static_cast<unsigned>(m - y * 12) + 1;
  sys_days d{year{static_cast<int>(1970 + y)} / month{mo} / day{1}};
  return d.time_since_epoch().count() * kDay;
}
int64_t Floor(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

std::vector<std::string> Contents(const Circuit& c, const std::string& view) {
  int r = c.FindRelation(view);
  REQUIRE(r >= 0);
  Batch b = c.Contents(r);
  std::vector<std::string> out;
  for (size_t i = 0; i < b.size(); ++i) {
    REQUIRE(b.weights[i] > 0);
    std::string row;
    for (size_t k = 0; k < b.width(); ++k) {
      Value v = b.Get(k, i);
      row += (k ? "|" : "") + (v.IsNull() ? std::string("NULL") : std::to_string(v.i));
    }
    for (int64_t w = 0; w < b.weights[i]; ++w) out.push_back(row);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Batch ToBatch(const std::vector<Row>& rows, int64_t w) {
  std::vector<PhysType> types(3, PhysType::kI64);
  BatchBuilder b(types);
  for (const auto& r : rows) {
    std::vector<Value> vals;
    for (const Int& x : {r.k, r.ts, r.v}) vals.push_back(x ? Value::Int(*x) : Value::Null());
    b.AppendRow(vals, w);
  }
  return b.Finish();
}

// Random steps over table t(k INT, ts TIMESTAMP, v INT); `ts` draws a timestamp.
void CheckRandom(const std::string& program, const std::vector<std::pair<std::string, Naive>>& cases,
                 const std::function<int64_t(std::mt19937_64&)>& ts, uint64_t seed, int iterations = 20,
                 int steps = 8) {
  auto stmts = sql::ParseProgram(program);
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  for (int iteration = 0; iteration < iterations; ++iteration) {
    auto circuit = CompileProgram(stmts, program, {}, nullptr);
    std::unique_ptr<Circuit> restored;
    const int restore_at = pick(steps);
    std::vector<Row> cur;
    for (int step = 0; step < steps; ++step) {
      std::vector<Row> ins, del;
      const int n = pick(7);
      for (int i = 0; i < n; ++i) {
        if (!cur.empty() && pick(3) == 0) {
          size_t j = static_cast<size_t>(pick(static_cast<int>(cur.size())));
          del.push_back(cur[j]);
          cur.erase(cur.begin() + static_cast<long>(j));
        } else {
          Row r{pick(8) == 0 ? Int() : Int(pick(3)), pick(10) == 0 ? Int() : Int(ts(rng)),
                pick(8) == 0 ? Int() : Int(pick(21) - 5)};
          ins.push_back(r);
          cur.push_back(r);
        }
      }
      const int rel = circuit->FindRelation("t");
      for (Circuit* c : {circuit.get(), restored.get()}) {
        if (!c) continue;
        c->Push(rel, ToBatch(ins, 1));
        c->Push(rel, ToBatch(del, -1));
        c->Step();
      }
      for (const auto& [view, naive] : cases) {
        std::string shown;
        for (const auto& r : cur) shown += " (" + Cat(r.k, r.ts, r.v) + ")";
        INFO("iteration " << iteration << " step " << step << " view " << view << " t:" << shown);
        std::vector<std::string> want = naive(cur);
        std::sort(want.begin(), want.end());
        REQUIRE(Contents(*circuit, view) == want);
        if (restored) REQUIRE(Contents(*restored, view) == want);
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

// Groups rows by a key string; per group COUNT(*) and SUM(v) (NULL when no v).
struct CountSum {
  int64_t n = 0;
  Int sum;
  void Add(const Row& r) {
    ++n;
    if (r.v) sum = sum.value_or(0) + *r.v;
  }
};

TEST_CASE("GROUP BY HOP and SESSION, TUMBLE and HOP in months: incremental, as recomputed", "[group_window]") {
  const std::string program = R"(CREATE TABLE t(k INT, ts TIMESTAMP, v INT);
CREATE MATERIALIZED VIEW hop AS SELECT k, HOP_START(ts, INTERVAL 3 SECOND, INTERVAL 10 SECOND, INTERVAL 1 SECOND) AS s,
  HOP_END(ts, INTERVAL 3 SECOND, INTERVAL 10 SECOND, INTERVAL 1 SECOND) AS e, COUNT(*) AS n, SUM(v) AS sv
  FROM t GROUP BY k, HOP(ts, INTERVAL 3 SECOND, INTERVAL 10 SECOND, INTERVAL 1 SECOND);
CREATE MATERIALIZED VIEW sess AS SELECT k, SESSION_START(ts, INTERVAL 5 SECOND) AS s,
  SESSION_END(ts, INTERVAL 5 SECOND) AS e, COUNT(*) AS n, SUM(v) AS sv FROM t GROUP BY SESSION(ts, INTERVAL 5 SECOND), k;)";
  auto hop = [](const std::vector<Row>& rows) {
    std::map<std::string, CountSum> g;
    for (const Row& r : rows) {
      if (!r.ts) continue;
      for (int64_t w = -40; w <= 60; ++w) {
        const int64_t start = w * 3 * kSec + kSec;
        if (start <= *r.ts && *r.ts < start + 10 * kSec) g[Cat(r.k, start, start + 10 * kSec)].Add(r);
      }
    }
    std::vector<std::string> out;
    for (const auto& [key, cs] : g) out.push_back(key + "|" + Cat(cs.n, cs.sum));
    return out;
  };
  auto sess = [](const std::vector<Row>& rows) {
    // Per k (NULL its own key), sorted by ts: a row more than 5 s after the previous one (or
    // exactly 5 s) starts a new session.
    std::map<Int, std::vector<Row>> by_k;
    for (const Row& r : rows)
      if (r.ts) by_k[r.k].push_back(r);
    std::vector<std::string> out;
    for (auto& [k, rs] : by_k) {
      std::sort(rs.begin(), rs.end(), [](const Row& a, const Row& b) { return *a.ts < *b.ts; });
      for (size_t i = 0; i < rs.size();) {
        size_t j = i + 1;
        CountSum cs;
        cs.Add(rs[i]);
        while (j < rs.size() && *rs[j].ts - *rs[j - 1].ts < 5 * kSec) cs.Add(rs[j++]);
        out.push_back(Cat(k, *rs[i].ts, *rs[j - 1].ts + 5 * kSec) + "|" + Cat(cs.n, cs.sum));
        i = j;
      }
    }
    return out;
  };
  CheckRandom(
      program, {{"hop", hop}, {"sess", sess}},
      [](std::mt19937_64& rng) {
        return (static_cast<int64_t>(rng() % 120) - 20) * kSec + static_cast<int64_t>(rng() % 3) * 250000;
      },
      11);

  const std::string months = R"(CREATE TABLE t(k INT, ts TIMESTAMP, v INT);
CREATE MATERIALIZED VIEW tm AS SELECT TUMBLE_START(ts, INTERVAL '2' MONTH) AS s, TUMBLE_END(ts, INTERVAL '2' MONTH) AS e,
  COUNT(*) AS n, SUM(v) AS sv FROM t GROUP BY TUMBLE(ts, INTERVAL '2' MONTH);
CREATE MATERIALIZED VIEW tq AS SELECT k, window_start, window_end FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts),
  INTERVAL '1' YEAR, INTERVAL '3' MONTH)) WHERE ts IS NOT NULL;
CREATE MATERIALIZED VIEW hm AS SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts),
  INTERVAL '1' MONTH, INTERVAL '3' MONTH)) GROUP BY window_start, window_end;
CREATE MATERIALIZED VIEW hg AS SELECT k, HOP_START(ts, INTERVAL '2' MONTH, INTERVAL '5' MONTH) AS s, COUNT(*) AS n
  FROM t GROUP BY HOP(ts, INTERVAL '2' MONTH, INTERVAL '5' MONTH), k;)";
  auto tm = [](const std::vector<Row>& rows) {
    std::map<std::string, CountSum> g;
    for (const Row& r : rows) {
      const Int m = r.ts ? Int(Floor(MonthOf(*r.ts), 2) * 2) : Int();
      g[m ? Cat(MonthStart(*m), MonthStart(*m + 2)) : Cat(Int(), Int())].Add(r);
    }
    std::vector<std::string> out;
    for (const auto& [key, cs] : g) out.push_back(key + "|" + Cat(cs.n, cs.sum));
    return out;
  };
  auto tq = [](const std::vector<Row>& rows) {
    std::vector<std::string> out;
    for (const Row& r : rows) {
      if (!r.ts) continue;
      const int64_t m = Floor(MonthOf(*r.ts) - 3, 12) * 12 + 3;
      out.push_back(Cat(r.k, MonthStart(m), MonthStart(m + 12)));
    }
    return out;
  };
  auto hop_months = [](const std::vector<Row>& rows, int64_t slide, int64_t size, bool keyed) {
    std::map<std::string, int64_t> g;
    for (const Row& r : rows) {
      if (!r.ts) continue;
      const int64_t m = MonthOf(*r.ts);
      for (int64_t s = -400; s <= 400; s += slide)
        if (s <= m && m < s + size) g[keyed ? Cat(r.k, MonthStart(s)) : Cat(MonthStart(s), MonthStart(s + size))]++;
    }
    std::vector<std::string> out;
    for (const auto& [key, n] : g) out.push_back(key + "|" + Cat(n));
    return out;
  };
  CheckRandom(
      months,
      {{"tm", tm},
       {"tq", tq},
       {"hm", [&](const std::vector<Row>& rows) { return hop_months(rows, 1, 3, false); }},
       {"hg", [&](const std::vector<Row>& rows) { return hop_months(rows, 2, 5, true); }}},
      // 1966 .. 1974, on month boundaries now and then
      [](std::mt19937_64& rng) {
        int64_t t = (static_cast<int64_t>(rng() % 3000) - 1500) * kDay;
        if (rng() % 4 == 0) t = MonthStart(MonthOf(t));
        if (rng() % 4 == 0) t -= 1;
        return t + static_cast<int64_t>(rng() % 3) * 3600 * kSec;
      },
      12);
}

// Sessions of 5 s among rows with a timestamp, per k when `by_k` (NULL its own key), else over all
// rows (k shown NULL): per session its start, end, COUNT(*) and SUM(v).
std::vector<std::string> Sessions(const std::vector<Row>& rows, bool by_k) {
  std::map<Int, std::vector<Row>> groups;
  for (const Row& r : rows)
    if (r.ts) groups[by_k ? r.k : Int()].push_back(r);
  std::vector<std::string> out;
  for (auto& [k, rs] : groups) {
    std::sort(rs.begin(), rs.end(), [](const Row& a, const Row& b) { return *a.ts < *b.ts; });
    for (size_t i = 0; i < rs.size();) {
      size_t j = i + 1;
      CountSum cs;
      cs.Add(rs[i]);
      while (j < rs.size() && *rs[j].ts - *rs[j - 1].ts < 5 * kSec) cs.Add(rs[j++]);
      out.push_back(Cat(k, *rs[i].ts, *rs[j - 1].ts + 5 * kSec) + "|" + Cat(cs.n, cs.sum));
      i = j;
    }
  }
  return out;
}

TEST_CASE("GROUPING SETS with GROUP BY SESSION and HOP: incremental, as recomputed", "[group_window]") {
  const std::string program = R"(CREATE TABLE t(k INT, ts TIMESTAMP, v INT);
CREATE MATERIALIZED VIEW sr AS SELECT k, SESSION_START(ts, INTERVAL 5 SECOND) AS s,
  SESSION_END(ts, INTERVAL 5 SECOND) AS e, COUNT(*) AS n, SUM(v) AS sv FROM t GROUP BY SESSION(ts, INTERVAL 5 SECOND), ROLLUP(k);
CREATE MATERIALIZED VIEW sk AS SELECT k, COUNT(*) AS n, SUM(v) AS sv FROM t
  GROUP BY GROUPING SETS ((k), (k, SESSION(ts, INTERVAL 5 SECOND)));
CREATE MATERIALIZED VIEW hc AS SELECT k, HOP_START(ts, INTERVAL 3 SECOND, INTERVAL 10 SECOND) AS s, COUNT(*) AS n,
  SUM(v) AS sv FROM t GROUP BY HOP(ts, INTERVAL 3 SECOND, INTERVAL 10 SECOND), CUBE(k);)";
  auto sr = [](const std::vector<Row>& rows) {
    std::vector<std::string> out = Sessions(rows, true), all = Sessions(rows, false);
    out.insert(out.end(), all.begin(), all.end());
    return out;
  };
  auto sk = [](const std::vector<Row>& rows) {
    // (k): the rows with a timestamp (each in one session) per k; (k, SESSION): per k's session.
    std::map<Int, CountSum> by_k;
    for (const Row& r : rows)
      if (r.ts) by_k[r.k].Add(r);
    std::vector<std::string> out;
    for (const auto& [k, cs] : by_k) out.push_back(Cat(k) + "|" + Cat(cs.n, cs.sum));
    for (const std::string& x : Sessions(rows, true)) {
      // k|start|end|n|sum -> k|n|sum
      const size_t a = x.find('|'), b = x.find('|', a + 1), c = x.find('|', b + 1);
      out.push_back(x.substr(0, a) + x.substr(c));
    }
    return out;
  };
  auto hc = [](const std::vector<Row>& rows) {
    std::map<std::string, CountSum> g;
    for (const Row& r : rows) {
      if (!r.ts) continue;
      for (int64_t w = -40; w <= 60; ++w) {
        const int64_t start = w * 3 * kSec;
        if (start <= *r.ts && *r.ts < start + 10 * kSec) {
          g[Cat(r.k, start)].Add(r);
          g[Cat(Int(), start) + "|all"].Add(r);
        }
      }
    }
    std::vector<std::string> out;
    for (const auto& [key, cs] : g) out.push_back(key.substr(0, key.find("|all")) + "|" + Cat(cs.n, cs.sum));
    return out;
  };
  CheckRandom(
      program, {{"sr", sr}, {"sk", sk}, {"hc", hc}},
      [](std::mt19937_64& rng) {
        return (static_cast<int64_t>(rng() % 120) - 20) * kSec + static_cast<int64_t>(rng() % 3) * 250000;
      },
      13);
}

TEST_CASE("window functions over an aggregate: incremental, as recomputed", "[group_window]") {
  const std::string program = R"(CREATE TABLE t(k INT, ts TIMESTAMP, v INT);
CREATE MATERIALIZED VIEW w AS SELECT k, SUM(v) AS s, COUNT(*) AS n, RANK() OVER (ORDER BY SUM(v) DESC NULLS LAST) AS r,
  SUM(SUM(v)) OVER (ORDER BY k NULLS FIRST) AS run, COUNT(*) FILTER (WHERE k > 0) OVER () AS pos
  FROM t GROUP BY k HAVING COUNT(*) > 1;
CREATE MATERIALIZED VIEW m AS SELECT k, ts, v, VAR_POP(v) OVER (PARTITION BY k) AS var,
  STDDEV_SAMP(v) FILTER (WHERE v > 0) OVER (PARTITION BY k) AS sd FROM t;)";
  // VAR_POP / STDDEV_SAMP over INT: Feldera's integer formula, (sumsq - sum * sum / n) / (n or
  // n - 1) with truncating divisions, the square root truncated.
  auto moments = [](const std::vector<Row>& rows) {
    struct Parts {
      int64_t n = 0, sum = 0, sumsq = 0, pn = 0, psum = 0, psumsq = 0;
    };
    std::map<Int, Parts> by_k;
    for (const Row& r : rows) {
      Parts& p = by_k[r.k];
      if (!r.v) continue;
      ++p.n, p.sum += *r.v, p.sumsq += *r.v * *r.v;
      if (*r.v > 0) ++p.pn, p.psum += *r.v, p.psumsq += *r.v * *r.v;
    }
    std::vector<std::string> out;
    for (const Row& r : rows) {
      const Parts& p = by_k[r.k];
      const Int var = p.n ? Int((p.sumsq - p.sum * p.sum / p.n) / p.n) : Int();
      const Int sd = p.pn > 1 ? Int(static_cast<int64_t>(
                                    std::sqrt(static_cast<double>((p.psumsq - p.psum * p.psum / p.pn) / (p.pn - 1)))))
                              : Int();
      out.push_back(Cat(r.k, r.ts, r.v, var, sd));
    }
    return out;
  };
  auto naive = [](const std::vector<Row>& rows) {
    std::map<Int, CountSum> g;  // NULL first, as ORDER BY k NULLS FIRST
    for (const Row& r : rows) g[r.k].Add(r);
    std::vector<std::pair<Int, CountSum>> kept;
    for (const auto& [k, cs] : g)
      if (cs.n > 1) kept.push_back({k, cs});
    int64_t pos = 0;
    for (const auto& [k, cs] : kept) pos += k && *k > 0 ? 1 : 0;
    std::vector<std::string> out;
    Int run;
    for (size_t i = 0; i < kept.size(); ++i) {
      const auto& [k, cs] = kept[i];
      if (cs.sum) run = run.value_or(0) + *cs.sum;
      // RANK over SUM(v) DESC NULLS LAST: 1 + the groups ranked strictly before.
      int64_t rank = 1;
      for (const auto& [k2, cs2] : kept) {
        const bool before = cs.sum ? (cs2.sum && *cs2.sum > *cs.sum) : bool(cs2.sum);
        rank += before ? 1 : 0;
      }
      out.push_back(Cat(k, cs.sum, cs.n, rank, run, pos));
    }
    return out;
  };
  CheckRandom(
      program, {{"w", naive}, {"m", moments}},
      [](std::mt19937_64& rng) { return static_cast<int64_t>(rng() % 100) * kSec; }, 13, 25, 8);
}

}  // namespace
}  // namespace fld::plan
