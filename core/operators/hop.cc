#include "core/operators/hop.h"

#include <fmt/format.h>

#include "core/expr/time.h"

namespace fld {

HopOp::HopOp(int ts_column, int64_t slide, int64_t size, int64_t offset, bool months)
    : ts_column_(ts_column), slide_(slide), size_(size), offset_(offset), months_(months) {}

Batch HopOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  const Column& ts = *in.cols[ts_column_];
  std::vector<uint32_t> sel;
  auto starts = std::make_shared<Column>(PhysType::kI64);
  auto ends = std::make_shared<Column>(PhysType::kI64);
  for (size_t r = 0; r < in.size(); ++r) {
    if (ts.IsNull(r)) continue;
    // t in microseconds, or the month holding it.
    const int64_t t = months_ ? MonthIndexOf(ts.i64[r]) : ts.i64[r];
    // The latest window holding t, then earlier ones while they still reach t.
    for (int64_t s = FloorDiv(t - offset_, slide_) * slide_ + offset_; s > t - size_; s -= slide_) {
      sel.push_back(static_cast<uint32_t>(r));
      starts->i64.push_back(months_ ? MonthStartMicros(s) : s);
      ends->i64.push_back(months_ ? MonthStartMicros(s + size_) : s + size_);
    }
  }
  Batch out = Gather(in, sel);
  out.cols.push_back(std::move(starts));
  out.cols.push_back(std::move(ends));
  return out;
}

std::string HopOp::Describe() const {
  const char* u = months_ ? " months" : "us";
  return fmt::format("hop ${} slide {}{} size {}{} offset {}{}", ts_column_, slide_, u, size_, u, offset_, u);
}

}  // namespace fld
