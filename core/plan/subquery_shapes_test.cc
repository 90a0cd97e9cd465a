// Property tests for subqueries in aggregate arguments, GROUP BY keys and join ON conditions,
// rows of several columns IN (SELECT ...), window functions and ROLLUP in LATERAL subqueries and
// RIGHT / FULL JOINs reading an enclosing query (core/plan): views are compiled into circuits and
// fed random sequences of inserts and deletes; after every step each view's contents must equal
// a from-scratch evaluation of its query over the current tables by a naive nested-loop
// evaluator written here (sharing no code with the planner), with SQL's NULL semantics and
// PostgreSQL's row comparison spelled out by hand. Saving the circuit's state at a random step
// and restoring it into a fresh circuit must continue with the same contents. Fixed seeds.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/plan/plan_test_util.h"

namespace fld::plan {
namespace {

using namespace testing;
using Bool = std::optional<bool>;  // nullopt = NULL

Bool Eq(const Int& a, const Int& b) {
  if (!a || !b) return std::nullopt;
  return *a == *b;
}
Bool Lt(const Int& a, const Int& b) {
  if (!a || !b) return std::nullopt;
  return *a < *b;
}
bool IsTrue(Bool b) {
  return b && *b;
}
Bool And(Bool a, Bool b) {
  if ((a && !*a) || (b && !*b)) return false;
  if (!a || !b) return std::nullopt;
  return true;
}
Bool Or(Bool a, Bool b) {
  if ((a && *a) || (b && *b)) return true;
  if (!a || !b) return std::nullopt;
  return false;
}
Bool Not(Bool a) {
  return a ? Bool(!*a) : std::nullopt;
}
std::string ShowBool(Bool b) {
  return b ? (*b ? "true" : "false") : "NULL";
}
int64_t CountEq(const Table& u, const Int& a) {
  int64_t n = 0;
  for (const auto& s : u) n += IsTrue(Eq(s.p, a));
  return n;
}
// (p, q) IN rows: TRUE when some row equals it, else NULL when some row is unknown, else FALSE
// (a row compares equal when both pairs are, unequal when either pair is).
Bool RowIn(const Row2& x, const Table& rows) {
  Bool any = false;
  for (const auto& s : rows) any = Or(any, And(Eq(x.p, s.p), Eq(x.q, s.q)));
  return any;
}

std::vector<Case> Cases() {
  std::vector<Case> cs;
  // A correlated subquery in an aggregate's argument.
  cs.push_back(
      {"SELECT a, SUM((SELECT COUNT(*) FROM u WHERE u.x = t.a)) FROM t GROUP BY a", [](const Table& t, const Table& u) {
         std::map<Int, int64_t> sums;
         for (const auto& r : t) sums[r.p] += CountEq(u, r.p);
         Rows out;
         for (const auto& [a, n] : sums) out.push_back(Cat({Show(a), std::to_string(n)}));
         return out;
       }});
  // A FILTER condition with IN (SELECT ...): one row even over no rows.
  cs.push_back(
      {"SELECT COUNT(*) FILTER (WHERE a IN (SELECT x FROM u WHERE y > 0)) FROM t", [](const Table& t, const Table& u) {
         int64_t n = 0;
         for (const auto& r : t) {
           Bool in = false;
           for (const auto& s : u)
             if (IsTrue(Lt(Int(0), s.q))) in = Or(in, Eq(r.p, s.p));
           n += IsTrue(in);
         }
         return Rows{std::to_string(n)};
       }});
  // A GROUP BY key that is a correlated subquery (by position).
  cs.push_back({"SELECT (SELECT COUNT(*) FROM u WHERE u.x = t.a) AS n, COUNT(*), SUM(b) FROM t GROUP BY 1",
                [](const Table& t, const Table& u) {
                  std::map<int64_t, std::pair<int64_t, Int>> groups;
                  for (const auto& r : t) {
                    auto& g = groups[CountEq(u, r.p)];
                    ++g.first;
                    if (r.q) g.second = g.second ? Int(*g.second + *r.q) : r.q;
                  }
                  Rows out;
                  for (const auto& [n, g] : groups)
                    out.push_back(Cat({std::to_string(n), std::to_string(g.first), Show(g.second)}));
                  return out;
                }});
  // An inner join's ON condition with IN (SELECT ...) reading the other table.
  cs.push_back({"SELECT a, b, y FROM t JOIN u ON u.x = t.a AND u.y IN (SELECT b FROM t AS t2 WHERE t2.a <> t.a)",
                [](const Table& t, const Table& u) {
                  Rows out;
                  for (const auto& r : t)
                    for (const auto& s : u) {
                      Bool in = false;
                      for (const auto& r2 : t)
                        if (IsTrue(Not(Eq(r2.p, r.p)))) in = Or(in, Eq(s.q, r2.q));
                      if (IsTrue(And(Eq(s.p, r.p), in))) out.push_back(Cat({Show(r.p), Show(r.q), Show(s.q)}));
                    }
                  return out;
                }});
  // LEFT and FULL JOINs whose ON condition has a correlated EXISTS / scalar subquery.
  cs.push_back(
      {"SELECT a, b, x, y FROM t LEFT JOIN u ON u.x = t.a AND EXISTS (SELECT 1 FROM u AS u2 WHERE u2.y = t.b "
       "AND u2.x <> u.y)",
       [](const Table& t, const Table& u) {
         Rows out;
         for (const auto& r : t) {
           bool matched = false;
           for (const auto& s : u) {
             bool ex = false;
             for (const auto& s2 : u) ex = ex || IsTrue(And(Eq(s2.q, r.q), Not(Eq(s2.p, s.q))));
             if (IsTrue(Eq(s.p, r.p)) && ex) {
               matched = true;
               out.push_back(Cat({Show(r.p), Show(r.q), Show(s.p), Show(s.q)}));
             }
           }
           if (!matched) out.push_back(Cat({Show(r.p), Show(r.q), "NULL", "NULL"}));
         }
         return out;
       }});
  cs.push_back(
      {"SELECT a, b, x, y FROM t FULL JOIN u ON u.x = t.a AND u.y < (SELECT COUNT(*) FROM t AS t2 WHERE "
       "t2.b = t.b)",
       [](const Table& t, const Table& u) {
         Rows out;
         std::vector<bool> u_matched(u.size(), false);
         for (const auto& r : t) {
           int64_t n = 0;
           for (const auto& r2 : t) n += IsTrue(Eq(r2.q, r.q));
           bool matched = false;
           for (size_t i = 0; i < u.size(); ++i) {
             const auto& s = u[i];
             if (IsTrue(And(Eq(s.p, r.p), Lt(s.q, Int(n))))) {
               matched = u_matched[i] = true;
               out.push_back(Cat({Show(r.p), Show(r.q), Show(s.p), Show(s.q)}));
             }
           }
           if (!matched) out.push_back(Cat({Show(r.p), Show(r.q), "NULL", "NULL"}));
         }
         for (size_t i = 0; i < u.size(); ++i)
           if (!u_matched[i]) out.push_back(Cat({"NULL", "NULL", Show(u[i].p), Show(u[i].q)}));
         return out;
       }});
  // Rows of two columns IN / NOT IN, uncorrelated and correlated.
  cs.push_back({"SELECT a, b, (a, b) IN (SELECT x, y FROM u) FROM t", [](const Table& t, const Table& u) {
                  Rows out;
                  for (const auto& r : t) out.push_back(Cat({Show(r.p), Show(r.q), ShowBool(RowIn(r, u))}));
                  return out;
                }});
  cs.push_back({"SELECT a, b, (b, a) NOT IN (SELECT x, y FROM u WHERE u.x <> t.a OR u.y IS NULL) FROM t",
                [](const Table& t, const Table& u) {
                  Rows out;
                  for (const auto& r : t) {
                    Table rows;
                    for (const auto& s : u)
                      if (IsTrue(Or(Not(Eq(s.p, r.p)), Bool(!s.q)))) rows.push_back(s);
                    out.push_back(Cat({Show(r.p), Show(r.q), ShowBool(Not(RowIn({r.q, r.p}, rows)))}));
                  }
                  return out;
                }});
  // A quantified comparison over a correlated subquery that groups.
  cs.push_back({"SELECT a, b, b > ALL (SELECT MAX(y) FROM u WHERE u.x = t.a GROUP BY y % 2) FROM t",
                [](const Table& t, const Table& u) {
                  Rows out;
                  for (const auto& r : t) {
                    std::map<Int, Int> groups;  // y % 2 -> MAX(y)
                    for (const auto& s : u) {
                      if (!IsTrue(Eq(s.p, r.p))) continue;
                      Int g = s.q ? Int(*s.q % 2) : Int();
                      Int& m = groups[g];
                      if (s.q && (!m || *s.q > *m)) m = s.q;
                    }
                    Bool all = true;
                    for (const auto& [g, m] : groups) all = And(all, Lt(m, r.q));
                    out.push_back(Cat({Show(r.p), Show(r.q), ShowBool(all)}));
                  }
                  return out;
                }});
  // A window function in a LATERAL subquery: ranked among each outer row's own rows (NULL sorts
  // first, Feldera's order).
  cs.push_back(
      {"SELECT t.a, s.y, s.r FROM t, LATERAL (SELECT y, RANK() OVER (ORDER BY y) AS r FROM u WHERE u.x = t.a) s",
       [](const Table& t, const Table& u) {
         Rows out;
         auto before = [](const Int& p, const Int& q) { return (!p && q) || (p && q && *p < *q); };
         for (const auto& r : t)
           for (const auto& s : u) {
             if (!IsTrue(Eq(s.p, r.p))) continue;
             int64_t rank = 1;
             for (const auto& s2 : u) rank += IsTrue(Eq(s2.p, r.p)) && before(s2.q, s.q);
             out.push_back(Cat({Show(r.p), Show(s.q), std::to_string(rank)}));
           }
         return out;
       }});
  // ROLLUP in a LATERAL subquery: the total row is there for every outer row, matched or not.
  cs.push_back(
      {"SELECT t.a, s.g, s.n FROM t, LATERAL (SELECT y AS g, COUNT(*) AS n FROM u WHERE u.x = t.a GROUP BY ROLLUP(y)) "
       "s",
       [](const Table& t, const Table& u) {
         Rows out;
         for (const auto& r : t) {
           std::map<Int, int64_t> groups;
           int64_t total = 0;
           for (const auto& s : u)
             if (IsTrue(Eq(s.p, r.p))) ++groups[s.q], ++total;
           for (const auto& [g, n] : groups) out.push_back(Cat({Show(r.p), Show(g), std::to_string(n)}));
           out.push_back(Cat({Show(r.p), "NULL", std::to_string(total)}));
         }
         return out;
       }});
  // RIGHT and FULL JOINs whose ON condition reads the enclosing query's columns.
  cs.push_back({"SELECT a, (SELECT COUNT(*) FROM u AS u1 RIGHT JOIN u AS u2 ON u2.x = u1.y AND u1.x = t.a) FROM t",
                [](const Table& t, const Table& u) {
                  Rows out;
                  for (const auto& r : t) {
                    int64_t n = 0;
                    for (const auto& u2 : u) {
                      int64_t m = 0;
                      for (const auto& u1 : u) m += IsTrue(And(Eq(u2.p, u1.q), Eq(u1.p, r.p)));
                      n += std::max<int64_t>(m, 1);
                    }
                    out.push_back(Cat({Show(r.p), std::to_string(n)}));
                  }
                  return out;
                }});
  cs.push_back(
      {"SELECT a, b, (SELECT COUNT(u1.x) * 100 + COUNT(u2.y) FROM u AS u1 FULL JOIN u AS u2 ON u2.x = u1.y "
       "AND u2.y < t.b) FROM t",
       [](const Table& t, const Table& u) {
         Rows out;
         for (const auto& r : t) {
           int64_t c1 = 0, c2 = 0;
           std::vector<bool> m1(u.size(), false), m2(u.size(), false);
           for (size_t i = 0; i < u.size(); ++i)
             for (size_t j = 0; j < u.size(); ++j)
               if (IsTrue(And(Eq(u[j].p, u[i].q), Lt(u[j].q, r.q)))) {
                 m1[i] = m2[j] = true;
                 c1 += u[i].p.has_value();
                 c2 += u[j].q.has_value();
               }
           for (size_t i = 0; i < u.size(); ++i) {
             if (!m1[i]) c1 += u[i].p.has_value();
             if (!m2[i]) c2 += u[i].q.has_value();
           }
           out.push_back(Cat({Show(r.p), Show(r.q), std::to_string(c1 * 100 + c2)}));
         }
         return out;
       }});
  // LEFT JOIN LATERAL ... USING: the merged column, then the others.
  cs.push_back({"SELECT * FROM t LEFT JOIN LATERAL (SELECT x AS a, y FROM u WHERE u.y > t.b) s USING (a)",
                [](const Table& t, const Table& u) {
                  Rows out;
                  for (const auto& r : t) {
                    bool matched = false;
                    for (const auto& s : u)
                      if (IsTrue(And(Lt(r.q, s.q), Eq(s.p, r.p)))) {
                        matched = true;
                        out.push_back(Cat({Show(r.p), Show(r.q), Show(s.q)}));
                      }
                    if (!matched) out.push_back(Cat({Show(r.p), Show(r.q), "NULL"}));
                  }
                  return out;
                }});
  return cs;
}

TEST_CASE("subqueries in aggregates, GROUP BY and ON, row IN: I(view changes) equals a naive evaluation",
          "[planner][subquery]") {
  RunRandomSteps(Cases(), 20261205, 30);
}

TEST_CASE("cost: a one-row change under a subquery in ON, GROUP BY or a row IN emits only the rows it changes",
          "[planner][subquery]") {
  const std::string program =
      "CREATE TABLE t (a INT, b INT); CREATE TABLE u (x INT, y INT);"
      "CREATE VIEW v1 AS SELECT a, b, x, y FROM t LEFT JOIN u ON u.x = t.a AND EXISTS (SELECT 1 FROM u AS u2 WHERE "
      "u2.x = t.a AND u2.y > u.y);"
      "CREATE VIEW v2 AS SELECT a, (a, b) NOT IN (SELECT x, y FROM u) FROM t;"
      "CREATE VIEW v3 AS SELECT a, SUM((SELECT COUNT(*) FROM u WHERE u.x = t.a)) FROM t GROUP BY a;";
  auto circuit = CompileProgram(sql::ParseProgram(program), program, {}, nullptr);
  Table t, u;
  for (int64_t i = 0; i < 5000; ++i) t.push_back({i, i % 7});
  for (int64_t i = 0; i < 3000; ++i) u.push_back({i % 1000 + 2000, i % 5});
  const int rt = circuit->FindRelation("t"), ru = circuit->FindRelation("u");
  circuit->Push(rt, ToBatch(t, 1));
  circuit->Push(ru, ToBatch(u, 1));
  circuit->Step();
  // One new row of u with x = 1500: only t's row with a = 1500 changes in each view.
  circuit->Push(ru, ToBatch({{1500, 1500 % 7}}, 1));
  circuit->Step();
  for (const char* v : {"v1", "v2", "v3"}) {
    INFO(v);
    const Batch& d = circuit->Delta(circuit->FindRelation(v));
    REQUIRE(Consolidate(d).size() <= 2);
    REQUIRE(d.size() <= 4);
  }
}

}  // namespace
}  // namespace fld::plan
