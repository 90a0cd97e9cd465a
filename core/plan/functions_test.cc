// The scalar function library (core/plan/functions.h), arrays, CREATE FUNCTION and CREATE TYPE,
// through the planner and a compiled circuit. Expected values: sqlite3 3.40.1 (UPPER, LOWER,
// LENGTH, SUBSTR, TRIM, REPLACE, INSTR, ROUND, SQRT, %), Python's math and re modules, and
// the examples of Feldera's SQL reference (string.md, array.md, float.md, decimal.md).
#include "core/plan/functions.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/plan/planner.h"
#include "core/sql/parser.h"

namespace fld::plan {
namespace {

// The one row of `SELECT <exprs>` (after `prelude`), its values formatted and joined by '|'.
std::string Eval(const std::string& exprs, const std::string& prelude = "") {
  std::string program = prelude + "\nCREATE MATERIALIZED VIEW v AS SELECT " + exprs + ";";
  auto stmts = sql::ParseProgram(program);
  auto circuit = CompileProgram(stmts, program, {}, nullptr);
  circuit->Step();
  int r = circuit->FindRelation("v");
  Batch b = circuit->Contents(r);
  REQUIRE(b.size() == 1);
  std::string row;
  for (size_t k = 0; k < b.width(); ++k) {
    if (k) row += '|';
    row += FormatValue(b.Get(k, 0), circuit->relations()[r].schema.fields[k].type);
  }
  return row;
}

std::string Error(const std::string& exprs, const std::string& prelude = "") {
  try {
    Eval(exprs, prelude);
  } catch (const fld::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST_CASE("string functions agree with sqlite3 and Feldera's examples", "[functions]") {
  CHECK(Eval("UPPER('tom'), LOWER('TOM'), LENGTH('josé'), CHAR_LENGTH('josé'), OCTET_LENGTH('josé')") ==
        "TOM|tom|4|4|5");
  CHECK(Eval("SUBSTR('Thomas', 2, 3), SUBSTRING('Thomas' FROM 2 FOR 3), SUBSTRING('Thomas' FROM 3), "
             "SUBSTRING('Thomas' FOR 2)") == "hom|hom|omas|Th");
  CHECK(Eval("TRIM(BOTH 'xyz' FROM 'yxTomxx'), TRIM(LEADING 'xyz' FROM 'yxTomxx'), TRIM('  a  '), "
             "LTRIM('  a '), RTRIM(' a  ')") == "Tom|Tomxx|a|a | a");
  CHECK(Eval("REPLACE('abcdefabcdef', 'cd', 'XX'), POSITION('om' IN 'Thomas'), POSITION('z' IN 'Thomas')") ==
        "abXXefabXXef|3|0");
  CHECK(Eval("INITCAP('hi THOMAS'), ASCII('x'), ASCII(''), CHR(65), CONCAT('Post', 'greSQL', 1)") ==
        "Hi Thomas|120|0|A|PostgreSQL1");
  CHECK(Eval("CONCAT_WS(',', 'Post', 'greSQL', NULL, '1'), LEFT('abcde', 2), RIGHT('abcde', 2), REPEAT('Pg', 4), "
             "REPEAT('x', -1)") == "Post,greSQL,1|ab|de|PgPgPgPg|");
  CHECK(Eval("SPLIT_PART('a|b|c|', '|', 2), SPLIT_PART('a|b|c|', '|', -2), SPLIT_PART('a|b|c|', '|', 5)") == "b|c|");
  CHECK(Eval("OVERLAY('Txxxxas' PLACING 'hom' FROM 2 FOR 4), REGEXP_REPLACE('abc123def45', '[0-9]+', '#')") ==
        "Thomas|abc#def#");
  CHECK(Eval("'string' RLIKE 's..i.*', 'string' NOT RLIKE 'x', RLIKE('abc', '^b')") == "true|true|false");
  CHECK(Eval("SPLIT('a|b|c|', '|'), SPLIT(''), CARDINALITY(SPLIT('a,b'))") == "['a', 'b', 'c', '']|[]|2");
  CHECK(Eval("TO_HEX(x'0abc'), TO_INT(x'0abc'), OCTET_LENGTH(x'0abc'), SUBSTRING(x'123456' FROM 3)") ==
        "0abc|2748|2|56");
  CHECK(Eval("UPPER(NULL), LENGTH(CAST(NULL AS VARCHAR)), CONCAT_WS(NULL, 'a')") == "NULL|NULL|NULL");
}

TEST_CASE("numeric functions agree with sqlite3, Python and Feldera's rules", "[functions]") {
  CHECK(Eval("MOD(-8, 3), MOD(8, -3), ROUND(2.567, 2), TRUNCATE(2.567, 1), ROUND(-2.5), BROUND(2.5, 0)") ==
        "-2|2|2.570|2.500|-3.0|2.0");
  CHECK(Eval("SQRT(2), ROUND(CBRT(27), 9), EXP(1), LN(10), LOG10(1000), LOG(8, 2), POWER(2, 10)") ==
        "1.4142135623730951|3|2.718281828459045|2.302585092994046|3|3|1024");
  CHECK(Eval("DEGREES(PI), ATAN2(1, 1), ROUND(2.5e0), ROUND(3.5e0), FLOOR(-1.5), CEIL(-1.5), SIGN(-3.2)") ==
        "180|0.7853981633974483|2|4|-2.0|-1.0|-1.0");
  CHECK(Eval("GREATEST(3, 7, 5), LEAST(3, 7, 5), GREATEST(1, NULL), IS_NAN(0e0 / 0e0), IS_INF(1e308 * 10)") ==
        "7|3|NULL|NULL|true");
  CHECK(Eval("ROUND(1234, -2), FLOOR(7), SIGN(0)") == "1200|7|0");
  CHECK(Error("LN(-1)").find("LN of a negative number") != std::string::npos);
  CHECK(Error("SQRT('a')").find("SQRT needs a number") != std::string::npos);
  CHECK(Error("LOWER(1, 2)").find("LOWER takes 1 argument, not 2") != std::string::npos);
}

TEST_CASE("array values and functions follow Feldera's examples", "[functions]") {
  CHECK(Eval("ARRAY[2, 3][2], ARRAY[2, 3][3], ARRAY[2, 3][0], CARDINALITY(ARRAY[2, 3]), ARRAY()") ==
        "3|NULL|NULL|2|[]");
  CHECK(Eval("ARRAY_APPEND(ARRAY[1, 2], 3), ARRAY_PREPEND(ARRAY[2, 3], 1), ARRAY_APPEND(ARRAY[1], NULL)") ==
        "[1, 2, 3]|[1, 2, 3]|[1, NULL]");
  CHECK(Eval("ARRAY_CONTAINS(ARRAY[1, 2, 3], 2), ARRAY_POSITION(ARRAY[1, 3, 4, 6], 4), ARRAY_POSITION(ARRAY[1], 9)") ==
        "true|3|0");
  CHECK(Eval("ARRAY_DISTINCT(ARRAY[1, 1, 2, 2]), ARRAY_REVERSE(ARRAY[2, 2, 6, 8]), ARRAY_COMPACT(ARRAY[1, NULL])") ==
        "[1, 2]|[8, 6, 2, 2]|[1]");
  CHECK(Eval("SORT_ARRAY(ARRAY[4, 7, 1, NULL]), SORT_ARRAY(ARRAY[4, 7, 1], FALSE), ARRAY_MAX(ARRAY[9, 1, NULL]), "
             "ARRAY_MIN(ARRAY[9, 1, NULL])") == "[NULL, 1, 4, 7]|[7, 4, 1]|9|1");
  CHECK(Eval("ARRAY_TO_STRING(ARRAY[1, 2, 3, NULL, 5], ',', '*'), ARRAY_JOIN(ARRAY['a', NULL, 'b'], '-')") ==
        "1,2,3,*,5|a-b");
  CHECK(Eval("ARRAYS_OVERLAP(ARRAY[1, 2, 3], ARRAY[3, 4, 5]), ARRAY_REMOVE(ARRAY[2, 2, 6, 8], 2), "
             "ARRAY_CONCAT(ARRAY[1, 2, 3], ARRAY[4])") == "true|[6, 8]|[1, 2, 3, 4]");
  CHECK(Eval("ARRAY_EXCEPT(ARRAY[1, 2, 3], ARRAY[3, 1, 4]), ARRAY_INTERSECT(ARRAY[1, 2, 3], ARRAY[3, 1, 4]), "
             "ARRAY_UNION(ARRAY[1, 2, 3], ARRAY[3, 1, 4])") == "[2]|[1, 3]|[1, 2, 3, 4]");
  CHECK(Eval("ARRAY_INSERT(ARRAY[1, 2, 3], 3, 4), ARRAY_REPEAT(3, 4), ELEMENT(ARRAY[2]), ARRAY_SIZE(ARRAY[1])") ==
        "[1, 2, 4, 3]|[3, 3, 3, 3]|2|1");
  CHECK(Eval("ARRAY[1, 2] < ARRAY[1, 3], ARRAY[1] = ARRAY[1], ARRAY[ARRAY[1, 2], ARRAY[3]][2][1]") == "true|true|3");
  CHECK(Eval("ARRAY_APPEND(ARRAY[1], 2.5e0), CAST(ARRAY[1, 2] AS DOUBLE ARRAY)") == "[1, 2.5]|[1, 2]");
  CHECK(Error("ARRAY_CONTAINS(1, 1)").find("needs an ARRAY") != std::string::npos);
}

// Expected values: Spark's documented examples of exists/transform (whose three-valued NULL rule
// Feldera's ARRAY_EXISTS follows); tests/slt/regress/lambdas.test checks more against PostgreSQL.
TEST_CASE("ARRAY_EXISTS and TRANSFORM evaluate a lambda per element", "[functions]") {
  CHECK(Eval("ARRAY_EXISTS(ARRAY[1, 2, 3], x -> x % 2 = 0), ARRAY_EXISTS(ARRAY[1, 2, 3], x -> x % 2 = 10), "
             "ARRAY_EXISTS(ARRAY[1, NULL, 3], x -> x % 2 = 0)") == "true|false|NULL");
  CHECK(Eval("ARRAY_EXISTS(ARRAY[0, NULL, 2, 3, NULL], x -> x IS NULL), ARRAY_EXISTS(ARRAY[1, 2, 3], x -> x IS NULL), "
             "ARRAY_EXISTS(ARRAY(), x -> TRUE)") == "true|false|false");
  CHECK(Eval("TRANSFORM(ARRAY[1, 2, 3], x -> x + 1), TRANSFORM(ARRAY['a', NULL], s -> UPPER(s) || '!'), "
             "TRANSFORM(ARRAY(), x -> x)") == "[2, 3, 4]|['A!', NULL]|[]");
  CHECK(Eval("ARRAY_EXISTS(TRANSFORM(ARRAY[1, 2], x -> x * 2), y -> y = 4), TRANSFORM(ARRAY[1], x -> NULL)") ==
        "true|[NULL]");
  CHECK(Error("ARRAY_EXISTS(ARRAY[1])").find("ARRAY_EXISTS takes 2 arguments") != std::string::npos);
  CHECK(Error("ARRAY_EXISTS(ARRAY[1], 2)").find("needs an ARRAY and a lambda") != std::string::npos);
  CHECK(Error("ARRAY_EXISTS(ARRAY[1], x -> x + 1)").find("needs a BOOLEAN lambda, not INTEGER") != std::string::npos);
  CHECK(Error("ARRAY_EXISTS(1, x -> x > 1)").find("allowed only as the second argument") != std::string::npos);
  CHECK(Error("ABS(x -> x)").find("allowed only as the second argument") != std::string::npos);
  CHECK(Error("TRANSFORM(ARRAY[1], x -> y)").find("y") != std::string::npos);
}

TEST_CASE("GEOMETRY points: ST_POINT and ST_DISTANCE, Euclidean as Feldera's", "[functions]") {
  // Expected distances: Python's math.hypot(x1 - x2, y1 - y2).
  CHECK(Eval("ST_DISTANCE(ST_POINT(-122.4194, 37.7749), ST_POINT(-73.9857, 40.7484))") == "48.52489049900061");
  CHECK(Eval("ST_DISTANCE(ST_POINT(-100.25, 30.125), ST_POINT(-99.5, 31))") == "1.1524430571616109");
  CHECK(Eval("ST_DISTANCE(ST_POINT(0, 0), ST_POINT(3, 4)), ST_POINT(1.5, -2), CAST(NULL AS GEOMETRY)") ==
        "5|POINT (1.5 -2)|NULL");
  CHECK(Eval("ST_DISTANCE(ST_POINT(NULL, 1), ST_POINT(0, 0)), ST_POINT(1, CAST(NULL AS DOUBLE))") == "NULL|NULL");
  CHECK(Eval("ST_POINT(1, 2) = ST_POINT(1, 2), ST_POINT(1, 2) <> ST_POINT(2, 1)") == "true|true");
  CHECK(Error("ST_DISTANCE(1, 2)").find("ST_DISTANCE needs a GEOMETRY (ST_POINT) as argument 1") != std::string::npos);
  CHECK(Error("ST_POINT('a', 1)").find("ST_POINT needs a number as argument 1") != std::string::npos);
  CHECK(Error("ST_POINT(1)").find("ST_POINT") != std::string::npos);
}

TEST_CASE("UNNEST is a flat-map, incremental under inserts and deletes", "[functions]") {
  std::string program =
      "CREATE TABLE t (id INT, a INT ARRAY);\n"
      "CREATE MATERIALIZED VIEW v AS SELECT id, x, n FROM t, UNNEST(t.a) WITH ORDINALITY AS u(x, n);\n"
      "CREATE MATERIALIZED VIEW c AS SELECT x, COUNT(*) AS k FROM t CROSS JOIN UNNEST(t.a) AS x GROUP BY x;";
  auto stmts = sql::ParseProgram(program);
  auto circuit = CompileProgram(stmts, program, {}, nullptr);
  auto push = [&](const std::string& ins, int64_t w) {
    for (const auto& st : sql::ParseProgram(ins)) {
      int t = circuit->FindRelation("t");
      Batch b = RowsFromInsert(*st.insert, circuit->relations()[t].schema, ins, {});
      for (auto& x : b.weights) x = w;
      circuit->Push(t, std::move(b));
    }
    circuit->Step();
  };
  auto rows = [&](const char* view) {
    int r = circuit->FindRelation(view);
    Batch b = circuit->Contents(r);
    std::vector<std::string> out;
    for (size_t i = 0; i < b.size(); ++i) {
      std::string row;
      for (size_t k = 0; k < b.width(); ++k)
        row += (k ? "|" : "") + FormatValue(b.Get(k, i), circuit->relations()[r].schema.fields[k].type);
      for (int64_t w = 0; w < b.weights[i]; ++w) out.push_back(row);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  push("INSERT INTO t VALUES (1, ARRAY[10, 20]), (2, ARRAY[20]), (3, NULL), (4, ARRAY[])", 1);
  CHECK(rows("v") == std::vector<std::string>{"1|10|1", "1|20|2", "2|20|1"});
  CHECK(rows("c") == std::vector<std::string>{"10|1", "20|2"});
  push("INSERT INTO t VALUES (1, ARRAY[10, 20])", -1);
  CHECK(rows("v") == std::vector<std::string>{"2|20|1"});
  CHECK(rows("c") == std::vector<std::string>{"20|1"});
}

TEST_CASE("CREATE FUNCTION with a body is inlined; without one it is an external function", "[functions]") {
  const std::string fns =
      "CREATE FUNCTION count_char(s VARCHAR, c CHAR) RETURNS INT AS LENGTH(s) - LENGTH(REPLACE(s, c, ''));\n"
      "CREATE FUNCTION split_index(s VARCHAR, sep CHAR, idx INT) RETURNS VARCHAR "
      "AS SPLIT(s, CAST(sep AS VARCHAR))[idx + 1];\n"
      "CREATE FUNCTION contains_number(str VARCHAR NOT NULL, value INTEGER) RETURNS BOOLEAN NOT NULL "
      "AS (str LIKE ('%' || CAST(value AS VARCHAR) || '%'));";
  CHECK(Eval("count_char('abcabc', 'c'), split_index('a/b/c', '/', 1), contains_number('YES: 10 NO:5', 5)", fns) ==
        "2|b|true");
  CHECK(Error("count_char('a')", fns).find("count_char takes 2 arguments, not 1") != std::string::npos);
  CHECK(Error("1", "CREATE FUNCTION lower(s VARCHAR) RETURNS VARCHAR AS s;").find("library function") !=
        std::string::npos);
  // Without a body: the plan checks the calls and lists the function for the pipeline.
  std::string program =
      "CREATE FUNCTION base64(s VARBINARY) RETURNS VARCHAR;\n"
      "CREATE TABLE b (e VARBINARY);\nCREATE VIEW v AS SELECT base64(e) AS t FROM b;";
  auto stmts = sql::ParseProgram(program);
  auto circuit = CompileProgram(stmts, program, {}, nullptr);
  REQUIRE(circuit->external_functions().size() == 1);
  CHECK(circuit->external_functions()[0]->name == "base64");
  CHECK(Error("base64(DATE '2020-01-01')", "CREATE FUNCTION base64(s VARBINARY) RETURNS VARCHAR;").find("cannot") !=
        std::string::npos);
}

TEST_CASE("CREATE TYPE names ROW types (with field access) and aliases", "[functions]") {
  const std::string types =
      "CREATE TYPE address_typ AS (street VARCHAR(30), city VARCHAR(20));\n"
      "CREATE TYPE id_t AS STRING;\nCREATE TYPE ia AS INT ARRAY;\n"
      "CREATE TABLE pers (id id_t, a address_typ, xs ia);";
  CHECK(Eval("CAST('x' AS id_t), CAST(ARRAY[1] AS ia)[1]", types) == "x|1");
  std::string program = types + "\nCREATE MATERIALIZED VIEW v AS SELECT pers.a.city AS c FROM pers;";
  auto stmts = sql::ParseProgram(program);
  auto circuit = CompileProgram(stmts, program, {}, nullptr);
  const Schema& s = circuit->relations()[circuit->FindRelation("pers")].schema;
  CHECK(s.fields[0].type.id == TypeId::kVarchar);
  CHECK(s.fields[1].type.ToString() == "ROW(street VARCHAR(30), city VARCHAR(20))");
  CHECK(s.fields[2].type.ToString() == "INTEGER ARRAY");
  CHECK(Error("1", types + "\nCREATE VIEW w AS SELECT pers.a.zip FROM pers;").find("has no field 'zip'") !=
        std::string::npos);
}

}  // namespace
}  // namespace fld::plan
