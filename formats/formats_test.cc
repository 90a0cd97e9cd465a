#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "formats/csv.h"
#include "formats/json.h"

namespace fld {
namespace {

Schema MixedSchema() {
  Schema s;
  s.fields = {{"id", SqlType::Of(TypeId::kInteger, false)}, {"name", SqlType::Of(TypeId::kVarchar)},
              {"amount", SqlType::Decimal(10, 2)},          {"ts", SqlType::Of(TypeId::kTimestamp)},
              {"ok", SqlType::Of(TypeId::kBoolean)},        {"x", SqlType::Of(TypeId::kDouble)}};
  return s;
}

int64_t Ts(int64_t y, unsigned m, unsigned d, int64_t hh, int64_t mm, int64_t ss) {
  return DaysFromCivil(y, m, d) * kMicrosPerDay + ((hh * 60 + mm) * 60 + ss) * kMicrosPerSecond;
}

}  // namespace

TEST_CASE("CSV parses quoted fields, escapes, NULLs and empty strings", "[formats]") {
  Schema s = MixedSchema();
  CsvParser p(s);
  BatchBuilder b(s.PhysTypes());
  FormatError err;
  REQUIRE(p.Parse("7,\"Smith, \"\"Jo\"\"\",12.5,2024-03-01 12:30:00,true,1.25", &b, &err));
  REQUIRE(p.Parse("8,\"\",,,,", &b, &err));
  REQUIRE(p.Parse("-9,plain text ,0.07,2024-03-01,f,-2e3", &b, &err));
  Batch batch = b.Finish();
  REQUIRE(batch.size() == 3);
  CHECK(batch.Get(0, 0) == Value::Int(7));
  CHECK(batch.Get(1, 0) == Value::String("Smith, \"Jo\""));
  CHECK(batch.Get(2, 0) == Value::Int(1250));
  CHECK(batch.Get(3, 0) == Value::Int(Ts(2024, 3, 1, 12, 30, 0)));
  CHECK(batch.Get(4, 0) == Value::Int(1));
  CHECK(batch.Get(5, 0) == Value::Double(1.25));
  // Quoted "" is the empty string; empty unquoted fields are NULL.
  CHECK(batch.Get(1, 1) == Value::String(""));
  for (int c = 2; c < 6; ++c) CHECK(batch.Get(c, 1).IsNull());
  CHECK(batch.Get(0, 2) == Value::Int(-9));
  CHECK(batch.Get(1, 2) == Value::String("plain text "));
  CHECK(batch.Get(2, 2) == Value::Int(7));
  CHECK(batch.Get(3, 2) == Value::Int(DaysFromCivil(2024, 3, 1) * kMicrosPerDay));
  CHECK(batch.Get(4, 2) == Value::Int(0));
  CHECK(batch.Get(5, 2) == Value::Double(-2000.0));
  for (int64_t w : batch.weights) CHECK(w == 1);
}

TEST_CASE("CSV errors name the field and its character offset", "[formats]") {
  Schema s;
  s.fields = {{"from_account", SqlType::Of(TypeId::kInteger)},
              {"to_account", SqlType::Of(TypeId::kInteger)},
              {"amount", SqlType::Of(TypeId::kInteger)},
              {"ts", SqlType::Of(TypeId::kTimestamp)}};
  CsvParser p(s);
  BatchBuilder b(s.PhysTypes());
  FormatError err;

  std::string line = "1,22,abc,2024-01-01 00:00:00";
  REQUIRE_FALSE(p.Parse(line, &b, &err));
  CHECK(err.message == "expected INTEGER but found 'abc' in field 3 (amount)");
  CHECK(err.column == line.find("abc") + 1);

  REQUIRE_FALSE(p.Parse("1,2,3", &b, &err));
  CHECK(err.message == "expected 4 fields but found 3");

  REQUIRE_FALSE(p.Parse("1,2,3,4,5", &b, &err));
  CHECK(err.message == "expected 4 fields but found 5");

  line = "1,\"2,3,2024-01-01";
  REQUIRE_FALSE(p.Parse(line, &b, &err));
  CHECK(err.message.find("unterminated") != std::string::npos);
  CHECK(err.column == 3);

  line = "1,\"2\"x,3,2024-01-01";
  REQUIRE_FALSE(p.Parse(line, &b, &err));
  CHECK(err.column == line.find('x') + 1);

  line = "1,2,3,2024-13-01";
  REQUIRE_FALSE(p.Parse(line, &b, &err));
  CHECK(err.message.find("TIMESTAMP") != std::string::npos);
  CHECK(err.column == 7);

  // Out of the INTEGER range.
  REQUIRE_FALSE(p.Parse("3000000000,2,3,2024-01-01", &b, &err));
  CHECK(err.column == 1);

  // Nothing was appended by the failed records.
  CHECK(b.size() == 0);
  CHECK(b.col(0).size() == 0);
}

TEST_CASE("CSV records of integer columns: the one-pass path accepts and rejects what the general one does",
          "[formats]") {
  Schema s;
  s.fields = {{"a", SqlType::Of(TypeId::kBigInt, false)},
              {"b", SqlType::Of(TypeId::kInteger)},
              {"c", SqlType::Of(TypeId::kTinyInt)},
              {"d", SqlType::Of(TypeId::kSmallInt, false)}};
  CsvParser fast(s), general(s, CsvOptions{',', false, false});
  BatchBuilder fb(s.PhysTypes()), gb(s.PhysTypes());
  // Fields near every edge the one-pass path checks: signs, leading zeros, 18 and 19 digits,
  // each type's range, blanks, quotes, empty fields (NULL, or an error where NOT NULL).
  const std::vector<std::string> forms = {"0",
                                          "-0",
                                          "7",
                                          "007",
                                          "-12",
                                          "+5",
                                          " 5",
                                          "5 ",
                                          "\"9\"",
                                          "",
                                          "-",
                                          "127",
                                          "128",
                                          "-128",
                                          "-129",
                                          "32767",
                                          "32768",
                                          "2147483647",
                                          "2147483648",
                                          "-2147483648",
                                          "-2147483649",
                                          "999999999999999999",
                                          "-999999999999999999",
                                          "9223372036854775807",
                                          "9223372036854775808",
                                          "-9223372036854775808",
                                          "1e3",
                                          "0x10",
                                          "12a"};
  std::mt19937 rng(5);
  size_t accepted = 0, fast_taken = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string rec;
    const int fields = i % 50 == 0 ? 3 + static_cast<int>(rng() % 3) : 4;  // sometimes too few or too many
    for (int f = 0; f < fields; ++f) {
      if (f > 0) rec += ',';
      // Mostly plain numbers (the one-pass path), some of the edge forms.
      rec += rng() % 3 ? std::to_string(static_cast<int64_t>(rng() % 200) - 100) : forms[rng() % forms.size()];
    }
    if (i % 97 == 0) rec += ',';
    FormatError fe, ge;
    const size_t before = fb.size();
    const bool f_ok = fast.Parse(rec, &fb, &fe);
    const bool g_ok = general.Parse(rec, &gb, &ge);
    INFO(rec);
    REQUIRE(f_ok == g_ok);
    REQUIRE(fb.size() == before + (f_ok ? 1 : 0));
    if (!f_ok) {
      REQUIRE(fe.message == ge.message);
      REQUIRE(fe.column == ge.column);
    }
    accepted += f_ok;
    bool plain = fields == 4 && rec.find_first_of("+ \"ex") == std::string::npos && rec.back() != ',';
    fast_taken += plain && f_ok;
  }
  const Batch f = fb.Finish(), g = gb.Finish();
  REQUIRE(f.size() == accepted);
  REQUIRE(accepted > 5000);
  REQUIRE(fast_taken > 5000);
  for (size_t r = 0; r < f.size(); ++r)
    for (size_t c = 0; c < 4; ++c) REQUIRE(f.Get(c, r) == g.Get(c, r));
}

TEST_CASE("CSV NOT NULL columns reject empty fields", "[formats]") {
  Schema s = MixedSchema();
  CsvParser p(s);
  BatchBuilder b(s.PhysTypes());
  FormatError err;
  REQUIRE_FALSE(p.Parse(",a,1,,,", &b, &err));
  CHECK(err.message.find("id") != std::string::npos);
  CHECK(err.column == 1);
}

TEST_CASE("CSV accepts another delimiter", "[formats]") {
  Schema s;
  s.fields = {{"a", SqlType::Of(TypeId::kInteger)}, {"b", SqlType::Of(TypeId::kVarchar)}};
  CsvParser p(s, CsvOptions{';', false});
  BatchBuilder b(s.PhysTypes());
  FormatError err;
  REQUIRE(p.Parse("5;x,y", &b, &err));
  Batch batch = b.Finish();
  CHECK(batch.Get(1, 0) == Value::String("x,y"));
}

TEST_CASE("CSV writer output parses back to the same rows and weights", "[formats]") {
  Schema s = MixedSchema();
  std::vector<std::vector<Value>> rows = {
      {Value::Int(1), Value::String("a,b"), Value::Int(1250), Value::Int(Ts(2024, 1, 1, 0, 0, 0)), Value::Int(1),
       Value::Double(0.1)},
      {Value::Int(2), Value::String("say \"hi\""), Value::Int(-5), Value::Int(Ts(1999, 12, 31, 23, 59, 59) + 1234),
       Value::Int(0), Value::Double(-1e300)},
      {Value::Int(3), Value::String(" padded "), Value::Null(), Value::Null(), Value::Null(), Value::Null()},
      {Value::Int(4), Value::String(""), Value::Int(0), Value::Int(0), Value::Int(1), Value::Double(3)},
      {Value::Int(5), Value::Null(), Value::Int(99999), Value::Int(-kMicrosPerDay), Value::Int(0), Value::Double(2.5)},
      {Value::Int(6), Value::String("two\nlines\r\n"), Value::Int(1), Value::Int(1), Value::Int(1), Value::Double(0)}};
  std::vector<int64_t> weights = {1, -1, 3, -7, 1, 2};
  BatchBuilder in(s.PhysTypes());
  for (size_t r = 0; r < rows.size(); ++r) in.AppendRow(rows[r], weights[r]);
  Batch batch = in.Finish();

  CsvWriter w(s);
  std::string text;
  for (size_t r = 0; r < batch.size(); ++r) w.AppendRow(batch, r, &text);

  // Split into records at line breaks outside quotes.
  std::vector<std::string> records;
  std::string cur;
  for (char c : text) {
    if (c == '\n' && !CsvInsideQuotes(cur)) {
      records.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  REQUIRE(cur.empty());
  REQUIRE(records.size() == rows.size());
  CHECK(records[0] == "1,\"a,b\",12.50,2024-01-01 00:00:00,true,0.1,1");
  CHECK(records[2] == "3,\" padded \",,,,,3");
  CHECK(records[3] == "4,\"\",0.00,1970-01-01 00:00:00,true,3,-7");

  CsvParser p(s, CsvOptions{',', true});
  BatchBuilder out(s.PhysTypes());
  FormatError err;
  for (const auto& rec : records) REQUIRE(p.Parse(rec, &out, &err));
  Batch back = out.Finish();
  REQUIRE(back.size() == rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    CHECK(back.weights[r] == weights[r]);
    for (size_t c = 0; c < s.size(); ++c) CHECK(back.Get(c, r) == rows[r][c]);
  }
}

TEST_CASE("CSV header line lists the columns then weight", "[formats]") {
  Schema s = MixedSchema();
  std::string h;
  CsvWriter(s).AppendHeader(&h);
  CHECK(h == "id,name,amount,ts,ok,x,weight\n");
}

TEST_CASE("JSON insert/delete records and raw rows", "[formats]") {
  Schema s = MixedSchema();
  JsonParser p(s);
  BatchBuilder b(s.PhysTypes());
  FormatError err;
  REQUIRE(
      p.Parse(R"({"insert": {"ID": 1, "Name": "x", "amount": 12.5, "ts": "2024-01-01 10:00:00", "ok": true, "x": 2}})",
              &b, &err));
  REQUIRE(p.Parse(R"({"delete": {"id": 2, "amount": "0.07"}})", &b, &err));
  REQUIRE(p.Parse(R"({"insert": {"id": 3, "name": null, "amount": 3, "x": 1e-3}})", &b, &err));
  Batch batch = b.Finish();
  REQUIRE(batch.size() == 3);
  CHECK(batch.weights == std::vector<int64_t>{1, -1, 1});
  CHECK(batch.Get(0, 0) == Value::Int(1));
  CHECK(batch.Get(1, 0) == Value::String("x"));
  CHECK(batch.Get(2, 0) == Value::Int(1250));
  CHECK(batch.Get(3, 0) == Value::Int(Ts(2024, 1, 1, 10, 0, 0)));
  CHECK(batch.Get(4, 0) == Value::Int(1));
  CHECK(batch.Get(5, 0) == Value::Double(2.0));
  // Missing nullable columns are NULL.
  CHECK(batch.Get(1, 1).IsNull());
  CHECK(batch.Get(2, 1) == Value::Int(7));
  CHECK(batch.Get(3, 1).IsNull());
  CHECK(batch.Get(2, 2) == Value::Int(300));
  CHECK(batch.Get(5, 2) == Value::Double(0.001));

  JsonParser raw(s, JsonUpdateFormat::kRaw);
  BatchBuilder rb(s.PhysTypes());
  REQUIRE(raw.Parse(R"({"id": 5, "ok": false})", &rb, &err));
  Batch rbatch = rb.Finish();
  CHECK(rbatch.weights == std::vector<int64_t>{1});
  CHECK(rbatch.Get(0, 0) == Value::Int(5));
  CHECK(rbatch.Get(4, 0) == Value::Int(0));
}

TEST_CASE("JSON values at the edges: floats in integer columns, range limits, escapes, duplicate keys", "[formats]") {
  Schema s;
  s.fields = {{"i", SqlType::Of(TypeId::kInteger)},
              {"t", SqlType::Of(TypeId::kTinyInt)},
              {"v", SqlType::Of(TypeId::kVarchar)},
              {"d", SqlType::Decimal(10, 2)},
              {"x", SqlType::Of(TypeId::kDouble)}};
  JsonParser p(s, JsonUpdateFormat::kRaw);
  BatchBuilder b(s.PhysTypes());
  FormatError err;
  REQUIRE(p.Parse(R"({"i": 2.0, "t": -128, "v": "a\"b\u00e9\n", "d": 1.5, "x": "NaN"})", &b, &err));
  REQUIRE(
      p.Parse(R"({"i": 2147483647, "t": 127, "v": "x", "v": "last", "d": -3, "x": 18446744073709551615})", &b, &err));
  Batch batch = b.Finish();
  REQUIRE(batch.size() == 2);
  CHECK(batch.Get(0, 0) == Value::Int(2));
  CHECK(batch.Get(1, 0) == Value::Int(-128));
  CHECK(batch.Get(2, 0) == Value::String("a\"b\xC3\xA9\n"));
  CHECK(batch.Get(3, 0) == Value::Int(150));
  CHECK(std::isnan(batch.Get(4, 0).d));
  CHECK(batch.Get(0, 1) == Value::Int(2147483647));
  CHECK(batch.Get(1, 1) == Value::Int(127));
  CHECK(batch.Get(2, 1) == Value::String("last"));  // a repeated key: the last one counts
  CHECK(batch.Get(3, 1) == Value::Int(-300));
  CHECK(batch.Get(4, 1) == Value::Double(18446744073709551615.0));
  // Out of range, fractional, or not JSON: errors naming the field, nothing appended.
  BatchBuilder e(s.PhysTypes());
  REQUIRE_FALSE(p.Parse(R"({"t": 128})", &e, &err));
  CHECK(err.message.find("'t'") != std::string::npos);
  REQUIRE_FALSE(p.Parse(R"({"i": 2147483648})", &e, &err));
  CHECK(err.message.find("'i'") != std::string::npos);
  REQUIRE_FALSE(p.Parse(R"({"i": 2.5})", &e, &err));
  CHECK(err.message.find("'i'") != std::string::npos);
  REQUIRE_FALSE(p.Parse(R"({"v": "a", "V": "b"})", &e, &err));
  CHECK(err.message.find("given twice") != std::string::npos);
  REQUIRE_FALSE(p.Parse(R"({"i": 1} x)", &e, &err));
  CHECK(err.message.find("invalid JSON") != std::string::npos);
  REQUIRE_FALSE(p.Parse("{\"v\": \"\xff\"}", &e, &err));
  CHECK(err.message.find("invalid JSON") != std::string::npos);
  CHECK(e.size() == 0);
}

TEST_CASE("JSON records parsed by one parser read as each read by a new one", "[formats]") {
  // A parser matches a field by the name the last record had at its position (JsonParser::Fast):
  // records whose fields change order, case, or repeat, go missing or are unknown must read as a
  // parser that saw no record before reads them.
  Schema s;
  s.fields = {{"id", SqlType::Of(TypeId::kBigInt)},
              {"Name", SqlType::Of(TypeId::kVarchar)},
              {"amount", SqlType::Of(TypeId::kInteger)},
              {"ok", SqlType::Of(TypeId::kBoolean)}};
  s.fields[0].type.nullable = false;
  std::mt19937 rng(5);
  const std::vector<std::string> spellings[] = {
      {"id", "ID", "Id"}, {"name", "Name", "NAME"}, {"amount", "Amount"}, {"ok", "OK"}};
  JsonParser kept(s, JsonUpdateFormat::kRaw);
  BatchBuilder got(s.PhysTypes()), want(s.PhysTypes());
  int errors = 0;
  for (int i = 0; i < 3000; ++i) {
    std::vector<int> order = {0, 1, 2, 3};
    if (rng() % 4 == 0) std::shuffle(order.begin(), order.end(), rng);
    if (rng() % 8 == 0) order.erase(order.begin() + static_cast<long>(rng() % order.size()));
    if (rng() % 16 == 0) order.push_back(static_cast<int>(rng() % 4));  // a repeated field
    std::string line = "{";
    for (size_t k = 0; k < order.size(); ++k) {
      const auto& names = spellings[order[k]];
      line += (k ? ", \"" : "\"") + (rng() % 8 == 0 ? names[rng() % names.size()] : names[0]) + "\": ";
      line += order[k] == 0   ? std::to_string(i)
              : order[k] == 1 ? "\"n" + std::to_string(i) + "\""
              : order[k] == 2 ? std::to_string(7 * i + 3)
                              : "true";
    }
    if (rng() % 32 == 0) line += ", \"unknown\": 1";
    line += "}";
    JsonParser fresh(s, JsonUpdateFormat::kRaw);
    FormatError e1, e2;
    const bool ok1 = kept.Parse(line, &got, &e1), ok2 = fresh.Parse(line, &want, &e2);
    INFO(line);
    REQUIRE(ok1 == ok2);
    REQUIRE(e1.message == e2.message);
    errors += !ok1;
  }
  REQUIRE(errors > 100);
  const Batch a = got.Finish(), b = want.Finish();
  REQUIRE(a.size() == b.size());
  REQUIRE(a.size() > 2000);
  for (size_t r = 0; r < a.size(); ++r)
    for (size_t c = 0; c < s.size(); ++c) REQUIRE(a.Get(c, r) == b.Get(c, r));
}

TEST_CASE("JSON errors name the field", "[formats]") {
  Schema s = MixedSchema();
  JsonParser p(s);
  BatchBuilder b(s.PhysTypes());
  FormatError err;

  std::string line = R"({"insert": {"id": 1, "amout": 5}})";
  REQUIRE_FALSE(p.Parse(line, &b, &err));
  CHECK(err.message.find("unknown field 'amout'") != std::string::npos);
  CHECK(err.column == line.find("\"amout\"") + 1);

  REQUIRE_FALSE(p.Parse(R"({"insert": {"name": "x"}})", &b, &err));
  CHECK(err.message.find("'id'") != std::string::npos);

  line = R"({"insert": {"id": "seven"}})";
  REQUIRE_FALSE(p.Parse(line, &b, &err));
  CHECK(err.message.find("'id'") != std::string::npos);
  CHECK(err.message.find("INTEGER") != std::string::npos);

  REQUIRE_FALSE(p.Parse(R"({"insert": {"id": 1, "ok": "yes"}})", &b, &err));
  CHECK(err.message.find("'ok'") != std::string::npos);

  REQUIRE_FALSE(p.Parse(R"({"insert": {"id": 1, "name": 5}})", &b, &err));
  CHECK(err.message.find("'name'") != std::string::npos);

  REQUIRE_FALSE(p.Parse(R"({"insert": {"id": null}})", &b, &err));
  CHECK(err.message.find("'id'") != std::string::npos);

  REQUIRE_FALSE(p.Parse(R"({"upsert": {"id": 1}})", &b, &err));
  REQUIRE_FALSE(p.Parse(R"([1, 2])", &b, &err));

  line = R"({"insert": {"id": 1,,}})";
  REQUIRE_FALSE(p.Parse(line, &b, &err));
  CHECK(err.message.find("invalid JSON") != std::string::npos);
  CHECK(err.column == line.find(",,") + 2);
  CHECK(b.size() == 0);
}

TEST_CASE("JSON writer writes |weight| lines and parses back", "[formats]") {
  Schema s = MixedSchema();
  BatchBuilder in(s.PhysTypes());
  std::vector<Value> r0 = {Value::Int(1),    Value::String("q\"uote\\ \n"),
                           Value::Int(1250), Value::Int(Ts(2024, 1, 1, 0, 0, 0)),
                           Value::Int(1),    Value::Double(0.5)};
  std::vector<Value> r1 = {Value::Int(-2), Value::Null(), Value::Int(-7), Value::Null(), Value::Int(0), Value::Null()};
  in.AppendRow(r0, 2);
  in.AppendRow(r1, -1);
  Batch batch = in.Finish();
  JsonWriter w(s);
  std::string text;
  for (size_t r = 0; r < batch.size(); ++r) w.AppendRow(batch, r, &text);

  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(text.substr(start, nl - start));
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == lines[1]);
  CHECK(lines[0] ==
        R"({"insert":{"id":1,"name":"q\"uote\\ \n","amount":12.50,"ts":"2024-01-01 00:00:00","ok":true,"x":0.5}})");
  CHECK(lines[2] == R"({"delete":{"id":-2,"name":null,"amount":-0.07,"ts":null,"ok":false,"x":null}})");

  JsonParser p(s);
  BatchBuilder out(s.PhysTypes());
  FormatError err;
  for (const auto& l : lines) REQUIRE(p.Parse(l, &out, &err));
  Batch back = out.Finish();
  CHECK(back.weights == std::vector<int64_t>{1, 1, -1});
  for (size_t c = 0; c < s.size(); ++c) {
    CHECK(back.Get(c, 0) == r0[c]);
    CHECK(back.Get(c, 1) == r0[c]);
    CHECK(back.Get(c, 2) == r1[c]);
  }
}

}  // namespace fld

namespace fld {

TEST_CASE("GEOMETRY points written as CSV and JSON read back", "[formats]") {
  Schema s;
  s.fields = {{"id", SqlType::Of(TypeId::kInteger)}, {"g", SqlType::Of(TypeId::kGeometry)}};
  std::vector<Value> points(3);
  REQUIRE(ParseValue("POINT (1.5 -2)", s.fields[1].type, &points[0]));
  REQUIRE(ParseValue("point(0 1e300)", s.fields[1].type, &points[1]));
  points[2] = Value::Null();
  BatchBuilder in(s.PhysTypes());
  for (size_t i = 0; i < points.size(); ++i)
    in.AppendRow(std::vector<Value>{Value::Int(static_cast<int64_t>(i)), points[i]}, 1);
  const Batch batch = in.Finish();
  std::string csv, json;
  CsvWriter cw(s);
  JsonWriter jw(s);
  for (size_t r = 0; r < batch.size(); ++r) {
    cw.AppendRow(batch, r, &csv);
    jw.AppendRow(batch, r, &json);
  }
  CsvParser cp(s, CsvOptions{',', true});
  JsonParser jp(s);
  BatchBuilder from_csv(s.PhysTypes()), from_json(s.PhysTypes());
  FormatError err;
  for (std::string* text : {&csv, &json}) {
    size_t start = 0;
    for (size_t nl; (nl = text->find('\n', start)) != std::string::npos; start = nl + 1) {
      const std::string_view line = std::string_view(*text).substr(start, nl - start);
      INFO(line);
      const bool ok = text == &csv ? cp.Parse(line, &from_csv, &err) : jp.Parse(line, &from_json, &err);
      REQUIRE(ok);
    }
  }
  for (Batch b : {from_csv.Finish(), from_json.Finish()}) {
    REQUIRE(b.size() == points.size());
    for (size_t r = 0; r < points.size(); ++r) REQUIRE(b.Get(1, r) == points[r]);
  }
}

TEST_CASE("REAL values are written in their shortest float form and read back exactly", "[formats]") {
  Schema s;
  s.fields = {{"r", SqlType::Of(TypeId::kReal)}};
  const double tenth = static_cast<float>(0.1);
  BatchBuilder in(s.PhysTypes());
  in.AppendRow(std::vector<Value>{Value::Double(tenth)}, 1);
  Batch b = in.Finish();
  std::string csv, json;
  CsvWriter(s).AppendRow(b, 0, &csv);
  JsonWriter(s).AppendRow(b, 0, &json);
  CHECK(csv == "0.1,1\n");
  CHECK(json == "{\"insert\":{\"r\":0.1}}\n");
  BatchBuilder out(s.PhysTypes());
  FormatError err;
  REQUIRE(CsvParser(s, CsvOptions{',', true}).Parse("0.1,1", &out, &err));
  REQUIRE(JsonParser(s).Parse(json.substr(0, json.size() - 1), &out, &err));
  Batch back = out.Finish();
  CHECK(back.cols[0]->f64 == std::vector<double>{tenth, tenth});
}

}  // namespace fld

namespace fld {

TEST_CASE("missing columns take their DEFAULT; binary columns read and write byte arrays", "[formats]") {
  Schema s;
  s.fields = {{"id", SqlType::Of(TypeId::kInteger, false), std::nullopt},
              {"n", SqlType::Of(TypeId::kInteger, false), Value::Int(7)},
              {"b", SqlType::Of(TypeId::kVarbinary), std::nullopt},
              {"s", SqlType::Of(TypeId::kVarchar), Value::String("dflt")}};
  JsonParser jp(s, JsonUpdateFormat::kRaw);
  BatchBuilder b(s.PhysTypes());
  FormatError err;
  REQUIRE(jp.Parse(R"({"id": 1, "b": [0, 255, 16]})", &b, &err));
  REQUIRE(jp.Parse(R"({"id": 2, "n": 3, "b": "0aff", "s": null})", &b, &err));
  CHECK_FALSE(jp.Parse(R"({"n": 3})", &b, &err));  // id has no DEFAULT and is NOT NULL
  CHECK_FALSE(jp.Parse(R"({"id": 3, "b": [256]})", &b, &err));
  CsvParser cp(s);
  REQUIRE(cp.Parse("4,5,0102", &b, &err));  // s left out: its DEFAULT
  CHECK_FALSE(cp.Parse("4", &b, &err));     // b has no DEFAULT
  Batch batch = b.Finish();
  REQUIRE(batch.size() == 3);
  CHECK(batch.Get(1, 0) == Value::Int(7));
  CHECK(batch.Get(2, 0) == Value::String(std::string("\x00\xff\x10", 3)));
  CHECK(batch.Get(3, 0) == Value::String("dflt"));
  CHECK(batch.Get(1, 1) == Value::Int(3));
  CHECK(batch.Get(2, 1) == Value::String("\x0a\xff"));
  CHECK(batch.Get(3, 1).IsNull());
  CHECK(batch.Get(2, 2) == Value::String("\x01\x02"));
  CHECK(batch.Get(3, 2) == Value::String("dflt"));
  CHECK(FormatValue(batch.Get(2, 0), s.fields[2].type) == "00ff10");
  std::string line;
  JsonWriter(s).AppendRow(batch, 0, &line);
  CHECK(line == "{\"insert\":{\"id\":1,\"n\":7,\"b\":[0,255,16],\"s\":\"dflt\"}}\n");
}

}  // namespace fld
