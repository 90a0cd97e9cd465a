#include "core/operators/bag_set_op.h"

#include <algorithm>

namespace fld {

int64_t BagSetOp::Multiplicity(std::pair<int64_t, int64_t> lr) const {
  const int64_t l = std::max<int64_t>(lr.first, 0), r = std::max<int64_t>(lr.second, 0);
  return kind_ == Kind::kExceptAll ? std::max<int64_t>(l - r, 0) : std::min(l, r);
}

Batch BagSetOp::Step(std::span<const Batch* const> inputs) {
  const Batch l = Consolidate(*inputs[0]);
  const Batch r = Consolidate(*inputs[1]);
  // Old multiplicity of every touched row, then apply both changes, then emit new - old.
  struct Touched {
    const Batch* batch;
    uint32_t row;
    int64_t before;
  };
  std::unordered_map<std::string, Touched> touched;
  std::vector<std::string> order;  // first-touch order: left rows (sorted), then new right rows
  std::string key;
  auto apply = [&](const Batch& b, bool left) {
    for (size_t i = 0; i < b.size(); ++i) {
      key.clear();
      EncodeRow(&key, b, i);
      auto it = weights_.try_emplace(key, 0, 0).first;
      if (touched.try_emplace(key, Touched{&b, static_cast<uint32_t>(i), Multiplicity(it->second)}).second)
        order.push_back(key);
      (left ? it->second.first : it->second.second) += b.weights[i];
    }
  };
  apply(l, true);
  apply(r, false);
  std::vector<uint32_t> lsel, rsel;
  std::vector<int64_t> lw, rw;
  for (const auto& k : order) {
    const Touched& t = touched.at(k);
    auto it = weights_.find(k);
    const int64_t after = Multiplicity(it->second);
    if (it->second.first == 0 && it->second.second == 0) weights_.erase(it);
    if (after == t.before) continue;
    (t.batch == &l ? lsel : rsel).push_back(t.row);
    (t.batch == &l ? lw : rw).push_back(after - t.before);
  }
  Batch a = Gather(l, lsel), b = Gather(r, rsel);
  a.weights = std::move(lw);
  b.weights = std::move(rw);
  Batch parts[] = {std::move(a), std::move(b)};
  return Consolidate(parts);
}

void BagSetOp::SaveState(StateWriter& w) const {
  auto sorted = SortedByKey(weights_);
  w.U64(sorted.size());
  for (auto* kv : sorted) {
    w.Str(kv->first);
    w.I64(kv->second.first);
    w.I64(kv->second.second);
  }
}

void BagSetOp::RestoreState(StateReader& r) {
  weights_.clear();
  uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    std::string k = r.Str();
    int64_t a = r.I64();
    weights_[k] = {a, r.I64()};
  }
}

}  // namespace fld
