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
