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
// independent of the one ArenaMap's table uses, so each shard's table stays evenly filled.
uint32_t KeyShard(std::string_view key, uint32_t shards);

// Row indices of b per shard, each list in row order: the shard of row r is KeyShard of the
// encoding of its columns `keys` (rows whose key has a NULL go to shard 0 when `null_to_zero`).
std::vector<std::vector<uint32_t>> PartitionRows(const Batch& b, std::span<const int> keys, uint32_t shards,
                                                 bool null_to_zero = false);

}  // namespace fld
