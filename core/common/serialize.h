// Minimal binary encoding used for operator state in checkpoints: little-endian fixed-width
// integers, doubles by bit pattern, length-prefixed strings. StateReader checks every read
// against the end of its buffer and throws fld::Error(kCorruption) instead of reading past it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/error.h"

namespace fld {

// LEB128 varints: the lengths in ArenaMap's records, operator state entries and spilled runs.
// A signed integer's zigzag form (0, -1, 1, -2, ... -> 0, 1, 2, 3, ...): small magnitudes of
// either sign take few varint bytes. UnZigZag inverts it.
inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t z) {
  return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
}

inline size_t PutVarint(char* p, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  p[n++] = static_cast<char>(v);
  return n;
}
inline size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}
inline uint64_t GetVarint(const char** p) {
  uint64_t v = 0;
  int shift = 0;
  for (;;) {
    uint8_t b = static_cast<uint8_t>(*(*p)++);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
    shift += 7;
  }
}

// GetVarint for bytes that may be damaged (stored state): false, instead of reading past `end`,
// when the varint is cut short or longer than 10 bytes.
inline bool GetVarintChecked(const char** p, const char* end, uint64_t* v) {
  *v = 0;
  for (int shift = 0; *p < end && shift < 70; shift += 7) {
    const uint8_t b = static_cast<uint8_t>(*(*p)++);
    *v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// The entries of a hash map in key order: state is saved sorted, so equal states save to equal
// bytes whatever the map's insertion history.
template <typename Map>
std::vector<const typename Map::value_type*> SortedByKey(const Map& m) {
  std::vector<const typename Map::value_type*> out;
  out.reserve(m.size());
  for (const auto& kv : m) out.push_back(&kv);
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->first < b->first; });
  return out;
}

class StateWriter {
 public:
  explicit StateWriter(std::string* out) : out_(out) {}
  void U64(uint64_t v) { out_->append(reinterpret_cast<const char*>(&v), 8); }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void F64(double d) {
    uint64_t b;
    std::memcpy(&b, &d, 8);
    U64(b);
  }
  void Str(std::string_view s) {
    U64(s.size());
    out_->append(s);
  }

 private:
  std::string* out_;
};

class StateReader {
 public:
  explicit StateReader(std::string_view in) : in_(in) {}
  uint64_t U64() {
    Need(8);
    uint64_t v;
    std::memcpy(&v, in_.data() + pos_, 8);
    pos_ += 8;
    return v;
  }
  int64_t I64() { return static_cast<int64_t>(U64()); }
  double F64() {
    uint64_t b = U64();
    double d;
    std::memcpy(&d, &b, 8);
    return d;
  }
  std::string Str() {
    uint64_t n = U64();
    Need(n);
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  // A length-prefixed string as a view into the buffer (valid while the buffer is).
  std::string_view View() {
    uint64_t n = U64();
    Need(n);
    std::string_view s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  bool AtEnd() const { return pos_ == in_.size(); }

 private:
  void Need(uint64_t n) {
    if (n > in_.size() - pos_) Fail(ErrorKind::kCorruption, "operator state is truncated at byte {}", pos_);
  }
  std::string_view in_;
  size_t pos_ = 0;
};

}  // namespace fld
