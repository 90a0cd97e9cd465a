#include "core/operators/distinct.h"

#include <algorithm>

namespace fld {

Batch DistinctOp::Step(std::span<const Batch* const> inputs) {
  Batch delta = Consolidate(*inputs[0]);
  std::vector<uint32_t> sel;
  std::vector<int64_t> out_w;
  std::string key;
  for (size_t r = 0; r < delta.size(); ++r) {
    key.clear();
    EncodeRow(&key, delta, r);
    auto it = weights_.try_emplace(key, 0).first;
    int64_t before = it->second, after = before + delta.weights[r];
    it->second = after;
    if (after == 0) weights_.erase(it);
    if (before <= 0 && after > 0) {
      sel.push_back(static_cast<uint32_t>(r));
      out_w.push_back(1);
    } else if (before > 0 && after <= 0) {
      sel.push_back(static_cast<uint32_t>(r));
      out_w.push_back(-1);
    }
  }
  Batch out = Gather(delta, sel);
  out.weights = std::move(out_w);
  return out;
}

void DistinctOp::SaveState(StateWriter& w) const {
  auto sorted = SortedByKey(weights_);
  w.U64(sorted.size());
  for (auto* kv : sorted) {
    w.Str(kv->first);
    w.I64(kv->second);
  }
}

void DistinctOp::RestoreState(StateReader& r) {
  weights_.clear();
  uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    std::string k = r.Str();
    weights_[k] = r.I64();
  }
}

}  // namespace fld
