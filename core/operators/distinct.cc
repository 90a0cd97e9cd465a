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
    auto [it, fresh] = weights_.try_emplace(key, 0);
    if (fresh) gc_.Added(key);
    int64_t before = it->second, after = before + delta.weights[r];
    it->second = after;
    if (after == 0) {
      gc_.Removed(key);
      weights_.erase(it);
    }
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
  for (const auto& k : gc_.TakeBelow()) weights_.erase(k);
  return out;
}

std::string DistinctOp::Describe() const {
  if (!gc_.active()) return Name();
  return "distinct (discards rows below the waterline of $" + std::to_string(gc_.column()) + ")";
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
  gc_.Clear();
  uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    std::string k = r.Str();
    weights_[k] = r.I64();
    gc_.Added(k);
  }
}

}  // namespace fld
