#include "core/sql/parser.h"

#include <catch2/catch.hpp>
#include <string>

#include "core/common/error.h"
#include "core/sql/lexer.h"

namespace fld::sql {
namespace {

std::string Show(const Query& q);

// A compact prefix rendering of an expression, so tests can assert the whole tree shape.
std::string Show(const Expr& e) {
  auto args = [&](size_t from = 0) {
    std::string s;
    for (size_t i = from; i < e.args.size(); ++i) s += " " + Show(*e.args[i]);
    return s;
  };
  switch (e.kind) {
    case ExprKind::kLiteral:
      switch (e.lit_kind) {
        case LiteralKind::kNull:
          return "NULL";
        case LiteralKind::kString:
          return "'" + e.text + "'";
        case LiteralKind::kDate:
          return "DATE'" + e.text + "'";
        case LiteralKind::kTime:
          return "TIME'" + e.text + "'";
        case LiteralKind::kTimestamp:
          return "TIMESTAMP'" + e.text + "'";
        default:
          return e.text;
      }
    case ExprKind::kColumnRef:
      return e.qualifier.empty() ? e.name : e.qualifier + "." + e.name;
    case ExprKind::kStar:
      return e.qualifier.empty() ? "*" : e.qualifier + ".*";
    case ExprKind::kUnary: {
      std::string op = e.op == Op::kNeg ? "neg" : e.op == Op::kPlus ? "plus" : "not";
      return "(" + op + args() + ")";
    }
    case ExprKind::kBinary: {
      static const char* kOps[] = {"?",  "neg", "plus", "not", "+",  "-", "*",  "/",   "%",
                                   "||", "=",   "<>",   "<",   "<=", ">", ">=", "AND", "OR"};
      return std::string("(") + kOps[static_cast<int>(e.op)] + args() + ")";
    }
    case ExprKind::kFunction:
      if (e.star_arg) return e.name + "(*)";
      return e.name + "(" + (e.distinct ? "DISTINCT" : "") + args() + ")";
    case ExprKind::kLambda:
      return "(lambda " + e.name + args() + ")";
    case ExprKind::kCase:
      return std::string("(case") + (e.has_operand ? " op" : "") + (e.has_else ? " else" : "") + args() + ")";
    case ExprKind::kCast:
      return "(cast" + args() + " " + e.cast_type.ToString() + ")";
    case ExprKind::kBetween:
      return std::string(e.negated ? "(not-between" : "(between") + args() + ")";
    case ExprKind::kInList:
      return std::string(e.negated ? "(not-in" : "(in") + args() + ")";
    case ExprKind::kInQuery:
      return std::string(e.negated ? "(not-in" : "(in") + args() + " [" + Show(*e.subquery) + "])";
    case ExprKind::kExists:
      return std::string(e.negated ? "(not-exists [" : "(exists [") + Show(*e.subquery) + "])";
    case ExprKind::kSubquery:
      return "[" + Show(*e.subquery) + "]";
    case ExprKind::kIsNull:
      return std::string(e.negated ? "(is-not-null" : "(is-null") + args() + ")";
    case ExprKind::kLike:
      return std::string(e.negated ? "(not-like" : "(like") + args() + ")";
    case ExprKind::kIsBool:
      return std::string(e.negated ? "(is-not-" : "(is-") + (e.bool_value ? "true" : "false") + args() + ")";
    case ExprKind::kIsDistinct:
      return std::string(e.negated ? "(is-not-distinct" : "(is-distinct") + args() + ")";
  }
  return "?";
}

std::string Show(const TableRef& t) {
  switch (t.kind) {
    case TableRef::Kind::kTable:
      return t.alias.empty() ? t.name : t.name + " " + t.alias;
    case TableRef::Kind::kSubquery:
      return "[" + Show(*t.subquery) + "] " + t.alias;
    case TableRef::Kind::kWindow:
      return "(" + t.name + " " + Show(*t.left) + ") " + t.alias;
    case TableRef::Kind::kUnnest: {
      std::string s = "unnest(";
      for (size_t i = 0; i < t.unnest.size(); ++i) s += (i ? ", " : "") + Show(*t.unnest[i]);
      return s + ") " + t.alias;
    }
    case TableRef::Kind::kJoin: {
      static const char* kTypes[] = {"inner", "left", "right", "full", "cross"};
      std::string s = std::string("(") + (t.natural ? "natural-" : "") + kTypes[static_cast<int>(t.join_type)] + " " +
                      Show(*t.left) + ", " + Show(*t.right);
      if (t.on) s += " ON " + Show(*t.on);
      if (!t.using_cols.empty()) {
        s += " USING";
        for (const auto& c : t.using_cols) s += " " + c;
      }
      return s + ")";
    }
  }
  return "?";
}

std::string Show(const Query& q) {
  std::string s;
  if (q.select) {
    const Select& sel = *q.select;
    s = sel.distinct ? "SELECT DISTINCT" : "SELECT";
    for (size_t i = 0; i < sel.items.size(); ++i) {
      s += (i ? ", " : " ") + Show(*sel.items[i].expr);
      if (!sel.items[i].alias.empty()) s += " AS " + sel.items[i].alias;
    }
    for (size_t i = 0; i < sel.from.size(); ++i) s += (i ? " | " : " FROM ") + Show(*sel.from[i]);
    if (sel.where) s += " WHERE " + Show(*sel.where);
    for (size_t i = 0; i < sel.group_by.size(); ++i) s += (i ? ", " : " GROUP BY ") + Show(*sel.group_by[i]);
    if (sel.having) s += " HAVING " + Show(*sel.having);
  } else {
    static const char* kOps[] = {"UNION", "EXCEPT", "INTERSECT"};
    s = "{" + Show(*q.left) + "} " + kOps[static_cast<int>(q.set_op)] + (q.set_all ? " ALL" : "") + " {" +
        Show(*q.right) + "}";
  }
  for (size_t i = 0; i < q.order_by.size(); ++i) {
    const OrderItem& o = q.order_by[i];
    s += (i ? ", " : " ORDER BY ") + Show(*o.expr) + (o.desc ? " DESC" : "");
    if (o.nulls_first) s += *o.nulls_first ? " NULLS FIRST" : " NULLS LAST";
  }
  if (q.limit) s += " LIMIT " + std::to_string(*q.limit);
  if (q.offset) s += " OFFSET " + std::to_string(*q.offset);
  return s;
}

// The expression of `SELECT <expr>`.
std::string ShowExpr(const std::string& expr) {
  auto q = ParseQuery("SELECT " + expr);
  REQUIRE(q->select);
  REQUIRE(q->select->items.size() == 1);
  return Show(*q->select->items[0].expr);
}

std::string ShowQuery(const std::string& sql) {
  return Show(*ParseQuery(sql));
}

// The message of the error ParseProgram throws for `sql`.
std::string ErrorOf(const std::string& sql, const SourceInfo& src = {}) {
  try {
    ParseProgram(sql, src);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUsage);
    return e.what();
  }
  FAIL("no error for: " << sql);
  return "";
}

const char* kBankProgram = R"(CREATE TABLE transactions (
    from_account INT NOT NULL,
    to_account INT NOT NULL,
    amount INT NOT NULL,
    ts TIMESTAMP NOT NULL
) WITH ('connectors' = '[{
    "transport": {
      "name": "datagen", "config": {
        "seed": 0,
        "plan": [{
            "limit": 100000000,
            "fields": {
                "from_account": { "strategy": "uniform", "range": [1,10] },
                "to_account": { "strategy": "uniform", "range": [1,10] },
                "amount": { "strategy": "zipf", "range": [1,1000] },
                "ts": { "scale": 1000 }
            }
        }]
        }
    }
}]');
CREATE VIEW credits AS SELECT to_account AS account, sum(amount) AS credits FROM transactions GROUP BY to_account;
CREATE VIEW debits AS SELECT from_account AS account, sum(amount) AS debits FROM transactions GROUP BY from_account;
CREATE MATERIALIZED VIEW balance AS SELECT credits.account AS account, credits - debits AS balance FROM credits, debits WHERE credits.account = debits.account;
)";

}  // namespace

TEST_CASE("lexer: tokens, kinds and positions", "[parser]") {
  auto toks = Tokenize("SELECT a1, \"Mixed Case\" -- comment\n  FROM `t``x` /* multi\nline */ WHERE s = 'it''s'");
  REQUIRE(toks.size() == 11);
  CHECK(toks[0].kind == TokenKind::kIdent);
  CHECK(toks[0].text == "SELECT");
  CHECK(toks[0].upper == "SELECT");
  CHECK(toks[1].text == "a1");
  CHECK(toks[1].pos.col == 8);
  CHECK(toks[2].kind == TokenKind::kSymbol);
  CHECK(toks[3].kind == TokenKind::kQuotedIdent);
  CHECK(toks[3].text == "Mixed Case");
  CHECK(toks[3].raw == "\"Mixed Case\"");
  CHECK(toks[4].text == "FROM");
  CHECK(toks[4].pos.line == 2);
  CHECK(toks[4].pos.col == 3);
  CHECK(toks[4].pos.offset == 37);
  CHECK(toks[5].kind == TokenKind::kQuotedIdent);
  CHECK(toks[5].text == "t`x");
  CHECK(toks[6].text == "WHERE");
  CHECK(toks[6].pos.line == 3);
  CHECK(toks[6].pos.col == 9);
  CHECK(toks[9].kind == TokenKind::kString);
  CHECK(toks[9].text == "it's");
  CHECK(toks[10].kind == TokenKind::kEnd);
  CHECK(toks[10].pos.offset == toks[9].end.offset);
}

TEST_CASE("lexer: numbers and operators", "[parser]") {
  auto toks = Tokenize("1 1.5 .5 5. 1e3 2.5E-3 || <> != == <= >= % ;");
  std::vector<TokenKind> kinds;
  for (const auto& t : toks) kinds.push_back(t.kind);
  CHECK(kinds == std::vector<TokenKind>{TokenKind::kInteger, TokenKind::kDecimal, TokenKind::kDecimal,
                                        TokenKind::kDecimal, TokenKind::kDouble, TokenKind::kDouble, TokenKind::kSymbol,
                                        TokenKind::kSymbol, TokenKind::kSymbol, TokenKind::kSymbol, TokenKind::kSymbol,
                                        TokenKind::kSymbol, TokenKind::kSymbol, TokenKind::kSymbol, TokenKind::kEnd});
  CHECK(toks[5].text == "2.5E-3");
  CHECK(toks[6].text == "||");
  CHECK(toks[8].text == "!=");
  CHECK(ShowExpr("1e3") == "1e3");
  auto q = ParseQuery("SELECT 1e3, 5., .5, 'x'");
  CHECK(q->select->items[0].expr->lit_kind == LiteralKind::kDouble);
  CHECK(q->select->items[1].expr->lit_kind == LiteralKind::kDecimal);
  CHECK(q->select->items[1].expr->text == "5.");
  CHECK(q->select->items[2].expr->lit_kind == LiteralKind::kDecimal);
  CHECK(q->select->items[3].expr->lit_kind == LiteralKind::kString);
}

TEST_CASE("lexer: CRLF line endings and multi-byte characters", "[parser]") {
  auto toks = Tokenize("SELECT\r\n  'é' ,\r\n x");
  REQUIRE(toks.size() == 5);
  CHECK(toks[1].pos.line == 2);
  CHECK(toks[1].pos.col == 3);
  CHECK(toks[2].pos.col == 7);  // 'é' is three characters but four bytes
  CHECK(toks[2].pos.offset == 15);
  CHECK(toks[3].pos.line == 3);
  CHECK(toks[3].pos.col == 2);

  auto stmts = ParseProgram("CREATE TABLE t (\r\n  a INT,\r\n  b VARCHAR\r\n);\r\nSELECT a\r\nFROM t;\r\n");
  REQUIRE(stmts.size() == 2);
  CHECK(stmts[0].create_table->columns[1].name == "b");
  CHECK(stmts[0].create_table->columns[1].pos.line == 3);
  CHECK(stmts[1].pos.line == 5);
  CHECK(stmts[1].pos.col == 1);
  CHECK(Show(*stmts[1].query) == "SELECT a FROM t");

  CHECK(ErrorOf("SELECT a,\r\n  FROM t\r\n") ==
        "<sql>:2:3: error: expected an expression but found 'FROM'\n"
        "    2 |   FROM t\n"
        "      |   ^");
}

TEST_CASE("lexer errors", "[parser]") {
  CHECK(ErrorOf("SELECT 'abc") ==
        "<sql>:1:8: error: unterminated string literal\n"
        "    1 | SELECT 'abc\n"
        "      |        ^");
  CHECK(ErrorOf("SELECT a /* never closed") ==
        "<sql>:1:10: error: unterminated comment\n"
        "    1 | SELECT a /* never closed\n"
        "      |          ^");
  CHECK(ErrorOf("SELECT a # b") ==
        "<sql>:1:10: error: unexpected character '#'\n"
        "    1 | SELECT a # b\n"
        "      |          ^");
  CHECK(ErrorOf("SELECT 12abc") ==
        "<sql>:1:8: error: malformed number\n"
        "    1 | SELECT 12abc\n"
        "      |        ^");
}

TEST_CASE("precedence of arithmetic and logic", "[parser]") {
  CHECK(ShowExpr("a + b * c") == "(+ a (* b c))");
  CHECK(ShowExpr("a * b + c") == "(+ (* a b) c)");
  CHECK(ShowExpr("a - b - c") == "(- (- a b) c)");
  CHECK(ShowExpr("a / b % c * d") == "(* (% (/ a b) c) d)");
  CHECK(ShowExpr("(a + b) * c") == "(* (+ a b) c)");
  CHECK(ShowExpr("a || b + c") == "(|| a (+ b c))");
  CHECK(ShowExpr("a OR b AND c") == "(OR a (AND b c))");
  CHECK(ShowExpr("a AND b OR c AND d") == "(OR (AND a b) (AND c d))");
  CHECK(ShowExpr("NOT a = b") == "(not (= a b))");
  CHECK(ShowExpr("NOT NOT a AND b") == "(AND (not (not a)) b)");
  CHECK(ShowExpr("NOT - 78 IS NOT NULL") == "(not (is-not-null (neg 78)))");
  CHECK(ShowExpr("- - + 5") == "(neg (neg (plus 5)))");
  CHECK(ShowExpr("+ - col1 * 5") == "(* (plus (neg col1)) 5)");
  CHECK(ShowExpr("- COUNT ( * )") == "(neg COUNT(*))");
  CHECK(ShowExpr("a = b AND c <> d") == "(AND (= a b) (<> c d))");
  CHECK(ShowExpr("a == b OR c != d") == "(OR (= a b) (<> c d))");
  CHECK(ShowExpr("a < b + 1") == "(< a (+ b 1))");
  CHECK(ShowExpr("a <= b AND c >= d AND e > f") == "(AND (AND (<= a b) (>= c d)) (> e f))");
}

TEST_CASE("predicates: BETWEEN, IN, LIKE, IS", "[parser]") {
  CHECK(ShowExpr("a BETWEEN 1 AND 2 AND b") == "(AND (between a 1 2) b)");
  CHECK(ShowExpr("x AND a NOT BETWEEN b + 1 AND c * 2 AND y") == "(AND (AND x (not-between a (+ b 1) (* c 2))) y)");
  CHECK(ShowExpr("col0 NOT BETWEEN NULL AND 5") == "(not-between col0 NULL 5)");
  CHECK(ShowExpr("NULL IN (1, 2)") == "(in NULL 1 2)");
  CHECK(ShowExpr("a NOT IN (1, b + 1)") == "(not-in a 1 (+ b 1))");
  CHECK(ShowExpr("1 NOT IN ()") == "(not-in 1)");  // SQLite's empty list
  CHECK(ShowExpr("a IN (SELECT b FROM t)") == "(in a [SELECT b FROM t])");
  CHECK(ShowExpr("a NOT IN (SELECT b FROM t)") == "(not-in a [SELECT b FROM t])");
  CHECK(ShowExpr("s LIKE 'a%'") == "(like s 'a%')");
  CHECK(ShowExpr("s NOT LIKE 'a!%' ESCAPE '!'") == "(not-like s 'a!%' '!')");
  CHECK(ShowExpr("a IS NULL") == "(is-null a)");
  CHECK(ShowExpr("a + 1 IS NOT NULL") == "(is-not-null (+ a 1))");
  CHECK(ShowExpr("a IS TRUE") == "(is-true a)");
  CHECK(ShowExpr("a IS NOT FALSE") == "(is-not-false a)");
  CHECK(ShowExpr("a IS DISTINCT FROM b") == "(is-distinct a b)");
  CHECK(ShowExpr("a IS NOT DISTINCT FROM b + 1") == "(is-not-distinct a (+ b 1))");
  CHECK(ShowExpr("EXISTS (SELECT 1)") == "(exists [SELECT 1])");
  CHECK(ShowExpr("NOT EXISTS (SELECT 1)") == "(not-exists [SELECT 1])");
  CHECK(ShowExpr("(SELECT MAX(b) FROM t) + 1") == "(+ [SELECT MAX( b) FROM t] 1)");
}

TEST_CASE("primaries: functions, CASE, CAST, literals", "[parser]") {
  CHECK(ShowExpr("MIN ( ALL col0 )") == "MIN( col0)");
  CHECK(ShowExpr("count(DISTINCT a)") == "COUNT(DISTINCT a)");
  CHECK(ShowExpr("COALESCE(a, b)") == "COALESCE( a b)");
  CHECK(ShowExpr("NULLIF(a,b)") == "NULLIF( a b)");
  CHECK(ShowExpr("abs(- x)") == "ABS( (neg x))");
  CHECK(ShowExpr("now()") == "NOW()");
  CHECK(ShowExpr("CAST ( NULL AS INTEGER )") == "(cast NULL INTEGER)");
  CHECK(ShowExpr("CAST(a AS DECIMAL(10, 2))") == "(cast a DECIMAL(10, 2))");
  CHECK(ShowExpr("CAST(a AS SIGNED)") == "(cast a BIGINT)");
  CHECK(ShowExpr("CAST(a AS UNSIGNED INTEGER)") == "(cast a BIGINT)");
  CHECK(ShowExpr("CASE WHEN a THEN 1 WHEN b THEN 2 END") == "(case a 1 b 2)");
  CHECK(ShowExpr("CASE x WHEN 1 THEN 'a' ELSE 'b' END") == "(case op else x 1 'a' 'b')");
  CHECK(ShowExpr("DATE '2024-01-01'") == "DATE'2024-01-01'");
  CHECK(ShowExpr("TIMESTAMP '2024-01-01 10:00:00'") == "TIMESTAMP'2024-01-01 10:00:00'");
  CHECK(ShowExpr("TIME '10:00:00'") == "TIME'10:00:00'");
  CHECK(ShowExpr("TRUE AND false") == "(AND TRUE FALSE)");
  CHECK(ShowExpr("t.\"Col\"") == "t.Col");
  auto q = ParseQuery("SELECT COUNT(*), x.y FROM x");
  const Expr& count = *q->select->items[0].expr;
  CHECK(count.kind == ExprKind::kFunction);
  CHECK(count.star_arg);
  CHECK(count.args.empty());
  const Expr& col = *q->select->items[1].expr;
  CHECK(col.kind == ExprKind::kColumnRef);
  CHECK(col.qualifier == "x");
  CHECK(col.name == "y");
  CHECK(col.pos.col == 18);
}

TEST_CASE("select items, aliases and stars", "[parser]") {
  auto q = ParseQuery("SELECT DISTINCT *, t.*, a AS x, b y, c \"Z z\", d AS `w` FROM t");
  const Select& s = *q->select;
  CHECK(s.distinct);
  REQUIRE(s.items.size() == 6);
  CHECK(s.items[0].expr->kind == ExprKind::kStar);
  CHECK(s.items[0].expr->qualifier.empty());
  CHECK(s.items[1].expr->kind == ExprKind::kStar);
  CHECK(s.items[1].expr->qualifier == "t");
  CHECK(s.items[2].alias == "x");
  CHECK(s.items[3].alias == "y");
  CHECK(s.items[4].alias == "Z z");
  CHECK(s.items[5].alias == "w");
  CHECK(s.items[5].pos.col == 47);
  CHECK(ShowQuery("SELECT ALL + col1 AS col0, col2 AS col2 FROM tab1") ==
        "SELECT (plus col1) AS col0, col2 AS col2 FROM tab1");
  CHECK(ShowQuery("SELECT a FROM t WHERE b > 1 GROUP BY a, c HAVING COUNT(*) > 2") ==
        "SELECT a FROM t WHERE (> b 1) GROUP BY a, c HAVING (> COUNT(*) 2)");
  CHECK(ShowQuery("SELECT 1") == "SELECT 1");
}

TEST_CASE("FROM: comma lists, joins, parentheses and subqueries", "[parser]") {
  CHECK(ShowQuery("SELECT * FROM a, b AS bb, c cc WHERE a.x = bb.x") ==
        "SELECT * FROM a | b bb | c cc WHERE (= a.x bb.x)");
  CHECK(ShowQuery("SELECT * FROM a JOIN b ON a.x = b.x LEFT JOIN c USING (x, y)") ==
        "SELECT * FROM (left (inner a, b ON (= a.x b.x)), c USING x y)");
  CHECK(ShowQuery("SELECT * FROM a INNER JOIN b ON TRUE RIGHT OUTER JOIN c ON FALSE FULL JOIN d ON 1 = 1") ==
        "SELECT * FROM (full (right (inner a, b ON TRUE), c ON FALSE), d ON (= 1 1))");
  CHECK(ShowQuery("SELECT * FROM a CROSS JOIN b NATURAL JOIN c NATURAL LEFT JOIN d") ==
        "SELECT * FROM (natural-left (natural-inner (cross a, b), c), d)");
  CHECK(ShowQuery("SELECT + + MIN( ALL - + 32 ) AS col0 FROM ( tab0 AS cor0 CROSS JOIN tab0 cor1 )") ==
        "SELECT (plus (plus MIN( (neg (plus 32))))) AS col0 FROM (cross tab0 cor0, tab0 cor1)");
  CHECK(ShowQuery("SELECT * FROM (a JOIN (b JOIN c ON b.x = c.x) ON a.x = b.x), d") ==
        "SELECT * FROM (inner a, (inner b, c ON (= b.x c.x)) ON (= a.x b.x)) | d");
  CHECK(ShowQuery("SELECT s.a FROM (SELECT a FROM t WHERE a > 0) AS s, (SELECT 1) u") ==
        "SELECT s.a FROM [SELECT a FROM t WHERE (> a 0)] s | [SELECT 1] u");
  CHECK(ShowQuery("SELECT * FROM ((SELECT a FROM t) UNION (SELECT a FROM u)) v") ==
        "SELECT * FROM [{SELECT a FROM t} UNION {SELECT a FROM u}] v");
  CHECK(ShowQuery("SELECT * FROM t1 JOIN t2 WHERE x = 1") == "SELECT * FROM (inner t1, t2) WHERE (= x 1)");
  CHECK(ShowQuery("SELECT * FROM (t1) AS x, (t2 y)") == "SELECT * FROM t1 x | t2 y");
  CHECK(ErrorOf("SELECT * FROM (a JOIN b ON TRUE) AS x") ==
        "<sql>:1:37: error: an alias for a parenthesized join is not supported\n"
        "    1 | SELECT * FROM (a JOIN b ON TRUE) AS x\n"
        "      |                                     ^");
  CHECK(ErrorOf("SELECT * FROM t WHERE a = 1 AS") ==
        "<sql>:1:29: error: expected ';' but found 'AS'\n"
        "    1 | SELECT * FROM t WHERE a = 1 AS\n"
        "      |                             ^");
  CHECK(ErrorOf("SELECT * FROM t AS") ==
        "<sql>:1:19: error: expected an alias but found end of input\n"
        "    1 | SELECT * FROM t AS\n"
        "      |                   ^");
  auto q = ParseQuery("SELECT * FROM a\n  LEFT JOIN b ON a.x = b.x");
  const TableRef& join = *q->select->from[0];
  CHECK(join.kind == TableRef::Kind::kJoin);
  CHECK(join.pos.col == 15);
  CHECK(join.right->pos.line == 2);
  CHECK(join.right->pos.col == 13);
}

TEST_CASE("set operations, ORDER BY, LIMIT", "[parser]") {
  CHECK(ShowQuery("SELECT a FROM t UNION SELECT b FROM u") == "{SELECT a FROM t} UNION {SELECT b FROM u}");
  CHECK(ShowQuery("SELECT 1 UNION ALL SELECT 2 EXCEPT SELECT 3") ==
        "{{SELECT 1} UNION ALL {SELECT 2}} EXCEPT {SELECT 3}");
  CHECK(ShowQuery("SELECT 1 UNION SELECT 2 INTERSECT SELECT 3") ==
        "{SELECT 1} UNION {{SELECT 2} INTERSECT {SELECT 3}}");
  CHECK(ShowQuery("SELECT 1 INTERSECT ALL SELECT 2 EXCEPT ALL SELECT 3") ==
        "{{SELECT 1} INTERSECT ALL {SELECT 2}} EXCEPT ALL {SELECT 3}");
  CHECK(ShowQuery("(SELECT 1 UNION SELECT 2) INTERSECT SELECT 3") ==
        "{{SELECT 1} UNION {SELECT 2}} INTERSECT {SELECT 3}");
  CHECK(ShowQuery("SELECT a FROM t UNION SELECT a FROM u ORDER BY a DESC NULLS LAST, 2 LIMIT 10 OFFSET 5") ==
        "{SELECT a FROM t} UNION {SELECT a FROM u} ORDER BY a DESC NULLS LAST, 2 LIMIT 10 OFFSET 5");
  CHECK(ShowQuery("SELECT a FROM t ORDER BY a ASC NULLS FIRST LIMIT 1;") ==
        "SELECT a FROM t ORDER BY a NULLS FIRST LIMIT 1");
  CHECK(ShowQuery("(SELECT a FROM t ORDER BY a LIMIT 1) UNION ALL (SELECT b FROM u LIMIT 2)") ==
        "{SELECT a FROM t ORDER BY a LIMIT 1} UNION ALL {SELECT b FROM u LIMIT 2}");
  CHECK(ShowQuery("VALUES (1, 'a'), (2, 'b')") == "{SELECT 1, 'a'} UNION ALL {SELECT 2, 'b'}");
}

TEST_CASE("WITH queries", "[parser]") {
  auto q = ParseQuery("WITH a AS (SELECT 1), b (x, y) AS (SELECT 2, 3 FROM a) SELECT * FROM b");
  REQUIRE(q->with.size() == 2);
  CHECK(q->with[0].name == "a");
  CHECK(q->with[0].column_names.empty());
  CHECK(Show(*q->with[0].query) == "SELECT 1");
  CHECK(q->with[1].name == "b");
  CHECK(q->with[1].column_names == std::vector<std::string>{"x", "y"});
  CHECK(Show(*q->with[1].query) == "SELECT 2, 3 FROM a");
  CHECK(Show(*q) == "SELECT * FROM b");
  // In a view, a subquery, a FROM item, and before a set operation.
  auto prog = ParseProgram("CREATE VIEW v AS WITH c AS (SELECT 1) SELECT * FROM c UNION SELECT 2");
  REQUIRE(prog[0].create_view->query->with.size() == 1);
  CHECK(Show(*prog[0].create_view->query) == "{SELECT * FROM c} UNION {SELECT 2}");
  auto sub = ParseQuery(
      "SELECT (WITH c AS (SELECT 1) SELECT * FROM c), x IN (WITH d AS (SELECT 2) SELECT * FROM d) "
      "FROM (WITH e AS (SELECT 3) SELECT * FROM e) AS f");
  CHECK(sub->select->items[0].expr->subquery->with.size() == 1);
  CHECK(sub->select->items[1].expr->subquery->with.size() == 1);
  CHECK(sub->select->from[0]->subquery->with.size() == 1);
  CHECK(ErrorOf("WITH RECURSIVE r AS (SELECT 1) SELECT * FROM r")
            .find("WITH RECURSIVE (recursive queries) is not "
                  "supported yet") != std::string::npos);
  CHECK(ErrorOf("WITH a SELECT 1").find("expected AS") != std::string::npos);
  // Quantified comparisons: = SOME is IN, <> ALL is NOT IN, the others a CASE over scalar
  // subqueries (their answers are tested in core/plan/subquery_test.cc and regress/quantified.test).
  auto quant = ParseQuery("SELECT a = SOME (SELECT b FROM u), a <> ALL (SELECT b FROM u), a > ALL (SELECT b FROM u)");
  const auto& qi = quant->select->items;
  CHECK(qi[0].expr->kind == ExprKind::kInQuery);
  CHECK(!qi[0].expr->negated);
  CHECK(qi[1].expr->kind == ExprKind::kInQuery);
  CHECK(qi[1].expr->negated);
  CHECK(qi[2].expr->kind == ExprKind::kCase);
  CHECK(ErrorOf("SELECT 1 = a > ALL (SELECT b FROM u)").find("left side must not be a comparison") !=
        std::string::npos);
}

TEST_CASE("CREATE TABLE: columns, types, keys, properties", "[parser]") {
  auto stmts = ParseProgram(
      "CREATE TABLE t1(\n"
      "  a1 INTEGER PRIMARY KEY,\n"
      "  b1 DECIMAL(10,2) NOT NULL DEFAULT -1,\n"
      "  c1 VARCHAR(40) NULL,\n"
      "  d1 CHARACTER VARYING, e1 CHAR, f1 CHAR(3), g1 DOUBLE PRECISION, h1 FLOAT, i1 REAL,\n"
      "  j1 BOOL, k1 BIGINT, l1 TINYINT, m1 SMALLINT, n1 NUMERIC, o1 DATE, p1 TIME, q1 TIMESTAMP,\n"
      "  r1 STRING, s1 TEXT, t1 DEC(5), u1 INT\n"
      ")");
  REQUIRE(stmts.size() == 1);
  const Statement& st = stmts[0];
  CHECK(st.kind == Statement::Kind::kCreateTable);
  const CreateTable& t = *st.create_table;
  CHECK(t.name == "t1");
  REQUIRE(t.columns.size() == 21);
  std::vector<std::string> types;
  for (const auto& c : t.columns) types.push_back(c.type.ToString());
  CHECK(types == std::vector<std::string>{"INTEGER NOT NULL",
                                          "DECIMAL(10, 2) NOT NULL",
                                          "VARCHAR(40)",
                                          "VARCHAR",
                                          "CHAR(1)",
                                          "CHAR(3)",
                                          "DOUBLE",
                                          "DOUBLE",
                                          "REAL",
                                          "BOOLEAN",
                                          "BIGINT",
                                          "TINYINT",
                                          "SMALLINT",
                                          "DECIMAL(38, 0)",
                                          "DATE",
                                          "TIME",
                                          "TIMESTAMP",
                                          "VARCHAR",
                                          "VARCHAR",
                                          "DECIMAL(5, 0)",
                                          "INTEGER"});
  CHECK(t.columns[0].primary_key);
  CHECK_FALSE(t.columns[1].primary_key);
  CHECK(t.primary_key == std::vector<std::string>{"a1"});
  CHECK(t.columns[2].pos.line == 4);
  CHECK(t.columns[2].pos.col == 3);

  auto s2 = ParseProgram(
      "create table \"Order\" (k1 int, K2 varchar, v int, primary key (k1, K2)) "
      "with ('materialized' = 'true', 'x' = 'it''s')");
  const CreateTable& t2 = *s2[0].create_table;
  CHECK(t2.name == "Order");
  CHECK(t2.primary_key == std::vector<std::string>{"k1", "K2"});
  CHECK_FALSE(t2.columns[0].type.nullable);
  CHECK_FALSE(t2.columns[1].type.nullable);
  CHECK(t2.columns[2].type.nullable);
  REQUIRE(t2.properties.size() == 2);
  CHECK(t2.properties[0].key == "materialized");
  CHECK(t2.properties[0].value == "true");
  CHECK(t2.properties[1].value == "it's");
  CHECK(t2.properties[1].pos.col == 103);
  CHECK(t2.properties[1].value_pos.col == 109);
}

TEST_CASE("CREATE TABLE: UNIQUE constraints are accepted and ignored", "[parser]") {
  auto stmts = ParseProgram("CREATE TABLE t3(z INTEGER UNIQUE, y INT NOT NULL UNIQUE, UNIQUE (z, y))");
  const CreateTable& t = *stmts[0].create_table;
  REQUIRE(t.columns.size() == 2);
  CHECK(t.columns[0].type.nullable);
  CHECK_FALSE(t.columns[1].type.nullable);
  CHECK(t.primary_key.empty());
}

TEST_CASE("type errors", "[parser]") {
  CHECK(ErrorOf("CREATE TABLE t (a DECIMAL(39, 2))") ==
        "<sql>:1:27: error: DECIMAL precision 39 is above the maximum, 38\n"
        "    1 | CREATE TABLE t (a DECIMAL(39, 2))\n"
        "      |                           ^");
  CHECK(ErrorOf("CREATE TABLE t (a INT, b FOO)") ==
        "<sql>:1:26: error: unknown type 'FOO'\n"
        "    1 | CREATE TABLE t (a INT, b FOO)\n"
        "      |                          ^");
  CHECK(ErrorOf("CREATE TABLE t (a SIGNED)") ==  // SIGNED is only a CAST target
        "<sql>:1:19: error: unknown type 'SIGNED'\n"
        "    1 | CREATE TABLE t (a SIGNED)\n"
        "      |                   ^");
  CHECK(ErrorOf("SELECT CAST(a AS DECIMAL(4, 5))") ==
        "<sql>:1:29: error: DECIMAL scale 5 is larger than its precision 4\n"
        "    1 | SELECT CAST(a AS DECIMAL(4, 5))\n"
        "      |                             ^");
  CHECK(ErrorOf("SELECT CAST(a AS 5)") ==
        "<sql>:1:18: error: expected a type name but found '5'\n"
        "    1 | SELECT CAST(a AS 5)\n"
        "      |                  ^");
}

TEST_CASE("CREATE VIEW variants", "[parser]") {
  std::string sql =
      "CREATE LOCAL VIEW v1 (x, \"Y\") AS SELECT a, b FROM t;\n"
      "create materialized view v2 with ('emit_final' = 'x') as select * from v1;\n"
      "CREATE MATERIALIZED LOCAL VIEW v3 AS (SELECT 1) UNION SELECT 2";
  auto stmts = ParseProgram(sql);
  REQUIRE(stmts.size() == 3);
  const CreateView& v1 = *stmts[0].create_view;
  CHECK(stmts[0].kind == Statement::Kind::kCreateView);
  CHECK(v1.name == "v1");
  CHECK(v1.local);
  CHECK_FALSE(v1.materialized);
  CHECK(v1.column_names == std::vector<std::string>{"x", "Y"});
  CHECK(sql.substr(v1.query_begin, v1.query_end - v1.query_begin) == "SELECT a, b FROM t");
  CHECK(sql.substr(stmts[0].begin, stmts[0].end - stmts[0].begin) ==
        "CREATE LOCAL VIEW v1 (x, \"Y\") AS SELECT a, b FROM t");
  const CreateView& v2 = *stmts[1].create_view;
  CHECK(v2.materialized);
  CHECK_FALSE(v2.local);
  REQUIRE(v2.properties.size() == 1);
  CHECK(v2.properties[0].key == "emit_final");
  CHECK(Show(*v2.query) == "SELECT * FROM v1");
  CHECK(stmts[1].pos.line == 2);
  const CreateView& v3 = *stmts[2].create_view;
  CHECK(v3.materialized);
  CHECK(v3.local);
  CHECK(sql.substr(v3.query_begin, v3.query_end - v3.query_begin) == "(SELECT 1) UNION SELECT 2");
  CHECK(stmts[2].end == sql.size());
}

TEST_CASE("INSERT, DELETE, DROP, CREATE INDEX, bare queries", "[parser]") {
  auto stmts = ParseProgram(
      ";;INSERT INTO t1 VALUES(1,1,'table t1 row 1'), (2, - 3, NULL);\n"
      "INSERT INTO t (b, a) VALUES (1, 2);\n"
      "INSERT INTO t SELECT * FROM u;\n"
      "INSERT INTO t (a) (SELECT a FROM u);\n"
      "DELETE FROM t WHERE a > 1; DELETE FROM t;\n"
      "DROP TABLE t; DROP VIEW IF EXISTS v;\n"
      "CREATE UNIQUE INDEX t1i1 ON t1(x1, (b1)); CREATE INDEX i2 ON t(a);\n"
      "SELECT 1;;");
  REQUIRE(stmts.size() == 11);
  CHECK(stmts[0].kind == Statement::Kind::kInsert);
  const Insert& i0 = *stmts[0].insert;
  CHECK(i0.table == "t1");
  CHECK(i0.columns.empty());
  REQUIRE(i0.rows.size() == 2);
  CHECK(Show(*i0.rows[0][2]) == "'table t1 row 1'");
  CHECK(Show(*i0.rows[1][1]) == "(neg 3)");
  CHECK(Show(*i0.rows[1][2]) == "NULL");
  CHECK(stmts[0].begin == 2);
  CHECK(stmts[1].insert->columns == std::vector<std::string>{"b", "a"});
  CHECK(Show(*stmts[2].insert->query) == "SELECT * FROM u");
  CHECK(stmts[2].insert->rows.empty());
  CHECK(stmts[3].insert->columns == std::vector<std::string>{"a"});
  CHECK(Show(*stmts[3].insert->query) == "SELECT a FROM u");
  CHECK(stmts[4].kind == Statement::Kind::kDelete);
  CHECK(Show(*stmts[4].del->where) == "(> a 1)");
  CHECK(stmts[5].del->table == "t");
  CHECK(stmts[5].del->where == nullptr);
  CHECK(stmts[6].kind == Statement::Kind::kDropTable);
  CHECK(stmts[6].drop_name == "t");
  CHECK_FALSE(stmts[6].if_exists);
  CHECK(stmts[7].kind == Statement::Kind::kDropView);
  CHECK(stmts[7].drop_name == "v");
  CHECK(stmts[7].if_exists);
  CHECK(stmts[8].kind == Statement::Kind::kCreateIndex);
  CHECK(stmts[9].kind == Statement::Kind::kCreateIndex);
  CHECK(stmts[10].kind == Statement::Kind::kQuery);
  CHECK(Show(*stmts[10].query) == "SELECT 1");
}

TEST_CASE("the bank program", "[parser]") {
  std::string sql = kBankProgram;
  auto stmts = ParseProgram(sql);
  REQUIRE(stmts.size() == 4);

  REQUIRE(stmts[0].kind == Statement::Kind::kCreateTable);
  const CreateTable& t = *stmts[0].create_table;
  CHECK(t.name == "transactions");
  REQUIRE(t.columns.size() == 4);
  CHECK(t.columns[0].name == "from_account");
  CHECK(t.columns[0].type.id == TypeId::kInteger);
  CHECK_FALSE(t.columns[0].type.nullable);
  CHECK(t.columns[3].name == "ts");
  CHECK(t.columns[3].type.id == TypeId::kTimestamp);
  CHECK(t.primary_key.empty());
  REQUIRE(t.properties.size() == 1);
  const Property& p = t.properties[0];
  CHECK(p.key == "connectors");
  CHECK(p.pos.line == 6);
  CHECK(p.pos.col == 9);
  CHECK(p.value_pos.line == 6);
  CHECK(p.value_pos.col == 24);
  CHECK(sql[p.value_pos.offset] == '\'');
  CHECK(p.value.starts_with("[{\n    \"transport\": {\n      \"name\": \"datagen\""));
  CHECK(p.value.find("\"amount\": { \"strategy\": \"zipf\", \"range\": [1,1000] },") != std::string::npos);
  CHECK(p.value.ends_with("}\n}]"));
  CHECK(sql.substr(stmts[0].begin, stmts[0].end - stmts[0].begin).ends_with("}]')"));

  const CreateView& credits = *stmts[1].create_view;
  CHECK(credits.name == "credits");
  CHECK_FALSE(credits.materialized);
  CHECK(Show(*credits.query) ==
        "SELECT to_account AS account, SUM( amount) AS credits FROM transactions GROUP BY to_account");
  CHECK(stmts[1].pos.line == 22);
  CHECK(stmts[2].create_view->name == "debits");
  const CreateView& balance = *stmts[3].create_view;
  CHECK(balance.materialized);
  CHECK(Show(*balance.query) ==
        "SELECT credits.account AS account, (- credits debits) AS balance FROM credits | debits "
        "WHERE (= credits.account debits.account)");
  CHECK(sql.substr(balance.query_begin, balance.query_end - balance.query_begin) ==
        "SELECT credits.account AS account, credits - debits AS balance FROM credits, debits "
        "WHERE credits.account = debits.account");
}

TEST_CASE("syntax errors point at the token", "[parser]") {
  CHECK(ErrorOf("SELECT a, FROM t") ==
        "<sql>:1:11: error: expected an expression but found 'FROM'\n"
        "    1 | SELECT a, FROM t\n"
        "      |           ^");
  CHECK(ErrorOf("SELECT f(a, b FROM t") ==
        "<sql>:1:15: error: expected ')' but found 'FROM'\n"
        "    1 | SELECT f(a, b FROM t\n"
        "      |               ^");
  CHECK(ErrorOf("INSERT INTO t VALUES (1, 2") ==
        "<sql>:1:27: error: expected ')' but found end of input\n"
        "    1 | INSERT INTO t VALUES (1, 2\n"
        "      |                           ^");
  CHECK(ErrorOf("SELECT a FROM t\nWHERE a IN (1,, 2)") ==
        "<sql>:2:15: error: expected an expression but found ','\n"
        "    2 | WHERE a IN (1,, 2)\n"
        "      |               ^");
  CHECK(ErrorOf("SELECT a b c FROM t") ==
        "<sql>:1:12: error: expected ';' but found 'c'\n"
        "    1 | SELECT a b c FROM t\n"
        "      |            ^");
  CHECK(ErrorOf("UPDATE t SET a = 1") ==
        "<sql>:1:1: error: expected a statement (CREATE, INSERT, DELETE, DROP, SELECT, SET or LATENESS) "
        "but found 'UPDATE'\n"
        "    1 | UPDATE t SET a = 1\n"
        "      | ^");
  CHECK(ErrorOf("SELECT CASE a END") ==
        "<sql>:1:15: error: expected WHEN but found 'END'\n"
        "    1 | SELECT CASE a END\n"
        "      |               ^");
  CHECK(ErrorOf("SELECT * FROM t LEFT JOIN u") ==
        "<sql>:1:28: error: expected ON or USING but found end of input\n"
        "    1 | SELECT * FROM t LEFT JOIN u\n"
        "      |                            ^");
  CHECK(ErrorOf("SELECT\n\ta +\tFROM t") ==
        "<sql>:2:6: error: expected an expression but found 'FROM'\n"
        "    2 | \ta +\tFROM t\n"
        "      | \t   \t^");
  try {
    ParseQuery("SELECT 1; SELECT 2");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) ==
          "<sql>:1:11: error: expected end of input but found 'SELECT'\n"
          "    1 | SELECT 1; SELECT 2\n"
          "      |           ^");
  }
}

TEST_CASE("errors are mapped through SourceInfo", "[parser]") {
  SourceInfo src{"bank.yaml", 3, 2};
  std::string sql =
      "CREATE VIEW v AS\n"
      "SELECT a, FROM t;\n";
  CHECK(ErrorOf(sql, src) ==
        "bank.yaml:4:13: error: expected an expression but found 'FROM'\n"
        "    4 |   SELECT a, FROM t;\n"
        "      |             ^");
  std::string bank = kBankProgram;
  bank.replace(bank.find("sum(amount) AS debits"), 21, "sum(amount) AS debits,");
  CHECK(ErrorOf(bank, src) ==
        "bank.yaml:25:80: error: expected an expression but found 'FROM'\n"
        "   25 |   CREATE VIEW debits AS SELECT from_account AS account, sum(amount) AS debits, "
        "FROM transactions GROUP BY from_account;\n"
        "      | " +
            std::string(79, ' ') + "^");
  CHECK(FormatSqlError("SELECT x\nFROM t", src, Pos{2, 6, 14}, "unknown table 't'") ==
        "bank.yaml:4:8: error: unknown table 't'\n"
        "    4 |   FROM t\n"
        "      |        ^");
}

TEST_CASE("malformed and truncated input never crashes", "[parser]") {
  std::string bank = kBankProgram;
  // Every prefix of the program either parses or throws fld::Error.
  int errors = 0;
  for (size_t n = 0; n <= bank.size(); ++n) {
    try {
      ParseProgram(std::string_view(bank).substr(0, n));
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kUsage);
      ++errors;
    }
  }
  CHECK(errors > 100);
  std::string q =
      "SELECT a, (b + c) * - 2 FROM (t AS x JOIN u ON x.a = u.a) WHERE a NOT BETWEEN 1 AND 2 "
      "AND CASE WHEN a IN (1, 2) THEN CAST(a AS DECIMAL(5,2)) END IS NOT NULL ORDER BY 1 LIMIT 3";
  for (size_t n = 0; n <= q.size(); ++n) {
    try {
      ParseQuery(std::string_view(q).substr(0, n));
    } catch (const Error&) {
    }
  }
  // Deep nesting is an error, not a stack overflow.
  std::string deep = "SELECT " + std::string(5000, '(') + "1" + std::string(5000, ')');
  CHECK_THROWS_WITH(ParseQuery(deep), Catch::Contains("nested too deeply"));
  std::string minus = "SELECT " + std::string(20000, '-') + "1";
  for (size_t i = 8; i < minus.size(); i += 2) minus[i] = ' ';
  CHECK_THROWS_WITH(ParseQuery(minus), Catch::Contains("nested too deeply"));
  std::string nots;
  for (int i = 0; i < 3000; ++i) nots += "NOT ";
  CHECK_THROWS_WITH(ParseQuery("SELECT " + nots + "a"), Catch::Contains("nested too deeply"));
  std::string subqueries = "SELECT * FROM " + std::string(3000, '(');
  CHECK_THROWS_AS(ParseQuery(subqueries), Error);
  // Moderate nesting is fine.
  std::string ok = "SELECT " + std::string(200, '(') + "1" + std::string(200, ')');
  CHECK(ShowQuery(ok) == "SELECT 1");
}

TEST_CASE("Feldera's type names and column attributes", "[parser]") {
  auto stmts = ParseProgram(
      "SET 'optimize' = 'true';\n"
      "CREATE TABLE t (a INT2 NOT NULL, b INT4 DEFAULT -1, c INT8 REFERENCES u(x), d INT1,\n"
      "  e FLOAT, f FLOAT4, g FLOAT8, h DOUBLE PRECISION, i DEC(5, 2), j NUMERIC, k STRING,\n"
      "  l CHARACTER VARYING(9), m TIMESTAMP(3) LATENESS INTERVAL '1' HOUR, n TIME(6),\n"
      "  o BINARY(4), p VARBINARY, q VARCHAR DEFAULT 'x',\n"
      "  FOREIGN KEY (a) REFERENCES u (y));\n"
      "LATENESS v.m INTERVAL 1 HOUR;");
  REQUIRE(stmts.size() == 3);
  CHECK(stmts[0].kind == Statement::Kind::kSet);
  CHECK(stmts[2].kind == Statement::Kind::kLateness);
  const auto& c = stmts[1].create_table->columns;
  REQUIRE(c.size() == 17);
  TypeId want[] = {TypeId::kSmallInt,  TypeId::kInteger, TypeId::kBigInt,    TypeId::kTinyInt, TypeId::kDouble,
                   TypeId::kReal,      TypeId::kDouble,  TypeId::kDouble,    TypeId::kDecimal, TypeId::kDecimal,
                   TypeId::kVarchar,   TypeId::kVarchar, TypeId::kTimestamp, TypeId::kTime,    TypeId::kBinary,
                   TypeId::kVarbinary, TypeId::kVarchar};
  for (size_t i = 0; i < c.size(); ++i) CHECK(c[i].type.id == want[i]);
  CHECK_FALSE(c[0].type.nullable);
  REQUIRE(c[1].default_value);
  CHECK(Show(*c[1].default_value) == "(neg 1)");
  CHECK(c[8].type.scale == 2);
  CHECK(c[11].type.length == 9);
  CHECK(c[12].lateness == "INTERVAL '1' HOUR");
  CHECK(c[14].type.length == 4);
  CHECK(c[15].type.length == -1);
}

TEST_CASE("binary literals, SAFE_CAST and FILTER", "[parser]") {
  auto q =
      ParseQuery("SELECT X'0a1B', SAFE_CAST(a AS INT), COUNT(*) FILTER (WHERE a > 1), SUM(b) FILTER(WHERE c) FROM t");
  const auto& items = q->select->items;
  REQUIRE(items.size() == 4);
  CHECK(items[0].expr->lit_kind == LiteralKind::kBinary);
  CHECK(items[0].expr->text == "0a1B");
  CHECK(items[1].expr->safe_cast);
  REQUIRE(items[2].expr->filter);
  CHECK(items[2].expr->star_arg);
  CHECK(Show(*items[2].expr->filter) == "(> a 1)");
  REQUIRE(items[3].expr->filter);
  CHECK(ErrorOf("SELECT X'0g'").find("hex digits") != std::string::npos);
  CHECK(ErrorOf("SELECT X'abc'").find("even number") != std::string::npos);
}

TEST_CASE("window functions: OVER, frames and named windows", "[parser]") {
  auto q = ParseQuery(
      "SELECT SUM(a) OVER (PARTITION BY b, c ORDER BY d DESC NULLS LAST ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING), "
      "ROW_NUMBER() OVER w, COUNT(*) OVER (w RANGE 5 PRECEDING), LAG(a, 2, 0) OVER () "
      "FROM t window WINDOW w AS (ORDER BY a)");
  const auto& items = q->select->items;
  REQUIRE(items.size() == 4);
  const WindowSpec& w0 = *items[0].expr->over;
  CHECK(w0.partition_by.size() == 2);
  REQUIRE(w0.order_by.size() == 1);
  CHECK(w0.order_by[0].desc);
  CHECK(w0.order_by[0].nulls_first == false);
  CHECK(w0.has_frame);
  CHECK(w0.unit == FrameUnit::kRows);
  CHECK(w0.start.kind == FrameBound::Kind::kPreceding);
  CHECK(Show(*w0.start.offset) == "2");
  CHECK(w0.end.kind == FrameBound::Kind::kFollowing);
  CHECK(items[1].expr->over->ref == "w");
  const WindowSpec& w2 = *items[2].expr->over;
  CHECK(w2.ref == "w");
  CHECK(w2.unit == FrameUnit::kRange);
  CHECK(w2.start.kind == FrameBound::Kind::kPreceding);
  CHECK(w2.end.kind == FrameBound::Kind::kCurrentRow);
  CHECK(items[3].expr->args.size() == 3);
  CHECK(!items[3].expr->over->has_frame);
  {
    auto g = ParseQuery(
        "SELECT SUM(a) OVER (ORDER BY b GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE TIES), "
        "SUM(a) OVER (ORDER BY b ROWS 2 PRECEDING EXCLUDE CURRENT ROW), "
        "SUM(a) OVER (ORDER BY b RANGE UNBOUNDED PRECEDING EXCLUDE GROUP), "
        "SUM(a) OVER (ORDER BY b ROWS 1 PRECEDING EXCLUDE NO OTHERS) FROM t");
    const auto& gi = g->select->items;
    CHECK(gi[0].expr->over->unit == FrameUnit::kGroups);
    CHECK(gi[0].expr->over->exclude == FrameExclude::kTies);
    CHECK(gi[1].expr->over->exclude == FrameExclude::kCurrentRow);
    CHECK(gi[2].expr->over->exclude == FrameExclude::kGroup);
    CHECK(gi[3].expr->over->exclude == FrameExclude::kNoOthers);
    CHECK(ErrorOf("SELECT SUM(a) OVER (ORDER BY b ROWS 1 PRECEDING EXCLUDE ALL) FROM t")
              .find("CURRENT ROW, GROUP, TIES or NO OTHERS") != std::string::npos);
  }
  // `FROM t window WINDOW w AS (...)`: the alias `window`, then the WINDOW clause.
  CHECK(q->select->from[0]->alias == "window");
  REQUIRE(q->select->windows.size() == 1);
  CHECK(q->select->windows[0].first == "w");
  CHECK(q->select->windows[0].second->order_by.size() == 1);
}

TEST_CASE("special call forms, array syntax, UNNEST, CREATE FUNCTION and CREATE TYPE", "[parser]") {
  auto item = [](const std::string& sql) {
    auto q = ParseQuery(sql);
    return Show(*q->select->items[0].expr);
  };
  CHECK(item("SELECT SUBSTRING(s FROM 2 FOR 3)") == item("SELECT SUBSTRING(s, 2, 3)"));
  CHECK(item("SELECT POSITION('a' IN s)") == item("SELECT POSITION('a', s)"));
  CHECK(item("SELECT TRIM(LEADING 'x' FROM s)") == item("SELECT F('LEADING', 'x', s)").replace(0, 1, "TRIM"));
  CHECK(item("SELECT TRIM(s)") == item("SELECT F('BOTH', ' ', s)").replace(0, 1, "TRIM"));
  CHECK(item("SELECT OVERLAY(s PLACING 'a' FROM 2)") == item("SELECT F(s, 'a', 2)").replace(0, 1, "OVERLAY"));
  CHECK(item("SELECT ARRAY[1, 2][1]") == item("SELECT ITEM(ARRAY(1, 2), 1)"));
  CHECK(item("SELECT s NOT RLIKE 'a'") == item("SELECT NOT RLIKE(s, 'a')"));
  auto q = ParseQuery("SELECT x FROM t, UNNEST(t.a) WITH ORDINALITY AS u(x, n)");
  REQUIRE(q->select->from.size() == 2);
  const TableRef& u = *q->select->from[1];
  CHECK(u.kind == TableRef::Kind::kUnnest);
  CHECK(u.with_ordinality);
  CHECK(u.alias == "u");
  CHECK(u.column_names == std::vector<std::string>{"x", "n"});
  auto q2 = ParseQuery("SELECT x FROM t, UNNEST(t.a, t.b) AS u(x, y)");
  CHECK(q2->select->from[1]->unnest.size() == 2);
  auto q3 = ParseQuery("SELECT ARRAY(SELECT v FROM w ORDER BY v), ARRAY(1, 2) FROM t");
  CHECK(q3->select->items[0].expr->kind == ExprKind::kSubquery);
  CHECK(q3->select->items[0].expr->name == "ARRAY");
  CHECK(q3->select->items[1].expr->kind == ExprKind::kFunction);
  auto prog = ParseProgram(
      "CREATE TYPE a_t AS (street VARCHAR, city VARCHAR);\nCREATE TYPE id_t AS STRING;\n"
      "CREATE FUNCTION f(x id_t NOT NULL, y a_t) RETURNS INT NOT NULL AS LENGTH(x);\n"
      "CREATE FUNCTION g(s VARBINARY) RETURNS VARCHAR;\nCREATE TABLE t (id id_t, a a_t)");
  REQUIRE(prog.size() == 5);
  CHECK(prog[0].kind == Statement::Kind::kCreateType);
  const CreateFunction& f = *prog[2].create_function;
  CHECK(f.params.size() == 2);
  CHECK(!f.params[0].second.nullable);
  CHECK(f.params[1].second.id == TypeId::kRow);
  CHECK(!f.result.nullable);
  CHECK(f.body);
  CHECK(!prog[3].create_function->body);
  CHECK(prog[4].create_table->columns[1].type.ToString() == "ROW(street VARCHAR, city VARCHAR)");
  CHECK(ErrorOf("CREATE TYPE x AS INT; CREATE TYPE x AS INT").find("already declared") != std::string::npos);
}

TEST_CASE("what is not supported yet is refused by name", "[parser]") {
  CHECK(ErrorOf("SELECT * FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' HOUR))")
            .find("table function CUMULATE is not supported (TUMBLE, HOP and SESSION are)") != std::string::npos);
  CHECK(ErrorOf("SELECT INTERVAL '1' MONTH TO DAY").find("not a valid interval range") != std::string::npos);
  CHECK(ErrorOf("CREATE AGGREGATE a(x INT) RETURNS INT").find("CREATE AGGREGATE is not supported yet") !=
        std::string::npos);
  CHECK(ParseProgram("CREATE TABLE t (a INT ARRAY)")[0].create_table->columns[0].type.id == TypeId::kArray);
  CHECK(ParseProgram("CREATE TABLE t (a ROW(x INT))")[0].create_table->columns[0].type.FieldName(0) == "x");
  CHECK(ParseProgram("CREATE TABLE t (a MAP<INT, INT>)")[0].create_table->columns[0].type.ToString() ==
        "MAP<INTEGER, INTEGER>");
  CHECK(ParseProgram("CREATE TABLE t (a VARIANT)")[0].create_table->columns[0].type.id == TypeId::kVariant);
}

TEST_CASE("INTERVAL literals, time units and window table functions", "[parser]") {
  auto q = ParseQuery(
      "SELECT INTERVAL '1 10:30' DAY TO MINUTE, INTERVAL 2 SECONDS, INTERVAL -3 DAY, EXTRACT(DOW FROM ts), "
      "FLOOR(ts TO HOUR), (a - b) MONTH, x AS 'day' FROM TABLE(HOP(\"TIMECOL\" => DESCRIPTOR(ts), \"DATA\" => TABLE t, "
      "\"SIZE\" => INTERVAL '1' HOUR, \"SLIDE\" => INTERVAL '10' MINUTE)) AS w");
  const auto& items = q->select->items;
  REQUIRE(items.size() == 7);
  CHECK(items[0].expr->lit_kind == LiteralKind::kInterval);
  CHECK(items[0].expr->text == "1 10:30");
  CHECK(items[0].expr->cast_type.ToString() == "INTERVAL DAY TO MINUTE");
  CHECK(items[1].expr->text == "2");
  CHECK(items[1].expr->cast_type.ToString() == "INTERVAL SECOND");
  CHECK(items[2].expr->text == "-3");
  CHECK(items[3].expr->name == "EXTRACT");
  CHECK(items[3].expr->args[0]->name == "DOW");
  CHECK(items[4].expr->text == "TO");
  CHECK(items[5].expr->kind == ExprKind::kCast);
  CHECK(items[5].expr->cast_type.id == TypeId::kIntervalYearMonth);
  CHECK(items[6].alias == "day");
  const TableRef& w = *q->select->from[0];
  REQUIRE(w.kind == TableRef::Kind::kWindow);
  CHECK(w.name == "HOP");
  CHECK(w.alias == "w");
  CHECK(w.left->name == "t");
  CHECK(w.using_cols == std::vector<std::string>{"ts"});
  REQUIRE(w.window_args.size() == 2);  // slide, size in positional order
  CHECK(w.window_args[0]->text == "10");
  CHECK(w.window_args[1]->text == "1");
}

TEST_CASE("SESSION table functions: with and without a key, positional or named", "[parser]") {
  auto keyed =
      ParseQuery("SELECT * FROM TABLE(SESSION(TABLE t, DESCRIPTOR(ts), DESCRIPTOR(a, b), INTERVAL '5' MINUTE))");
  const TableRef& k = *keyed->select->from[0];
  CHECK(k.name == "SESSION");
  CHECK(k.using_cols == std::vector<std::string>{"ts"});
  CHECK(k.window_keys == std::vector<std::string>{"a", "b"});
  REQUIRE(k.window_args.size() == 1);
  CHECK(k.window_args[0]->text == "5");
  auto plain = ParseQuery("SELECT * FROM TABLE(SESSION(TABLE t, DESCRIPTOR(ts), INTERVAL '5' MINUTE))");
  CHECK(plain->select->from[0]->window_keys.empty());
  CHECK(plain->select->from[0]->window_args.size() == 1);
  auto named = ParseQuery(
      "SELECT * FROM TABLE(SESSION(\"DATA\" => TABLE t, \"TIMECOL\" => DESCRIPTOR(ts), \"SIZE\" => INTERVAL '5' "
      "MINUTE, \"KEY\" => DESCRIPTOR(a)))");
  CHECK(named->select->from[0]->window_keys == std::vector<std::string>{"a"});
  CHECK(ErrorOf("SELECT * FROM TABLE(SESSION(TABLE t, DESCRIPTOR(ts), DESCRIPTOR(a)))").find("needs its SIZE") !=
        std::string::npos);
}

TEST_CASE("DECLARE RECURSIVE VIEW declares a name and typed columns", "[parser]") {
  auto stmts = ParseProgram("DECLARE RECURSIVE VIEW v (x INT NOT NULL, y VARCHAR)");
  REQUIRE(stmts.size() == 1);
  CHECK(stmts[0].kind == Statement::Kind::kDeclareRecursiveView);
  const CreateTable& d = *stmts[0].create_table;
  CHECK(d.name == "v");
  REQUIRE(d.columns.size() == 2);
  CHECK(!d.columns[0].type.nullable);
  CHECK(d.columns[1].type.nullable);
  CHECK(ErrorOf("DECLARE VIEW v (x INT)").find("expected RECURSIVE") != std::string::npos);
  CHECK(ErrorOf("DECLARE RECURSIVE VIEW v").find("expected '('") != std::string::npos);
}

TEST_CASE("GROUP BY grouping sets multiply out into index lists", "[parser]") {
  auto sets = [](const std::string& group_by) {
    auto q = ParseQuery("SELECT 1 FROM t GROUP BY " + group_by);
    std::string out;
    for (const auto& set : q->select->grouping_sets) {
      out += "(";
      for (size_t i = 0; i < set.size(); ++i) out += (i ? "," : "") + q->select->group_by[set[i]]->name;
      out += ")";
    }
    return out;
  };
  CHECK(sets("a, b").empty());  // a plain GROUP BY
  CHECK(sets("ROLLUP(a, b)") == "(a,b)(a)()");
  CHECK(sets("CUBE(a, b)") == "(a,b)(a)(b)()");
  CHECK(sets("GROUPING SETS ((a, b), a, ())") == "(a,b)(a)()");
  CHECK(sets("a, ROLLUP(b, (c, d))") == "(a,b,c,d)(a,b)(a)");
  CHECK(sets("ROLLUP(a), CUBE(b)") == "(a,b)(a)(b)()");
  CHECK(sets("GROUPING SETS (ROLLUP(a), b)") == "(a)()(b)");
  CHECK(sets("()") == "()");
  CHECK(ErrorOf("SELECT 1 FROM t GROUP BY ROLLUP()").find("expected") != std::string::npos);
}

}  // namespace fld::sql
