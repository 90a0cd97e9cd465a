// Dates, times, intervals and windows: Feldera's documented examples (docs "Date- and
// Time-Related Operations"), refusals by name, and TUMBLE/HOP views maintained incrementally
// over random insert/delete steps compared with a recomputation from scratch. The expected
// values of every function against PostgreSQL are in tests/slt/regress/time.test.
#include "core/expr/time.h"

#include <fmt/format.h>

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

using Catch::Matchers::Contains;

std::unique_ptr<Circuit> Compile(const std::string& program) {
  return plan::CompileProgram(sql::ParseProgram(program), program, {}, nullptr);
}

// The error message compiling `program` gives ("" when it compiles).
std::string CompileError(const std::string& program) {
  try {
    Compile(program);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The value of a constant SQL expression, as text.
std::string Eval(const std::string& expr) {
  const std::string program = "CREATE MATERIALIZED VIEW v AS SELECT " + expr + " AS x";
  auto circuit = Compile(program);
  circuit->Step();
  int r = circuit->FindRelation("v");
  Batch b = circuit->Contents(r);
  REQUIRE(b.size() == 1);
  return FormatValue(b.Get(0, 0), circuit->relations()[r].schema.fields[0].type);
}

const int64_t kUs = 1000000;

}  // namespace

TEST_CASE("Feldera's documented date/time examples", "[time]") {
  CHECK(Eval("DATE_TRUNC(DATE '2020-01-10', MONTH)") == "2020-01-01");
  CHECK(Eval("TIME_TRUNC(TIME '12:34:56.78', MINUTE)") == "12:34:00");
  CHECK(Eval("TIMESTAMP_TRUNC(TIMESTAMP '2020-01-10 10:00:00', MONTH)") == "2020-01-01 00:00:00");
  CHECK(Eval("FORMAT_DATE('%Y-%m', DATE '2020-10-10')") == "2020-10");
  CHECK(Eval("PARSE_DATE(' %Y-%m-%d', '   2020-10-01')") == "2020-10-01");
  CHECK(Eval("PARSE_TIME('%H:%M', '10:10')") == "10:10:00");
  CHECK(Eval("PARSE_TIMESTAMP('%Y-%m-%d %H:%M:%S', '2020-10-01 00:00:00')") == "2020-10-01 00:00:00");
  // A format without enough fields for the type is an error; text that does not match is NULL.
  CHECK_THROWS_WITH(Eval("PARSE_TIME('%I:%M:%S', '10:00:00')"), Contains("does not give a time of day"));
  CHECK(Eval("PARSE_DATE('%Y-%m-%d', '2020-13-01')") == "NULL");
  // TIMESTAMPADD: to a DATE, hours make a TIMESTAMP and days keep a DATE.
  CHECK(Eval("TIMESTAMPADD(HOUR, 5, DATE '2020-01-01')") == "2020-01-01 05:00:00");
  CHECK(Eval("TIMESTAMPADD(DAY, -1, DATE '2020-01-01')") == "2019-12-31");
  // A month is elapsed when the day and time are at least the start's.
  CHECK(Eval("TIMESTAMPDIFF(MONTH, TIMESTAMP '2020-01-31 10:00:00', TIMESTAMP '2020-02-29 10:00:00')") == "0");
  CHECK(Eval("TIMESTAMPDIFF(MONTH, TIMESTAMP '2020-01-29 10:00:00', TIMESTAMP '2020-02-29 10:00:00')") == "1");
  // TIME arithmetic wraps around midnight; a long interval leaves a TIME unchanged.
  CHECK(Eval("TIME '23:30:00' + INTERVAL '1' HOUR") == "00:30:00");
  CHECK(Eval("TIME '00:30:00' - INTERVAL '1:45' HOUR TO MINUTE") == "22:45:00");
  CHECK(Eval("TIME '10:00:00' + INTERVAL '2' YEAR") == "10:00:00");
  // DATE arithmetic uses whole days, rounded down.
  CHECK(Eval("DATE '2020-01-10' + INTERVAL '36' HOUR") == "2020-01-11");
  CHECK(Eval("DATE '2020-01-10' - INTERVAL '1' HOUR") == "2020-01-09");
  CHECK(Eval("DATE '2020-01-31' + INTERVAL '1' MONTH") == "2020-02-29");
  // EXTRACT from intervals; DAYOFWEEK is Sunday 1 .. Saturday 7.
  CHECK(Eval("EXTRACT(HOUR FROM INTERVAL '1 10:30' DAY TO MINUTE)") == "10");
  CHECK(Eval("EXTRACT(MONTH FROM INTERVAL '20-07' YEAR TO MONTH)") == "7");
  CHECK(Eval("DAYOFWEEK(DATE '2024-03-03')") == "1");
  // Interval arithmetic, comparison and conversion to numbers (the last field's unit).
  CHECK(Eval("CAST(INTERVAL '80.001' SECOND * 2 AS BIGINT)") == "160");
  CHECK(Eval("CAST(INTERVAL '80:01.001' MINUTE TO SECOND AS BIGINT)") == "4801");
  CHECK(Eval("CAST(INTERVAL '10 10' DAY TO HOUR AS BIGINT)") == "250");
  CHECK(Eval("INTERVAL '1' DAY > INTERVAL '23' HOUR") == "true");
  CHECK(Eval("CAST(-INTERVAL '3' MONTH + INTERVAL '1' YEAR AS INT)") == "9");
  CHECK(Eval("CAST(ABS(INTERVAL '-5' MINUTE) AS INT)") == "5");
  CHECK(Eval("CAST((DATE '2020-03-01' - DATE '2020-02-01') DAY AS INT)") == "29");
  CHECK(Eval("CAST((TIMESTAMP '2021-03-01 00:00:00' - TIMESTAMP '2020-02-01 00:00:01') YEAR TO MONTH AS INT)") == "12");
}

TEST_CASE("Interval literals", "[time]") {
  using F = IntervalField;
  int64_t v = 0;
  CHECK((ParseIntervalLiteral("10", F::kDay, F::kDay, &v) && v == 10 * 86400 * kUs));
  CHECK((ParseIntervalLiteral("10 10:30:40.999", F::kDay, F::kSecond, &v) &&
         v == ((10 * 24 + 10) * 3600 + 30 * 60 + 40) * kUs + 999000));
  CHECK((ParseIntervalLiteral("-1 2:03:04", F::kDay, F::kSecond, &v) && v == -(86400 + 7384) * kUs));
  CHECK((ParseIntervalLiteral("20-07", F::kYear, F::kMonth, &v) && v == 247));
  CHECK((ParseIntervalLiteral("80:01.001", F::kMinute, F::kSecond, &v) && v == 4801 * kUs + 1000));
  CHECK((ParseIntervalLiteral("12:10", F::kHour, F::kMinute, &v) && v == 730 * 60 * kUs));
  CHECK_FALSE(ParseIntervalLiteral("1:2", F::kDay, F::kSecond, &v));
  CHECK_FALSE(ParseIntervalLiteral("x", F::kSecond, F::kSecond, &v));
  CHECK_THAT(CompileError("CREATE VIEW v AS SELECT CAST(INTERVAL '1:2' DAY TO HOUR AS INT) AS x"),
             Contains("is not a valid INTERVAL DAY TO HOUR"));
}

TEST_CASE("strftime-style formats", "[time]") {
  const SqlType ts = SqlType::Of(TypeId::kTimestamp);
  // 2001-07-08 00:34:59.026490 (chrono's examples)
  const int64_t t = (DaysFromCivil(2001, 7, 8) * 86400 + 34 * 60 + 59) * kUs + 26490;
  CHECK(FormatWithPattern("%Y %C %y %m %b %B %h %d %e", ts, t) == "2001 20 01 07 Jul July Jul 08  8");
  CHECK(FormatWithPattern("%a %A %w %u %j %D %F", ts, t) == "Sun Sunday 0 7 189 07/08/01 2001-07-08");
  CHECK(FormatWithPattern("%H %k %I %l %P %p %M %S %f %.f %.3f %R %T %s", ts, t) ==
        "00  0 12 12 am AM 34 59 026490000 .026490 .026 00:34 00:34:59 994552499");
  CHECK(FormatWithPattern("%-d/%-m %%", ts, t) == "8/7 %");
  CHECK_THROWS_AS(FormatWithPattern("%Q", ts, t), Error);
  int64_t out = 0;
  CHECK((ParseWithPattern("%d %b %Y %I:%M %p", "05 Mar 2021 05:45 PM", ts, &out) &&
         out == (DaysFromCivil(2021, 3, 5) * 86400 + 17 * 3600 + 45 * 60) * kUs));
  CHECK_FALSE(ParseWithPattern("%Y-%m-%d %H:%M", "2021-03-05 10:00 trailing", ts, &out));
}

TEST_CASE("Unsupported date/time features are refused by name", "[time]") {
  const std::string t = "CREATE TABLE t(id INT, ts TIMESTAMP, d DATE);\n";
  CHECK(CompileError(t + "CREATE VIEW v AS SELECT NOW() - INTERVAL 7 DAYS AS x FROM t").empty());  // supported
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT SESSION(ts, INTERVAL '1' HOUR) AS x FROM t"),
             Contains("SESSION(...) is allowed only as a GROUP BY item"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT HOP_END(ts, INTERVAL '1' HOUR, INTERVAL '3' HOUR) AS x FROM t "
                              "GROUP BY HOP(ts, INTERVAL '1' HOUR, INTERVAL '2' HOUR)"),
             Contains("HOP_END needs GROUP BY HOP(...) with the same arguments"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT COUNT(*) AS x FROM t GROUP BY HOP(ts, INTERVAL '1' HOUR, "
                              "INTERVAL '2' HOUR), SESSION(ts, INTERVAL '1' HOUR)"),
             Contains("only one HOP or SESSION is allowed in GROUP BY"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT COUNT(*) AS x FROM t GROUP BY SESSION(ts, INTERVAL '1' MONTH)"),
             Contains("SESSION needs a day-time INTERVAL gap"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT COUNT(*) AS x FROM t GROUP BY HOP(ts, INTERVAL '1' MONTH, "
                              "INTERVAL '2' DAY)"),
             Contains("all in months/years or all in days or less"));
  CHECK_THAT(CompileError("CREATE TABLE t(i INTERVAL DAY)"), Contains("cannot be an INTERVAL"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT (ts - ts) SECOND AS x FROM t"),
             Contains("Feldera cannot output INTERVAL values"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT ts - ts AS x FROM t"), Contains("needs a unit"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT COUNT(*) AS x FROM t GROUP BY TUMBLE(ts, INTERVAL '1' MONTH, "
                              "INTERVAL '1' DAY)"),
             Contains("a window sized in months or years takes its offset in months or years"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT TUMBLE_END(ts, INTERVAL '1' HOUR) FROM t "
                              "GROUP BY TUMBLE(ts, INTERVAL '2' HOUR)"),
             Contains("needs GROUP BY TUMBLE(...) with the same arguments"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT EXTRACT(DOW FROM INTERVAL '1' DAY) AS x"),
             Contains("DOW does not apply to INTERVAL DAY"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v WITH ('emit_final' = 'd') AS SELECT d FROM t"),
             Contains("has no waterline"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(d), "
                              "INTERVAL '1' DAY))"),
             Contains("must be a TIMESTAMP"));
  CHECK_THAT(CompileError(t + "CREATE VIEW v AS SELECT d + 1 AS x FROM t"), Contains("cannot apply arithmetic"));
}

// Random inserts and deletes of (k, ts) rows; the TUMBLE and HOP views after each step equal a
// recomputation over the rows accumulated so far.
TEST_CASE("TUMBLE and HOP windows are incremental", "[time]") {
  const std::string program = R"(CREATE TABLE t(k INT, ts TIMESTAMP NOT NULL);
CREATE MATERIALIZED VIEW tumble AS SELECT k, TUMBLE_START(ts, INTERVAL '10' SECOND) AS s,
  TUMBLE_END(ts, INTERVAL '10' SECOND) AS e, COUNT(*) AS n FROM t GROUP BY k, TUMBLE(ts, INTERVAL '10' SECOND);
CREATE MATERIALIZED VIEW hop AS SELECT k, window_start, window_end, COUNT(*) AS n
  FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL 3 SECOND, INTERVAL 10 SECOND, INTERVAL 1 SECOND))
  GROUP BY k, window_start, window_end;)";
  auto circuit = Compile(program);
  const int table = circuit->FindRelation("t");
  std::mt19937 rng(7);
  std::vector<std::pair<int64_t, int64_t>> live;  // (k, ts) with multiplicity
  const SqlType tst = SqlType::Of(TypeId::kTimestamp);
  auto fmt_ts = [&](int64_t us) { return FormatValue(Value::Int(us), tst); };
  for (int step = 0; step < 25; ++step) {
    BatchBuilder b(circuit->relations()[table].schema.PhysTypes());
    const int n = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < n; ++i) {
      if (!live.empty() && rng() % 3 == 0) {
        size_t j = rng() % live.size();
        std::vector<Value> row{Value::Int(live[j].first), Value::Int(live[j].second)};
        b.AppendRow(row, -1);
        live.erase(live.begin() + static_cast<long>(j));
      } else {
        // timestamps around the epoch, some before it
        int64_t k = rng() % 3, ts = (static_cast<int64_t>(rng() % 120000) - 20000) * 1000;
        std::vector<Value> row{Value::Int(k), Value::Int(ts)};
        b.AppendRow(row, 1);
        live.push_back({k, ts});
      }
    }
    circuit->Push(table, b.Finish());
    circuit->Step();
    // Recomputation: windows by brute force over candidate starts.
    std::map<std::string, int64_t> want_tumble, want_hop;
    for (const auto& [k, ts] : live) {
      int64_t s = ts - ((ts % (10 * kUs)) + 10 * kUs) % (10 * kUs);
      want_tumble[fmt::format("{}|{}|{}", k, fmt_ts(s), fmt_ts(s + 10 * kUs))]++;
      for (int64_t w = -40; w <= 40; ++w) {
        int64_t start = w * 3 * kUs + kUs;
        if (start <= ts && ts < start + 10 * kUs)
          want_hop[fmt::format("{}|{}|{}", k, fmt_ts(start), fmt_ts(start + 10 * kUs))]++;
      }
    }
    for (const auto& [view, want] : {std::pair{"tumble", &want_tumble}, std::pair{"hop", &want_hop}}) {
      int r = circuit->FindRelation(view);
      Batch got = circuit->Contents(r);
      std::map<std::string, int64_t> have;
      const Schema& schema = circuit->relations()[r].schema;
      for (size_t i = 0; i < got.size(); ++i) {
        REQUIRE(got.weights[i] == 1);
        std::string key = fmt::format("{}|{}|{}", FormatValue(got.Get(0, i), schema.fields[0].type),
                                      FormatValue(got.Get(1, i), tst), FormatValue(got.Get(2, i), tst));
        have[key] = got.Get(3, i).i;
      }
      INFO(view << " at step " << step);
      CHECK(have == *want);
    }
  }
}

}  // namespace fld
