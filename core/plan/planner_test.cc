// Regression tests for planner / binder / expression bugs found with the sqllogictest runner
// (tests/slt). Expected answers are worked out by hand from standard SQL semantics (and agree
// with PostgreSQL and sqlite3 where those agree with the standard).
#include "core/plan/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/sql/parser.h"

namespace fld::plan {
namespace {

// A program compiled into a circuit, fed with INSERT statements step by step.
class Db {
 public:
  explicit Db(std::string program) : program_(std::move(program)) {
    auto stmts = sql::ParseProgram(program_);
    circuit_ = CompileProgram(stmts, program_, {}, nullptr);
  }

  // Pushes the rows of INSERT statements with weight `weight` (-1 deletes them); Step() runs them.
  void Push(const std::string& inserts, int64_t weight = 1) {
    for (const auto& st : sql::ParseProgram(inserts)) {
      int t = circuit_->FindRelation(st.insert->table);
      REQUIRE(t >= 0);
      Batch b = RowsFromInsert(*st.insert, circuit_->relations()[t].schema, inserts, {});
      for (auto& w : b.weights) w = weight;
      circuit_->Push(t, std::move(b));
    }
  }
  void Step() { circuit_->Step(); }

  // The rows of a materialized view, "v1|v2|..." each, one entry per copy, sorted.
  std::vector<std::string> Rows(const std::string& view) const {
    int r = circuit_->FindRelation(view);
    REQUIRE(r >= 0);
    const Schema& schema = circuit_->relations()[r].schema;
    Batch b = circuit_->Contents(r);
    std::vector<std::string> out;
    for (size_t i = 0; i < b.size(); ++i) {
      REQUIRE(b.weights[i] > 0);
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

  std::vector<std::string> ColumnNames(const std::string& view) const {
    int r = circuit_->FindRelation(view);
    REQUIRE(r >= 0);
    std::vector<std::string> names;
    for (const auto& f : circuit_->relations()[r].schema.fields) names.push_back(ToLower(f.name));
    return names;
  }

  Circuit& circuit() { return *circuit_; }

 private:
  std::string program_;
  std::unique_ptr<Circuit> circuit_;
};

using Rows = std::vector<std::string>;

bool Compiles(const std::string& program) {
  try {
    Db db(program);
    return true;
  } catch (const fld::Error&) {
    return false;
  }
}

}  // namespace

TEST_CASE("SELECT * in a query grouped by every column", "[planner]") {
  Db db(R"(CREATE TABLE t(a INT, b INT, c VARCHAR);
CREATE MATERIALIZED VIEW v AS SELECT * FROM t GROUP BY c, a, b;
CREATE MATERIALIZED VIEW w AS SELECT DISTINCT t.* FROM t AS t GROUP BY t.a, t.b, t.c;
CREATE MATERIALIZED VIEW n AS SELECT *, COUNT(*) AS k FROM t GROUP BY a, b, c;)");
  db.Push("INSERT INTO t VALUES (1, 2, 'x'), (1, 2, 'x'), (3, NULL, 'y')");
  db.Step();
  // One row per group, the columns in table order (not GROUP BY order).
  CHECK(db.Rows("v") == Rows{"1|2|x", "3|NULL|y"});
  CHECK(db.ColumnNames("v") == std::vector<std::string>{"a", "b", "c"});
  CHECK(db.Rows("w") == Rows{"1|2|x", "3|NULL|y"});
  CHECK(db.Rows("n") == Rows{"1|2|x|2", "3|NULL|y|1"});
  // A column that is not grouped is still an error.
  CHECK_FALSE(Compiles("CREATE TABLE t(a INT, b INT); CREATE VIEW v AS SELECT * FROM t GROUP BY a"));
}

TEST_CASE("CASE and COALESCE evaluate a branch only for the rows that take it", "[planner]") {
  Db db(R"(CREATE TABLE t(a BIGINT, b BIGINT, s VARCHAR);
CREATE MATERIALIZED VIEW c1 AS SELECT CASE WHEN a < 100 THEN a * 9000000000 ELSE -1 END AS x FROM t;
CREATE MATERIALIZED VIEW c2 AS SELECT COALESCE(a, b * 9000000000) AS x FROM t;
CREATE MATERIALIZED VIEW c3 AS SELECT CASE WHEN s = 'abc' THEN 0 WHEN s IS NULL THEN NULL ELSE CAST(s AS INT) END AS x FROM t;
CREATE MATERIALIZED VIEW c4 AS SELECT CASE a WHEN 1 THEN b ELSE CASE WHEN a > 5 THEN 7 ELSE a * 2000000000 * 2000000000 END END AS x FROM t;)");
  // a * 9000000000 overflows BIGINT for a = 10^10 (and 10^18), which takes the ELSE branch;
  // b * 9000000000 overflows for b = 10^10, whose row has a non-NULL a; CAST('abc' AS INT) would
  // fail but that row takes the first branch.
  db.Push(
      "INSERT INTO t VALUES (1, 2, '12'), (10000000000, 10000000000, 'abc'), (NULL, 2, NULL), "
      "(1000000000000000000, 3, '-5')");
  db.Step();
  CHECK(db.Rows("c1") == Rows{"-1", "-1", "-1", "9000000000"});
  CHECK(db.Rows("c2") == Rows{"1", "10000000000", "1000000000000000000", "18000000000"});
  CHECK(db.Rows("c3") == Rows{"-5", "0", "12", "NULL"});
  // The innermost ELSE (a * 4 * 10^18) overflows, but no row reaches it: a = 1 takes the first
  // branch, a > 5 the inner WHEN, and a NULL makes `a > 5` NULL... which does reach the inner
  // ELSE, where NULL * ... is NULL without overflow.
  CHECK(db.Rows("c4") == Rows{"2", "7", "7", "NULL"});

  // A row that does take a failing branch still fails.
  Db bad(R"(CREATE TABLE t(a BIGINT);
CREATE MATERIALIZED VIEW v AS SELECT CASE WHEN a > 0 THEN a * 9000000000 ELSE 0 END AS x FROM t;)");
  bad.Push("INSERT INTO t VALUES (0), (10000000000)");
  CHECK_THROWS_AS(bad.Step(), fld::Error);
}

TEST_CASE("JOIN USING / NATURAL merge the join columns", "[planner]") {
  Db db(R"(CREATE TABLE t1(a INT, b INT);
CREATE TABLE t2(a INT, d INT);
CREATE TABLE t3(x INT, a INT);
CREATE MATERIALIZED VIEW r AS SELECT a, d FROM t1 RIGHT JOIN t2 USING (a);
CREATE MATERIALIZED VIEW f AS SELECT * FROM t1 FULL JOIN t2 USING (a);
CREATE MATERIALIZED VIEW l AS SELECT t1.a AS la, t2.a AS ra, a FROM t1 LEFT JOIN t2 USING (a);
CREATE MATERIALIZED VIEW i AS SELECT * FROM t3 JOIN t2 USING (a);
CREATE MATERIALIZED VIEW q AS SELECT t2.*, t3.x FROM t3 JOIN t2 USING (a);
CREATE MATERIALIZED VIEW n AS SELECT a, d FROM t1 NATURAL RIGHT JOIN t2;)");
  db.Push(
      "INSERT INTO t1 VALUES (1, 10), (2, 20), (NULL, 30); INSERT INTO t2 VALUES (1, 100), (3, 300), (NULL, 400);"
      "INSERT INTO t3 VALUES (7, 1), (8, 3)");
  db.Step();
  // RIGHT JOIN: the merged column is the right side's value.
  CHECK(db.Rows("r") == Rows{"1|100", "3|300", "NULL|400"});
  // FULL JOIN: the non-NULL side's value; merged column first, then t1's others, then t2's.
  CHECK(db.ColumnNames("f") == std::vector<std::string>{"a", "b", "d"});
  CHECK(db.Rows("f") == Rows{"1|10|100", "2|20|NULL", "3|NULL|300", "NULL|30|NULL", "NULL|NULL|400"});
  // Each side's own column stays reachable by its qualified name.
  CHECK(db.Rows("l") == Rows{"1|1|1", "2|NULL|2", "NULL|NULL|NULL"});
  CHECK(db.ColumnNames("i") == std::vector<std::string>{"a", "x", "d"});
  CHECK(db.Rows("i") == Rows{"1|7|100", "3|8|300"});
  CHECK(db.Rows("q") == Rows{"1|100|7", "3|300|8"});
  CHECK(db.Rows("n") == Rows{"1|100", "3|300", "NULL|400"});

  // Deleting t2's row 1 turns t1's row 1 into a padded row.
  db.Push("INSERT INTO t2 VALUES (1, 100)", -1);
  db.Step();
  CHECK(db.Rows("f") == Rows{"1|10|NULL", "2|20|NULL", "3|NULL|300", "NULL|30|NULL", "NULL|NULL|400"});
  CHECK(db.Rows("r") == Rows{"3|300", "NULL|400"});

  // A bare `a` is the merged column, so it is not ambiguous; USING names a column twice: error.
  CHECK(
      Compiles("CREATE TABLE t1(a INT); CREATE TABLE t2(a INT); CREATE VIEW v AS SELECT a FROM t1 JOIN t2 USING (a)"));
  CHECK_FALSE(Compiles(
      "CREATE TABLE t1(a INT); CREATE TABLE t2(a INT); CREATE VIEW v AS SELECT 1 FROM t1 JOIN t2 USING (a, a)"));
}

TEST_CASE("GROUP BY a select-list position or alias", "[planner]") {
  Db db(R"(CREATE TABLE t(a INT, b INT);
CREATE MATERIALIZED VIEW p AS SELECT b / 10 AS g, COUNT(*) AS n FROM t GROUP BY 1;
CREATE MATERIALIZED VIEW q AS SELECT b / 10 AS g, SUM(a) AS s FROM t GROUP BY g;)");
  db.Push("INSERT INTO t VALUES (1, 15), (2, 17), (3, 25), (1, 26)");
  db.Step();
  CHECK(db.Rows("p") == Rows{"1|2", "2|2"});
  CHECK(db.Rows("q") == Rows{"1|3", "2|4"});
  // An input column wins over an output alias of the same name: this groups by t.b (were the
  // alias used, it would group by a and compile), so `a` is neither grouped nor aggregated.
  CHECK_FALSE(Compiles("CREATE TABLE t(a INT, b INT); CREATE VIEW v AS SELECT a AS b FROM t GROUP BY b"));
  CHECK_FALSE(Compiles("CREATE TABLE t(a INT, b INT); CREATE VIEW v AS SELECT a FROM t GROUP BY 2"));
  CHECK_FALSE(Compiles("CREATE TABLE t(a INT, b INT); CREATE VIEW v AS SELECT COUNT(*) FROM t GROUP BY 1"));
}

TEST_CASE("The smallest BIGINT literal", "[planner]") {
  Db db(R"(CREATE TABLE t(a BIGINT);
CREATE MATERIALIZED VIEW v AS SELECT -9223372036854775808 AS m, a FROM t WHERE a > -9223372036854775808;)");
  db.Push("INSERT INTO t VALUES (-9223372036854775807), (5)");
  db.Step();
  CHECK(db.Rows("v") == Rows{"-9223372036854775808|-9223372036854775807", "-9223372036854775808|5"});
  // Its negation does not fit.
  CHECK_FALSE(Compiles("CREATE VIEW v AS SELECT -(-9223372036854775808) AS m"));
  CHECK_FALSE(Compiles("CREATE VIEW v AS SELECT 9223372036854775808 AS m"));
}

TEST_CASE("Integers and decimals of different scales compare exactly", "[planner]") {
  Db db(R"(CREATE TABLE t(a BIGINT, d DECIMAL(10, 2), i INT);
CREATE MATERIALIZED VIEW gt AS SELECT a FROM t WHERE a > 1.5;
CREATE MATERIALIZED VIEW eq AS SELECT i FROM t WHERE d = i;
CREATE MATERIALIZED VIEW btw AS SELECT i FROM t WHERE d BETWEEN -3 AND 1.25;
CREATE MATERIALIZED VIEW inl AS SELECT i FROM t WHERE d IN (1, 1.5);
CREATE MATERIALIZED VIEW cs AS SELECT CASE d WHEN 1 THEN 10 WHEN 1.5 THEN 15 ELSE 0 END AS x FROM t;
CREATE MATERIALIZED VIEW tiny AS SELECT i FROM t WHERE d > 1.499 AND d < 1.501;)");
  // Casting 10^18 to DECIMAL(18, 1) to compare it with 1.5 would overflow.
  db.Push(
      "INSERT INTO t VALUES (1000000000000000000, 1.50, 1), (-1000000000000000000, -2.25, 2), "
      "(1, 1.00, NULL), (2, NULL, 3), (3, 3.00, 3)");
  db.Step();
  CHECK(db.Rows("gt") == Rows{"1000000000000000000", "2", "3"});
  CHECK(db.Rows("eq") == Rows{"3"});
  CHECK(db.Rows("btw") == Rows{"2", "NULL"});
  CHECK(db.Rows("inl") == Rows{"1", "NULL"});
  CHECK(db.Rows("cs") == Rows{"0", "0", "0", "10", "15"});
  CHECK(db.Rows("tiny") == Rows{"1"});
}

TEST_CASE("EXCEPT and INTERSECT have set semantics and treat NULLs as equal", "[planner]") {
  Db db(R"(CREATE TABLE t1(a INT, b VARCHAR);
CREATE TABLE t2(a INT, b VARCHAR);
CREATE MATERIALIZED VIEW i AS SELECT a, b FROM t1 INTERSECT SELECT a, b FROM t2;
CREATE MATERIALIZED VIEW e AS SELECT a, b FROM t1 EXCEPT SELECT a, b FROM t2;
CREATE MATERIALIZED VIEW p AS SELECT a FROM t1 UNION SELECT a FROM t2 INTERSECT SELECT 2;)");
  db.Push(
      "INSERT INTO t1 VALUES (1, 'x'), (1, 'x'), (NULL, 'y'), (2, NULL), (NULL, NULL), (3, 'z');"
      "INSERT INTO t2 VALUES (1, 'x'), (NULL, 'y'), (NULL, NULL), (2, 'w'), (4, NULL)");
  db.Step();
  CHECK(db.Rows("i") == Rows{"1|x", "NULL|NULL", "NULL|y"});
  CHECK(db.Rows("e") == Rows{"2|NULL", "3|z"});
  // INTERSECT binds tighter than UNION: t1.a UNION (t2.a INTERSECT {2}).
  CHECK(db.Rows("p") == Rows{"1", "2", "3", "NULL"});
  // Deleting from the right side brings rows back into EXCEPT and takes them out of INTERSECT;
  // one of t1's two (1, 'x') rows going away changes neither.
  db.Push("INSERT INTO t2 VALUES (NULL, 'y'), (1, 'x')", -1);
  db.Push("INSERT INTO t1 VALUES (1, 'x')", -1);
  db.Step();
  CHECK(db.Rows("i") == Rows{"NULL|NULL"});
  CHECK(db.Rows("e") == Rows{"1|x", "2|NULL", "3|z", "NULL|y"});
}

TEST_CASE("OrderAndLimit can sort NULL as the smallest value", "[planner]") {
  Db db(R"(CREATE TABLE t(a INT, b INT);
CREATE MATERIALIZED VIEW v AS SELECT a, b FROM t;)");
  db.Push("INSERT INTO t VALUES (2, 1), (NULL, 2), (1, 3), (NULL, 4)");
  db.Step();
  int v = db.circuit().FindRelation("v");
  const Schema& schema = db.circuit().relations()[v].schema;
  Batch contents = db.circuit().Contents(v);
  auto order = [&](const std::string& query, NullOrder nulls) {
    auto q = sql::ParseQuery(query);
    std::string out;
    for (const auto& row : OrderAndLimit(contents, schema, *q, query, {}, nulls)) {
      if (!out.empty()) out += ',';
      out += FormatValue(row[1], schema.fields[1].type);
    }
    return out;
  };
  // b identifies the rows: a = 2, NULL, 1, NULL for b = 1, 2, 3, 4.
  CHECK(order("SELECT * FROM v ORDER BY a, b", NullOrder::kLargest) == "3,1,2,4");
  CHECK(order("SELECT * FROM v ORDER BY a, b", NullOrder::kSmallest) == "2,4,3,1");
  CHECK(order("SELECT * FROM v ORDER BY a DESC, b", NullOrder::kSmallest) == "1,3,2,4");
  CHECK(order("SELECT * FROM v ORDER BY a DESC, b", NullOrder::kLargest) == "2,4,1,3");
  CHECK(order("SELECT * FROM v ORDER BY a NULLS LAST, b", NullOrder::kSmallest) == "3,1,2,4");
  CHECK(order("SELECT * FROM v ORDER BY a NULLS FIRST, b LIMIT 3", NullOrder::kLargest) == "2,4,3");
}

TEST_CASE("ORDER BY expressions the select list does not output", "[planner]") {
  // Plans `query` (after AppendOrderByColumns) as a view over t and returns the sorted rows
  // without the appended sort columns, as "v1|v2,...".
  auto run = [](const std::string& query) {
    auto q = sql::ParseQuery(query);
    size_t extra = AppendOrderByColumns(q.get());
    std::string program = "CREATE TABLE t(a INT, b INT, c VARCHAR)";
    auto stmts = sql::ParseProgram(program);
    auto circuit = CompileProgram(stmts, program, {}, nullptr);
    sql::Statement st;
    st.kind = sql::Statement::Kind::kCreateView;
    st.create_view = std::make_unique<sql::CreateView>();
    st.create_view->name = std::string("v");  // (move-assigned: GCC 12 warns on the literal assignment)
    st.create_view->materialized = true;
    sql::Query order;
    order.order_by = std::move(q->order_by);
    order.limit = q->limit;
    q->limit.reset();
    st.create_view->query = std::move(q);
    st.create_view->query_end = query.size();
    Planner planner(circuit.get(), query, {});
    int v = planner.AddView(st);
    auto ins = sql::ParseProgram("INSERT INTO t VALUES (1, 30, 'p'), (2, 10, 'q'), (3, 20, 'p'), (NULL, 40, 'q')");
    int t = circuit->FindRelation("t");
    circuit->Push(t, RowsFromInsert(*ins[0].insert, circuit->relations()[t].schema, "", {}));
    circuit->Step();
    const Schema& schema = circuit->relations()[v].schema;
    std::string out;
    for (const auto& row : OrderAndLimit(circuit->Contents(v), schema, order, query, {}, NullOrder::kSmallest)) {
      if (!out.empty()) out += ',';
      for (size_t k = 0; k + extra < row.size(); ++k) {
        if (k) out += '|';
        out += FormatValue(row[k], schema.fields[k].type);
      }
    }
    return std::make_pair(out, extra);
  };
  CHECK(run("SELECT a FROM t ORDER BY b") == std::make_pair(std::string("2,3,1,NULL"), size_t{1}));
  CHECK(run("SELECT c FROM t ORDER BY t.a DESC") == std::make_pair(std::string("p,q,p,q"), size_t{1}));
  CHECK(run("SELECT a FROM t ORDER BY c, b DESC LIMIT 3") == std::make_pair(std::string("1,3,NULL"), size_t{2}));
  CHECK(run("SELECT c, COUNT(*) AS n FROM t GROUP BY c ORDER BY MAX(b)") ==
        std::make_pair(std::string("p|2,q|2"), size_t{1}));
  CHECK(run("SELECT c FROM t GROUP BY c ORDER BY SUM(a) DESC") == std::make_pair(std::string("p,q"), size_t{1}));
  // Output columns, aliases, positions and `*` need no extra column.
  CHECK(run("SELECT a AS x, b FROM t ORDER BY x DESC") ==
        std::make_pair(std::string("3|20,2|10,1|30,NULL|40"), size_t{0}));
  CHECK(run("SELECT a, b FROM t ORDER BY 2") == std::make_pair(std::string("2|10,3|20,1|30,NULL|40"), size_t{0}));
  // b + a is NULL for the last row, which sorts first (NULL is the smallest value here).
  CHECK(run("SELECT * FROM t ORDER BY b + a") ==
        std::make_pair(std::string("NULL|40|q,2|10|q,3|20|p,1|30|p"), size_t{0}));
  // SELECT DISTINCT cannot sort by what it does not output (as in PostgreSQL): left as it is.
  auto q = sql::ParseQuery("SELECT DISTINCT a FROM t ORDER BY b");
  CHECK(AppendOrderByColumns(q.get()) == 0);
}

TEST_CASE("A view's ORDER BY ... LIMIT resolves output names, then FROM columns", "[planner]") {
  // The answers follow the standard (PostgreSQL gives the same for these queries).
  Db db(R"(CREATE TABLE t(a INT, b INT, c VARCHAR);
CREATE MATERIALIZED VIEW q AS SELECT t.a, t.c FROM t ORDER BY t.b DESC LIMIT 2;
CREATE MATERIALIZED VIEW al AS SELECT x.a FROM t AS x ORDER BY x.b LIMIT 2;
CREATE MATERIALIZED VIEW hidden AS SELECT c FROM t ORDER BY b LIMIT 1;
CREATE MATERIALIZED VIEW expr AS SELECT a FROM t ORDER BY b + a * 10 LIMIT 1;
CREATE MATERIALIZED VIEW named AS SELECT a AS b, c FROM t ORDER BY b LIMIT 1;
CREATE MATERIALIZED VIEW grouped AS SELECT c FROM t GROUP BY c ORDER BY SUM(a) DESC LIMIT 1;
CREATE MATERIALIZED VIEW star AS SELECT * FROM t ORDER BY t.b LIMIT 1;)");
  db.Push("INSERT INTO t VALUES (1, 30, 'p'), (2, 10, 'q'), (3, 20, 'p'), (4, 40, 'q')");
  db.Step();
  CHECK(db.ColumnNames("q") == std::vector<std::string>{"a", "c"});
  CHECK(db.Rows("q") == Rows{"1|p", "4|q"});
  CHECK(db.Rows("al") == Rows{"2", "3"});
  CHECK(db.ColumnNames("hidden") == std::vector<std::string>{"c"});
  CHECK(db.Rows("hidden") == Rows{"q"});
  CHECK(db.Rows("expr") == Rows{"2"});  // b + 10a: 40, 30, 50, 80
  // An output name wins over a FROM column of the same name: sorted by a (named b), not by t.b.
  CHECK(db.Rows("named") == Rows{"1|p"});
  CHECK(db.Rows("grouped") == Rows{"q"});  // SUM(a): p 4, q 6
  CHECK(db.ColumnNames("star") == std::vector<std::string>{"a", "b", "c"});
  CHECK(db.Rows("star") == Rows{"2|10|q"});
  // Incremental: deleting the first row of each top-K brings in the next one.
  db.Push("INSERT INTO t VALUES (4, 40, 'q'), (2, 10, 'q')", -1);
  db.Step();
  CHECK(db.Rows("q") == Rows{"1|p", "3|p"});
  CHECK(db.Rows("hidden") == Rows{"p"});
  CHECK(db.Rows("star") == Rows{"3|20|p"});
}

TEST_CASE("The table property skip_unused_columns is accepted", "[planner]") {
  CHECK(
      Compiles("CREATE TABLE t(a INT, b INT) WITH ('skip_unused_columns' = 'true');"
               "CREATE VIEW v AS SELECT a FROM t"));
  CHECK(Compiles("CREATE TABLE t(a INT) WITH ('skip_unused_columns' = 'false')"));
  CHECK(!Compiles("CREATE TABLE t(a INT) WITH ('skip_unused_columns' = 'yes')"));
}

TEST_CASE("LIKE '_' matches one UTF-8 character", "[planner]") {
  Db db(R"(CREATE TABLE t(s VARCHAR);
CREATE MATERIALIZED VIEW one AS SELECT s FROM t WHERE s LIKE '_';
CREATE MATERIALIZED VIEW two AS SELECT s FROM t WHERE s LIKE '__';
CREATE MATERIALIZED VIEW a_ AS SELECT s FROM t WHERE s LIKE 'a_';
CREATE MATERIALIZED VIEW pct AS SELECT s FROM t WHERE s LIKE '%_本';)");
  // 'é' is 2 bytes, '日' and '本' 3 bytes each.
  db.Push("INSERT INTO t VALUES ('é'), ('aé'), ('éa'), ('日本'), ('abc'), ('a')");
  db.Step();
  CHECK(db.Rows("one") == Rows{"a", "é"});
  CHECK(db.Rows("two") == Rows{"aé", "éa", "日本"});
  CHECK(db.Rows("a_") == Rows{"aé"});
  CHECK(db.Rows("pct") == Rows{"日本"});
}

TEST_CASE("Comma joins: FROM-order columns, cross products only between joined components", "[planner]") {
  Db db(R"(CREATE TABLE a(x INT, ax INT);
CREATE TABLE b(y INT, bx INT);
CREATE TABLE c(x INT, cx INT);
CREATE MATERIALIZED VIEW v AS SELECT * FROM a, b, c WHERE a.x = c.x;
CREATE MATERIALIZED VIEW w AS SELECT * FROM b, a, c WHERE c.x = a.x AND c.cx > a.ax AND b.y = 7;)");
  db.Push(
      "INSERT INTO a VALUES (1, 10), (2, 20); INSERT INTO b VALUES (7, 70), (8, 80);"
      "INSERT INTO c VALUES (1, 100), (2, 200), (3, 300)");
  db.Step();
  // `*` lists the columns in FROM order even though a and c are joined first.
  CHECK(db.ColumnNames("v") == std::vector<std::string>{"x", "ax", "y", "bx", "x", "cx"});
  CHECK(db.Rows("v") == Rows{"1|10|7|70|1|100", "1|10|8|80|1|100", "2|20|7|70|2|200", "2|20|8|80|2|200"});
  CHECK(db.ColumnNames("w") == std::vector<std::string>{"y", "bx", "x", "ax", "x", "cx"});
  CHECK(db.Rows("w") == Rows{"7|70|1|10|1|100", "7|70|2|20|2|200"});

  // t2 and t3 are joined on their equality before the cross product with t1; crossing t1 with
  // t2 first would make an intermediate result |t1| * |t2| rows big.
  std::string program = R"(CREATE TABLE t1(a INT, b INT); CREATE TABLE t2(c INT, d INT); CREATE TABLE t3(e INT, f INT);
CREATE MATERIALIZED VIEW v AS SELECT * FROM t1, t2, t3 WHERE t2.c = t3.e AND t1.b > 0)";
  Db plan(program);
  std::string explain = plan.circuit().Explain(plan.circuit().FindRelation("v"));
  INFO(explain);
  CHECK(explain.find("cross_join\n") != std::string::npos);
  CHECK(explain.find("  join on left.$0 = right.$0\n    table t2\n    table t3\n") != std::string::npos);
}

TEST_CASE("Joins hold only the columns their consumers read and the rows a WHERE right after keeps", "[planner]") {
  // Nexmark q4's and q20's shapes (core/plan/join_pushdown.h).
  Db db(R"(CREATE TABLE auction(id BIGINT, item VARCHAR, category BIGINT, start_t BIGINT, expires BIGINT);
CREATE TABLE bid(auction BIGINT, price BIGINT, url VARCHAR, t BIGINT);
CREATE MATERIALIZED VIEW q4 AS SELECT category, MAX(price) FROM auction A, bid B
  WHERE A.id = B.auction AND B.t BETWEEN A.start_t AND A.expires GROUP BY A.id, A.category;
CREATE MATERIALIZED VIEW q20 AS SELECT auction, price, item FROM bid AS B JOIN auction AS A ON B.auction = A.id
  WHERE A.category = 10 AND B.price > 5;
CREATE MATERIALIZED VIEW whole AS SELECT * FROM bid AS B JOIN auction AS A ON B.auction = A.id;)");
  const std::string q4 = db.circuit().Explain(db.circuit().FindRelation("q4"));
  INFO(q4);
  CHECK(q4.find("join on left.$0 = right.$0 (unread: left.$1 right.$2)") != std::string::npos);
  const std::string q20 = db.circuit().Explain(db.circuit().FindRelation("q20"));
  INFO(q20);
  CHECK(q20.find("(left rows where ($1 > 5)) (right rows where ($2 = 10)) (unread: left.$2 left.$3 right.$3 "
                 "right.$4)") != std::string::npos);
  const std::string whole = db.circuit().Explain(db.circuit().FindRelation("whole"));
  CHECK(whole.find("join on left.$0 = right.$0\n") != std::string::npos);
  db.Push(
      "INSERT INTO auction VALUES (1, 'a', 10, 0, 100), (2, 'b', 11, 0, 100), (3, 'c', 10, 50, 60);"
      "INSERT INTO bid VALUES (1, 7, 'u', 5), (1, 9, 'v', 200), (2, 8, 'w', 5), (3, 4, 'x', 55), (3, 6, 'y', 70)");
  db.Step();
  CHECK(db.Rows("q4") == Rows{"10|4", "10|7", "11|8"});
  CHECK(db.Rows("q20") == Rows{"1|7|a", "1|9|a", "3|6|c"});
  db.Push("INSERT INTO bid VALUES (1, 7, 'u', 5); INSERT INTO auction VALUES (3, 'c', 10, 50, 60)", -1);
  db.Step();
  CHECK(db.Rows("q4") == Rows{"11|8"});
  CHECK(db.Rows("q20") == Rows{"1|9|a"});
}

TEST_CASE("append_only tables: aggregates over them keep extremes, with the answers of the general form", "[planner]") {
  // a is append-only, b is not; the same views over each. Through a filter, a projection and a
  // UNION ALL of append-only inputs the aggregate knows its input only inserts; through a
  // PRIMARY KEY table (an insert replaces a row) or a join it does not.
  const std::string views[] = {
      "SELECT k, MIN(x) AS mn, MAX(x) AS mx, MIN(s) AS ms, MAX(d) AS md, ARG_MIN(s, x) AS am, ARG_MAX(x, d) AS ax, "
      "COUNT(*) AS c FROM {} WHERE x > -5 GROUP BY k",
      "SELECT MAX(x + 1) AS m, ARG_MAX(s, d) AS a FROM (SELECT * FROM {} UNION ALL SELECT * FROM {})",
      "SELECT k, MAX(s) FILTER (WHERE x > 0) AS f, MIN(CAST(x AS VARCHAR)) AS c FROM {} GROUP BY k",
      // q7's shape: each group's extreme joined back to its rows (the join reads the groups).
      "SELECT t.k, t.x, t.s FROM {} t JOIN (SELECT k, MAX(x) AS m, MIN(s) AS ms FROM {} GROUP BY k) g "
      "ON t.k = g.k AND t.x = g.m AND t.s = g.ms",
  };
  std::string program =
      "CREATE TABLE a (k INT, x INT, s VARCHAR, d DOUBLE) WITH ('append_only' = 'true');\n"
      "CREATE TABLE b (k INT, x INT, s VARCHAR, d DOUBLE);\n"
      "CREATE TABLE p (k INT PRIMARY KEY, x INT) WITH ('append_only' = 'true');\n"
      "CREATE MATERIALIZED VIEW pk AS SELECT MAX(x) AS m FROM p;\n"
      "CREATE MATERIALIZED VIEW j AS SELECT MAX(a.x) AS m FROM a JOIN b ON a.k = b.k;\n";
  for (size_t i = 0; i < std::size(views); ++i)
    for (const char* t : {"a", "b"}) {
      std::string sql = views[i];
      for (size_t at; (at = sql.find("{}")) != std::string::npos;) sql.replace(at, 2, t);
      program += fmt::format("CREATE MATERIALIZED VIEW v{}{} AS {};\n", i, t, sql);
    }
  Db db(program);
  auto explain = [&](const std::string& v) { return db.circuit().Explain(db.circuit().FindRelation(v)); };
  for (size_t i = 0; i < std::size(views); ++i) {
    INFO(explain(fmt::format("v{}a", i)));
    CHECK(explain(fmt::format("v{}a", i)).find("input inserts only") != std::string::npos);
    CHECK(explain(fmt::format("v{}b", i)).find("input inserts only") == std::string::npos);
  }
  CHECK(explain("pk").find("input inserts only") == std::string::npos);
  CHECK(explain("j").find("input inserts only") == std::string::npos);

  std::mt19937_64 rng(42);
  const char* strings[] = {"'x'", "'y'", "''", "NULL", "'a long string, longer than twenty-three bytes'"};
  const char* doubles[] = {"0.0", "-0.0", "1.5", "-2.25", "NULL", "1e300"};
  for (int step = 0; step < 30; ++step) {
    std::string rows;
    for (int r = 0, n = static_cast<int>(rng() % 8); r < n; ++r) {
      const int64_t x = static_cast<int64_t>(rng() % 21) - 10;
      rows += fmt::format("{}({}, {}, {}, {})", rows.empty() ? "" : ", ", rng() % 4,
                          rng() % 7 == 0 ? "NULL" : std::to_string(x), strings[rng() % std::size(strings)],
                          doubles[rng() % std::size(doubles)]);
    }
    if (!rows.empty()) db.Push(fmt::format("INSERT INTO a VALUES {}; INSERT INTO b VALUES {}", rows, rows));
    db.Step();
    for (size_t i = 0; i < std::size(views); ++i)
      REQUIRE(db.Rows(fmt::format("v{}a", i)) == db.Rows(fmt::format("v{}b", i)));
  }
  CHECK(!db.Rows("v0a").empty());

  // Deleting from an append-only table is refused.
  std::string error;
  try {
    db.Push("INSERT INTO a VALUES (1, 1, 'x', 1.0)", -1);
  } catch (const fld::Error& e) {
    error = e.what();
  }
  CHECK(error.find("table a is append_only") != std::string::npos);
}

}  // namespace fld::plan
