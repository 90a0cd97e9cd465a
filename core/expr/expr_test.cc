#include "core/expr/expr.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/zset/batch.h"

namespace fld {
namespace {

// CAST(column 0 AS to) over a batch of `values` (of type `from`).
ColumnPtr CastBatch(const std::vector<Value>& values, const SqlType& from, const SqlType& to) {
  auto col = std::make_unique<BoundExpr>();
  col->op = ExprOp::kColumn;
  col->type = from;
  col->column_index = 0;
  BoundExpr cast;
  cast.op = ExprOp::kCast;
  cast.type = to;
  cast.args.push_back(std::move(col));
  const PhysType phys[] = {from.phys()};
  BatchBuilder bb(phys);
  for (const Value& v : values) bb.AppendRow(std::vector<Value>{v}, 1);
  return Evaluate(cast, bb.Finish());
}

// Each value cast alone by CastValue: its result, or the error's text.
struct One {
  std::optional<Value> result;
  std::string error;
};
One CastOne(const Value& v, const SqlType& from, const SqlType& to) {
  One o;
  try {
    o.result = CastValue(v, from, to);
  } catch (const Error& e) {
    o.error = e.what();
  }
  return o;
}

// A column's CAST equals the row-by-row CastValue: the same values (NULLs included) for the
// rows that cast, and, for a batch holding rows that do not, the first such row's error.
void CheckColumnCast(const std::vector<Value>& values, const SqlType& from, const SqlType& to) {
  INFO(from.ToString() << " -> " << to.ToString());
  std::vector<Value> good;
  std::vector<Value> want;
  std::string first_error;
  for (const Value& v : values) {
    One o = CastOne(v, from, to);
    if (o.result) {
      good.push_back(v);
      want.push_back(*o.result);
    } else if (first_error.empty()) {
      first_error = o.error;
    }
  }
  ColumnPtr got = CastBatch(good, from, to);
  REQUIRE(got->size() == good.size());
  for (size_t i = 0; i < good.size(); ++i) {
    INFO("row " << i << ": " << FormatValue(good[i], from));
    CHECK(got->Get(i) == want[i]);
    CHECK(got->IsNull(i) == want[i].IsNull());
  }
  if (!first_error.empty()) {
    std::string e;
    try {
      CastBatch(values, from, to);
    } catch (const Error& x) {
      e = x.what();
    }
    CHECK(e == first_error);
  }
}

TEST_CASE("CAST of a column gives CastValue's result or error for every row", "[expr]") {
  std::mt19937_64 rng(7);
  const SqlType ints[] = {SqlType::Of(TypeId::kTinyInt), SqlType::Of(TypeId::kSmallInt), SqlType::Of(TypeId::kInteger),
                          SqlType::Of(TypeId::kBigInt)};
  const SqlType varchar = SqlType::Of(TypeId::kVarchar);
  SqlType varchar3 = varchar;
  varchar3.length = 3;  // a length: the row-by-row path (truncation)

  // Integers to strings.
  std::vector<Value> iv = {Value::Null(),
                           Value::Int(0),
                           Value::Int(-1),
                           Value::Int(7),
                           Value::Int(-128),
                           Value::Int(127),
                           Value::Int(std::numeric_limits<int64_t>::min()),
                           Value::Int(std::numeric_limits<int64_t>::max())};
  for (int i = 0; i < 200; ++i) iv.push_back(Value::Int(static_cast<int64_t>(rng()) >> (rng() % 64)));
  for (const SqlType& to : {varchar, varchar3, SqlType::Of(TypeId::kChar)})
    CheckColumnCast(iv, SqlType::Of(TypeId::kBigInt), to);
  CheckColumnCast({Value::Int(-5), Value::Int(120), Value::Null()}, ints[0], varchar);

  // Doubles to integers: truncation, ranges, NaN and infinities (errors), -0.0.
  std::vector<Value> dv = {Value::Null(),
                           Value::Double(0.5),
                           Value::Double(-0.5),
                           Value::Double(-0.0),
                           Value::Double(127.9),
                           Value::Double(-128.9),
                           Value::Double(128.0),
                           Value::Double(-129.0),
                           Value::Double(32767),
                           Value::Double(-32768.5),
                           Value::Double(2147483647.7),
                           Value::Double(-2147483648.0),
                           Value::Double(9.2233720368547758e18),
                           Value::Double(-9.2233720368547758e18),
                           Value::Double(1e300),
                           Value::Double(std::numeric_limits<double>::infinity()),
                           Value::Double(-std::numeric_limits<double>::infinity()),
                           Value::Double(std::nan(""))};
  for (int i = 0; i < 200; ++i)
    dv.push_back(Value::Double(std::ldexp(static_cast<double>(static_cast<int64_t>(rng())) / 9.2e18, rng() % 70)));
  for (const SqlType& from : {SqlType::Of(TypeId::kDouble), SqlType::Of(TypeId::kReal)})
    for (const SqlType& to : ints) {
      CheckColumnCast(dv, from, to);
      // Rows that all cast, so that the fast path's results are compared on a whole batch.
      std::vector<Value> fine;
      for (const Value& v : dv)
        if (CastOne(v, from, to).result) fine.push_back(v);
      CheckColumnCast(fine, from, to);
    }

  // Strings to integers: plain digits, and what only the row-by-row parser takes (a sign,
  // spaces, a fraction) or refuses.
  std::vector<Value> sv;
  for (const char* t : {"12",
                        "-12",
                        "+5",
                        " 7 ",
                        "1.5",
                        "-2.7",
                        "abc",
                        "",
                        "007",
                        "-0",
                        "127",
                        "128",
                        "-128",
                        "-129",
                        "32768",
                        "2147483648",
                        "9223372036854775807",
                        "9223372036854775808",
                        "-9223372036854775808",
                        "99999999999999999999",
                        "1e3",
                        "0x10",
                        "5 "})
    sv.push_back(Value::String(t));
  sv.push_back(Value::Null());
  for (int i = 0; i < 200; ++i)
    sv.push_back(Value::String(std::to_string(static_cast<int64_t>(rng()) >> (rng() % 64))));
  for (const SqlType& to : ints) CheckColumnCast(sv, varchar, to);
}

}  // namespace
}  // namespace fld
