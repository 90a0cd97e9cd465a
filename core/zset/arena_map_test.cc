// Tests of ArenaMap (core/zset/arena_map.h) against a std::map model: random inserts, value
// rewrites of the same and other sizes, erases (backward shift), growth, compaction and clear.
#include "core/zset/arena_map.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.h"

namespace fld {
namespace {

void CheckSame(const ArenaMap& m, const std::map<std::string, std::string>& model) {
  REQUIRE(m.size() == model.size());
  std::map<std::string, std::string> seen;
  m.ForEachSlot([&](uint32_t s) { seen.emplace(std::string(m.Key(s)), std::string(m.Value(s))); });
  REQUIRE(seen == model);
  for (const auto& [k, v] : model) {
    uint32_t s = m.Find(k);
    REQUIRE(s != ArenaMap::kNone);
    REQUIRE(m.Value(s) == v);
  }
}

TEST_CASE("ArenaMap matches a std::map model over random operations", "[arena_map]") {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    ArenaMap m;
    std::map<std::string, std::string> model;
    // Few distinct keys for some seeds (many collisions of the same keys), many for others.
    const int keyspace = seed % 2 ? 300 : 30000;
    auto rand_str = [&](size_t max_len) {
      std::string s(rng() % (max_len + 1), '\0');
      for (char& c : s) c = static_cast<char>(rng() % 4);  // small alphabet: shared prefixes, NULs
      return s;
    };
    for (int step = 0; step < 60000; ++step) {
      std::string key = std::to_string(rng() % keyspace) + rand_str(seed == 3 ? 40 : 2);
      int op = static_cast<int>(rng() % 10);
      uint32_t s = m.Find(key);
      auto it = model.find(key);
      REQUIRE((s == ArenaMap::kNone) == (it == model.end()));
      if (op < 5) {
        std::string v = rand_str(seed == 5 ? 3000 : 24);
        if (s == ArenaMap::kNone) {
          uint32_t t = m.Insert(key, v);
          REQUIRE(m.Key(t) == key);
        } else {
          m.Assign(s, v);
        }
        model[key] = v;
      } else if (op < 7 && s != ArenaMap::kNone) {
        // Same-size rewrite in place.
        std::string v(m.Value(s));
        for (char& c : v) c = static_cast<char>(c + 1);
        if (!v.empty()) m.MutableValue(s)[0] = v[0];
        if (v.size() > 1) m.Assign(s, v);
        model[key] = v;
      } else if (s != ArenaMap::kNone) {
        m.Erase(s);
        model.erase(it);
      }
      if (step % 5000 == 0) CheckSame(m, model);
    }
    CheckSame(m, model);
    // Erase everything: the arena is released.
    while (!model.empty()) {
      m.Erase(m.Find(model.begin()->first));
      model.erase(model.begin());
    }
    CheckSame(m, model);
    REQUIRE(m.MemoryBytes() == 0);
  }
}

TEST_CASE("ArenaMap::Hash spreads short keys with patterns over the table's low bits", "[arena_map]") {
  // 2^20 keys into 2^20 buckets (hash & mask, as the table probes): a random function fills
  // 1 - 1/e = 63.2% of the buckets, and no bucket gets more than a dozen. Keys: encoded-integer
  // lookalikes that differ in one byte, in high bytes only, or in strides of powers of two, and
  // decimal strings of every length up to 16 bytes (the short path's load cases).
  const uint32_t n = 1u << 20, mask = n - 1;
  auto check = [&](const char* what, auto key_of) {
    std::vector<uint8_t> count(n, 0);
    std::vector<uint32_t> hashes;
    hashes.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t h = ArenaMap::Hash(key_of(i));
      hashes.push_back(h);
      if (count[h & mask] < 255) ++count[h & mask];
    }
    const size_t used = n - static_cast<size_t>(std::count(count.begin(), count.end(), 0));
    INFO(what << ": " << used << " buckets used, the fullest holds "
              << static_cast<int>(*std::max_element(count.begin(), count.end())));
    CHECK(used > n * 0.62);
    CHECK(*std::max_element(count.begin(), count.end()) <= 12);
    std::sort(hashes.begin(), hashes.end());
    // Distinct 32-bit hashes (the slot compares them before the keys): about n^2/2^33 repeats.
    CHECK(std::unique(hashes.begin(), hashes.end()) - hashes.begin() > n - 1000);
  };
  auto bytes = [](uint64_t v, size_t len) {
    std::string s(len, '\x01');
    std::memcpy(s.data() + 1, &v, std::min<size_t>(8, len - 1));
    return s;
  };
  check("9-byte keys, counting", [&](uint32_t i) { return bytes(i, 9); });
  check("5-byte keys, counting", [&](uint32_t i) { return bytes(i, 5); });
  check("9-byte keys, stride 4096", [&](uint32_t i) { return bytes(uint64_t{i} << 12, 9); });
  check("9-byte keys, high bytes", [&](uint32_t i) { return bytes(uint64_t{i} << 40, 9); });
  check("16-byte keys, last byte pairs", [&](uint32_t i) { return bytes(0, 8) + bytes(i, 8); });
  for (size_t len = 1; len <= 16; len += 5)
    check("decimal strings", [&](uint32_t i) {
      const std::string s = std::to_string(i);
      return std::string(len > s.size() ? len - s.size() : 0, ' ') + s;
    });
}

// Slots keep 28 bits of a key's hash: keys whose hashes agree in those bits (found among 100K
// keys: about 18 pairs expected) share a home slot and pass the filter, and are told apart by
// their bytes, through inserts, finds and erases.
TEST_CASE("ArenaMap tells apart keys whose hashes agree in the bits a slot keeps", "[arena_map]") {
  std::map<uint32_t, std::vector<std::string>> by_bits;
  for (int i = 0; i < 100000; ++i) {
    std::string k = "key" + std::to_string(i);
    by_bits[ArenaMap::Hash(k) & ((1u << 28) - 1)].push_back(k);
  }
  std::vector<std::vector<std::string>> groups;
  for (auto& [bits, keys] : by_bits)
    if (keys.size() > 1) groups.push_back(keys);
  REQUIRE(groups.size() >= 5);
  ArenaMap m;
  std::map<std::string, std::string> model;
  for (const auto& g : groups)
    for (const auto& k : g) {
      m.Insert(k, "v" + k);
      model[k] = "v" + k;
    }
  for (int i = 0; i < 2000; ++i) {  // other keys around them
    const std::string k = "other" + std::to_string(i);
    m.Insert(k, k);
    model[k] = k;
  }
  CheckSame(m, model);
  for (const auto& g : groups) {
    m.Erase(m.Find(g[0]));
    model.erase(g[0]);
    REQUIRE(m.Find(g[0]) == ArenaMap::kNone);
    REQUIRE(m.Value(m.Find(g[1])) == "v" + g[1]);
  }
  CheckSame(m, model);
}

// Past its block limit an insert (or a rewrite that needs a new block) fails with an error and
// leaves the map as it was.
TEST_CASE("ArenaMap fails past its block limit and keeps what it holds", "[arena_map]") {
  ArenaMap m;
  m.set_max_blocks(2);
  std::map<std::string, std::string> model;
  const std::string value(1000, 'x');
  bool failed = false;
  for (int i = 0; i < 5000 && !failed; ++i) {
    const std::string k = "k" + std::to_string(i);
    try {
      m.Insert(k, value);
      model[k] = value;
    } catch (const Error& e) {
      failed = true;
      REQUIRE(std::string(e.what()).find("2 blocks") != std::string::npos);
    }
  }
  REQUIRE(failed);
  REQUIRE(model.size() > 1000);  // two 1 MiB blocks of 1 KB records
  CheckSame(m, model);
  // A rewrite to a larger value needs room the map no longer has: the record keeps its value.
  const std::string& first = model.begin()->first;
  REQUIRE_THROWS_AS(m.Assign(m.Find(first), std::string(3000, 'y')), Error);
  CheckSame(m, model);
}

TEST_CASE("ArenaMap reclaims garbage and stays compact", "[arena_map]") {
  ArenaMap m;
  std::string v(16, 'x');
  for (int i = 0; i < 200000; ++i) m.Insert("k" + std::to_string(i), v);
  const size_t full = m.MemoryBytes();
  // ~26-byte records plus 12-byte slots at most 7/8 full (and at least 7/16).
  REQUIRE(full < 200000 * (26 + 28) + (size_t{1} << 20));
  // Rewriting every value at another size many times must not grow memory without bound.
  // Garbage is compacted once it reaches a quarter of the live bytes (~5.1 MB here: keys of 6.9
  // bytes on average, values of 16 or 17, 2 length bytes).
  size_t most_garbage = 0;
  for (int round = 0; round < 10; ++round)
    for (int i = 0; i < 200000; ++i) {
      m.Assign(m.Find("k" + std::to_string(i)), std::string(16 + round % 2, 'y'));
      most_garbage = std::max(most_garbage, m.GarbageBytes());
    }
  REQUIRE(most_garbage > (size_t{1} << 20));
  REQUIRE(most_garbage < 1400000);
  // (The arena stays within 1.25 times its live bytes, plus one block.)
  REQUIRE(m.MemoryBytes() < full * 5 / 4 + (size_t{1} << 20));
  for (int i = 0; i < 200000; ++i) REQUIRE(m.Value(m.Find("k" + std::to_string(i))).size() == 17);
  // Erasing most entries lets compaction give the blocks back.
  for (int i = 0; i < 190000; ++i) m.Erase(m.Find("k" + std::to_string(i)));
  REQUIRE(m.size() == 10000);
  REQUIRE(m.GarbageBytes() <= std::max<size_t>(size_t{1} << 20, 10000 * 40));
  m.Insert("", "");
  REQUIRE(m.Find("") != ArenaMap::kNone);
  REQUIRE(m.Value(m.Find("")).empty());
}

// Change tracking: a store that applies, after each round, the erased keys and then the dirty
// records must end equal to the map (what an incremental checkpoint relies on), and a round
// that touches few keys must report few.
TEST_CASE("ArenaMap reports exactly the records changed since the last ClearChanges", "[arena_map]") {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    std::mt19937 rng(seed);
    ArenaMap m;
    m.TrackErasures(true);
    std::map<std::string, std::string> model, stored;
    const int keyspace = seed % 2 ? 200 : 20000;
    for (int round = 0; round < 40; ++round) {
      const int ops = round % 4 == 3 ? 5 : 3000;  // some rounds change only a handful of keys
      std::map<std::string, bool> touched;
      for (int i = 0; i < ops; ++i) {
        std::string key = "k" + std::to_string(rng() % keyspace);
        std::string v(rng() % (seed == 3 ? 2000 : 20), static_cast<char>('a' + rng() % 26));
        uint32_t s = m.Find(key);
        const int op = static_cast<int>(rng() % 10);
        if (op < 5) {
          if (s == ArenaMap::kNone)
            m.Insert(key, v);
          else
            m.Assign(s, v);
          model[key] = v;
        } else if (op < 7 && s != ArenaMap::kNone && !m.Value(s).empty()) {
          m.MutableValue(s)[0] = 'Z';
          model[key][0] = 'Z';
        } else if (op == 7 && s != ArenaMap::kNone) {
          m.MarkDirty(s);  // changed in place by its owner
        } else if (s != ArenaMap::kNone) {
          m.Erase(s);
          model.erase(key);
        } else {
          continue;
        }
        touched[key] = true;
      }
      size_t reported = 0;
      m.ForEachErased([&](std::string_view k) {
        stored.erase(std::string(k));
        REQUIRE(touched.count(std::string(k)));
      });
      m.ForEachDirty([&](uint32_t s) {
        stored[std::string(m.Key(s))] = std::string(m.Value(s));
        REQUIRE(touched.count(std::string(m.Key(s))));
        ++reported;
      });
      REQUIRE(reported == m.dirty_count());
      m.ClearChanges();
      REQUIRE(m.dirty_count() == 0);
      REQUIRE(stored == model);
      REQUIRE(reported <= touched.size());
      size_t after = 0;
      m.ForEachDirty([&](uint32_t) { ++after; });
      REQUIRE(after == 0);
    }
  }
}

}  // namespace
}  // namespace fld
