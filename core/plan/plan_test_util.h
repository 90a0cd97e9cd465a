// Shared harness of the planner's property tests over two tables t(a, b) and u(x, y) of nullable
// INTs (subquery_test.cc, lateral_test.cc): each case is a view and a naive from-scratch
// evaluation of it; RunRandomSteps compiles the views into a circuit, feeds it random inserts
// and deletes, and after every step requires each view's contents to equal the naive answer over
// the current tables, also in a circuit restored from the state saved at a random step.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/plan/planner.h"
#include "core/sql/parser.h"

namespace fld::plan::testing {

using Int = std::optional<int64_t>;  // nullopt = NULL
struct Row2 {
  Int p, q;
  bool operator<(const Row2& o) const { return std::tie(p, q) < std::tie(o.p, o.q); }
  bool operator==(const Row2& o) const { return p == o.p && q == o.q; }
};
using Table = std::vector<Row2>;  // a bag: one entry per copy
using Rows = std::vector<std::string>;

inline std::string Show(const Int& v) {
  return v ? std::to_string(*v) : "NULL";
}
inline std::string Cat(std::initializer_list<std::string> parts) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : "|") + p;
  return s;
}

// A view over t(a, b) and u(x, y) and its naive evaluation (rows formatted as Contents does).
struct Case {
  std::string sql;
  std::function<Rows(const Table& t, const Table& u)> naive;
};

inline std::string Program(const std::vector<Case>& cs) {
  std::string p = "CREATE TABLE t (a INT, b INT); CREATE TABLE u (x INT, y INT);\n";
  for (size_t i = 0; i < cs.size(); ++i)
    p += "CREATE MATERIALIZED VIEW v" + std::to_string(i) + " AS " + cs[i].sql + ";\n";
  return p;
}

// A view's contents, one entry per copy of a row, sorted.
inline Rows Contents(const Circuit& c, const std::string& view) {
  int r = c.FindRelation(view);
  REQUIRE(r >= 0);
  const Schema& schema = c.relations()[r].schema;
  Batch b = c.Contents(r);
  Rows out;
  for (size_t i = 0; i < b.size(); ++i) {
    REQUIRE(b.weights[i] > 0);
    std::string row;
    for (size_t k = 0; k < b.width(); ++k) row += (k ? "|" : "") + FormatValue(b.Get(k, i), schema.fields[k].type);
    for (int64_t w = 0; w < b.weights[i]; ++w) out.push_back(row);
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline Batch ToBatch(const Table& rows, int64_t weight) {
  BatchBuilder b(std::vector<PhysType>{PhysType::kI64, PhysType::kI64});
  for (const auto& r : rows) {
    std::vector<Value> v{r.p ? Value::Int(*r.p) : Value::Null(), r.q ? Value::Int(*r.q) : Value::Null()};
    b.AppendRow(v, weight);
  }
  return b.Finish();
}

// `iterations` runs of 8 steps; each step inserts and deletes up to 4 rows of each table with
// values NULL, -1 .. 3.
inline void RunRandomSteps(const std::vector<Case>& cs, uint64_t seed, int iterations) {
  const std::string program = Program(cs);
  auto stmts = sql::ParseProgram(program);
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  auto value = [&]() -> Int {
    int k = pick(6);
    return k == 0 ? Int() : Int(k - 2);  // NULL, -1, 0, 1, 2, 3
  };
  for (int iteration = 0; iteration < iterations; ++iteration) {
    auto circuit = CompileProgram(stmts, program, {}, nullptr);
    std::unique_ptr<Circuit> restored;
    const int restore_at = pick(8);
    Table tables[2];
    for (int step = 0; step < 8; ++step) {
      for (int ti = 0; ti < 2; ++ti) {
        Table ins, del;
        int n = pick(5);
        for (int i = 0; i < n; ++i) {
          if (!tables[ti].empty() && pick(3) == 0) {
            size_t j = static_cast<size_t>(pick(static_cast<int>(tables[ti].size())));
            del.push_back(tables[ti][j]);
            tables[ti].erase(tables[ti].begin() + static_cast<long>(j));
          } else {
            ins.push_back({value(), value()});
            tables[ti].push_back(ins.back());
          }
        }
        int rel = circuit->FindRelation(ti == 0 ? "t" : "u");
        for (Circuit* c : {circuit.get(), restored.get()}) {
          if (!c) continue;
          c->Push(rel, ToBatch(ins, 1));
          c->Push(rel, ToBatch(del, -1));
        }
      }
      circuit->Step();
      if (restored) restored->Step();
      for (size_t i = 0; i < cs.size(); ++i) {
        INFO("iteration " << iteration << " step " << step << ": " << cs[i].sql);
        Rows want = cs[i].naive(tables[0], tables[1]);
        std::sort(want.begin(), want.end());
        REQUIRE(Contents(*circuit, "v" + std::to_string(i)) == want);
        if (restored) REQUIRE(Contents(*restored, "v" + std::to_string(i)) == want);
      }
      if (step == restore_at) {
        // A fresh circuit from the saved state (and the materialized contents) continues alike.
        std::string state;
        circuit->SaveState(&state);
        restored = CompileProgram(stmts, program, {}, nullptr);
        restored->RestoreState(state);
        for (size_t r = 0; r < circuit->relations().size(); ++r)
          if (circuit->relations()[r].materialized) restored->LoadContents(static_cast<int>(r), circuit->Contents(r));
      }
    }
  }
}

}  // namespace fld::plan::testing
