#include "core/common/xxh64.h"

#include <catch2/catch.hpp>
#include <string>

#include "core/common/utf8.h"

namespace fld {
namespace {

// Published XXH64 values: the empty input with seed 0 (xxHash's README), the sentence of the
// python-xxhash documentation (39 bytes: the 32-byte stripes and every tail), and the examples of
// Feldera's XXHASH documentation (seed 2).
TEST_CASE("XXH64 matches published values", "[xxh64]") {
  CHECK(Xxh64("", 0) == 0xef46db3751d8e999ULL);
  CHECK(Xxh64("Nobody inspects the spammish repetition", 0) == 0xfbcea83c8a378bf1ULL);
  CHECK(static_cast<int64_t>(Xxh64("abc", 2)) == 6026019377950218999LL);
  CHECK(static_cast<int64_t>(Xxh64(std::string("\x01\x02\x03", 3), 2)) == 2397937360598948438LL);
}

TEST_CASE("IsValidUtf8 rejects malformed sequences", "[xxh64]") {
  CHECK(IsValidUtf8(""));
  CHECK(IsValidUtf8("jos\xc3\xa9 \xf0\x9f\x98\x80"));
  CHECK_FALSE(IsValidUtf8("\xff"));
  CHECK_FALSE(IsValidUtf8("\xc3"));              // truncated
  CHECK_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong
  CHECK_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate
  CHECK_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
}

}  // namespace
}  // namespace fld
