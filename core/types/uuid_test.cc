// UUID values: text forms in and out, byte order, casts, VARIANT and ROW encodings. Expected
// texts are recomputed here from the bytes (two hex digits per byte, hyphens after bytes 4, 6, 8
// and 10), independently of FormatUuid.
#include <catch2/catch.hpp>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/expr/expr.h"
#include "core/types/types.h"
#include "core/types/variant.h"

namespace fld {
namespace {

std::string RandomBytes(std::mt19937_64& rng) {
  std::string b(16, '\0');
  for (char& c : b) c = static_cast<char>(rng() & 0xff);
  if (rng() % 8 == 0) b[0] = static_cast<char>(0x80);  // high bit set: unsigned order matters
  if (rng() % 8 == 0) b[0] = static_cast<char>(0x7f);
  return b;
}

std::string ExpectedText(const std::string& bytes, bool upper = false, bool hyphens = true) {
  std::string s;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (hyphens && (i == 4 || i == 6 || i == 8 || i == 10)) s += '-';
    char buf[3];
    std::snprintf(buf, sizeof buf, upper ? "%02X" : "%02x",
                  static_cast<unsigned>(static_cast<unsigned char>(bytes[i])));
    s += buf;
  }
  return s;
}

const SqlType kUuid = SqlType::Of(TypeId::kUuid);

}  // namespace

TEST_CASE("UUID text forms parse to the same 16 bytes and print canonically", "[types][uuid]") {
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 500; ++iter) {
    const std::string bytes = RandomBytes(rng);
    const std::string canon = ExpectedText(bytes);
    CHECK(FormatUuid(bytes) == canon);
    for (const std::string& text : {canon, ExpectedText(bytes, true), ExpectedText(bytes, false, false),
                                    ExpectedText(bytes, true, false), "{" + canon + "}", "urn:uuid:" + canon}) {
      Value v;
      REQUIRE(ParseValue(text, kUuid, &v));
      CHECK(v == Value::String(bytes));
      CHECK(FormatValue(v, kUuid) == canon);
    }
  }
}

TEST_CASE("UUID rejects malformed text", "[types][uuid]") {
  const std::string good = "123e4567-e89b-12d3-a456-426655440000";
  std::string out;
  REQUIRE(ParseUuid(good, &out));
  for (const std::string& bad :
       {std::string(), std::string("123e4567"), good + "0", good.substr(1), " " + good, good + " ",
        std::string("123e4567e-89b-12d3-a456-426655440000"), std::string("123e4567-e89b-12d3-a456-42665544000g"),
        std::string("{123e4567e89b12d3a456426655440000}"), std::string("(") + good + ")", "{" + good,
        std::string("123e4567-e89b-12d3-a456_426655440000"), "urn:uuid:" + good.substr(1) + "0",
        std::string("g23e4567e89b12d3a456426655440000")}) {
    INFO(bad);
    CHECK_FALSE(ParseUuid(bad, &out));
    Value v;
    CHECK_FALSE(ParseValue(bad, kUuid, &v));
  }
}

TEST_CASE("UUID byte order is the order of the canonical texts", "[types][uuid]") {
  std::mt19937_64 rng(11);
  for (int iter = 0; iter < 2000; ++iter) {
    const std::string a = RandomBytes(rng), b = rng() % 4 == 0 ? a : RandomBytes(rng);
    // Lower-case hex text of equal length orders as the bytes do (unsigned), PostgreSQL's order.
    const auto by_text = ExpectedText(a) <=> ExpectedText(b);
    CHECK((Value::String(a) <=> Value::String(b)) == by_text);
    // Inside a ROW (GROUP BY / DISTINCT keys, MIN/MAX state) the encoding keeps that order.
    const std::vector<SqlType> types = {kUuid, SqlType::Of(TypeId::kInteger)};
    const std::string ea = EncodeRowValue({Value::String(a), Value::Int(1)}, types);
    const std::string eb = EncodeRowValue({Value::String(b), Value::Int(1)}, types);
    CHECK((ea <=> eb) == by_text);
    CHECK(DecodeRowValue(ea, types)[0] == Value::String(a));
  }
}

TEST_CASE("UUID casts to and from strings, binary strings and VARIANT", "[types][uuid]") {
  std::mt19937_64 rng(3);
  const SqlType varchar = SqlType::Of(TypeId::kVarchar), varbinary = SqlType::Of(TypeId::kVarbinary);
  const SqlType variant = SqlType::Of(TypeId::kVariant);
  for (int iter = 0; iter < 200; ++iter) {
    const std::string bytes = RandomBytes(rng);
    const Value u = Value::String(bytes);
    CHECK(CastValue(u, kUuid, varchar) == Value::String(ExpectedText(bytes)));
    CHECK(CastValue(Value::String(ExpectedText(bytes, true)), varchar, kUuid) == u);
    CHECK(CastValue(u, kUuid, varbinary) == u);
    CHECK(CastValue(u, varbinary, kUuid) == u);
    const Value var = CastValue(u, kUuid, variant);
    CHECK(VariantTypeName(var.s) == "UUID");
    CHECK(VariantToJson(var.s) == "\"" + ExpectedText(bytes) + "\"");
    CHECK(CastValue(var, variant, kUuid) == u);
    // A VARIANT string in UUID form converts; a number does not (NULL).
    std::string js;
    REQUIRE(ParseJsonVariant("\"" + ExpectedText(bytes, true, false) + "\"", &js));
    CHECK(CastValue(Value::String(js), variant, kUuid) == u);
  }
  std::string num;
  REQUIRE(ParseJsonVariant("12", &num));
  CHECK(CastValue(Value::String(num), variant, kUuid).IsNull());
  CHECK_THROWS_AS(CastValue(Value::String("xyz"), varchar, kUuid), Error);
  CHECK_THROWS_AS(CastValue(Value::String(std::string(15, 'a')), varbinary, kUuid), Error);
  CHECK_THROWS_AS(CastValue(Value::String(std::string(17, 'a')), varbinary, kUuid), Error);
  CHECK_THROWS_AS(CastValue(Value::String(std::string(16, 'a')), kUuid, SqlType::Of(TypeId::kBigInt)), Error);
  // VARIANT arrays and maps holding UUIDs skip over them correctly.
  const Value u = Value::String(std::string(16, '\0'));
  const SqlType arr = SqlType::Array(kUuid);
  const Value a = Value::String(EncodeArrayValue({u, Value::Null(), u}, kUuid));
  const Value va = CastValue(a, arr, variant);
  CHECK(VariantToJson(va.s) ==
        "[\"00000000-0000-0000-0000-000000000000\",null,"
        "\"00000000-0000-0000-0000-000000000000\"]");
  CHECK(CastValue(va, variant, arr) == a);
}

}  // namespace fld
