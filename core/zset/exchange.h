// Exchange: how stateful operators split their work across the workers of a ThreadPool.
//
// An operator with sharded state (aggregate groups, join traces) keeps one shard per worker and
// routes every key to the shard KeyShard names. A step partitions its change batch by the same
// function (PartitionRows), runs each shard on its rows in parallel, and merges the shards'
// outputs back into the order one shard would have produced (GatherRows, batch.h), so a result never
// depends on the number of workers. Shards are a function of the key's encoding alone: a saved
// state restores into any number of shards.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/zset/batch.h"

namespace fld {

// The shard (< shards) of a key, given its encoding (EncodeRow of the key columns). Uses a hash
// independent of the one ArenaMap's table uses, so each shard's table stays evenly filled: the
// fold of one 64-bit word per column (an integer as itself, a double's bits, a string's XXH64),
// which PartitionRows computes from the columns without encoding each row's key.
uint32_t KeyShard(std::string_view key, uint32_t shards);

// Row indices of b per shard, each list in row order: the shard of row r is KeyShard of the
// encoding of its columns `keys` (rows whose key has a NULL go to shard 0 when `null_to_zero`).
std::vector<std::vector<uint32_t>> PartitionRows(const Batch& b, std::span<const int> keys, uint32_t shards,
                                                 bool null_to_zero = false);

// The order of the shards' output rows merged by key, as one shard would have emitted them:
// groups[s] lists shard s's keys in ascending order (a key is in one shard only), each with the
// number of consecutive rows it put in that shard's output. For GatherRows (batch.h).
template <typename Key>
std::vector<RowRef> MergeByKey(const std::vector<std::vector<std::pair<Key, uint32_t>>>& groups) {
  const uint32_t shards = static_cast<uint32_t>(groups.size());
  size_t total = 0;
  for (const auto& g : groups)
    for (const auto& [key, rows] : g) total += rows;
  std::vector<RowRef> order;
  order.reserve(total);
  std::vector<size_t> next_group(shards, 0);
  std::vector<uint32_t> next_row(shards, 0);
  for (;;) {
    uint32_t best = shards;
    for (uint32_t s = 0; s < shards; ++s)
      if (next_group[s] < groups[s].size() &&
          (best == shards || groups[s][next_group[s]].first < groups[best][next_group[best]].first))
        best = s;
    if (best == shards) break;
    const uint32_t n = groups[best][next_group[best]++].second;
    for (uint32_t r = 0; r < n; ++r) order.push_back({best, next_row[best]++});
  }
  return order;
}

}  // namespace fld
