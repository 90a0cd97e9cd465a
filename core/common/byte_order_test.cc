#include "core/common/byte_order.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

namespace fld {
namespace {

// SortedByBytes against a stable sort of the strings themselves: short strings, strings that a
// zero byte pads to the same prefix ("a" and "a\0"), strings sharing their first 16 bytes and
// differing after them, bytes above 0x7f (memcmp compares them unsigned), duplicates.
TEST_CASE("AppendBigEndian64: memcmp orders the bytes as the values, and they read back", "[byte_order]") {
  std::mt19937_64 rng(11);
  std::vector<uint64_t> values = {0, 1, 255, 256, UINT64_MAX, uint64_t{1} << 63};
  for (int i = 0; i < 200; ++i) values.push_back(rng() >> (rng() % 64));
  for (const uint64_t a : values) {
    std::string ka;
    AppendBigEndian64(a, &ka);
    REQUIRE(ka.size() == 8);
    REQUIRE(BigEndian64At(ka.data()) == a);
    REQUIRE(static_cast<unsigned char>(ka[0]) == a >> 56);  // big-endian: the high byte first
    for (const uint64_t b : values) {
      std::string kb;
      AppendBigEndian64(b, &kb);
      REQUIRE((ka < kb) == (a < b));
    }
  }
}

TEST_CASE("SortedByBytes orders byte strings as memcmp does, ties by index", "[byte_order]") {
  std::mt19937_64 rng(5);
  const std::string shared = "0123456789abcdef";
  for (int round = 0; round < 260; ++round) {
    // (The last rounds past kRadixSortFrom: the radix sort of the first 8 bytes.)
    const size_t n = round < 200 ? rng() % 300 : kRadixSortFrom + rng() % 3000;
    std::vector<std::string> keys(n);
    if (round >= 230) {
      // Integers' encodings (a tag, 8 big-endian bytes) below 2^20: the first five bytes are
      // the same in every key, so the radix sort skips their passes.
      for (auto& k : keys) {
        const uint64_t v = ByteOrder64(rng() % (1 << 20));
        k.assign(1, '\x01');
        k.append(reinterpret_cast<const char*>(&v), 8);
      }
    }
    for (auto& k : keys) {
      if (round >= 230) break;
      const int shape = static_cast<int>(rng() % 4);
      if (shape == 0) k = shared;
      const size_t len = static_cast<size_t>(rng() % (shape == 1 ? 3 : 24));
      for (size_t i = 0; i < len; ++i) {
        const char pool[] = {'\0', 'a', 'b', '\x7f', '\x80', '\xff'};
        k.push_back(pool[rng() % sizeof(pool)]);
      }
    }
    std::vector<uint32_t> want(keys.size());
    for (uint32_t i = 0; i < want.size(); ++i) want[i] = i;
    std::stable_sort(want.begin(), want.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
    const auto got = SortedByBytes(keys.size(), [&](size_t i) { return std::string_view(keys[i]); });
    REQUIRE(got == want);
  }
  CHECK(SortedByBytes(0, [](size_t) { return std::string_view(); }).empty());
}

}  // namespace
}  // namespace fld
