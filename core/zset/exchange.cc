#include "core/zset/exchange.h"

#include <cstring>
#include <optional>

#include "core/common/xxh64.h"

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

// The key's hash folds one 64-bit word per column, h = h * kFold + word, starting from 0: a
// single integer hashes as itself. A column's word is its integer, a double's bits (-0.0 as 0.0:
// encodings already normalize it), a string's xxh64, kNullWord for NULL. PartitionRows computes
// the same from the columns without encoding them.
constexpr uint64_t kFold = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t kNullWord = 0x5bd1e9955bd1e995ULL;

uint64_t StringWord(const char* p, size_t n) {
  return Xxh64(std::string_view(p, n), 0);
}

// The fold of a row encoding's values; nullopt when `key` is not one (a caller's own encoding).
std::optional<uint64_t> FoldEncoding(std::string_view key) {
  uint64_t h = 0;
  size_t at = 0;
  EncodedValue v;
  while (at < key.size()) {
    if (!NextEncodedValue(key, &at, &v)) return std::nullopt;
    const uint64_t word = v.kind == EncodedValue::Kind::kNull     ? kNullWord
                          : v.kind == EncodedValue::Kind::kString ? StringWord(v.bytes.data(), v.bytes.size())
                                                                  : v.bits;
    h = h * kFold + word;
  }
  return h;
}
}  // namespace

uint32_t KeyShard(std::string_view key, uint32_t shards) {
  if (shards <= 1) return 0;
  if (auto h = FoldEncoding(key)) return ShardOfHash(*h, shards);
  return ShardOfHash(Xxh64(key, 1), shards);
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
  // Column by column: each row's fold of its key's words (as FoldEncoding folds the encoding),
  // and whether the key has a NULL.
  std::vector<uint64_t> h(n, 0);
  std::vector<uint8_t> null;
  for (int k : keys) {
    const Column& c = *b.cols[k];
    const bool nulls = c.HasNulls();
    if (nulls && null.empty()) null.assign(n, 0);
    auto fold = [&](auto word_of) {  // (one loop per column type: no type test per row)
      for (size_t r = 0; r < n; ++r) {
        if (nulls && c.nulls[r]) {
          null[r] = 1;
          h[r] = h[r] * kFold + kNullWord;
        } else {
          h[r] = h[r] * kFold + word_of(r);
        }
      }
    };
    if (c.phys == PhysType::kI64) {
      fold([&](size_t r) { return static_cast<uint64_t>(c.i64[r]); });
    } else if (c.phys == PhysType::kF64) {
      fold([&](size_t r) {
        const double d = c.f64[r] == 0.0 ? 0.0 : c.f64[r];  // -0.0 as 0.0, as encodings write it
        uint64_t word;
        std::memcpy(&word, &d, 8);
        return word;
      });
    } else {
      fold([&](size_t r) { return StringWord(c.str[r].data(), c.str[r].size()); });
    }
  }
  for (size_t r = 0; r < n; ++r) {
    const uint32_t s = null_to_zero && !null.empty() && null[r] ? 0 : ShardOfHash(h[r], shards);
    out[s].push_back(static_cast<uint32_t>(r));
  }
  return out;
}

}  // namespace fld
