// Tests of the Z-set batch utilities (core/zset/batch.h): the row encoding that operator state
// and checkpoints are keyed by, Consolidate, Concat, Gather, and the builders' NULL handling.
#include "core/zset/batch.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/common/serialize.h"
#include "core/common/thread_pool.h"

namespace fld {
namespace {

using Row = std::vector<Value>;

// Same value, bit for bit for doubles (so -0.0 != 0.0 and NaN == NaN here).
bool Identical(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::kNull:
      return true;
    case Value::Kind::kInt:
      return a.i == b.i;
    case Value::Kind::kDouble:
      return std::memcmp(&a.d, &b.d, sizeof(double)) == 0;
    case Value::Kind::kString:
      return a.s == b.s;
  }
  return false;
}

std::string Enc(const Value& v) {
  std::string s;
  EncodeValue(&s, v);
  return s;
}

std::string Hex(const std::string& s) {
  static const char* kDigits = "0123456789abcdef";
  std::string h;
  for (unsigned char c : s) {
    h += kDigits[c >> 4];
    h += kDigits[c & 15];
  }
  return h;
}

std::string EncRow(const Batch& b, size_t r) {
  std::string s;
  EncodeRow(&s, b, r);
  return s;
}

// Every cell of the batch as Values, plus weights.
std::vector<std::pair<Row, int64_t>> Cells(const Batch& b) {
  std::vector<std::pair<Row, int64_t>> out;
  for (size_t r = 0; r < b.size(); ++r) {
    Row row;
    for (size_t c = 0; c < b.width(); ++c) row.push_back(b.Get(c, r));
    out.emplace_back(std::move(row), b.weights[r]);
  }
  return out;
}

bool SameCells(const Batch& a, const Batch& b) {
  auto x = Cells(a), y = Cells(b);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].second != y[i].second || x[i].first.size() != y[i].first.size()) return false;
    for (size_t c = 0; c < x[i].first.size(); ++c)
      if (!Identical(x[i].first[c], y[i].first[c])) return false;
  }
  return true;
}

bool WellFormed(const Batch& b) {
  for (const auto& c : b.cols) {
    if (c->size() != b.size()) return false;
    if (!c->nulls.empty() && c->nulls.size() != b.size()) return false;
  }
  return true;
}

const std::vector<Value>& Pool(PhysType t) {
  static const std::vector<Value> ints = {Value::Int(0),
                                          Value::Int(1),
                                          Value::Int(-1),
                                          Value::Int(255),
                                          Value::Int(256),
                                          Value::Int(std::numeric_limits<int64_t>::min()),
                                          Value::Int(std::numeric_limits<int64_t>::max())};
  static const std::vector<Value> dbls = {Value::Double(0.0),
                                          Value::Double(-0.0),
                                          Value::Double(1.5),
                                          Value::Double(-2.25),
                                          Value::Double(std::numeric_limits<double>::infinity()),
                                          Value::Double(-std::numeric_limits<double>::infinity()),
                                          Value::Double(std::numeric_limits<double>::denorm_min()),
                                          Value::Double(std::numeric_limits<double>::max()),
                                          Value::Double(1e-300)};
  static const std::vector<Value> strs = {Value::String(""),
                                          Value::String("a"),
                                          Value::String(std::string("\0", 1)),
                                          Value::String(std::string("a\0b", 3)),
                                          Value::String("\xff\xfe"),
                                          Value::String("h\xc3\xa9llo"),
                                          Value::String(std::string(300, 'x')),
                                          Value::String(std::string(256, 'a'))};
  switch (t) {
    case PhysType::kI64:
      return ints;
    case PhysType::kF64:
      return dbls;
    case PhysType::kStr:
      return strs;
  }
  return ints;
}

Value RandomValue(std::mt19937_64& rng, PhysType t, double null_p = 0.2) {
  if (std::uniform_real_distribution<double>(0, 1)(rng) < null_p) return Value::Null();
  const auto& pool = Pool(t);
  return pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
}

// A random batch of the given types, NULLs included (sometimes none at all).
Batch RandomBatch(std::mt19937_64& rng, const std::vector<PhysType>& types, size_t n, double null_p = 0.2) {
  BatchBuilder b(types);
  std::vector<Value> row(types.size());
  for (size_t r = 0; r < n; ++r) {
    for (size_t c = 0; c < types.size(); ++c) row[c] = RandomValue(rng, types[c], null_p);
    b.AppendRow(row, std::uniform_int_distribution<int64_t>(-2, 3)(rng));
  }
  return b.Finish();
}

std::vector<PhysType> RandomTypes(std::mt19937_64& rng) {
  std::vector<PhysType> t(std::uniform_int_distribution<int>(1, 4)(rng));
  for (auto& p : t) p = static_cast<PhysType>(std::uniform_int_distribution<int>(0, 2)(rng));
  return t;
}

TEST_CASE("encoding: the byte format is pinned", "[zset]") {
  // Checkpoints store these bytes: changing them is a format break.
  CHECK(Hex(Enc(Value::Null())) == "00");
  CHECK(Hex(Enc(Value::Int(1))) == "010100000000000000");
  CHECK(Hex(Enc(Value::Int(-1))) == "01ffffffffffffffff");
  CHECK(Hex(Enc(Value::Double(1.0))) == "02000000000000f03f");
  CHECK(Hex(Enc(Value::Double(-0.0))) == "020000000000000000");
  CHECK(Hex(Enc(Value::String("ab"))) == "03020000006162");
  CHECK(Hex(Enc(Value::String(""))) == "0300000000");
}

TEST_CASE("encoding: EncodeRow/DecodeRow round-trip every physical type, NULLs and empty strings", "[zset]") {
  std::mt19937_64 rng(42);
  for (int it = 0; it < 300; ++it) {
    auto types = RandomTypes(rng);
    Batch b = RandomBatch(rng, types, std::uniform_int_distribution<size_t>(0, 20)(rng));
    REQUIRE(WellFormed(b));
    BatchBuilder rebuilt(types);
    for (size_t r = 0; r < b.size(); ++r) {
      std::string enc = EncRow(b, r);
      // The column form and the Value form of a cell encode identically.
      std::string by_value;
      for (size_t c = 0; c < b.width(); ++c) by_value += Enc(b.Get(c, r));
      REQUIRE((enc == by_value));
      Row back = DecodeRow(enc);
      REQUIRE(back.size() == b.width());
      for (size_t c = 0; c < b.width(); ++c) {
        Value want = b.Get(c, r);
        if (want.kind == Value::Kind::kDouble && want.d == 0.0) want.d = 0.0;  // -0.0 encodes as 0.0
        INFO("row " << r << " col " << c);
        REQUIRE(Identical(back[c], want));
      }
      // A subset of columns, in another order.
      std::vector<int> cols;
      for (int c = static_cast<int>(b.width()) - 1; c >= 0; c -= 2) cols.push_back(c);
      std::string part;
      EncodeRow(&part, b, r, cols);
      Row pb = DecodeRow(part);
      REQUIRE(pb.size() == cols.size());
      for (size_t k = 0; k < cols.size(); ++k) REQUIRE(pb[k] == b.Get(cols[k], r));
      // DecodeRowInto rebuilds the row in a builder.
      DecodeRowInto(enc, &rebuilt, 0);
      rebuilt.AddWeight(b.weights[r]);
    }
    Batch rb = rebuilt.Finish();
    REQUIRE(WellFormed(rb));
    REQUIRE(rb.size() == b.size());
    for (size_t r = 0; r < b.size(); ++r) REQUIRE((EncRow(rb, r) == EncRow(b, r)));
  }
}

TEST_CASE("encoding: RowEncodingValid accepts whole rows of either encoding, refuses cut and unknown bytes", "[zset]") {
  std::mt19937_64 rng(47);
  size_t checked = 0;
  for (int it = 0; it < 300; ++it) {
    auto types = RandomTypes(rng);
    Batch b = RandomBatch(rng, types, std::uniform_int_distribution<size_t>(1, 10)(rng));
    for (size_t r = 0; r < b.size(); ++r) {
      std::string compact;
      for (size_t c = 0; c < b.width(); ++c) EncodeCompactValue(&compact, *b.cols[c], r);
      for (const std::string& enc : {EncRow(b, r), compact}) {
        REQUIRE(RowEncodingValid(enc));
        // Every cut inside a value is refused; a cut between values is a shorter valid row.
        size_t pos = 0;
        std::vector<size_t> ends;
        while (pos < enc.size()) {
          DecodeValue(enc, &pos);
          ends.push_back(pos);
        }
        for (size_t cut = 0; cut < enc.size(); ++cut) {
          const bool between = cut == 0 || std::find(ends.begin(), ends.end(), cut) != ends.end();
          REQUIRE(RowEncodingValid(std::string_view(enc).substr(0, cut)) == between);
          ++checked;
        }
      }
    }
  }
  REQUIRE(checked > 1000);
  for (const char* bad : {"\x04", "\x09", "\x19", "\xff", "\x03\x05\x00\x00\x00ab"})
    REQUIRE_FALSE(RowEncodingValid(bad));
}

TEST_CASE("encoding: the compact encoding round-trips, is one-to-one and CompactRow converts to it", "[zset]") {
  std::mt19937_64 rng(43);
  std::map<std::string, std::string> compact_of;  // row encoding -> compact encoding
  std::map<std::string, std::string> row_of;      // and back: the compact encoding is one-to-one
  for (int it = 0; it < 300; ++it) {
    auto types = RandomTypes(rng);
    Batch b = RandomBatch(rng, types, std::uniform_int_distribution<size_t>(0, 20)(rng));
    BatchBuilder rebuilt(types);
    for (size_t r = 0; r < b.size(); ++r) {
      std::string compact;
      for (size_t c = 0; c < b.width(); ++c) EncodeCompactValue(&compact, *b.cols[c], r);
      const std::string enc = EncRow(b, r);
      REQUIRE(CompactRow(enc) == compact);
      REQUIRE(CompactRow(compact) == compact);  // already compact: unchanged
      REQUIRE(compact.size() <= enc.size());
      Row back = DecodeRow(compact);
      REQUIRE(back == DecodeRow(enc));
      for (size_t c = 0; c < b.width(); ++c) REQUIRE(back[c].kind == DecodeRow(enc)[c].kind);
      DecodeRowInto(compact, &rebuilt, 0);
      rebuilt.AddWeight(b.weights[r]);
      REQUIRE(compact_of.emplace(enc, compact).first->second == compact);
      REQUIRE(row_of.emplace(compact, enc).first->second == enc);
    }
    Batch rb = rebuilt.Finish();
    REQUIRE(WellFormed(rb));
    for (size_t r = 0; r < b.size(); ++r) REQUIRE((EncRow(rb, r) == EncRow(b, r)));
  }
  // Integers take the fewest bytes their zigzag form needs, up to 9 with the tag.
  const std::vector<std::pair<int64_t, size_t>> sizes = {{0, 1},
                                                         {-1, 2},
                                                         {1, 2},
                                                         {127, 2},
                                                         {-128, 2},
                                                         {128, 3},
                                                         {-129, 3},
                                                         {1000000, 4},
                                                         {std::numeric_limits<int64_t>::max(), 9},
                                                         {std::numeric_limits<int64_t>::min(), 9}};
  for (const auto& [v, n] : sizes) {
    INFO(v);
    const std::string c = CompactRow(Enc(Value::Int(v)));
    REQUIRE(c.size() == n);
    REQUIRE(DecodeRow(c) == Row{Value::Int(v)});
  }
}

TEST_CASE("encoding: DecodeRowInto appends after existing columns and NULLs", "[zset]") {
  std::vector<PhysType> types = {PhysType::kI64, PhysType::kI64, PhysType::kStr};
  BatchBuilder b(types);
  // Row 0: NULL then an int decoded into column 1 after a NULL already in column 1.
  b.col(0).AppendNull();
  DecodeRowInto(Enc(Value::Null()) + Enc(Value::String("s")), &b, 1);
  b.AddWeight(1);
  b.col(0).Append(Value::Int(7));
  DecodeRowInto(Enc(Value::Int(9)) + Enc(Value::String("")), &b, 1);
  b.AddWeight(-1);
  Batch out = b.Finish();
  REQUIRE(WellFormed(out));
  CHECK(out.Get(0, 0).IsNull());
  CHECK(out.Get(1, 0).IsNull());
  CHECK(out.Get(2, 0) == Value::String("s"));
  CHECK(out.Get(0, 1) == Value::Int(7));
  CHECK(out.Get(1, 1) == Value::Int(9));
  CHECK(out.Get(2, 1) == Value::String(""));
}

TEST_CASE("encoding: -0.0 and 0.0 encode the same, other values differ", "[zset]") {
  CHECK(Enc(Value::Double(-0.0)) == Enc(Value::Double(0.0)));
  BatchBuilder b(std::vector<PhysType>{PhysType::kF64});
  b.AppendRow(std::vector<Value>{Value::Double(-0.0)}, 1);
  b.AppendRow(std::vector<Value>{Value::Double(0.0)}, 1);
  Batch batch = b.Finish();
  CHECK(EncRow(batch, 0) == EncRow(batch, 1));
  CHECK(EncRow(batch, 0) == Enc(Value::Double(0.0)));
  // Consolidate treats them as one row.
  Batch c = Consolidate(batch);
  REQUIRE(c.size() == 1);
  CHECK(c.weights[0] == 2);
  // NULL, empty string, 0 and 0.0 are all different encodings; so are ("a","") and ("","a").
  std::vector<std::string> e = {Enc(Value::Null()), Enc(Value::String("")), Enc(Value::Int(0)),
                                Enc(Value::Double(0.0))};
  std::sort(e.begin(), e.end());
  CHECK(std::adjacent_find(e.begin(), e.end()) == e.end());
  CHECK(Enc(Value::String("a")) + Enc(Value::String("")) != Enc(Value::String("")) + Enc(Value::String("a")));
  // Equal values encode equal whatever column they come from.
  BatchBuilder i(std::vector<PhysType>{PhysType::kI64, PhysType::kI64});
  i.AppendRow(std::vector<Value>{Value::Int(5), Value::Null()}, 1);
  i.AppendRow(std::vector<Value>{Value::Int(5), Value::Int(5)}, 1);
  Batch ib = i.Finish();
  std::string a, bb;
  EncodeValue(&a, *ib.cols[0], 0);
  EncodeValue(&bb, *ib.cols[1], 1);
  CHECK(a == bb);
}

TEST_CASE("Consolidate sums weights, drops zeros, and does not depend on row order", "[zset]") {
  std::mt19937_64 rng(7);
  for (int it = 0; it < 300; ++it) {
    auto types = RandomTypes(rng);
    // Few distinct values so rows repeat; weights in [-2, 3] so some sums are 0.
    BatchBuilder bb(types);
    size_t n = std::uniform_int_distribution<size_t>(0, 40)(rng);
    std::vector<Value> row(types.size());
    for (size_t r = 0; r < n; ++r) {
      for (size_t c = 0; c < types.size(); ++c) {
        row[c] = RandomValue(rng, types[c], 0.3);
        if (!row[c].IsNull() && std::uniform_int_distribution<int>(0, 2)(rng) != 0) row[c] = Pool(types[c])[0];
      }
      bb.AppendRow(row, std::uniform_int_distribution<int64_t>(-2, 3)(rng));
    }
    Batch b = bb.Finish();
    std::map<std::string, int64_t> expect;
    for (size_t r = 0; r < b.size(); ++r) expect[EncRow(b, r)] += b.weights[r];
    std::erase_if(expect, [](const auto& kv) { return kv.second == 0; });

    Batch c = Consolidate(b);
    REQUIRE(WellFormed(c));
    REQUIRE(c.size() == expect.size());
    size_t k = 0;
    for (const auto& [enc, w] : expect) {  // sorted by encoding, as documented
      INFO("row " << k);
      REQUIRE((EncRow(c, k) == enc));
      REQUIRE(c.weights[k] == w);
      ++k;
    }
    // Shuffled input: byte-identical output.
    std::vector<uint32_t> perm(b.size());
    for (uint32_t i = 0; i < perm.size(); ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    Batch cs = Consolidate(Gather(b, perm));
    REQUIRE(cs.size() == c.size());
    for (size_t r = 0; r < c.size(); ++r) {
      REQUIRE((EncRow(cs, r) == EncRow(c, r)));
      REQUIRE(cs.weights[r] == c.weights[r]);
    }
    // Idempotent.
    Batch cc = Consolidate(c);
    REQUIRE(SameCells(cc, c));
    // In parts (some empty): the consolidation of their concatenation.
    std::vector<Batch> parts;
    for (size_t at = 0; at < b.size() || parts.empty();) {
      const size_t len = std::uniform_int_distribution<size_t>(0, b.size() - at)(rng);
      std::vector<uint32_t> sel;
      for (size_t r = at; r < at + len; ++r) sel.push_back(static_cast<uint32_t>(r));
      parts.push_back(Gather(b, sel));
      at += len;
    }
    Batch cp = Consolidate(parts);
    REQUIRE(WellFormed(cp));
    REQUIRE(SameCells(cp, c));
  }
}

TEST_CASE("Consolidate with a thread pool gives the result it gives on one thread", "[zset]") {
  std::mt19937_64 rng(11);
  ThreadPool two(2), three(3);
  auto check = [&](std::span<const Batch> parts) {
    std::map<std::string, int64_t> expect;  // the oracle: weights summed per encoding
    for (const Batch& b : parts)
      for (size_t r = 0; r < b.size(); ++r) expect[EncRow(b, r)] += b.weights[r];
    std::erase_if(expect, [](const auto& kv) { return kv.second == 0; });
    const Batch serial = Consolidate(parts);
    REQUIRE(serial.size() == expect.size());
    size_t k = 0;
    for (const auto& [enc, w] : expect) {
      REQUIRE((EncRow(serial, k) == enc));
      REQUIRE(serial.weights[k++] == w);
    }
    for (ThreadPool* pool : {&two, &three}) {
      const Batch par = Consolidate(parts, pool, 0);
      REQUIRE(WellFormed(par));
      REQUIRE(SameCells(par, serial));
    }
  };
  for (int it = 0; it < 60; ++it) {
    auto types = RandomTypes(rng);
    std::vector<Batch> parts;
    const size_t n_parts = std::uniform_int_distribution<size_t>(1, 4)(rng);
    for (size_t p = 0; p < n_parts; ++p) {
      // Few distinct values (rows repeat and cancel) or many; some parts empty.
      const bool few = std::uniform_int_distribution<int>(0, 1)(rng) == 0;
      BatchBuilder bb(types);
      const size_t n = std::uniform_int_distribution<size_t>(0, 3000)(rng);
      std::vector<Value> row(types.size());
      for (size_t r = 0; r < n; ++r) {
        for (size_t c = 0; c < types.size(); ++c) {
          row[c] = RandomValue(rng, types[c], 0.1);
          if (few && !row[c].IsNull() && std::uniform_int_distribution<int>(0, 3)(rng) != 0) row[c] = Pool(types[c])[0];
        }
        bb.AppendRow(row, std::uniform_int_distribution<int64_t>(-2, 3)(rng));
      }
      parts.push_back(bb.Finish());
    }
    check(parts);
    // A consolidated first part (as a materialized view's pending changes) is merged as a run.
    parts[0] = Consolidate(parts[0]);
    check(parts);
  }
  // Every row with one 8-byte prefix (strings of one length and first 3 bytes): one bucket.
  {
    const std::vector<PhysType> types = {PhysType::kStr, PhysType::kI64};
    BatchBuilder bb(types);
    for (int r = 0; r < 5000; ++r)
      bb.AppendRow(std::vector<Value>{Value::String("abc" + std::to_string(10000 + r % 700)), Value::Int(r % 3)},
                   r % 5 == 0 ? -1 : 1);
    const Batch b = bb.Finish();
    check(std::span<const Batch>(&b, 1));
  }
  // More rows than one piece of a part (64K): several pieces per part; integer keys with
  // negative values (their encoding's order is not the integers' order).
  {
    const std::vector<PhysType> types = {PhysType::kI64, PhysType::kI64};
    std::vector<Batch> parts;
    for (int p = 0; p < 2; ++p) {
      BatchBuilder bb(types);
      for (int r = 0; r < 150000; ++r) {
        const int64_t k = static_cast<int64_t>(rng() % 90000) - 30000;
        bb.AppendRow(std::vector<Value>{Value::Int(k), Value::Int(k % 7)}, p == 0 ? 1 : -1);
      }
      parts.push_back(bb.Finish());
    }
    check(parts);
    parts[0] = Consolidate(parts[0]);
    check(parts);
  }
}

TEST_CASE("Concat and Gather keep values and NULLs", "[zset]") {
  std::mt19937_64 rng(99);
  for (int it = 0; it < 300; ++it) {
    auto types = RandomTypes(rng);
    size_t parts_n = std::uniform_int_distribution<size_t>(0, 4)(rng);
    std::vector<Batch> parts;
    std::vector<std::pair<Row, int64_t>> expect;
    for (size_t p = 0; p < parts_n; ++p) {
      // Some parts without any NULL (no null vector), some with, some empty.
      double null_p = std::uniform_int_distribution<int>(0, 1)(rng) ? 0.0 : 0.3;
      Batch b = RandomBatch(rng, types, std::uniform_int_distribution<size_t>(0, 6)(rng), null_p);
      auto cells = Cells(b);
      expect.insert(expect.end(), cells.begin(), cells.end());
      parts.push_back(std::move(b));
    }
    Batch all = Concat(parts);
    REQUIRE(WellFormed(all));
    if (parts_n > 0) REQUIRE(all.width() == types.size());
    auto got = Cells(all);
    REQUIRE(got.size() == expect.size());
    for (size_t r = 0; r < got.size(); ++r) {
      REQUIRE(got[r].second == expect[r].second);
      for (size_t c = 0; c < types.size(); ++c) REQUIRE(Identical(got[r].first[c], expect[r].first[c]));
    }

    // Gather: random indices, repeats allowed, any order.
    if (all.width() == 0) continue;
    std::vector<uint32_t> sel(std::uniform_int_distribution<size_t>(0, 10)(rng));
    if (all.empty()) sel.clear();
    for (auto& s : sel) s = std::uniform_int_distribution<uint32_t>(0, static_cast<uint32_t>(all.size() - 1))(rng);
    Batch g = Gather(all, sel);
    REQUIRE(WellFormed(g));
    REQUIRE(g.width() == all.width());
    REQUIRE(g.size() == sel.size());
    for (size_t k = 0; k < sel.size(); ++k) {
      REQUIRE(g.weights[k] == all.weights[sel[k]]);
      for (size_t c = 0; c < all.width(); ++c) REQUIRE(Identical(g.Get(c, k), all.Get(c, sel[k])));
    }
  }
}

TEST_CASE("GatherRows with a pool copies the rows the serial gather copies, at every range bound", "[zset]") {
  std::mt19937_64 rng(5);
  ThreadPool pool(2), pool3(3);
  for (size_t n : {size_t{0}, size_t{1}, size_t{8191}, size_t{8192}, size_t{8193}, size_t{20000}, size_t{70001}}) {
    auto types = RandomTypes(rng);
    std::vector<Batch> parts;
    for (int p = 0; p < 3; ++p)
      parts.push_back(RandomBatch(rng, types, 3000 + static_cast<size_t>(p) * 500, p ? 0.2 : 0));
    std::vector<RowRef> order(n);
    for (auto& ref : order) {
      ref.part = static_cast<uint32_t>(rng() % parts.size());
      ref.row = static_cast<uint32_t>(rng() % parts[ref.part].size());
    }
    const Batch serial = GatherRows(parts, order, types);
    REQUIRE(serial.size() == n);
    for (size_t k = 0; k < n; k += 97) {
      REQUIRE(serial.weights[k] == parts[order[k].part].weights[order[k].row]);
      for (size_t c = 0; c < types.size(); ++c)
        REQUIRE(Identical(serial.Get(c, k), parts[order[k].part].Get(c, order[k].row)));
    }
    for (ThreadPool* p : {&pool, &pool3}) {
      const Batch par = GatherRows(parts, order, types, p);
      REQUIRE(WellFormed(par));
      REQUIRE(par.weights == serial.weights);
      for (size_t c = 0; c < types.size(); ++c) {
        REQUIRE(par.cols[c]->HasNulls() == serial.cols[c]->HasNulls());
        for (size_t k = 0; k < n; ++k) REQUIRE(Identical(par.Get(c, k), serial.Get(c, k)));
      }
    }
  }
}

TEST_CASE("Gather drops the null vector when no selected row is NULL", "[zset]") {
  BatchBuilder b(std::vector<PhysType>{PhysType::kStr});
  b.AppendRow(std::vector<Value>{Value::Null()}, 1);
  b.AppendRow(std::vector<Value>{Value::String("")}, 1);
  Batch batch = b.Finish();
  REQUIRE(batch.cols[0]->HasNulls());
  std::vector<uint32_t> sel = {1, 1};
  Batch g = Gather(batch, sel);
  CHECK_FALSE(g.cols[0]->HasNulls());
  CHECK(g.Get(0, 0) == Value::String(""));
  std::vector<uint32_t> none;
  Batch e = Gather(batch, none);
  CHECK(e.empty());
  CHECK(WellFormed(e));
}

TEST_CASE("Column and BatchBuilder NULL bookkeeping", "[zset]") {
  Column c(PhysType::kI64);
  c.Append(Value::Int(1));
  c.Append(Value::Int(2));
  CHECK_FALSE(c.HasNulls());
  c.AppendNull();
  REQUIRE(c.nulls.size() == 3);
  CHECK(c.IsNull(2));
  CHECK_FALSE(c.IsNull(0));
  c.Append(Value::Int(4));
  REQUIRE(c.nulls.size() == 4);
  CHECK_FALSE(c.IsNull(3));
  c.SetNull(0);
  CHECK(c.Get(0).IsNull());
  Column d(PhysType::kF64);
  d.Append(Value::Double(1));
  d.SetNull(0);
  CHECK(d.IsNull(0));
  Column e(PhysType::kStr);
  e.AppendNull();
  e.Append(Value::String("x"));
  e.nulls[0] = 0;
  e.CompactNulls();
  CHECK_FALSE(e.HasNulls());
  // AppendFrom copies NULLs.
  Column f(PhysType::kI64);
  f.AppendFrom(c, 2);
  f.AppendFrom(c, 1);
  CHECK(f.Get(0).IsNull());
  CHECK(f.Get(1) == Value::Int(2));
  // Builder output has no null vector when nothing is NULL.
  BatchBuilder bb(std::vector<PhysType>{PhysType::kI64, PhysType::kStr});
  bb.AppendRow(std::vector<Value>{Value::Int(1), Value::String("")}, 1);
  Batch b = bb.Finish();
  CHECK_FALSE(b.cols[0]->HasNulls());
  CHECK_FALSE(b.cols[1]->HasNulls());
  Batch empty = EmptyBatch(std::vector<PhysType>{PhysType::kF64, PhysType::kStr});
  CHECK(empty.width() == 2);
  CHECK(empty.empty());
}

TEST_CASE("StateWriter/StateReader round-trip and refuse to read past the end", "[zset]") {
  std::string buf;
  StateWriter w(&buf);
  w.U64(7);
  w.I64(-3);
  w.F64(-0.0);
  w.Str("");
  w.Str(std::string("a\0b", 3));
  StateReader r(buf);
  CHECK(r.U64() == 7);
  CHECK(r.I64() == -3);
  double d = r.F64();
  CHECK(std::signbit(d));
  CHECK(r.Str().empty());
  CHECK(r.Str() == std::string("a\0b", 3));
  CHECK(r.AtEnd());
  CHECK_THROWS_AS(r.U64(), Error);
  for (size_t len = 0; len < buf.size(); ++len) {
    StateReader t(std::string_view(buf).substr(0, len));
    auto read_all = [&] {
      t.U64();
      t.I64();
      t.F64();
      t.Str();
      t.Str();
    };
    CHECK_THROWS_AS(read_all(), Error);
  }
  // A huge length prefix is reported, not allocated.
  std::string bad;
  StateWriter bw(&bad);
  bw.U64(~uint64_t{0});
  StateReader br(bad);
  CHECK_THROWS_AS(br.Str(), Error);
}

}  // namespace
}  // namespace fld
