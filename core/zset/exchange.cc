#include "core/zset/exchange.h"

#include <cstring>
#include <functional>

namespace fld {

namespace {
uint64_t Mix64(uint64_t h) {
  h ^= h >> 31;
  h *= 0x7fb5d329728ea185ULL;
  h ^= h >> 27;
  h *= 0x81dadef4bc2dd44dULL;
  h ^= h >> 33;
  return h;
}
uint32_t ShardOfHash(uint64_t h, uint32_t shards) {
  return static_cast<uint32_t>(((Mix64(h) >> 32) * shards) >> 32);
}
}  // namespace

uint32_t KeyShard(std::string_view key, uint32_t shards) {
  if (shards <= 1) return 0;
  // A single non-NULL integer (its encoding: tag 1, then the 8 bytes) hashes by its value, so
  // PartitionRows needs no encoding for the commonest key.
  if (key.size() == 9 && key[0] == 1) {
    uint64_t v;
    std::memcpy(&v, key.data() + 1, 8);
    return ShardOfHash(v, shards);
  }
  return ShardOfHash(std::hash<std::string_view>()(key), shards);
}

std::vector<std::vector<uint32_t>> PartitionRows(const Batch& b, std::span<const int> keys, uint32_t shards,
                                                 bool null_to_zero) {
  std::vector<std::vector<uint32_t>> out(std::max<uint32_t>(shards, 1));
  const size_t n = b.size();
  if (shards <= 1) {
    out[0].resize(n);
    for (size_t r = 0; r < n; ++r) out[0][r] = static_cast<uint32_t>(r);
    return out;
  }
  for (auto& v : out) v.reserve(n / shards + n / (4 * shards) + 16);
  if (keys.size() == 1 && b.cols[keys[0]]->phys == PhysType::kI64) {
    const Column& c = *b.cols[keys[0]];
    const int64_t* x = c.i64.data();
    for (size_t r = 0; r < n; ++r) {
      uint32_t s;
      if (c.IsNull(r))
        s = null_to_zero ? 0 : KeyShard(std::string_view("\0", 1), shards);
      else
        s = ShardOfHash(static_cast<uint64_t>(x[r]), shards);
      out[s].push_back(static_cast<uint32_t>(r));
    }
    return out;
  }
  std::string key;
  for (size_t r = 0; r < n; ++r) {
    key.clear();
    bool null = false;
    for (int c : keys) {
      null |= b.cols[c]->IsNull(r);
      EncodeValue(&key, *b.cols[c], r);
    }
    out[null && null_to_zero ? 0 : KeyShard(key, shards)].push_back(static_cast<uint32_t>(r));
  }
  return out;
}

}  // namespace fld
