// HOP windows (TABLE(HOP(data, DESCRIPTOR(ts), slide, size [, offset]))): a flat-map that emits,
// for every input row, one copy per window holding its timestamp, with the window's start and
// end appended as two TIMESTAMP columns. Windows start at offset + k * slide and last `size`
// (all in microseconds; or, for windows sized in months, all in months, windows starting on the
// first of the month offset + k * slide months after 1970-01); a row belongs to those with
// start <= ts < start + size. A NULL
// timestamp belongs to no window. Linear and stateless: each copy keeps the row's weight, so the
// operator is its own incremental version.
#pragma once

#include <cstdint>
#include <string>

#include "core/circuit/operator.h"

namespace fld {

class HopOp : public Operator {
 public:
  HopOp(int ts_column, int64_t slide, int64_t size, int64_t offset, bool months = false);
  bool PreservesInserts() const override { return true; }
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "hop"; }
  std::string Describe() const override;

 private:
  int ts_column_;
  int64_t slide_, size_, offset_;
  bool months_;
};

}  // namespace fld
