#include "core/operators/integrate.h"

#include <algorithm>

namespace fld {

Batch IntegrateOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  std::string key;
  for (size_t r = 0; r < in.size(); ++r) {
    key.clear();
    EncodeRow(&key, in, r);
    auto it = rows_.try_emplace(key, 0).first;
    it->second += in.weights[r];
    if (it->second == 0) rows_.erase(it);
  }
  return in;
}

Batch IntegrateOp::Contents() const {
  auto sorted = SortedByKey(rows_);
  BatchBuilder out(types_);
  for (auto* kv : sorted) {
    DecodeRowInto(kv->first, &out, 0);
    out.AddWeight(kv->second);
  }
  return out.Finish();
}

void IntegrateOp::Load(const Batch& contents) {
  rows_.clear();
  std::string key;
  for (size_t r = 0; r < contents.size(); ++r) {
    key.clear();
    EncodeRow(&key, contents, r);
    auto it = rows_.try_emplace(key, 0).first;
    it->second += contents.weights[r];
    if (it->second == 0) rows_.erase(it);  // as in Step: no rows of weight 0
  }
}

void IntegrateOp::SaveState(StateWriter& w) const {
  auto sorted = SortedByKey(rows_);
  w.U64(sorted.size());
  for (auto* kv : sorted) {
    w.Str(kv->first);
    w.I64(kv->second);
  }
}

void IntegrateOp::RestoreState(StateReader& r) {
  rows_.clear();
  uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    std::string k = r.Str();
    rows_[k] = r.I64();
  }
}

}  // namespace fld
