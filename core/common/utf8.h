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

// Whether s is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
inline bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = CharLen(s, i);
    if (n == 1) {
      if (c >= 0x80) return false;
    } else {
      const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      if (n == 2 && c < 0xC2) return false;
      if (n == 3 && ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0))) return false;
      if (n == 4 && ((c == 0xF0 && c1 < 0x90) || c > 0xF4 || (c == 0xF4 && c1 >= 0x90))) return false;
    }
    i += n;
  }
  return true;
}

}  // namespace fld
