#include "core/types/types.h"

#include <catch2/catch.hpp>
#include <random>
#include <vector>

namespace fld {
namespace {

// A random value of physical type `p` from a small domain (NULL, ties, strings with NUL bytes
// and prefixes of each other, negative numbers, -0.0).
Value RandomValue(std::mt19937_64& rng, PhysType p) {
  std::uniform_int_distribution<int> pick(0, 6);
  int k = pick(rng);
  if (k == 0) return Value::Null();
  switch (p) {
    case PhysType::kI64: {
      static const int64_t kInts[] = {INT64_MIN, -300, -1, 0, 1, 255, INT64_MAX};
      return Value::Int(kInts[k]);
    }
    case PhysType::kF64: {
      static const double kDoubles[] = {-1e300, -2.5, -0.0, 0.0, 0.5, 3.0, 1e300};
      return Value::Double(kDoubles[k]);
    }
    case PhysType::kStr: {
      static const char* kStrs[] = {"", "a", "ab", "b", "\xff", "a\0b", "a\0"};
      static const size_t kLens[] = {0, 1, 2, 1, 1, 3, 2};
      return Value::String(std::string(kStrs[k], kLens[k]));
    }
  }
  return Value::Null();
}

int Sign(std::strong_ordering o) {
  return o < 0 ? -1 : o > 0 ? 1 : 0;
}

}  // namespace

TEST_CASE("ROW and ARRAY encodings round-trip and order like their values", "[types]") {
  std::mt19937_64 rng(42);
  const std::vector<SqlType> types = {SqlType::Of(TypeId::kBigInt), SqlType::Of(TypeId::kDouble),
                                      SqlType::Of(TypeId::kVarchar)};
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<Value> a, b;
    for (const auto& t : types) {
      a.push_back(RandomValue(rng, t.phys()));
      b.push_back(RandomValue(rng, t.phys()));
    }
    std::string ea = EncodeRowValue(a, types), eb = EncodeRowValue(b, types);
    CHECK(DecodeRowValue(ea, types) == a);
    // Fields compare in turn, NULL first (Value's order): so do the encodings, as byte strings.
    CHECK(Sign(ea <=> eb) == Sign(a <=> b));
    // Arrays: element by element, a prefix first.
    const SqlType& et = types[iter % 3];
    std::vector<Value> x, y;
    for (int n = static_cast<int>(rng() % 4); n > 0; --n) x.push_back(RandomValue(rng, et.phys()));
    for (int n = static_cast<int>(rng() % 4); n > 0; --n) y.push_back(RandomValue(rng, et.phys()));
    std::string ex = EncodeArrayValue(x, et), ey = EncodeArrayValue(y, et);
    CHECK(DecodeArrayValue(ex, et) == x);
    CHECK(Sign(ex <=> ey) == Sign(x <=> y));
  }
}

}  // namespace fld
