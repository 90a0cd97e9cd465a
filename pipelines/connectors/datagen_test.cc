#include "pipelines/connectors/datagen.h"

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "core/common/error.h"
#include "core/types/variant.h"

namespace fld {
namespace {

using Json = nlohmann::json;

Schema BankSchema() {
  Schema s;
  s.fields = {{"from_account", SqlType::Of(TypeId::kInteger)},
              {"to_account", SqlType::Of(TypeId::kInteger)},
              {"amount", SqlType::Of(TypeId::kInteger)},
              {"ts", SqlType::Of(TypeId::kTimestamp)}};
  return s;
}

Json BankConfig(uint64_t limit, std::optional<uint64_t> seed = 42) {
  Json fields = {{"from_account", {{"strategy", "uniform"}, {"range", {1, 10}}}},
                 {"to_account", {{"strategy", "uniform"}, {"range", {1, 10}}}},
                 {"amount", {{"strategy", "zipf"}, {"range", {1, 1000}}}},
                 {"ts", {{"scale", 1000}}}};
  Json cfg = {{"plan", Json::array({Json{{"limit", limit}, {"fields", fields}}})}};
  if (seed) cfg["seed"] = *seed;
  return cfg;
}

ConnectorContext Ctx(ThreadPool* pool = nullptr) {
  ConnectorContext ctx;
  ctx.relation = "transactions";
  ctx.where = "bank.yaml:3";
  ctx.pool = pool;
  return ctx;
}

// Reads until the connector ends (or `max_reads` reads), concatenated.
Batch ReadAll(InputConnector& c, size_t max_reads = 1000000) {
  std::vector<Batch> parts;
  for (size_t k = 0; k < max_reads && !c.AtEnd(); ++k) parts.push_back(c.Read());
  return Concat(parts);
}

void CheckSameBatches(const Batch& a, const Batch& b) {
  REQUIRE(a.size() == b.size());
  REQUIRE(a.width() == b.width());
  for (size_t c = 0; c < a.width(); ++c) {
    const Column& x = *a.cols[c];
    const Column& y = *b.cols[c];
    REQUIRE(x.phys == y.phys);
    CHECK(x.i64 == y.i64);
    CHECK(x.f64 == y.f64);
    CHECK(x.str == y.str);
    CHECK(x.HasNulls() == y.HasNulls());
    if (x.HasNulls() && y.HasNulls()) CHECK(x.nulls == y.nulls);
  }
  CHECK(a.weights == b.weights);
}

std::string ErrorOf(const Json& cfg, const Schema& schema) {
  try {
    DatagenConnector c(cfg, schema, Ctx());
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUsage);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("datagen bank schema: ranges, timestamps and the zipf skew", "[datagen]") {
  const uint64_t n = 400000;
  DatagenConnector c(BankConfig(n), BankSchema(), Ctx());
  CHECK(c.total_records() == n);
  Batch b = ReadAll(c);
  REQUIRE(b.size() == n);
  CHECK(c.AtEnd());
  CHECK(c.records() == n);
  std::map<int64_t, uint64_t> from_counts, amount_counts;
  for (size_t i = 0; i < n; ++i) {
    int64_t from = b.cols[0]->i64[i], to = b.cols[1]->i64[i], amount = b.cols[2]->i64[i];
    REQUIRE(from >= 1);
    REQUIRE(from < 10);
    REQUIRE(to >= 1);
    REQUIRE(to < 10);
    REQUIRE(amount >= 1);
    REQUIRE(amount < 1000);
    // ts = 1970-01-01 00:00:00 + i seconds, in microseconds.
    REQUIRE(b.cols[3]->i64[i] == static_cast<int64_t>(i) * 1000000);
    REQUIRE(b.weights[i] == 1);
    ++from_counts[from];
    ++amount_counts[amount];
  }
  REQUIRE(from_counts.size() == 9);
  for (auto [v, count] : from_counts) CHECK(std::fabs(static_cast<double>(count) - n / 9.0) < 0.03 * n / 9.0);

  // Zipf with e = 1 over 1..999: P(k) = (1/k) / H(999). Chi-square over k = 1..30 plus the tail.
  double h = 0;
  for (int k = 1; k <= 999; ++k) h += 1.0 / k;
  double chi2 = 0, tail_expected = n, tail_observed = n;
  for (int k = 1; k <= 30; ++k) {
    double expected = n / (k * h);
    double observed = static_cast<double>(amount_counts[k]);
    chi2 += (observed - expected) * (observed - expected) / expected;
    tail_expected -= expected;
    tail_observed -= observed;
  }
  chi2 += (tail_observed - tail_expected) * (tail_observed - tail_expected) / tail_expected;
  CHECK(chi2 < 80);  // 30 degrees of freedom: p(chi2 > 80) is ~1e-6
  for (auto [v, count] : amount_counts) CHECK(count <= amount_counts[1]);
  CHECK(amount_counts[1] > 1.8 * amount_counts[2]);
}

TEST_CASE("datagen rows do not depend on threads, batch sizes or chunk sizes", "[datagen]") {
  const uint64_t n = 123457;
  Json cfg = BankConfig(n);
  DatagenConnector one(cfg, BankSchema(), Ctx(), 100000);
  Batch expected = ReadAll(one);

  ThreadPool pool(4);
  DatagenConnector four(cfg, BankSchema(), Ctx(&pool), 7777);
  CheckSameBatches(ReadAll(four), expected);

  Json small_chunks = cfg;
  small_chunks["plan"][0]["worker_chunk_size"] = 333;
  DatagenConnector chunked(small_chunks, BankSchema(), Ctx(&pool), 50000);
  CheckSameBatches(ReadAll(chunked), expected);

  Json own_workers = cfg;
  own_workers["workers"] = 3;
  DatagenConnector own(own_workers, BankSchema(), Ctx(), 1000);
  CheckSameBatches(ReadAll(own), expected);

  // A different seed gives different rows.
  DatagenConnector other(BankConfig(n, 43), BankSchema(), Ctx(), 100000);
  Batch o = ReadAll(other);
  CHECK(o.cols[0]->i64 != expected.cols[0]->i64);
}

TEST_CASE("datagen never overwrites a batch the caller still holds", "[datagen]") {
  DatagenConnector c(BankConfig(100000), BankSchema(), Ctx(), 1000);
  Batch kept = c.Read();
  Batch copy_of_kept = c.Generate(0, 0, 1000);
  std::vector<int64_t> seen_ts;
  for (int k = 0; k < 20; ++k) {
    Batch b = c.Read();  // dropped at once: its columns may be reused by the next Read
    seen_ts.push_back(b.cols[3]->i64.front());
  }
  CheckSameBatches(kept, copy_of_kept);
  for (int k = 0; k < 20; ++k) CHECK(seen_ts[k] == (k + 1) * 1000 * 1000000LL);
  // Reused columns carry the right rows too.
  Batch later = c.Read();
  CheckSameBatches(later, c.Generate(0, 21000, 22000));
}

TEST_CASE("datagen Seek regenerates the same rows, also with a random seed", "[datagen]") {
  for (bool fixed_seed : {true, false}) {
    Json cfg = BankConfig(50000, fixed_seed ? std::optional<uint64_t>(7) : std::nullopt);
    DatagenConnector a(cfg, BankSchema(), Ctx(), 6000);
    a.Read();
    a.Read();
    Json pos = a.Position();
    CHECK(pos["seed"].get<uint64_t>() == a.seed());
    CHECK(pos["plan"] == 0);
    CHECK(pos["row"] == 12000);
    Batch rest = ReadAll(a);

    DatagenConnector b(cfg, BankSchema(), Ctx(), 9000);
    b.Seek(pos);
    CHECK(b.records() == 12000);
    CHECK(b.seed() == a.seed());
    Batch again = ReadAll(b);
    CheckSameBatches(again, rest);
    CHECK(b.records() == 50000);
    // Generate() of the same range agrees too.
    CheckSameBatches(b.Generate(0, 12000, 50000), rest);
  }
}

TEST_CASE("datagen increment follows a + (i * scale) mod (b - a)", "[datagen]") {
  Schema s;
  s.fields = {{"x", SqlType::Of(TypeId::kBigInt)},  {"y", SqlType::Of(TypeId::kInteger)},
              {"b", SqlType::Of(TypeId::kBoolean)}, {"s", SqlType::Of(TypeId::kVarchar)},
              {"d", SqlType::Of(TypeId::kDate)},    {"t", SqlType::Of(TypeId::kTime)},
              {"v", SqlType::Of(TypeId::kVarchar)}, {"m", SqlType::Decimal(6, 2)},
              {"f", SqlType::Of(TypeId::kDouble)},  {"tiny", SqlType::Of(TypeId::kTinyInt)}};
  Json cfg = {{"seed", 1},
              {"plan",
               {{{"limit", 1000},
                 {"fields",
                  {{"x", {{"range", {10, 20}}, {"scale", 3}}},
                   {"d", {{"range", {"2024-02-27", "2024-03-02"}}}},
                   {"t", {{"scale", 1500}}},
                   {"v", {{"values", {"a", "b", "c"}}}},
                   {"m", {{"range", {1.5, 2}}, {"scale", 7}}},
                   {"f", {{"scale", 2}}}}}}}}};
  DatagenConnector c(cfg, s, Ctx());
  Batch b = ReadAll(c);
  REQUIRE(b.size() == 1000);
  const int64_t d0 = DaysFromCivil(2024, 2, 27);
  for (int64_t i = 0; i < 1000; ++i) {
    CHECK(b.cols[0]->i64[i] == 10 + (i * 3) % 10);
    CHECK(b.cols[1]->i64[i] == i);
    CHECK(b.cols[2]->i64[i] == i % 2);
    CHECK(b.cols[3]->str[i] == std::to_string(i));
    CHECK(b.cols[4]->i64[i] == d0 + i % 4);  // 2024 is a leap year: 27, 28, 29 Feb, 1 Mar
    CHECK(b.cols[5]->i64[i] == (i * 1500 % 86400000) * 1000);
    CHECK(b.cols[6]->str[i] == std::string(1, static_cast<char>('a' + i % 3)));
    CHECK(b.cols[7]->i64[i] == 150 + (i * 7) % 50);
    CHECK(b.cols[8]->f64[i] == 2.0 * i);
    CHECK(b.cols[9]->i64[i] == i % 128);
  }
}

TEST_CASE("datagen uniform stays in the half-open range and covers it", "[datagen]") {
  Schema s;
  s.fields = {{"a", SqlType::Of(TypeId::kInteger)},  {"ts", SqlType::Of(TypeId::kTimestamp)},
              {"f", SqlType::Of(TypeId::kDouble)},   {"m", SqlType::Decimal(10, 2)},
              {"big", SqlType::Of(TypeId::kBigInt)}, {"sm", SqlType::Of(TypeId::kSmallInt)},
              {"r", SqlType::Of(TypeId::kReal)},     {"b", SqlType::Of(TypeId::kBoolean)}};
  Json cfg = {
      {"seed", 99},
      {"plan",
       {{{"limit", 20000},
         {"fields",
          {{"a", {{"strategy", "uniform"}, {"range", {-2, 1}}, {"scale", 5}}},
           {"ts",
            {{"strategy", "uniform"}, {"range", {"2024-01-01 00:00:00", "2024-01-01 01:00:00"}}, {"scale", 1000}}},
           {"f", {{"strategy", "uniform"}}},
           {"m", {{"strategy", "uniform"}, {"range", {"1.00", "2.00"}}}},
           {"big", {{"strategy", "uniform"}}},
           {"sm", {{"strategy", "uniform"}}},
           {"r", {{"strategy", "uniform"}, {"range", {-1.5, 1.5}}}},
           {"b", {{"strategy", "uniform"}}}}}}}}};
  DatagenConnector c(cfg, s, Ctx());
  Batch b = ReadAll(c);
  REQUIRE(b.size() == 20000);
  std::set<int64_t> a_values, ts_values;
  int64_t t0 = DaysFromCivil(2024, 1, 1) * kMicrosPerDay;
  int64_t big_negative = 0, big_positive = 0, sm_min = 0, sm_max = 0, trues = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    a_values.insert(b.cols[0]->i64[i]);
    int64_t ts = b.cols[1]->i64[i];
    REQUIRE(ts >= t0);
    REQUIRE(ts < t0 + 3600 * kMicrosPerSecond);
    REQUIRE((ts - t0) % kMicrosPerSecond == 0);
    ts_values.insert(ts);
    double f = b.cols[2]->f64[i];
    REQUIRE(f >= 0.0);
    REQUIRE(f < 1.0);
    int64_t m = b.cols[3]->i64[i];
    REQUIRE(m >= 100);
    REQUIRE(m < 200);
    (b.cols[4]->i64[i] < 0 ? big_negative : big_positive)++;
    int64_t sm = b.cols[5]->i64[i];
    REQUIRE(sm >= -32768);
    REQUIRE(sm <= 32767);
    sm_min = std::min(sm_min, sm);
    sm_max = std::max(sm_max, sm);
    double r = b.cols[6]->f64[i];
    REQUIRE(r >= -1.5);
    REQUIRE(r < 1.5);
    REQUIRE(r == static_cast<double>(static_cast<float>(r)));
    trues += b.cols[7]->i64[i];
    REQUIRE((b.cols[7]->i64[i] == 0 || b.cols[7]->i64[i] == 1));
  }
  CHECK(a_values == std::set<int64_t>{-10, -5, 0});
  CHECK(ts_values.size() > 3000);  // 3600 possible seconds, 20000 draws
  CHECK(big_negative > 9000);
  CHECK(big_positive > 9000);
  CHECK(sm_min < -30000);
  CHECK(sm_max > 30000);
  CHECK(std::abs(trues - 10000) < 500);
}

TEST_CASE("datagen zipf: rejection-inversion for large ranges and values lists", "[datagen]") {
  Schema s;
  s.fields = {{"k", SqlType::Of(TypeId::kBigInt)}, {"v", SqlType::Of(TypeId::kVarchar)}};
  const int64_t base = 1000;
  Json cfg = {{"seed", 5},
              {"plan",
               {{{"limit", 200000},
                 {"fields",
                  {{"k", {{"strategy", "zipf"}, {"range", {base, base + (1 << 22)}}, {"e", 1.2}}},
                   {"v", {{"strategy", "zipf"}, {"values", {"x", "y", "z"}}, {"e", 2}}}}}}}}};
  DatagenConnector c(cfg, s, Ctx());
  Batch b = ReadAll(c);
  std::map<int64_t, uint64_t> counts;
  std::map<std::string, uint64_t> vcounts;
  for (size_t i = 0; i < b.size(); ++i) {
    int64_t k = b.cols[0]->i64[i];
    REQUIRE(k >= base);
    REQUIRE(k < base + (1 << 22));
    ++counts[k];
    ++vcounts[b.cols[1]->str[i]];
  }
  // P(1)/P(2) = 2^1.2, P(1)/P(3) = 3^1.2.
  double r12 = static_cast<double>(counts[base]) / counts[base + 1];
  double r13 = static_cast<double>(counts[base]) / counts[base + 2];
  CHECK(std::fabs(r12 - std::pow(2.0, 1.2)) < 0.1);
  CHECK(std::fabs(r13 - std::pow(3.0, 1.2)) < 0.2);
  // values with e = 2: P = (1, 1/4, 1/9) / (1 + 1/4 + 1/9).
  const double z = 1 + 0.25 + 1.0 / 9;
  CHECK(std::fabs(vcounts["x"] / 200000.0 - 1 / z) < 0.01);
  CHECK(std::fabs(vcounts["y"] / 200000.0 - 0.25 / z) < 0.01);
  CHECK(std::fabs(vcounts["z"] / 200000.0 - (1.0 / 9) / z) < 0.01);
}

TEST_CASE("datagen null_percentage makes that share NULL", "[datagen]") {
  Schema s;
  s.fields = {{"a", SqlType::Of(TypeId::kInteger)},
              {"n", SqlType::Of(TypeId::kVarchar)},
              {"all", SqlType::Of(TypeId::kDouble)}};
  Json cfg = {{"seed", 11},
              {"plan",
               {{{"limit", 50000},
                 {"fields",
                  {{"a", {{"null_percentage", 30}}},
                   {"n", {{"strategy", "name"}, {"null_percentage", 5}}},
                   {"all", {{"null_percentage", 100}}}}}}}}};
  DatagenConnector c(cfg, s, Ctx());
  Batch b = ReadAll(c);
  uint64_t a_nulls = 0, n_nulls = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    if (b.cols[0]->IsNull(i))
      ++a_nulls;
    else
      CHECK(b.cols[0]->i64[i] == static_cast<int64_t>(i));
    if (b.cols[1]->IsNull(i))
      ++n_nulls;
    else
      CHECK(b.cols[1]->str[i].find(' ') != std::string::npos);
    CHECK(b.cols[2]->IsNull(i));
  }
  CHECK(std::fabs(a_nulls / 50000.0 - 0.30) < 0.015);
  CHECK(std::fabs(n_nulls / 50000.0 - 0.05) < 0.01);
}

TEST_CASE("datagen string fakers", "[datagen]") {
  Schema s;
  s.fields = {{"w", SqlType::Of(TypeId::kVarchar)},
              {"ws", SqlType::Of(TypeId::kVarchar)},
              {"se", SqlType::Of(TypeId::kVarchar)},
              {"e", SqlType::Of(TypeId::kVarchar)},
              {"c", SqlType::Of(TypeId::kVarchar)},
              {"short",
               [] {
                 auto t = SqlType::Of(TypeId::kVarchar);
                 t.length = 3;
                 return t;
               }()},
              {"st", SqlType::Of(TypeId::kVarchar)},
              {"sa", SqlType::Of(TypeId::kVarchar)},
              {"bz", SqlType::Of(TypeId::kVarchar)}};
  Json cfg = {{"seed", 3},
              {"plan",
               {{{"limit", 2000},
                 {"fields",
                  {{"w", {{"strategy", "word"}}},
                   {"ws", {{"strategy", "words"}}},
                   {"se", {{"strategy", "sentence"}}},
                   {"e", {{"strategy", "email"}}},
                   {"c", {{"strategy", "city_name"}}},
                   {"short", {{"strategy", "city_name"}}},
                   {"st", {{"strategy", "street_name"}}},
                   {"sa", {{"strategy", "state_abbr"}}},
                   {"bz", {{"strategy", "buzzword"}}}}}}}}};
  DatagenConnector c(cfg, s, Ctx());
  Batch b = ReadAll(c);
  std::set<std::string> words, states;
  for (size_t i = 0; i < b.size(); ++i) {
    const std::string& w = b.cols[0]->str[i];
    CHECK(!w.empty());
    CHECK(w.find(' ') == std::string::npos);
    words.insert(w);
    CHECK(!b.cols[1]->str[i].empty());
    const std::string& se = b.cols[2]->str[i];
    CHECK(se.back() == '.');
    CHECK(std::isupper(static_cast<unsigned char>(se[0])));
    const std::string& e = b.cols[3]->str[i];
    CHECK(e.find('@') != std::string::npos);
    CHECK(e.find('.') < e.find('@'));
    CHECK(!b.cols[4]->str[i].empty());
    CHECK(b.cols[5]->str[i].size() <= 3);
    const std::string& st = b.cols[6]->str[i];
    CHECK(st.find(' ') != std::string::npos);
    CHECK(std::isupper(static_cast<unsigned char>(st[0])));
    const std::string& sa = b.cols[7]->str[i];
    CHECK(sa.size() == 2);
    CHECK((std::isupper(static_cast<unsigned char>(sa[0])) && std::isupper(static_cast<unsigned char>(sa[1]))));
    states.insert(sa);
    CHECK(!b.cols[8]->str[i].empty());
  }
  CHECK(states.size() == 50);  // 2000 draws over 50 codes reach every one
  CHECK(words.size() > 20);
}

TEST_CASE("datagen plans run in order across reads; limits, AtEnd and total_records", "[datagen]") {
  Schema s;
  s.fields = {{"x", SqlType::Of(TypeId::kInteger)}};
  Json cfg = {
      {"seed", 1},
      {"plan", {{{"limit", 5}}, {{"limit", 0}}, {{"limit", 7}, {"fields", {{"x", {{"values", {100, 200}}}}}}}}}};
  DatagenConnector c(cfg, s, Ctx(), 4);
  CHECK(c.total_records() == 12);
  std::vector<int64_t> got;
  std::vector<size_t> sizes;
  while (!c.AtEnd()) {
    Batch b = c.Read();
    sizes.push_back(b.size());
    for (int64_t v : b.cols[0]->i64) got.push_back(v);
  }
  CHECK(sizes == std::vector<size_t>{4, 4, 4});
  CHECK(got == std::vector<int64_t>{0, 1, 2, 3, 4, 100, 200, 100, 200, 100, 200, 100});
  CHECK(c.Position() == Json{{"seed", 1}, {"plan", 3}, {"row", 0}});
  CHECK(c.Read().empty());

  DatagenConnector endless(Json{{"seed", 1}}, s, Ctx(), 10);
  CHECK_FALSE(endless.total_records().has_value());
  CHECK(endless.Read().size() == 10);
  CHECK_FALSE(endless.AtEnd());

  DatagenConnector empty(Json{{"plan", {{{"limit", 0}}}}}, s, Ctx());
  CHECK(empty.AtEnd());
}

TEST_CASE("datagen rate limits the rows per second", "[datagen]") {
  Schema s;
  s.fields = {{"x", SqlType::Of(TypeId::kInteger)}};
  const double rate = 5000;
  DatagenConnector c(Json{{"seed", 1}, {"plan", {{{"rate", rate}}}}}, s, Ctx());
  auto start = std::chrono::steady_clock::now();
  uint64_t rows = 0;
  double elapsed = 0;
  while (elapsed < 0.3) {
    rows += c.Read().size();
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(rows <= rate * elapsed + 2);
  }
  CHECK(rows > rate * 0.3 * 0.5);
}

TEST_CASE("datagen configuration errors name the key and where it was written", "[datagen]") {
  Schema bank = BankSchema();
  std::string e = ErrorOf(Json{{"plan", {{{"fields", {{"amout", {{"strategy", "uniform"}}}}}}}}}, bank);
  CHECK(e ==
        "bank.yaml:3: datagen: unknown field 'amout' in plan 0 (table transactions has from_account, to_account, "
        "amount, ts)");

  e = ErrorOf(Json{{"seeed", 1}}, bank);
  CHECK(e.find("bank.yaml:3") != std::string::npos);
  CHECK(e.find("'seeed'") != std::string::npos);

  e = ErrorOf(Json{{"plan", {{{"limt", 5}}}}}, bank);
  CHECK(e.find("'limt'") != std::string::npos);

  e = ErrorOf(Json{{"plan", {{{"fields", {{"amount", {{"strategy", "uniform"}, {"rnage", {1, 2}}}}}}}}}}, bank);
  CHECK(e.find("'rnage'") != std::string::npos);
  CHECK(e.find("'amount'") != std::string::npos);

  e = ErrorOf(Json{{"plan", {{{"fields", {{"amount", {{"strategy", "name"}}}}}}}}}, bank);
  CHECK(e.find("\"name\"") != std::string::npos);
  CHECK(e.find("INTEGER") != std::string::npos);

  e = ErrorOf(Json{{"plan", {{{"fields", {{"amount", {{"strategy", "gaussian"}}}}}}}}}, bank);
  CHECK(e.find("gaussian") != std::string::npos);

  e = ErrorOf(Json{{"plan", {{{"fields", {{"amount", {{"range", {5, 5}}}}}}}}}}, bank);
  CHECK(e.find("empty range") != std::string::npos);

  e = ErrorOf(Json{{"plan", {{{"fields", {{"amount", {{"range", {0, 3000000000LL}}}}}}}}}}, bank);
  CHECK(e.find("exceeds") != std::string::npos);

  e = ErrorOf(Json{{"plan", {{{"limit", "ten"}}}}}, bank);
  CHECK(e.find("'limit'") != std::string::npos);

  e = ErrorOf(Json{{"plan", {{{"fields", {{"amount", {{"scale", 1.5}}}}}}}}}, bank);
  CHECK(e.find("'scale'") != std::string::npos);

  Schema nn;
  nn.fields = {{"id", SqlType::Of(TypeId::kInteger, false)}};
  e = ErrorOf(Json{{"plan", {{{"fields", {{"id", {{"null_percentage", 10}}}}}}}}}, nn);
  CHECK(e.find("null_percentage") != std::string::npos);
  CHECK(e.find("NOT NULL") != std::string::npos);

  Schema geo;
  geo.fields = {{"g", SqlType::Of(TypeId::kGeometry)}};
  e = ErrorOf(Json::object(), geo);
  CHECK(e.find("datagen does not generate GEOMETRY values") != std::string::npos);

  Schema bin;
  bin.fields = {{"b", SqlType::Of(TypeId::kVarbinary)}, {"a", SqlType::Array(SqlType::Of(TypeId::kInteger))}};
  auto bin_error = [&](const char* fields) {
    return ErrorOf(Json::parse(std::string(R"({"plan": [{"fields": )") + fields + "}]}"), bin);
  };
  e = bin_error(R"({"b": {"value": {"range": [0, 300]}}})");
  CHECK(e.find("field 'b' in plan 0.value: bytes must be in [0, 256)") != std::string::npos);
  e = bin_error(R"({"b": {"range": [-1, 3]}})");
  CHECK(e.find("number of bytes") != std::string::npos);
  e = bin_error(R"({"a": {"key": {"range": [0, 3]}}})");
  CHECK(e.find("unknown key 'key'") != std::string::npos);
  e = bin_error(R"({"a": {"value": {"strategy": "name"}}})");
  CHECK(e.find("field 'a' in plan 0.value") != std::string::npos);
  e = bin_error(R"({"a": {"values": [[1, "x"]]}})");
  CHECK(e.find("'values' for field 'a'") != std::string::npos);
  e = bin_error(R"({"a": {"range": [0, 100000000]}})");
  CHECK(e.find("number of elements") != std::string::npos);
  Schema row;
  row.fields = {{"r", SqlType::Row({SqlType::Of(TypeId::kInteger)})}};
  e = ErrorOf(Json::parse(R"({"plan": [{"fields": {"r": {"fields": {"nope": {}}}}}]})"), row);
  CHECK(e.find("has no field 'nope'") != std::string::npos);

  e = ErrorOf(Json{{"plan", {{{"fields", {{"ts", {{"range", {"2024-01-01", "yesterday"}}}}}}}}}}, bank);
  CHECK(e.find("yesterday") != std::string::npos);

  // Seeking to nonsense is refused.
  DatagenConnector c(Json{{"seed", 1}, {"plan", {{{"limit", 10}}}}}, bank, Ctx());
  CHECK_THROWS_AS(c.Seek(Json{{"seed", 1}, {"plan", 0}, {"row", 11}}), Error);
  CHECK_THROWS_AS(c.Seek(Json{{"plan", 0}}), Error);
}

TEST_CASE("datagen VARBINARY as Feldera's demo 07 configures it: length range, uniform bytes", "[datagen]") {
  Schema s;
  s.fields = {{"entry", SqlType::Of(TypeId::kVarbinary)}};
  // The demo's connector config, verbatim (plus a seed).
  Json cfg = Json::parse(R"({"seed": 5, "plan": [{"limit": 4000, "rate": 1, "fields": {"entry": {"range": [1, 20],
      "strategy": "uniform", "value": {"strategy": "uniform", "range": [0, 256]}}}}]})");
  DatagenConnector c(cfg, s, Ctx());
  c.SetThrottle(false);
  Batch b = ReadAll(c);
  REQUIRE(b.size() == 4000);
  std::map<size_t, int> lengths;
  std::set<int> bytes;
  for (const std::string& v : b.cols[0]->str) {
    ++lengths[v.size()];
    for (unsigned char x : v) bytes.insert(x);
  }
  CHECK(lengths.begin()->first == 1);
  CHECK(lengths.rbegin()->first == 19);
  CHECK(lengths.size() == 19);
  CHECK(bytes.size() == 256);
  // Increment (the default): length a + i mod (b - a), bytes 0, 1, 2, ...
  Json inc = {{"plan", {{{"limit", 10}, {"fields", {{"entry", {{"range", {0, 4}}}}}}}}}};
  DatagenConnector ci(inc, s, Ctx());
  Batch bi = ReadAll(ci);
  for (size_t i = 0; i < 10; ++i) {
    std::string want;
    for (size_t j = 0; j < i % 4; ++j) want.push_back(static_cast<char>(j));
    CHECK(bi.cols[0]->str[i] == want);
  }
}

TEST_CASE("datagen ARRAY, MAP, ROW, VARIANT and 38-digit DECIMAL follow their settings", "[datagen]") {
  const SqlType kInt = SqlType::Of(TypeId::kInteger);
  const SqlType kVar = SqlType::Of(TypeId::kVarchar);
  SqlType row_t = SqlType::Row({kInt, SqlType::Of(TypeId::kDouble)});
  row_t.names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"a", "b"});
  Schema s;
  s.fields = {{"arr", SqlType::Array(kInt)},
              {"words", SqlType::Array(kVar)},
              {"m", SqlType::Map(kVar.WithNullable(false), kInt)},
              {"r", row_t},
              {"v", SqlType::Of(TypeId::kVariant)},
              {"amt", SqlType::Decimal(38, 2)},
              {"big", SqlType::Decimal(38, 0)},
              {"holes", SqlType::Array(kInt)},
              {"picked", SqlType::Array(kInt)}};
  Json cfg = Json::parse(R"({"seed": 11, "plan": [{"limit": 3000, "fields": {
      "arr": {"range": [2, 5]},
      "words": {"strategy": "uniform", "value": {"values": ["x", "y"]}},
      "m": {"strategy": "uniform", "range": [1, 4], "value": {"strategy": "uniform", "range": [10, 20]}},
      "r": {"fields": {"A": {"range": [5, 10]}, "b": {"strategy": "uniform", "range": [0, 1]}}},
      "v": {"scale": 7},
      "amt": {"strategy": "zipf", "range": [1, 10000]},
      "big": {"range": ["100000000000000000000000000000", "100000000000000000000000000005"]},
      "holes": {"range": [3, 4], "value": {"null_percentage": 50}},
      "picked": {"strategy": "uniform", "values": [[1, 2], [3], null]}}}]})");
  DatagenConnector c(cfg, s, Ctx());
  Batch b = ReadAll(c);
  REQUIRE(b.size() == 3000);
  std::map<std::string, int> amt_counts;
  int null_elements = 0, null_picked = 0;
  std::set<std::string> picked;
  for (size_t i = 0; i < b.size(); ++i) {
    // arr: increment length 2 + i mod 3, elements 0, 1, ...
    std::vector<Value> arr = DecodeArrayValue(b.cols[0]->str[i], kInt);
    REQUIRE(arr.size() == 2 + i % 3);
    for (size_t j = 0; j < arr.size(); ++j) CHECK(arr[j].i == static_cast<int64_t>(j));
    // words: elements from the list.
    for (const Value& w : DecodeArrayValue(b.cols[1]->str[i], kVar)) CHECK((w.s == "x" || w.s == "y"));
    CHECK(DecodeArrayValue(b.cols[1]->str[i], kVar).size() < 5);
    // m: keys are the decimal text of their index (increment), values in [10, 20).
    auto entries = DecodeMapValue(b.cols[2]->str[i], s.fields[2].type);
    CHECK((entries.size() >= 1 && entries.size() <= 3));
    for (const auto& [k, v] : entries) {
      CHECK((k.s == "0" || k.s == "1" || k.s == "2"));
      CHECK((v.i >= 10 && v.i < 20));
    }
    // r: a = 5 + i mod 5, b uniform in [0, 1).
    std::vector<Value> r = DecodeRowValue(b.cols[3]->str[i], *row_t.fields);
    CHECK(r[0].i == 5 + static_cast<int64_t>(i % 5));
    CHECK((r[1].d >= 0 && r[1].d < 1));
    // v: a BIGINT VARIANT, 7 * i.
    CHECK(VariantTypeName(b.cols[4]->str[i]) == "BIGINT");
    CHECK(VariantToJson(b.cols[4]->str[i]) == std::to_string(7 * i));
    // amt: steps of 0.01 in [1, 10000).
    Int128 amt = DecodeInt128(b.cols[5]->str[i]);
    CHECK((amt >= 100 && amt < 1000000));
    ++amt_counts[FormatDecimal(amt, 2)];
    // big: 10^29 + i mod 5.
    CHECK(DecodeInt128(b.cols[6]->str[i]) == Pow10Wide(29) + static_cast<Int128>(i % 5));
    // holes: 3 elements, each NULL half the time.
    std::vector<Value> h = DecodeArrayValue(b.cols[7]->str[i], kInt);
    REQUIRE(h.size() == 3);
    for (const Value& x : h) null_elements += x.IsNull();
    // picked: one of the listed arrays, or NULL.
    if (b.cols[8]->IsNull(i))
      ++null_picked;
    else
      picked.insert(FormatValue(Value::String(b.cols[8]->str[i]), s.fields[8].type));
  }
  // Zipf: 1.00 is the most frequent amount.
  auto top = std::max_element(amt_counts.begin(), amt_counts.end(),
                              [](const auto& x, const auto& y) { return x.second < y.second; });
  CHECK(top->first == "1.00");
  CHECK((null_elements > 3000 * 3 * 4 / 10 && null_elements < 3000 * 3 * 6 / 10));
  CHECK((null_picked > 800 && null_picked < 1200));
  CHECK(picked == std::set<std::string>{"[1, 2]", "[3]"});

  // The same rows whatever the threads, batch sizes and chunks; Seek resumes exactly.
  ThreadPool pool(3);
  Json chunked = cfg;
  chunked["plan"][0]["worker_chunk_size"] = 77;
  DatagenConnector c2(chunked, s, Ctx(&pool), 500);
  CheckSameBatches(ReadAll(c2), b);
  DatagenConnector c3(cfg, s, Ctx(), 1000);
  c3.Read();
  Json pos = c3.Position();
  DatagenConnector c4(cfg, s, Ctx(), 333);
  c4.Seek(pos);
  CheckSameBatches(ReadAll(c4), c.Generate(0, 1000, 3000));
}

TEST_CASE("datagen throughput on the bank schema", "[.bench]") {
  const uint64_t n = 50000000;
  for (size_t threads : {1, 2}) {
    ThreadPool pool(threads);
    DatagenConnector c(BankConfig(n), BankSchema(), Ctx(&pool));
    auto start = std::chrono::steady_clock::now();
    uint64_t rows = 0, checksum = 0;
    while (!c.AtEnd()) {
      Batch b = c.Read();
      rows += b.size();
      checksum += static_cast<uint64_t>(b.cols[2]->i64[0]);
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    WARN(fmt::format("datagen bank schema, {} thread(s): {} rows in {:.2f} s = {:.1f} M rows/s (checksum {})", threads,
                     rows, s, rows / s / 1e6, checksum));
    CHECK(rows == n);
  }
}

}  // namespace fld
