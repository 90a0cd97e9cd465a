// UUID columns through CSV and JSON, and ARRAY/MAP/ROW values in CSV input (their JSON text in
// the field). Expected physical values are built here from the bytes and elements directly.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "formats/csv.h"
#include "formats/json.h"

namespace fld {
namespace {

const std::string kBytes("\x12\x3e\x45\x67\xe8\x9b\x12\xd3\xa4\x56\x42\x66\x55\x44\x00\x00", 16);
const std::string kText = "123e4567-e89b-12d3-a456-426655440000";

Schema UuidSchema() {
  Schema s;
  s.fields = {{"id", SqlType::Of(TypeId::kInteger, false)}, {"u", SqlType::Of(TypeId::kUuid)}};
  return s;
}

}  // namespace

TEST_CASE("CSV reads and writes UUID columns", "[formats][uuid]") {
  Schema s = UuidSchema();
  CsvParser p(s);
  BatchBuilder b(s.PhysTypes());
  FormatError err;
  REQUIRE(p.Parse("1," + kText, &b, &err));
  REQUIRE(p.Parse("2,{123E4567-E89B-12D3-A456-426655440000}", &b, &err));
  REQUIRE(p.Parse("3,123e4567e89b12d3a456426655440000", &b, &err));
  REQUIRE(p.Parse("4,", &b, &err));
  CHECK_FALSE(p.Parse("5,123e4567-e89b-12d3-a456-4266554400", &b, &err));
  CHECK(err.message == "expected UUID but found '123e4567-e89b-12d3-a456-4266554400' in field 2 (u)");
  Batch batch = b.Finish();
  REQUIRE(batch.size() == 4);
  for (size_t r = 0; r < 3; ++r) CHECK(batch.Get(1, r) == Value::String(kBytes));
  CHECK(batch.Get(1, 3).IsNull());
  CsvWriter w(s);
  std::string text;
  w.AppendRow(batch, 0, &text);
  w.AppendRow(batch, 3, &text);
  CHECK(text == "1," + kText + ",1\n4,,1\n");
}

TEST_CASE("JSON reads UUIDs as text or 16 byte values and writes their text", "[formats][uuid]") {
  Schema s = UuidSchema();
  JsonParser p(s, JsonUpdateFormat::kRaw);
  BatchBuilder b(s.PhysTypes());
  FormatError err;
  REQUIRE(p.Parse(R"({"id": 1, "u": ")" + kText + R"("})", &b, &err));
  REQUIRE(p.Parse(R"({"id": 2, "u": [18,62,69,103,232,155,18,211,164,86,66,102,85,68,0,0]})", &b, &err));
  REQUIRE(p.Parse(R"({"id": 3, "u": "urn:uuid:)" + kText + R"("})", &b, &err));
  CHECK_FALSE(p.Parse(R"({"id": 4, "u": "nope"})", &b, &err));
  CHECK_FALSE(p.Parse(R"({"id": 4, "u": [1, 2, 3]})", &b, &err));
  CHECK_FALSE(p.Parse(R"({"id": 4, "u": 12})", &b, &err));
  Batch batch = b.Finish();
  REQUIRE(batch.size() == 3);
  for (size_t r = 0; r < 3; ++r) CHECK(batch.Get(1, r) == Value::String(kBytes));
  JsonWriter w(s);
  std::string text;
  w.AppendRow(batch, 0, &text);
  CHECK(text == R"({"insert":{"id":1,"u":")" + kText + "\"}}\n");
}

TEST_CASE("CSV reads ARRAY, MAP and ROW values as JSON text in a field", "[formats]") {
  const SqlType vc = SqlType::Of(TypeId::kVarchar), in = SqlType::Of(TypeId::kInteger);
  SqlType row = SqlType::Row({in, vc});
  row.names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"a", "b"});
  Schema s;
  s.fields = {{"id", SqlType::Of(TypeId::kInteger, false)},
              {"m", SqlType::Map(vc.WithNullable(false), in)},
              {"a", SqlType::Array(in)},
              {"r", row},
              {"mu", SqlType::Map(SqlType::Of(TypeId::kUuid, false), SqlType::Array(vc))}};
  CsvParser p(s);
  BatchBuilder b(s.PhysTypes());
  FormatError err;
  REQUIRE(p.Parse(R"(1,"{""b"": 2, ""a"": null}","[1, null, 3]","{""a"": 7, ""b"": ""x,y""}",)"
                  R"("{""123e4567-e89b-12d3-a456-426655440000"": [""p"", null]}")",
                  &b, &err));
  REQUIRE(p.Parse("2,{},[],{},{}", &b, &err));
  REQUIRE(p.Parse("3,,,,", &b, &err));
  CHECK_FALSE(p.Parse(R"(4,"{""a"": ""x""}",,,)", &b, &err));
  CHECK(err.message == R"(expected MAP<VARCHAR, INTEGER> but found '{"a": "x"}' in field 2 (m))");
  CHECK_FALSE(p.Parse("4,,[1,,,", &b, &err));
  CHECK_FALSE(p.Parse(R"(4,,,,"{""nope"": []}")", &b, &err));  // not a UUID key
  Batch batch = b.Finish();
  REQUIRE(batch.size() == 3);
  const SqlType& mt = s.fields[1].type;
  CHECK(batch.Get(1, 0) ==
        Value::String(EncodeMapValue({{Value::String("a"), Value::Null()}, {Value::String("b"), Value::Int(2)}}, mt)));
  CHECK(batch.Get(2, 0) == Value::String(EncodeArrayValue({Value::Int(1), Value::Null(), Value::Int(3)}, in)));
  CHECK(batch.Get(3, 0) == Value::String(EncodeRowValue({Value::Int(7), Value::String("x,y")}, {in, vc})));
  CHECK(batch.Get(4, 0) ==
        Value::String(EncodeMapValue(
            {{Value::String(kBytes), Value::String(EncodeArrayValue({Value::String("p"), Value::Null()}, vc))}},
            s.fields[4].type)));
  CHECK(batch.Get(1, 1) == Value::String(EncodeMapValue({}, mt)));
  CHECK(batch.Get(2, 1) == Value::String(EncodeArrayValue({}, in)));
  CHECK(batch.Get(3, 1) == Value::String(EncodeRowValue({Value::Null(), Value::Null()}, {in, vc})));
  for (int c = 1; c < 5; ++c) CHECK(batch.Get(c, 2).IsNull());
}

TEST_CASE("CSV writes binary strings as the hex digits its parser reads back", "[formats]") {
  Schema s;
  s.fields = {{"id", SqlType::Of(TypeId::kInteger, false)}, {"b", SqlType::Of(TypeId::kVarbinary)}};
  const std::string bytes("AB\n\0\xff,\"", 7);
  BatchBuilder in(s.PhysTypes());
  const std::vector<Value> row = {Value::Int(1), Value::String(bytes)};
  in.AppendRow(row, 1);
  Batch batch = in.Finish();
  CsvWriter w(s);
  std::string text;
  w.AppendRow(batch, 0, &text);
  CHECK(text == "1,41420a00ff2c22,1\n");
  CsvParser p(s, CsvOptions{',', true});
  BatchBuilder out(s.PhysTypes());
  FormatError err;
  REQUIRE(p.Parse(text.substr(0, text.size() - 1), &out, &err));
  CHECK(out.Finish().Get(1, 0) == Value::String(bytes));
}

}  // namespace fld
