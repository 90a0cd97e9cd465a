// XXH64, the 64-bit xxHash of a byte string with a seed, as the XXHASH SQL function computes it
// (Feldera hashes with XXH64; the algorithm is the one of the xxHash specification).
#pragma once

#include <cstdint>
#include <string_view>

namespace fld {

uint64_t Xxh64(std::string_view data, uint64_t seed);

}  // namespace fld
