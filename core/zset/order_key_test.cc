// Tests of order keys (core/zset/order_key.h) against a comparator over Values written here:
// ORDER BY semantics (ASC / DESC, NULLS FIRST / LAST) then the whole row, for random rows of
// integers, doubles and strings chosen to hit the edges (extreme integers, -0.0, NaN, infinities,
// strings with NUL and 0xFF bytes, prefixes of one another).
#include "core/zset/order_key.h"

#include <absl/container/btree_map.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/zset/batch.h"

namespace fld {
namespace {

using Row = std::vector<Value>;

// -1, 0, 1: a before b, peers-and-equal, after (the model of what the keys must give).
int ModelCompare(const std::vector<SortKey>& keys, const Row& a, const Row& b) {
  for (const SortKey& k : keys) {
    const Value& x = a[k.column];
    const Value& y = b[k.column];
    if (x.IsNull() != y.IsNull()) return x.IsNull() == k.nulls_first ? -1 : 1;
    if (x.IsNull()) continue;
    const auto c = x <=> y;
    if (c == 0) continue;
    return (c < 0) != k.desc ? -1 : 1;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    const auto c = a[i] <=> b[i];  // NULL first
    if (c != 0) return c < 0 ? -1 : 1;
  }
  return 0;
}

int Sign(int c) {
  return (c > 0) - (c < 0);
}

Value RandomValue(std::mt19937_64& rng, PhysType t) {
  if (rng() % 6 == 0) return Value::Null();
  switch (t) {
    case PhysType::kI64: {
      // Around each length boundary of the integer form (1 to 8 bytes, both signs).
      static const int64_t kEdge[] = {0,
                                      1,
                                      -1,
                                      255,
                                      256,
                                      -256,
                                      -257,
                                      65535,
                                      65536,
                                      -65536,
                                      -65537,
                                      std::numeric_limits<int64_t>::min(),
                                      std::numeric_limits<int64_t>::max(),
                                      int64_t{1} << 32,
                                      -(int64_t{1} << 32),
                                      (int64_t{1} << 56) - 1,
                                      -(int64_t{1} << 56)};
      constexpr size_t kEdges = sizeof(kEdge) / sizeof(kEdge[0]);
      if (rng() % 3 == 0) return Value::Int(static_cast<int64_t>(rng() % 7) - 3);
      if (rng() % 2) return Value::Int(kEdge[rng() % kEdges]);
      return Value::Int(static_cast<int64_t>(rng()) >> (rng() % 64));  // any length
    }
    case PhysType::kF64: {
      static const double kEdge[] = {0.0,
                                     -0.0,
                                     1.5,
                                     -1.5,
                                     std::numeric_limits<double>::infinity(),
                                     -std::numeric_limits<double>::infinity(),
                                     std::numeric_limits<double>::quiet_NaN(),
                                     -std::numeric_limits<double>::quiet_NaN(),
                                     std::numeric_limits<double>::denorm_min(),
                                     -std::numeric_limits<double>::max()};
      return Value::Double(kEdge[rng() % 10]);
    }
    case PhysType::kStr: {
      static const char kAlphabet[] = {'\0', '\x01', 'a', 'b', '\xff'};
      std::string s(rng() % 4, '\0');
      for (char& c : s) c = kAlphabet[rng() % 5];
      return Value::String(s);
    }
  }
  return Value::Null();
}

TEST_CASE("order keys sort rows as ORDER BY then the whole row, and give the rows back", "[order_key]") {
  const std::vector<PhysType> types = {PhysType::kI64, PhysType::kF64, PhysType::kStr, PhysType::kI64};
  std::mt19937_64 rng(42);
  for (int round = 0; round < 60; ++round) {
    // Random sort keys over random columns (a column may repeat), each direction and NULL order.
    std::vector<SortKey> keys(1 + rng() % 3);
    for (SortKey& k : keys) k = {static_cast<int>(rng() % types.size()), rng() % 2 == 0, rng() % 2 == 0};
    std::vector<Row> rows(120);
    for (Row& r : rows)
      for (PhysType t : types) r.push_back(RandomValue(rng, t));
    std::vector<std::string> enc(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) AppendOrderKey(keys, rows[i], &enc[i]);
    for (size_t i = 0; i < rows.size(); ++i) {
      // The row comes back (as a value: -0.0 as 0.0, a NaN as a NaN).
      const Row back = RowOfOrderKey(enc[i], keys, types);
      REQUIRE(back.size() == rows[i].size());
      for (size_t c = 0; c < back.size(); ++c) {
        REQUIRE(back[c].kind == rows[i][c].kind);
        REQUIRE(back[c] == rows[i][c]);
      }
      const size_t split = OrderKeySortBytes(enc[i], keys, types);
      for (size_t j = 0; j < rows.size(); ++j) {
        const int model = ModelCompare(keys, rows[i], rows[j]);
        INFO("rows " << i << " and " << j << ", round " << round);
        REQUIRE(Sign(enc[i].compare(enc[j])) == model);
        // Peers: sort parts byte-equal exactly when the sort keys compare equal.
        const std::string_view a(enc[i]), b(enc[j]);
        const size_t split_j = OrderKeySortBytes(enc[j], keys, types);
        bool peers = true;
        for (const SortKey& k : keys) {
          const Value& x = rows[i][k.column];
          const Value& y = rows[j][k.column];
          peers = peers && x.IsNull() == y.IsNull() && (x.IsNull() || x == y);
        }
        REQUIRE((a.substr(0, split) == b.substr(0, split_j)) == peers);
        // Among peers, tie-break parts order as whole rows do.
        if (peers) {
          const auto whole = rows[i] <=> rows[j];
          REQUIRE(Sign(a.substr(split).compare(b.substr(split_j))) == (whole < 0 ? -1 : whole > 0 ? 1 : 0));
        }
      }
    }
  }
}

TEST_CASE("order keys from a batch's columns equal those from its rows' values", "[order_key]") {
  const std::vector<PhysType> types = {PhysType::kStr, PhysType::kF64, PhysType::kI64};
  std::mt19937_64 rng(7);
  BatchBuilder b(types);
  std::vector<Row> rows(200);
  for (Row& r : rows) {
    for (PhysType t : types) r.push_back(RandomValue(rng, t));
    b.AppendRow(r, 1);
  }
  const Batch batch = b.Finish();
  const std::vector<SortKey> keys = {{1, true, false}, {0, false, true}};
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string from_batch, from_row;
    AppendOrderKey(keys, batch, i, &from_batch);
    AppendOrderKey(keys, rows[i], &from_row);
    REQUIRE(from_batch == from_row);
  }
}

TEST_CASE("cells compare as their one-column order keys do", "[order_key]") {
  std::mt19937_64 rng(11);
  for (PhysType t : {PhysType::kI64, PhysType::kF64, PhysType::kStr}) {
    BatchBuilder b(std::vector<PhysType>{t});
    for (int i = 0; i < 60; ++i) b.AppendRow(Row{RandomValue(rng, t)}, 1);
    const Batch batch = b.Finish();
    const SortKey asc[] = {SortKey{0, false, true}};
    const Column* col[] = {batch.cols[0].get()};
    for (size_t i = 0; i < batch.size(); ++i)
      for (size_t j = 0; j < batch.size(); ++j) {
        std::string x, y;
        AppendOrderKey(asc, col, i, &x);
        AppendOrderKey(asc, col, j, &y);
        REQUIRE(CompareCellsAsOrderKeys(*batch.cols[0], i, j) == (x > y) - (x < y));
      }
  }
}

TEST_CASE("InlineKey holds short keys inline and long ones on the heap, through copies and moves", "[order_key]") {
  std::mt19937_64 rng(99);
  // Prefixes of one another, with and without NUL bytes, around the 8 bytes compared first.
  std::vector<std::string> strs = {"",
                                   std::string(1, '\0'),
                                   std::string(2, '\0'),
                                   "a",
                                   "a" + std::string(1, '\0'),
                                   "ab",
                                   "abcdefgh",
                                   "abcdefgh" + std::string(1, '\0'),
                                   "abcdefghi",
                                   "abcdefgi",
                                   std::string(23, 'z'),
                                   std::string(24, 'z')};
  for (int i = 0; i < 300; ++i) {
    std::string s(rng() % 40, '\0');  // 0 to 39 bytes: inline (<= 23) and not
    for (char& ch : s) ch = static_cast<char>(rng() % 3 == 0 ? 0 : rng() % 256);
    strs.push_back(s);
  }
  for (const std::string& s : strs) {
    InlineKey k(s);
    REQUIRE(k.view() == s);
    REQUIRE(k.HeapBytes() == (s.size() > 23 ? s.size() : 0));
    InlineKey copy(k);
    InlineKey moved(std::move(k));
    REQUIRE(copy.view() == s);
    REQUIRE(moved.view() == s);
    REQUIRE(k.view().empty());  // a moved-from key is empty
    InlineKey assigned(strs[0]);
    assigned = copy;
    REQUIRE(assigned.view() == s);
    assigned = std::move(moved);
    REQUIRE(assigned.view() == s);
    const InlineKey& self = assigned;
    assigned = self;  // self-assignment keeps the bytes
    REQUIRE(assigned.view() == s);
  }
  // A B-tree of them (its nodes move slots around) against a std::map of strings.
  absl::btree_map<InlineKey, int, InlineKeyLess> tree;
  std::map<std::string, int> model;
  for (int step = 0; step < 20000; ++step) {
    const std::string& s = strs[rng() % strs.size()];
    if (rng() % 3 == 0) {
      if (auto it = tree.find(std::string_view(s)); it != tree.end()) tree.erase(it);
      model.erase(s);
    } else {
      tree.try_emplace(InlineKey(s), step);
      model.try_emplace(s, step);
    }
  }
  REQUIRE(tree.size() == model.size());
  // Compare agrees with the bytes' order, inline and heap keys alike.
  for (int i = 0; i < 3000; ++i) {
    const std::string& a = strs[i < 144 ? i / 12 : rng() % strs.size()];
    const std::string& b = strs[i < 144 ? i % 12 : rng() % strs.size()];
    const int c = InlineKey(a).Compare(InlineKey(b));
    REQUIRE((c > 0) - (c < 0) == (a > b) - (a < b));
  }
  auto m = model.begin();
  for (const auto& [k, v] : tree) {
    REQUIRE(k.view() == m->first);
    REQUIRE(v == m->second);
    ++m;
  }
}

TEST_CASE("an integer's order key part alone reads back and orders as the integers", "[order_key]") {
  std::vector<int64_t> ints = {INT64_MIN, INT64_MAX, 0};
  for (int shift = 0; shift < 63; ++shift)
    for (int64_t d : {-1, 0, 1}) {
      ints.push_back((int64_t{1} << shift) + d);
      ints.push_back(-((int64_t{1} << shift) + d));
    }
  std::vector<std::string> keys;
  for (int64_t v : ints) {
    std::string k;
    AppendOrderKeyInt(v, &k);
    REQUIRE(IsOrderKeyIntTag(k[0]));
    REQUIRE(k.size() <= 9);
    int64_t back = 0;
    REQUIRE(ReadOrderKeyInt(k.data(), &back) == k.size());
    REQUIRE(back == v);
    keys.push_back(k);
  }
  for (size_t i = 0; i < ints.size(); ++i)
    for (size_t j = 0; j < ints.size(); ++j) REQUIRE((keys[i] < keys[j]) == (ints[i] < ints[j]));
}

}  // namespace
}  // namespace fld
