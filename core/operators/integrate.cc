#include "core/operators/integrate.h"

#include <algorithm>
#include <cstring>

namespace fld {

Batch IntegrateOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  if (!keep_) return in;
  std::string key;
  for (size_t r = 0; r < in.size(); ++r) {
    key.clear();
    EncodeRow(&key, in, r);
    AddRow(key, in.weights[r]);
  }
  return in;
}

void IntegrateOp::AddRow(std::string_view key, int64_t w) {
  uint32_t slot = rows_.Find(key);
  if (slot == ArenaMap::kNone) {
    if (w != 0) rows_.Insert(key, std::string_view(reinterpret_cast<const char*>(&w), 8));
    return;
  }
  int64_t sum;
  std::memcpy(&sum, rows_.Value(slot).data(), 8);
  sum += w;
  if (sum == 0)
    rows_.Erase(slot);
  else
    std::memcpy(rows_.MutableValue(slot), &sum, 8);
}

Batch IntegrateOp::Contents() const {
  BatchBuilder out(types_);
  for (const auto& [row, w] : SortedWeights(rows_)) {
    DecodeRowInto(row, &out, 0);
    out.AddWeight(w);
  }
  return out.Finish();
}

void IntegrateOp::Load(const Batch& contents) {
  rows_.Clear();
  std::string key;
  for (size_t r = 0; r < contents.size(); ++r) {
    key.clear();
    EncodeRow(&key, contents, r);
    AddRow(key, contents.weights[r]);  // as in Step: no rows of weight 0
  }
}

void IntegrateOp::SaveState(StateWriter& w) const {
  SaveWeights(w, rows_);
}

void IntegrateOp::RestoreState(StateReader& r) {
  rows_.Clear();
  uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    std::string k = r.Str();
    const int64_t w = r.I64();
    rows_.Insert(k, std::string_view(reinterpret_cast<const char*>(&w), 8));
  }
}

}  // namespace fld
