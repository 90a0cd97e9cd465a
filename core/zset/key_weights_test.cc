// Tests of KeyWeights (core/zset/key_weights.h) against a std::map<std::string, int64_t> model:
// random additions and retractions of short and long keys (with zero bytes), in sets that stay
// packed buffers and sets that pass kSmall (or kSmallBytes) into the B-tree; weights of every
// size (varints of one to ten bytes); the positive extremes, from a bound; copies and moves; the
// heap bytes.
#include "core/zset/key_weights.h"

#include <catch2/catch.hpp>
#include <map>
#include <optional>
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
  s.ForEach([&](std::string_view k, int64_t w) { got.emplace_back(std::string(k), w); });
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
  auto same = [](std::optional<std::string_view> got, const std::string* want) {
    if (!want) return !got;
    return got && *got == *want;
  };
  REQUIRE(same(s.FirstPositive(), first));
  REQUIRE(same(s.LastPositive(), last));
  REQUIRE(same(s.FirstPositive(std::string_view("\x01", 1)), first_from));
  // At least the keys' bytes; as a B-tree, at least its entries and long keys.
  size_t key_bytes = 0, long_heap = 0;
  for (const auto& [k, w] : m) key_bytes += k.size(), long_heap += InlineKeyHeapBytes(k.size());
  REQUIRE(s.HeapBytes() >= key_bytes);
  if (s.size() > KeyWeights::kSmall) REQUIRE(s.HeapBytes() >= long_heap + s.size() * sizeof(KeyWeights::Entry));
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
      // Mostly small weights; some of every magnitude, to the ends of int64 (their sums stay
      // far from overflow: each large one is taken back soon after).
      int64_t w = static_cast<int64_t>(rng() % 5) - 2;
      if (step % 13 == 0) w = static_cast<int64_t>(rng() >> (rng() % 64)) * (w < 0 ? -1 : 1) / 4;
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
    REQUIRE(moved.empty());
    REQUIRE(moved.HeapBytes() == 0);  // the buffer or tree freed
  }
}

TEST_CASE("KeyWeights packs a small set: its keys' bytes and a byte or two each", "[key_weights]") {
  KeyWeights s;
  for (int i = 0; i < 10; ++i) s.Add(std::to_string(1000 + (i * 7) % 10), 1);
  REQUIRE(s.size() == 10);
  // 10 entries of a length byte, 4 key bytes and a weight byte (60 bytes) after the buffer's
  // 8-byte header, grown by a quarter to malloc's next size class (16-byte steps): at most 8 +
  // 75 + 15. Fixed 32-byte entries took 320.
  REQUIRE(s.HeapBytes() >= 68);
  REQUIRE(s.HeapBytes() <= 98);
  REQUIRE(*s.FirstPositive() == "1000");
  REQUIRE(*s.LastPositive() == "1009");
  s.Add("1000", -1);
  s.Add("1009", -2);  // a negative weight: not positive, still held
  REQUIRE(*s.FirstPositive() == "1001");
  REQUIRE(*s.LastPositive() == "1008");
  REQUIRE(*s.FirstPositive("1005") == "1005");
  REQUIRE(*s.FirstPositive("10055") == "1006");
  REQUIRE(s.size() == 9);
  // A weight growing past one byte's varint and back.
  s.Add("1004", 1000000);
  s.Add("1004", -1000000);
  REQUIRE(s.size() == 9);
  std::vector<std::pair<std::string, int64_t>> got;
  s.ForEach([&](std::string_view k, int64_t w) { got.emplace_back(std::string(k), w); });
  REQUIRE(got.front() == std::pair<std::string, int64_t>("1001", 1));
  REQUIRE(got.back() == std::pair<std::string, int64_t>("1009", -1));
  REQUIRE(got[3] == std::pair<std::string, int64_t>("1004", 1));
}

TEST_CASE("KeyWeights moves long keys into the B-tree past kSmallBytes", "[key_weights]") {
  // 20 keys of 200 bytes exceed kSmallBytes before kSmall keys: the set becomes a B-tree (its
  // heap bytes are its entries and long keys), and stays right.
  KeyWeights s;
  Model m;
  for (int i = 0; i < 20; ++i) {
    const std::string k = std::string(200, static_cast<char>('a' + i % 7)) + std::to_string(i);
    s.Add(k, i + 1);
    m[k] = i + 1;
  }
  Check(s, m);
  REQUIRE(s.HeapBytes() >= 20 * (sizeof(KeyWeights::Entry) + 200));
}

TEST_CASE("KeyWeights released to a word and adopted back is the same set", "[key_weights]") {
  static_assert(sizeof(KeyWeights) == sizeof(uintptr_t), "a set is one word in a group's record");
  for (int keys : {0, 1, 10, 100}) {  // empty, packed, packed, a B-tree
    KeyWeights s;
    Model m;
    for (int i = 0; i < keys; ++i) {
      const std::string k = "k" + std::to_string(i * 37 % 101);
      s.Add(k, i % 3 + 1);
      m[k] += i % 3 + 1;
    }
    const size_t heap = s.HeapBytes();
    const uintptr_t word = s.Release();
    REQUIRE(s.empty());
    REQUIRE(s.HeapBytes() == 0);
    REQUIRE((word == 0) == (keys == 0));
    // The word alone owns the set: adopted (as a record's bytes are read back), it is whole.
    KeyWeights back = KeyWeights::Adopt(word);
    Check(back, m);
    REQUIRE(back.HeapBytes() == heap);
    back.Prefetch();  // (a hint; reads nothing: must not fault on any form)
    back.Add("k0", 5);
    m["k0"] += 5;
    Check(back, m);
  }
}

}  // namespace
}  // namespace fld
