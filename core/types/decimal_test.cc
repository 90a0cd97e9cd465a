// DECIMAL up to 38 digits, MAP and VARIANT values: encodings, text forms, casts.
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "core/expr/expr.h"
#include "core/types/types.h"
#include "core/types/variant.h"

namespace fld {
namespace {

Int128 RandomWide(std::mt19937_64& rng) {
  Int128 x = static_cast<Int128>(rng() >> (rng() % 64));
  x = x * static_cast<Int128>(rng() >> (rng() % 64) | 1) % Pow10Wide(38);
  return rng() % 2 ? -x : x;
}

TEST_CASE("DECIMAL(38): the 16-byte encoding orders as the numbers do", "[types]") {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    Int128 a = RandomWide(rng), b = i % 10 == 0 ? a : RandomWide(rng);
    const std::string ea = EncodeInt128(a), eb = EncodeInt128(b);
    CHECK(DecodeInt128(ea) == a);
    CHECK(((ea < eb) == (a < b)));
    CHECK(((ea == eb) == (a == b)));
  }
}

TEST_CASE("DECIMAL(38): text round trip, parsing rounds half away from zero", "[types]") {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 5000; ++i) {
    Int128 x = RandomWide(rng);
    const int scale = static_cast<int>(rng() % 39);
    Int128 back;
    REQUIRE(ParseDecimalText(FormatDecimal(x, scale), scale, &back));
    CHECK(back == x);
  }
  CHECK(FormatDecimal(-Pow10Wide(38) + 1, 10) == "-9999999999999999999999999999.9999999999");
  CHECK(FormatDecimal(-5, 3) == "-0.005");
  Int128 v;
  REQUIRE(ParseDecimalText("1234.125", 2, &v));
  CHECK(v == 123413);
  REQUIRE(ParseDecimalText("-1234.125", 2, &v));
  CHECK(v == -123413);
  REQUIRE(ParseDecimalText("1.5e3", 1, &v));
  CHECK(v == 15000);
  CHECK_FALSE(ParseDecimalText("1e39", 0, &v));
  CHECK_FALSE(ParseDecimalText("12a", 0, &v));
}

TEST_CASE("DECIMAL casts round as Feldera documents; overflow names the value", "[types]") {
  // docs.feldera.com/docs/sql/decimal.md: DECIMAL(8, 4) -> DECIMAL(6, 2).
  const SqlType from = SqlType::Decimal(8, 4), to = SqlType::Decimal(6, 2);
  const std::pair<int64_t, int64_t> kCases[] = {{12341250, 123413}, {-12341250, -123413}, {12341264, 123413},
                                                {12341234, 123412}, {-12341264, -123413}, {-12341234, -123412}};
  for (auto [in, out] : kCases) CHECK(CastValue(Value::Int(in), from, to).i == out);
  CHECK_THROWS_WITH(CastValue(Value::String("1234.1234"), SqlType::Of(TypeId::kVarchar), SqlType::Decimal(6, 3)),
                    Catch::Contains("1234.1234"));
  const SqlType wide = SqlType::Decimal(38, 10);
  Value w = CastValue(Value::String("12345678901234567890.0123456789"), SqlType::Of(TypeId::kVarchar), wide);
  CHECK(FormatValue(w, wide) == "12345678901234567890.0123456789");
  CHECK(FormatValue(CastValue(w, wide, SqlType::Decimal(30, 2)), SqlType::Decimal(30, 2)) == "12345678901234567890.01");
  CHECK_THROWS(CastValue(w, wide, SqlType::Of(TypeId::kBigInt)));  // 1.2e19 is beyond BIGINT
  CHECK(
      CastValue(Value::String(EncodeInt128(-Pow10Wide(19) - 9)), SqlType::Decimal(20, 1), SqlType::Of(TypeId::kBigInt))
          .i == -1000000000000000000);  // truncates toward zero
  CHECK_THROWS(CastValue(w, wide, SqlType::Decimal(18, 0)));
}

TEST_CASE("MAP values: entries in key order, the last duplicate wins, compared as Feldera compares maps", "[types]") {
  const SqlType mt = SqlType::Map(SqlType::Of(TypeId::kVarchar, false), SqlType::Of(TypeId::kInteger));
  auto map = [&](std::vector<std::pair<std::string, int>> kv) {
    std::vector<std::pair<Value, Value>> e;
    for (auto& [k, v] : kv) e.emplace_back(Value::String(k), Value::Int(v));
    return EncodeMapValue(e, mt);
  };
  CHECK(map({{"v", 11}, {"q", 66}}) == map({{"q", 66}, {"v", 11}}));
  CHECK(map({{"v", 11}, {"q", 66}}) < map({{"v", 22}}));  // docs.feldera.com/docs/sql/map.md
  CHECK(map({{"f", 1}, {"v", 0}}) > map({{"f", 1}}));
  CHECK(map({{"a", 1}, {"a", 2}}) == map({{"a", 2}}));
  CHECK(FormatValue(Value::String(map({{"b", 2}, {"a", 1}})), mt) == "{'a'=1, 'b'=2}");
}

TEST_CASE("VARIANT: PARSE_JSON / TO_JSON round trips, runtime types, indexing", "[types]") {
  const char* kJson[] = {"null", "true",          "-5",        "18446744073709551615",
                         "1.50", "\"a\\\"b\\n\"", "[1,[],{}]", "{\"a\":1,\"b\":[2.2,3.3,null]}"};
  for (const char* j : kJson) {
    std::string v;
    REQUIRE(ParseJsonVariant(j, &v));
    CHECK(*VariantJson(v) == j);
  }
  std::string v;
  CHECK_FALSE(ParseJsonVariant("{\"a\":}", &v));
  CHECK_FALSE(ParseJsonVariant("[1,2", &v));
  CHECK_FALSE(ParseJsonVariant("01", &v));
  REQUIRE(ParseJsonVariant(" { \"b\" : [2.2, 3.3], \"a\": 1 } ", &v));
  CHECK(VariantTypeName(v) == "MAP<VARIANT, VARIANT>");
  auto b = VariantIndex(v, Value::String("b"), SqlType::Of(TypeId::kVarchar));
  REQUIRE(b);
  auto second = VariantIndex(*b, Value::Int(2), SqlType::Of(TypeId::kInteger));
  REQUIRE(second);
  CHECK(VariantTypeName(*second) == "DECIMAL(2, 1)");
  Value d;
  REQUIRE(VariantToValue(*second, SqlType::Decimal(8, 2), &d));
  CHECK(d.i == 330);
  CHECK_FALSE(VariantIndex(*b, Value::Int(3), SqlType::Of(TypeId::kInteger)));
  CHECK_FALSE(VariantToValue(*second, SqlType::Of(TypeId::kVarchar), &d));  // no natural conversion: NULL
  CHECK(VariantFromValue(Value::Int(1), SqlType::Of(TypeId::kInteger)) !=
        VariantFromValue(Value::Int(1), SqlType::Of(TypeId::kTinyInt)));
}

}  // namespace
}  // namespace fld
