#include "core/operators/upsert.h"

#include <algorithm>

namespace fld {

Batch UpsertOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  BatchBuilder out(types_);
  std::string key, row;
  for (size_t r = 0; r < in.size(); ++r) {
    if (in.weights[r] == 0) continue;  // no change (not a delete)
    key.clear();
    EncodeRow(&key, in, r, key_cols_);
    auto it = rows_.find(key);
    if (it != rows_.end()) {
      DecodeRowInto(it->second, &out, 0);
      out.AddWeight(-1);
    }
    if (in.weights[r] > 0) {
      row.clear();
      EncodeRow(&row, in, r);
      out.AppendFrom(in, r, 1);
      if (it != rows_.end())
        it->second = row;
      else
        rows_.emplace(key, row);
    } else if (it != rows_.end()) {
      rows_.erase(it);
    }
  }
  return Consolidate(out.Finish());
}

void UpsertOp::SaveState(StateWriter& w) const {
  auto sorted = SortedByKey(rows_);
  w.U64(sorted.size());
  for (auto* kv : sorted) {
    w.Str(kv->first);
    w.Str(kv->second);
  }
}

void UpsertOp::RestoreState(StateReader& r) {
  rows_.clear();
  uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    std::string k = r.Str();
    rows_[k] = r.Str();
  }
}

}  // namespace fld
