#include "core/zset/exchange.h"

#include <catch2/catch.hpp>
#include <random>

namespace fld {

// PartitionRows must route every row where KeyShard routes its key's encoding: operators
// partition a step's rows with the one and find (or restore) a key's state with the other.
TEST_CASE("exchange: PartitionRows routes each row as KeyShard routes its key's encoding", "[exchange]") {
  std::mt19937_64 rng(11);
  const std::vector<PhysType> types = {PhysType::kI64, PhysType::kF64, PhysType::kStr, PhysType::kI64};
  BatchBuilder bb(types);
  const size_t n = 4000;
  for (size_t r = 0; r < n; ++r) {
    auto null = [&] { return rng() % 10 == 0; };
    const double doubles[] = {0.0, -0.0, 1.5, -2.25, 1e300};
    std::vector<Value> row = {
        null() ? Value::Null() : Value::Int(static_cast<int64_t>(rng() % 50) - 25),
        null() ? Value::Null() : Value::Double(doubles[rng() % 5]),
        null() ? Value::Null() : Value::String(std::string(rng() % 4, static_cast<char>('a' + rng() % 3))),
        Value::Int(static_cast<int64_t>(rng()))};
    bb.AppendRow(row, 1);
  }
  const Batch b = bb.Finish();
  const std::vector<std::vector<int>> key_sets = {{0}, {3}, {1}, {2}, {0, 1}, {2, 0}, {0, 1, 2, 3}, {3, 2}};
  for (const auto& keys : key_sets) {
    for (uint32_t shards : {2u, 3u, 8u}) {
      for (bool null_to_zero : {false, true}) {
        const auto parts = PartitionRows(b, keys, shards, null_to_zero);
        REQUIRE(parts.size() == shards);
        std::vector<int> seen(n, 0);
        for (uint32_t s = 0; s < shards; ++s) {
          for (size_t i = 0; i < parts[s].size(); ++i) {
            const uint32_t r = parts[s][i];
            if (i > 0) CHECK(parts[s][i - 1] < r);  // in row order
            ++seen[r];
            std::string key;
            bool has_null = false;
            for (int k : keys) has_null |= b.cols[k]->IsNull(r);
            EncodeRow(&key, b, r, keys);
            const uint32_t want = null_to_zero && has_null ? 0 : KeyShard(key, shards);
            CHECK(s == want);
          }
        }
        for (size_t r = 0; r < n; ++r) CHECK(seen[r] == 1);
        // Equal keys meet in one shard; -0.0 and 0.0 are one value.
        if (keys == std::vector<int>{1}) {
          std::string z, mz;
          EncodeValue(&z, Value::Double(0.0));
          EncodeValue(&mz, Value::Double(-0.0));
          CHECK(KeyShard(z, shards) == KeyShard(mz, shards));
        }
      }
    }
  }
  // The wide unique column spreads evenly: no shard gets more than 60% of its fair share extra.
  const auto parts = PartitionRows(b, std::vector<int>{3}, 4);
  for (const auto& p : parts) CHECK(p.size() < n / 4 * 16 / 10);
  // A key that is not an EncodeRow encoding still has a shard, always the same.
  CHECK(KeyShard("\x09garbage", 5) == KeyShard("\x09garbage", 5));
  CHECK(KeyShard("\x09garbage", 5) < 5);
}

}  // namespace fld
