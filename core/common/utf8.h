// UTF-8 helpers shared by LIKE (core/expr) and the string functions (core/plan/functions.cc).
#pragma once

#include <cstddef>
#include <string_view>

namespace fld {

// Bytes of the UTF-8 character starting at s[i] (1 for ASCII and for malformed input).
inline size_t CharLen(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  if (i + n > s.size()) return 1;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 1;
  return n;
}

}  // namespace fld
