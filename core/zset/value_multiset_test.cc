// Tests of ValueMultiset (core/zset/value_multiset.h) against a std::map<Value, int64_t> model:
// random additions and retractions of integers and NULL, sets of doubles or strings, the move to
// the general form when values of two kinds arrive, AddAll of one set into another, and the positive extremes.
#include "core/zset/value_multiset.h"

#include <malloc.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "core/zset/batch.h"

namespace fld {
namespace {

using Model = std::map<Value, int64_t>;

void ModelAdd(Model* m, const Value& v, int64_t w) {
  auto it = m->try_emplace(v, 0).first;
  it->second += w;
  if (it->second == 0) m->erase(it);
}

// The positive extremes of the model.
void CheckExtremes(const ValueMultiset& s, const Model& model) {
  Value first = Value::Null(), last = Value::Null();
  for (auto it = model.begin(); it != model.end(); ++it)
    if (it->second > 0) {
      first = it->first;
      break;
    }
  for (auto it = model.rbegin(); it != model.rend(); ++it)
    if (it->second > 0) {
      last = it->first;
      break;
    }
  REQUIRE(s.FirstPositive() == first);
  REQUIRE(s.FirstPositive().kind == first.kind);
  REQUIRE(s.LastPositive() == last);
  REQUIRE(s.LastPositive().kind == last.kind);
}

// Extremes first (they do not insert pending integers into the trees), then the values in order
// (which do), then the extremes again.
void CheckSame(const ValueMultiset& s, const Model& model) {
  REQUIRE(s.empty() == model.empty());
  CheckExtremes(s, model);
  REQUIRE(s.size() == model.size());
  REQUIRE(s.empty() == model.empty());
  std::vector<std::pair<Value, int64_t>> seen;
  s.ForEach([&](const Value& v, int64_t w) { seen.emplace_back(v, w); });
  REQUIRE(seen.size() == model.size());
  size_t i = 0;
  for (const auto& [v, w] : model) {
    REQUIRE(seen[i].first.kind == v.kind);
    REQUIRE(seen[i].first == v);
    REQUIRE(seen[i].second == w);
    ++i;
  }
  CheckExtremes(s, model);
}

// A random value: mostly integers from a small range (so values repeat and cancel), some NULLs,
// and, when `general`, doubles and strings.
Value RandomValue(std::mt19937& rng, bool general) {
  const int r = static_cast<int>(rng() % 20);
  if (r == 0) return Value::Null();
  if (general && r == 1) return Value::Double(static_cast<double>(rng() % 50) - 25.5);
  if (general && r == 2) return Value::String(std::string(1 + rng() % 3, static_cast<char>('a' + rng() % 4)));
  const int64_t small = static_cast<int64_t>(rng() % 200) - 100;
  return Value::Int(r == 3 ? small * 1000003 * 1000003 : small);  // a few far from zero
}

TEST_CASE("ValueMultiset matches a std::map model over random additions", "[value_multiset]") {
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    const bool general = seed % 2 == 0;  // even seeds bring doubles and strings
    std::mt19937 rng(seed);
    ValueMultiset s;
    Model model;
    for (int step = 0; step < 4000; ++step) {
      const Value v = RandomValue(rng, general && step > 1000);
      // Retractions too, zero included; for seeds past 4 mostly insertions and retractions of
      // one copy (values move between weight 1 and the others).
      const int64_t w = seed > 4 ? (rng() % 3 == 0 ? -1 : 1) : static_cast<int64_t>(rng() % 7) - 3;
      s.Add(v, w);
      ModelAdd(&model, v, w);
      if (step % 250 == 0) CheckSame(s, model);
    }
    CheckSame(s, model);
    // Retract everything: the set empties.
    Model copy = model;
    for (const auto& [v, w] : copy) {
      s.Add(v, -w);
      ModelAdd(&model, v, -w);
    }
    CheckSame(s, model);
    REQUIRE(s.HeapBytes() == 0);
  }
}

// Insert-only phases (integers wait unsorted, their extremes read without sorting them) broken by
// retractions (which sort them in first), repeated values, NULLs and, for some seeds, a double.
TEST_CASE("ValueMultiset reads the extremes of integers added in insert-only phases", "[value_multiset]") {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    ValueMultiset s;
    Model model;
    for (int phase = 0; phase < 40; ++phase) {
      const int inserts = static_cast<int>(rng() % 200);
      for (int i = 0; i < inserts; ++i) {
        const Value v = rng() % 50 == 0 ? Value::Null() : Value::Int(static_cast<int64_t>(rng() % 300) - 150);
        s.Add(v, 1);
        ModelAdd(&model, v, 1);
        if (i % 10 == 0) CheckExtremes(s, model);
      }
      // A retraction: of the largest value (MAX's next one is needed), of a value held, of one
      // never added (its weight negative: later insertions go to the trees directly), or none.
      const int kind = static_cast<int>(rng() % 4);
      Value v = Value::Int(1000 + phase);
      if (kind == 0 && !model.empty()) v = model.rbegin()->first;
      if (kind == 1 && !model.empty()) v = std::next(model.begin(), static_cast<long>(rng() % model.size()))->first;
      if (kind != 3) {
        s.Add(v, -1);
        ModelAdd(&model, v, -1);
      }
      CheckExtremes(s, model);
      if (seed == 6 && phase == 30) {  // the general form from now on
        s.Add(Value::Double(0.5), 1);
        ModelAdd(&model, Value::Double(0.5), 1);
      }
      if (phase % 7 == 0) CheckSame(s, model);
    }
    CheckSame(s, model);
  }
}

TEST_CASE("ValueMultiset AddAll merges sets of either form", "[value_multiset]") {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    ValueMultiset into, from;
    Model into_model, from_model;
    // Seeds 1-3: both integer sets; 4-6: `from` general; 7-9: `into` general; 10-12: both.
    const bool into_general = seed >= 7, from_general = (seed >= 4 && seed <= 6) || seed >= 10;
    for (int i = 0; i < 3000; ++i) {
      Value v = RandomValue(rng, into_general && i > 1500);
      int64_t w = static_cast<int64_t>(rng() % 5) - 2;
      into.Add(v, w);
      ModelAdd(&into_model, v, w);
      v = RandomValue(rng, from_general && i > 1500);
      w = static_cast<int64_t>(rng() % 5) - 2;
      from.Add(v, w);
      ModelAdd(&from_model, v, w);
    }
    into.AddAll(from);
    for (const auto& [v, w] : from_model) ModelAdd(&into_model, v, w);
    CheckSame(into, into_model);
    CheckSame(from, from_model);
    // Adding the negation cancels exactly.
    ValueMultiset neg;
    from.ForEach([&](const Value& v, int64_t w) { neg.Add(v, -w); });
    into.AddAll(neg);
    for (const auto& [v, w] : from_model) ModelAdd(&into_model, v, -w);
    CheckSame(into, into_model);
  }
}

TEST_CASE("ValueMultiset keeps a double's first spelling once doubles arrive", "[value_multiset]") {
  // -0.0 and 0.0 are one value (Value's order), and an integer equal to a double is another:
  // the general form keeps what std::map keeps.
  ValueMultiset s;
  Model model;
  for (const Value& v : {Value::Int(3), Value::Double(-0.0), Value::Double(0.0), Value::Int(0), Value::Double(3.0),
                         Value::Null(), Value::String("x")}) {
    s.Add(v, 1);
    ModelAdd(&model, v, 1);
  }
  CheckSame(s, model);
  std::vector<Value> seen;
  s.ForEach([&](const Value& v, int64_t) { seen.push_back(v); });
  // NULL, 0, -0.0 (0.0 added to it), 3, 3.0, 'x': equal numbers order integers first.
  REQUIRE(seen.size() == 6);
  REQUIRE(seen[2].kind == Value::Kind::kDouble);
  REQUIRE(std::signbit(seen[2].d));
}

// Sets of one kind other than integers (a DOUBLE or a VARCHAR column's): the model over random
// additions, with NULLs, signed zeros, infinities and NaNs, strings past the inline 23 bytes and
// with zero bytes; emptied, a set takes the form of the next kind it is given.
TEST_CASE("ValueMultiset keeps doubles and strings in Value order", "[value_multiset]") {
  const std::vector<double> specials = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1e-300, -1e300};
  auto random_value = [&](std::mt19937& rng, Value::Kind kind) {
    if (rng() % 25 == 0) return Value::Null();
    if (kind == Value::Kind::kDouble) {
      if (rng() % 6 == 0) return Value::Double(specials[rng() % specials.size()]);
      return Value::Double((static_cast<double>(rng() % 120) - 60) / 4);
    }
    std::string s(rng() % 4, static_cast<char>('a' + rng() % 3));
    if (rng() % 5 == 0) s += std::string(20 + rng() % 3, 'z');  // 20 to 25 bytes: inline or not
    if (rng() % 9 == 0) s.insert(s.begin(), '\0');
    return Value::String(s);
  };
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    std::mt19937 rng(seed);
    ValueMultiset s;
    Model model;
    for (Value::Kind kind : {Value::Kind::kDouble, Value::Kind::kString, Value::Kind::kInt, Value::Kind::kDouble}) {
      for (int step = 0; step < 3000; ++step) {
        const Value v =
            kind == Value::Kind::kInt ? Value::Int(static_cast<int64_t>(rng() % 50)) : random_value(rng, kind);
        const int64_t w = seed > 4 ? (rng() % 3 == 0 ? -1 : 1) : static_cast<int64_t>(rng() % 7) - 3;
        s.Add(v, w);
        ModelAdd(&model, v, w);
        if (step % 300 == 0) CheckSame(s, model);
      }
      CheckSame(s, model);
      // A zero's first spelling: the model keeps it, so must the set (every NaN is one NaN).
      std::vector<Value> seen;
      s.ForEach([&](const Value& v, int64_t) { seen.push_back(v); });
      size_t i = 0;
      for (const auto& [v, w] : model) {
        if (v.kind == Value::Kind::kDouble && v.d == 0.0) REQUIRE(std::signbit(seen[i].d) == std::signbit(v.d));
        ++i;
      }
      // A copy through AddAll, then everything retracted: empty, so the next kind starts afresh.
      ValueMultiset copy;
      copy.AddAll(s);
      CheckSame(copy, model);
      for (const auto& [v, w] : Model(model)) {
        s.Add(v, -w);
        ModelAdd(&model, v, -w);
      }
      CheckSame(s, model);
      REQUIRE(s.HeapBytes() == 0);
    }
  }
}

TEST_CASE("ValueMultiset holds doubles in about 20 bytes and short strings in about 50", "[value_multiset]") {
  auto allocated = [] {
    const struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
  };
  const int n = 200000;
  std::mt19937_64 rng(3);
  {
    const size_t before = allocated();
    ValueMultiset s;
    for (int i = 0; i < n; ++i) s.Add(Value::Double(static_cast<double>(rng() >> 11) / 7.0), 1);
    REQUIRE(s.size() == n);
    const size_t used = allocated() - before;
    REQUIRE(used <= static_cast<size_t>(n) * 26);
    REQUIRE(s.HeapBytes() * 3 >= used * 2);
    REQUIRE(s.HeapBytes() * 2 <= used * 3);
  }
  {
    const size_t before = allocated();
    ValueMultiset s;
    for (int i = 0; i < n; ++i) s.Add(Value::String("user-" + std::to_string(rng() % 1000000000)), 1);
    const size_t used = allocated() - before;
    REQUIRE(used <= s.size() * 56);
    REQUIRE(s.HeapBytes() * 3 >= used * 2);
    REQUIRE(s.HeapBytes() * 2 <= used * 3);
  }
}

TEST_CASE("ValueMultiset holds integers in about 20 bytes each", "[value_multiset]") {
  // Measured by the allocator (heap and mmapped chunks: a large pending vector is mmapped), with
  // the values pending (appended while all weights are 1), then in the B-trees (a retraction of
  // a value never added makes a weight negative, which inserts them): random insertion order
  // (nodes about 3/4 full) and ascending.
  auto allocated = [] {
    const struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
  };
  for (bool ascending : {false, true}) {
    const size_t before = allocated();
    ValueMultiset s;
    std::mt19937_64 rng(7);
    const int n = 200000;
    for (int i = 0; i < n; ++i) s.Add(Value::Int(ascending ? i : static_cast<int64_t>(rng() >> 1)), 1);
    for (const bool pending : {true, false}) {
      INFO((pending ? "pending" : "in the trees") << (ascending ? ", ascending" : ", random"));
      if (!pending) s.Add(Value::Int(-1), -1);
      REQUIRE(s.size() == n + (pending ? 0 : 1));
      const size_t used = allocated() - before;
      REQUIRE(used <= static_cast<size_t>(n) * 26);
      // The constant-time estimate stays within a third of the real figure.
      REQUIRE(s.HeapBytes() * 3 >= used * 2);
      REQUIRE(s.HeapBytes() * 2 <= used * 3);
    }
  }
}

TEST_CASE("ValueMultiset keeps a small set in one buffer of 6 to 11 bytes a value", "[value_multiset]") {
  static_assert(sizeof(ValueMultiset) == 16, "two words in every group's MIN/MAX accumulator");
  std::mt19937_64 rng(5);
  // Per kind, the bytes of one entry: a length byte, the key (a tag byte and the value's
  // significant bytes) and a weight byte.
  struct Kind {
    const char* name;
    size_t min_entry, max_entry;
  };
  const Kind kinds[] = {
      {"integers below 2^23 in magnitude: 3 bytes", 6, 6},
      {"doubles with a full mantissa: 8 bytes", 11, 11},
      {"strings of 7 bytes", 10, 10},
      {"integral doubles below 2^12 in magnitude: at most 3 bytes", 4, 6},
  };
  for (int kind = 0; kind < 4; ++kind) {
    INFO(kinds[kind].name);
    ValueMultiset s;
    Model model;
    for (int i = 0; i < 10; ++i) {
      const int64_t x = static_cast<int64_t>(rng() % 2000000) - 1000000;
      const Value v = kind == 0   ? Value::Int(x <= -65536 || x >= 65536 ? x : x + 2000000)
                      : kind == 1 ? Value::Double(static_cast<double>(x) / 3.0 + 0.1)
                      : kind == 2 ? Value::String(std::to_string(1000000 + x))
                                  : Value::Double(static_cast<double>(x % 2000) * 2.0);
      s.Add(v, 1);
      ModelAdd(&model, v, 1);
    }
    s.Add(Value::Null(), 2);
    ModelAdd(&model, Value::Null(), 2);
    CheckSame(s, model);
    // The 10 values (distinct, but for a rare repeat), NULL's entry (2 bytes) and the 8-byte
    // header, in a buffer grown by a quarter to what malloc gives (in steps of 16 bytes).
    const size_t distinct = model.size() - 1;
    REQUIRE(s.HeapBytes() >= 8 + distinct * kinds[kind].min_entry + 2);
    REQUIRE(s.HeapBytes() <= 8 + (10 * kinds[kind].max_entry + 2) * 5 / 4 + 24);
    // Past kSmallValues the set moves to the large form, and stays right.
    for (size_t i = 0; i < ValueMultiset::kSmallValues; ++i) {
      const Value v = kind == 0   ? Value::Int(static_cast<int64_t>(i))
                      : kind == 2 ? Value::String(std::string(i + 1, 'x'))
                                  : Value::Double(0.5 + static_cast<double>(i));
      s.Add(v, -1);
      ModelAdd(&model, v, -1);
    }
    CheckSame(s, model);
    REQUIRE(s.HeapBytes() >= sizeof(LargeValueMultiset));
  }
}

TEST_CASE("ValueMultiset's small keys order integers and doubles of every length as Value does", "[value_multiset]") {
  // Integers of each length either side of zero and at the limits; doubles whose ordered bits
  // end in zero bytes or not (integral, halves, thirds, the infinities, the smallest), each a
  // prefix of another's. Added in a random order, a few at a time so that sets stay small, and
  // read back in Value order.
  std::vector<Value> ints, doubles;
  for (int shift = 0; shift < 63; shift += 7)
    for (int64_t d : {-1, 0, 1}) {
      const int64_t p = (int64_t{1} << shift) + d;
      ints.push_back(Value::Int(p));
      ints.push_back(Value::Int(-p));
    }
  ints.push_back(Value::Int(INT64_MIN));
  ints.push_back(Value::Int(INT64_MAX));
  for (double d : {0.0, 1.0, 2.0, 1736.0, 1736.5, 1.0 / 3, 0.5, 0.25, 1e300, 5e-324, 65536.0, 65537.0})
    for (double sign : {1.0, -1.0}) doubles.push_back(Value::Double(sign * d));
  doubles.push_back(Value::Double(INFINITY));
  doubles.push_back(Value::Double(-INFINITY));
  doubles.push_back(Value::Double(NAN));  // (after +infinity, as Value orders it)
  std::mt19937 rng(11);
  for (const std::vector<Value>* values : {&ints, &doubles}) {
    for (int round = 0; round < 50; ++round) {
      std::vector<Value> some = *values;
      std::shuffle(some.begin(), some.end(), rng);
      some.resize(ValueMultiset::kSmallValues / 2);
      ValueMultiset s;
      Model model;
      for (const Value& v : some) {
        if (v.kind == Value::Kind::kDouble && v.d == 0.0 && std::signbit(v.d)) continue;  // (large form)
        const int64_t w = 1 + static_cast<int64_t>(rng() % 3);
        s.Add(v, w);
        ModelAdd(&model, v, w);
      }
      const ValueMultiset::Words w = s.Release();
      REQUIRE(w.large == nullptr);  // still the small form
      s = ValueMultiset::Adopt(w);
      CheckSame(s, model);
    }
  }
}

TEST_CASE("ValueMultiset takes a batch column's cells as it takes their Values", "[value_multiset]") {
  // Columns of each physical type with NULLs and enough values to pass kSmallValues, added cell
  // by cell with random weights to one set and as Values to another, checked against the model
  // all along (the small form, the move to the large one, and on in the large form).
  std::mt19937 rng(17);
  for (const PhysType phys : {PhysType::kI64, PhysType::kF64, PhysType::kStr}) {
    Column col(phys);
    for (int i = 0; i < 200; ++i) {
      const int64_t x = static_cast<int64_t>(rng() % 60) - 30;
      if (rng() % 10 == 0) {
        col.Append(Value::Null());
      } else {
        col.Append(phys == PhysType::kI64 ? Value::Int(x * 1000003)
                   : phys == PhysType::kF64
                       ? Value::Double(static_cast<double>(x) / 4)
                       : Value::String(std::string(1 + x % 5 + 5, static_cast<char>('a' + x % 7))));
      }
    }
    ValueMultiset by_cell, by_value;
    Model model;
    for (size_t r = 0; r < col.size(); ++r) {
      const int64_t w = static_cast<int64_t>(rng() % 5) - 2;
      by_cell.Add(col, r, w);
      by_value.Add(col.Get(r), w);
      if (w != 0) ModelAdd(&model, col.Get(r), w);
      if (r % 7 == 0 || r + 1 == col.size()) {
        CheckSame(by_cell, model);
        CheckSame(by_value, model);
        // The same form (a buffer's capacity may differ: it is what malloc gave).
        const ValueMultiset::Words a = by_cell.Release(), b = by_value.Release();
        REQUIRE((a.large == nullptr) == (b.large == nullptr));
        by_cell = ValueMultiset::Adopt(a);
        by_value = ValueMultiset::Adopt(b);
      }
    }
  }
}

TEST_CASE("ValueMultiset released to two words and adopted back is the same set", "[value_multiset]") {
  for (int n : {0, 5, 100}) {  // empty, small, large
    ValueMultiset s;
    Model model;
    for (int i = 0; i < n; ++i) {
      const Value v = Value::Double(i * 0.25 - 3);
      s.Add(v, 1);
      ModelAdd(&model, v, 1);
    }
    const size_t heap = s.HeapBytes();
    const ValueMultiset::Words w = s.Release();
    REQUIRE(s.empty());
    REQUIRE(s.HeapBytes() == 0);
    ValueMultiset back = ValueMultiset::Adopt(w);
    CheckSame(back, model);
    REQUIRE(back.HeapBytes() == heap);
    back.Prefetch();
  }
}

}  // namespace
}  // namespace fld
