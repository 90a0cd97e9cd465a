// Property tests for LATERAL subqueries and LIMIT / OFFSET in subqueries (core/plan): views are
// compiled into circuits and fed random sequences of inserts and deletes; after every step each
// view's contents must equal a from-scratch evaluation of its query over the current tables by a
// naive nested-loop evaluator written here (sharing no code with the planner), with SQL's NULL
// semantics and the ORDER BY ... LIMIT cut spelled out by hand. Saving the circuit's state at a
// random step and restoring it into a fresh circuit must continue with the same contents. Fixed
// seeds.
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/plan/plan_test_util.h"
#include "core/plan/planner.h"
#include "core/sql/parser.h"

namespace fld::plan {
namespace {

using namespace testing;

bool EqTrue(const Int& a, const Int& b) {
  return a && b && *a == *b;
}
bool LtTrue(const Int& a, const Int& b) {
  return a && b && *a < *b;
}
// Sorts values ascending or descending with NULLs first or last, then keeps rows offset ..
// offset + limit - 1.
std::vector<Int> Cut(std::vector<Int> v, bool desc, bool nulls_first, size_t limit, size_t offset) {
  std::stable_sort(v.begin(), v.end(), [&](const Int& a, const Int& b) {
    if (!a || !b) return !a && b ? nulls_first : (a && !b ? !nulls_first : false);
    return desc ? *a > *b : *a < *b;
  });
  std::vector<Int> out;
  for (size_t i = offset; i < v.size() && i < offset + limit; ++i) out.push_back(v[i]);
  return out;
}

std::vector<Case> Cases() {
  std::vector<Case> cs;
  // Comma LATERAL over an equality and a non-equality.
  cs.push_back({"SELECT a, b, y FROM t, LATERAL (SELECT y FROM u WHERE u.x = t.a AND u.y > t.b) s",
                [](const Table& t, const Table& u) {
                  Rows out;
                  for (const auto& r : t)
                    for (const auto& s : u)
                      if (EqTrue(s.p, r.p) && LtTrue(r.q, s.q)) out.push_back(Cat({Show(r.p), Show(r.q), Show(s.q)}));
                  return out;
                }});
  // A global aggregate: exactly one row per outer row (COUNT 0 and MAX NULL where none match).
  cs.push_back({"SELECT a, n, m FROM t CROSS JOIN LATERAL (SELECT COUNT(*) AS n, MAX(y) AS m FROM u WHERE u.x < t.a) s",
                [](const Table& t, const Table& u) {
                  Rows out;
                  for (const auto& r : t) {
                    int64_t n = 0;
                    Int m;
                    for (const auto& s : u) {
                      if (!LtTrue(s.p, r.p)) continue;
                      ++n;
                      if (s.q && (!m || *s.q > *m)) m = s.q;
                    }
                    out.push_back(Cat({Show(r.p), std::to_string(n), Show(m)}));
                  }
                  return out;
                }});
  // LEFT JOIN LATERAL with a condition in ON: unmatched outer rows padded with NULL.
  cs.push_back({"SELECT a, b, y FROM t LEFT JOIN LATERAL (SELECT y FROM u WHERE u.x = t.a) s ON s.y > t.b",
                [](const Table& t, const Table& u) {
                  Rows out;
                  for (const auto& r : t) {
                    bool any = false;
                    for (const auto& s : u)
                      if (EqTrue(s.p, r.p) && LtTrue(r.q, s.q)) {
                        out.push_back(Cat({Show(r.p), Show(r.q), Show(s.q)}));
                        any = true;
                      }
                    if (!any) out.push_back(Cat({Show(r.p), Show(r.q), "NULL"}));
                  }
                  return out;
                }});
  // Top-K per outer row.
  cs.push_back({"SELECT a, y FROM t, LATERAL (SELECT y FROM u WHERE u.x = t.a ORDER BY y DESC NULLS LAST LIMIT 2) s",
                [](const Table& t, const Table& u) {
                  Rows out;
                  for (const auto& r : t) {
                    std::vector<Int> ys;
                    for (const auto& s : u)
                      if (EqTrue(s.p, r.p)) ys.push_back(s.q);
                    for (const Int& y : Cut(ys, true, false, 2, 0)) out.push_back(Cat({Show(r.p), Show(y)}));
                  }
                  return out;
                }});
  // LIMIT with OFFSET under LEFT JOIN ... ON TRUE, over a non-equality correlation.
  cs.push_back(
      {"SELECT a, b, y FROM t LEFT JOIN LATERAL (SELECT y FROM u WHERE u.x <= t.b ORDER BY y NULLS FIRST "
       "LIMIT 2 OFFSET 1) s ON TRUE",
       [](const Table& t, const Table& u) {
         Rows out;
         for (const auto& r : t) {
           std::vector<Int> ys;
           for (const auto& s : u)
             if (s.p && r.q && *s.p <= *r.q) ys.push_back(s.q);
           auto cut = Cut(ys, false, true, 2, 1);
           if (cut.empty()) out.push_back(Cat({Show(r.p), Show(r.q), "NULL"}));
           for (const Int& y : cut) out.push_back(Cat({Show(r.p), Show(r.q), Show(y)}));
         }
         return out;
       }});
  // A scalar subquery with ORDER BY ... LIMIT 1 (NULL where no row).
  cs.push_back({"SELECT a, (SELECT y FROM u WHERE u.x = t.a ORDER BY y NULLS LAST LIMIT 1) FROM t",
                [](const Table& t, const Table& u) {
                  Rows out;
                  for (const auto& r : t) {
                    std::vector<Int> ys;
                    for (const auto& s : u)
                      if (EqTrue(s.p, r.p)) ys.push_back(s.q);
                    auto cut = Cut(ys, false, false, 1, 0);
                    out.push_back(Cat({Show(r.p), cut.empty() ? "NULL" : Show(cut[0])}));
                  }
                  return out;
                }});
  // An uncorrelated FROM subquery with LIMIT, joined.
  cs.push_back({"SELECT a, y FROM t, (SELECT y FROM u ORDER BY y DESC NULLS FIRST LIMIT 3) s WHERE s.y = t.b",
                [](const Table& t, const Table& u) {
                  Rows out;
                  std::vector<Int> ys;
                  for (const auto& s : u) ys.push_back(s.q);
                  for (const Int& y : Cut(ys, true, true, 3, 0))
                    for (const auto& r : t)
                      if (EqTrue(y, r.q)) out.push_back(Cat({Show(r.p), Show(y)}));
                  return out;
                }});
  // Chained: the second LATERAL reads the first's column.
  cs.push_back(
      {"SELECT a, s1.y, s2.c FROM t, LATERAL (SELECT y FROM u WHERE u.x = t.a) s1, LATERAL (SELECT "
       "COUNT(*) AS c FROM t AS t2 WHERE t2.b < s1.y) s2",
       [](const Table& t, const Table& u) {
         Rows out;
         for (const auto& r : t)
           for (const auto& s : u) {
             if (!EqTrue(s.p, r.p)) continue;
             int64_t c = 0;
             for (const auto& r2 : t) c += LtTrue(r2.q, s.q);
             out.push_back(Cat({Show(r.p), Show(s.q), std::to_string(c)}));
           }
         return out;
       }});
  // A correlated UNION (each side planned over the domain).
  cs.push_back({"SELECT a, b FROM t WHERE b IN (SELECT y FROM u WHERE u.x = t.a UNION SELECT x FROM u WHERE u.y = t.a)",
                [](const Table& t, const Table& u) {
                  Rows out;
                  for (const auto& r : t) {
                    bool in = false;
                    for (const auto& s : u)
                      in = in || (EqTrue(s.p, r.p) && EqTrue(r.q, s.q)) || (EqTrue(s.q, r.p) && EqTrue(r.q, s.p));
                    if (in) out.push_back(Cat({Show(r.p), Show(r.q)}));
                  }
                  return out;
                }});
  // A LEFT JOIN whose ON condition reads the enclosing query's column.
  cs.push_back(
      {"SELECT a, (SELECT COUNT(u2.y) FROM u LEFT JOIN u AS u2 ON u2.x = u.y AND u2.y > t.b WHERE u.x = t.a) "
       "FROM t",
       [](const Table& t, const Table& u) {
         Rows out;
         for (const auto& r : t) {
           int64_t n = 0;
           for (const auto& s : u)
             if (EqTrue(s.p, r.p))
               for (const auto& s2 : u) n += EqTrue(s2.p, s.q) && LtTrue(r.q, s2.q);
           out.push_back(Cat({Show(r.p), std::to_string(n)}));
         }
         return out;
       }});
  // A FROM subquery (with LIMIT) that reads the enclosing query's column.
  cs.push_back(
      {"SELECT a, (SELECT MAX(s.y) FROM (SELECT y FROM u WHERE u.x = t.a ORDER BY y NULLS LAST LIMIT 2) s) "
       "FROM t",
       [](const Table& t, const Table& u) {
         Rows out;
         for (const auto& r : t) {
           std::vector<Int> ys;
           for (const auto& s : u)
             if (EqTrue(s.p, r.p)) ys.push_back(s.q);
           Int m;
           for (const Int& y : Cut(ys, false, false, 2, 0))
             if (y && (!m || *y > *m)) m = y;
           out.push_back(Cat({Show(r.p), Show(m)}));
         }
         return out;
       }});
  return cs;
}

TEST_CASE("LATERAL and LIMIT in subqueries: I(view changes) equals a naive evaluation", "[planner][lateral]") {
  RunRandomSteps(Cases(), 20261204, 30);
}

TEST_CASE("cost: a one-row change under a LATERAL subquery emits only the rows it changes", "[planner][lateral]") {
  const std::string program =
      "CREATE TABLE t (a INT, b INT); CREATE TABLE u (x INT, y INT);"
      "CREATE VIEW v1 AS SELECT a, y FROM t, LATERAL (SELECT y FROM u WHERE u.x = t.a ORDER BY y DESC LIMIT 2) s;"
      "CREATE VIEW v2 AS SELECT a, n FROM t, LATERAL (SELECT COUNT(*) AS n FROM u WHERE u.x = t.a) s;"
      "CREATE VIEW v3 AS SELECT a, y FROM t LEFT JOIN LATERAL (SELECT y FROM u WHERE u.x = t.a) s ON TRUE;";
  auto circuit = CompileProgram(sql::ParseProgram(program), program, {}, nullptr);
  Table t, u;
  for (int64_t i = 0; i < 5000; ++i) t.push_back({i, i % 7});
  for (int64_t i = 0; i < 3000; ++i) u.push_back({i % 1000, i});
  const int rt = circuit->FindRelation("t"), ru = circuit->FindRelation("u");
  circuit->Push(rt, ToBatch(t, 1));
  circuit->Push(ru, ToBatch(u, 1));
  circuit->Step();
  // One new row of u with x = 1500: only t's row with a = 1500 changes in each view.
  circuit->Push(ru, ToBatch({{1500, 9}}, 1));
  circuit->Step();
  for (const char* v : {"v1", "v2", "v3"}) {
    INFO(v);
    const Batch& d = circuit->Delta(circuit->FindRelation(v));
    REQUIRE(Consolidate(d).size() <= 2);
    REQUIRE(d.size() <= 4);
  }
}

std::string ErrorOf(const std::string& program) {
  try {
    CompileProgram(sql::ParseProgram(program), program, {}, nullptr);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("LATERAL errors name what is wrong", "[planner][lateral]") {
  const std::string tables = "CREATE TABLE t (a INT); CREATE TABLE u (x INT);";
  REQUIRE(
      ErrorOf(tables + "CREATE VIEW v AS SELECT * FROM t RIGHT JOIN LATERAL (SELECT x FROM u WHERE x = a) s ON "
                       "TRUE")
          .find(
              "a LATERAL subquery that reads the columns of the left side joins only with CROSS, INNER or LEFT JOIN") !=
      std::string::npos);
  // Without LATERAL a FROM subquery does not see the items before it.
  REQUIRE(ErrorOf(tables + "CREATE VIEW v AS SELECT * FROM t, (SELECT x FROM u WHERE x = t.a) s").find("t.a") !=
          std::string::npos);
  REQUIRE(ErrorOf(tables + "CREATE VIEW v AS SELECT * FROM t, LATERAL u").find("LATERAL needs a query") !=
          std::string::npos);
}

}  // namespace
}  // namespace fld::plan
