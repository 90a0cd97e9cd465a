// Tests of KeyWeights (core/zset/key_weights.h) against a std::map<std::string, int64_t> model:
// random additions and retractions of short and long keys (with zero bytes), in sets that stay
// arrays and sets that pass kSmall into the B-tree; the positive extremes, from a bound; copies
// and moves; the heap bytes of long keys.
#include "core/zset/key_weights.h"

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace fld {
namespace {

using Model = std::map<std::string, int64_t>;

void Check(const KeyWeights& s, const Model& m) {
  REQUIRE(s.size() == m.size());
  REQUIRE(s.empty() == m.empty());
  std::vector<std::pair<std::string, int64_t>> got;
  s.ForEach([&](const InlineKey& k, int64_t w) { got.emplace_back(std::string(k.view()), w); });
  REQUIRE(got == std::vector<std::pair<std::string, int64_t>>(m.begin(), m.end()));
  const std::string* first = nullptr;
  const std::string* last = nullptr;
  const std::string* first_from = nullptr;  // at or after "\x01"
  for (const auto& [k, w] : m) {
    if (w <= 0) continue;
    if (!first) first = &k;
    if (!first_from && k >= std::string("\x01", 1)) first_from = &k;
    last = &k;
  }
  auto same = [](const InlineKey* got, const std::string* want) {
    if (!want) return got == nullptr;
    return got != nullptr && got->view() == *want;
  };
  REQUIRE(same(s.FirstPositive(), first));
  REQUIRE(same(s.LastPositive(), last));
  REQUIRE(same(s.FirstPositive(std::string_view("\x01", 1)), first_from));
  size_t long_heap = 0;
  for (const auto& [k, w] : m) long_heap += InlineKeyHeapBytes(k.size());
  REQUIRE(s.HeapBytes() >= long_heap + s.size() * sizeof(KeyWeights::Entry));
}

std::string RandomKey(std::mt19937_64& rng, int distinct) {
  const int i = static_cast<int>(rng() % static_cast<uint64_t>(distinct));
  std::string k(1, static_cast<char>(i % 3));  // first byte 0, 1 or 2: around the "\x01" bound
  k += std::to_string(i);
  if (i % 4 == 0) k += std::string(30, 'x') + std::string(1, '\0') + std::to_string(i);  // heap key
  return k;
}

TEST_CASE("KeyWeights matches a map through random additions and retractions", "[key_weights]") {
  for (int distinct : {5, 40, 70, 300}) {  // below kSmall, near it, past it, well past it
    std::mt19937_64 rng(static_cast<uint64_t>(distinct));
    KeyWeights s;
    Model m;
    for (int step = 0; step < 3000; ++step) {
      const std::string k = RandomKey(rng, distinct);
      const int64_t w = static_cast<int64_t>(rng() % 5) - 2;
      s.Add(k, w);
      if (w != 0) {
        int64_t& mw = m[k];
        mw += w;
        if (mw == 0) m.erase(k);
      }
      if (step % 97 == 0) Check(s, m);
    }
    Check(s, m);
    // A copy is equal and independent; a move leaves the source empty.
    KeyWeights copy = s;
    Check(copy, m);
    copy.Add("independent", 1);
    Check(s, m);
    KeyWeights moved = std::move(copy);
    REQUIRE(copy.empty());
    REQUIRE(copy.HeapBytes() == 0);
    m["independent"] += 1;
    Check(moved, m);
    // Retracting everything empties the set.
    for (const auto& [k, w] : m) moved.Add(k, -w);
    Check(moved, Model{});
    REQUIRE(moved.HeapBytes() <= KeyWeights::kSmall * sizeof(KeyWeights::Entry));
  }
}

TEST_CASE("KeyWeights keeps a small set in an array sized to it", "[key_weights]") {
  KeyWeights s;
  for (int i = 0; i < 10; ++i) s.Add(std::to_string(1000 + (i * 7) % 10), 1);
  REQUIRE(s.size() == 10);
  // 2, 4, then by 2 up to 16, and no B-tree nodes: 10 entries of 32 bytes.
  REQUIRE(sizeof(KeyWeights::Entry) == 32);
  REQUIRE(s.HeapBytes() == 10 * sizeof(KeyWeights::Entry));
  REQUIRE(s.FirstPositive()->view() == "1000");
  REQUIRE(s.LastPositive()->view() == "1009");
  s.Add("1000", -1);
  s.Add("1009", -2);  // a negative weight: not positive, still held
  REQUIRE(s.FirstPositive()->view() == "1001");
  REQUIRE(s.LastPositive()->view() == "1008");
  REQUIRE(s.size() == 9);
}

}  // namespace
}  // namespace fld
