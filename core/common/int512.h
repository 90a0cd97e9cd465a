// A signed 512-bit integer with just what exact variances need (+, -, *, truncating division,
// square root, comparison of non-negative values): STDDEV/VARIANCE over DECIMAL(p > 18) in GROUP
// BY aggregation and window functions (core/operators/aggregate.h, window.h).
#pragma once

#include <cstdint>

#include "core/types/types.h"

namespace fld {

// A signed integer of 512 bits (two's complement, little-endian 64-bit limbs): wide enough for
// n * sum of squares - sum^2 over DECIMAL(38) values (each square below 2^254, weights and counts
// below 2^63). Only what the variance needs.
struct Int512 {
  uint64_t w[8] = {};

  static Int512 Of(__int128 v) {
    Int512 r;
    r.w[0] = static_cast<uint64_t>(v);
    r.w[1] = static_cast<uint64_t>(static_cast<unsigned __int128>(v) >> 64);
    const uint64_t ext = v < 0 ? ~uint64_t{0} : 0;
    for (int i = 2; i < 8; ++i) r.w[i] = ext;
    return r;
  }
  bool Negative() const { return (w[7] >> 63) != 0; }
  Int512 operator+(const Int512& o) const {
    Int512 r;
    unsigned __int128 carry = 0;
    for (int i = 0; i < 8; ++i) {
      carry += static_cast<unsigned __int128>(w[i]) + o.w[i];
      r.w[i] = static_cast<uint64_t>(carry);
      carry >>= 64;
    }
    return r;
  }
  Int512 operator-() const {
    Int512 r;
    for (int i = 0; i < 8; ++i) r.w[i] = ~w[i];
    return r + Of(1);
  }
  Int512 operator-(const Int512& o) const { return *this + -o; }
  // The product modulo 2^512 (exact whenever it fits, which the callers ensure).
  Int512 operator*(const Int512& o) const {
    const bool neg = Negative() != o.Negative();
    const Int512 a = Negative() ? -*this : *this, b = o.Negative() ? -o : o;
    Int512 r;
    for (int i = 0; i < 8; ++i) {
      unsigned __int128 carry = 0;
      for (int j = 0; i + j < 8; ++j) {
        carry += static_cast<unsigned __int128>(a.w[i]) * b.w[j] + r.w[i + j];
        r.w[i + j] = static_cast<uint64_t>(carry);
        carry >>= 64;
      }
    }
    return neg ? -r : r;
  }
  // Unsigned comparison (both operands non-negative).
  bool operator<(const Int512& o) const {
    for (int i = 7; i >= 0; --i)
      if (w[i] != o.w[i]) return w[i] < o.w[i];
    return false;
  }
  // Quotient of non-negative a by positive d, truncated (shift and subtract).
  static Int512 Div(const Int512& a, const Int512& d) {
    Int512 q, rem;
    for (int bit = 511; bit >= 0; --bit) {
      for (int i = 7; i > 0; --i) rem.w[i] = (rem.w[i] << 1) | (rem.w[i - 1] >> 63);
      rem.w[0] = (rem.w[0] << 1) | ((a.w[bit / 64] >> (bit % 64)) & 1);
      if (!(rem < d)) {
        rem = rem - d;
        q.w[bit / 64] |= uint64_t{1} << (bit % 64);
      }
    }
    return q;
  }
  // floor(sqrt(a)) of a non-negative a below 2^256 (bit by bit).
  static Int512 Sqrt(const Int512& a) {
    Int512 r;
    for (int bit = 127; bit >= 0; --bit) {
      Int512 t = r;
      t.w[bit / 64] |= uint64_t{1} << (bit % 64);
      if (!(a < t * t)) r = t;
    }
    return r;
  }
  // The value when it fits in 127 bits and a sign; false otherwise.
  bool ToInt128(Int128* out) const {
    const uint64_t ext = Negative() ? ~uint64_t{0} : 0;
    for (int i = 2; i < 8; ++i)
      if (w[i] != ext) return false;
    if (((w[1] >> 63) != 0) != Negative()) return false;
    *out = static_cast<Int128>((static_cast<unsigned __int128>(w[1]) << 64) | w[0]);
    return true;
  }
};

}  // namespace fld
