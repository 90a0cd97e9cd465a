#include "core/operators/topk.h"

#include <fmt/format.h>

#include "core/common/error.h"

namespace fld {

TopKOp::TopKOp(std::vector<PhysType> types, std::vector<SortKey> keys, int64_t limit, int64_t offset)
    : types_(std::move(types)), keys_(std::move(keys)), limit_(limit), offset_(offset), contents_(Less{&keys_}) {}

bool TopKOp::Less::operator()(const Row& a, const Row& b) const {
  for (const SortKey& k : *keys) {
    const Value& x = a[k.column];
    const Value& y = b[k.column];
    if (x.IsNull() || y.IsNull()) {
      if (x.IsNull() && y.IsNull()) continue;
      return x.IsNull() ? k.nulls_first : !k.nulls_first;
    }
    auto c = x <=> y;
    if (c == 0) continue;
    return k.desc ? c > 0 : c < 0;
  }
  return a < b;
}

std::string TopKOp::Describe() const {
  std::string s = "topk";
  for (const SortKey& k : keys_)
    s += fmt::format(" ${}{}{}", k.column, k.desc ? " DESC" : "", k.nulls_first ? " NULLS FIRST" : " NULLS LAST");
  s += fmt::format(" LIMIT {}", limit_);
  if (offset_ > 0) s += fmt::format(" OFFSET {}", offset_);
  return s;
}

std::map<TopKOp::Row, int64_t> TopKOp::Window() const {
  std::map<Row, int64_t> w;
  int64_t skip = offset_, take = limit_;
  for (auto it = contents_.begin(); it != contents_.end() && take > 0; ++it) {
    int64_t n = it->second;
    if (n <= 0) continue;  // a row deleted more often than inserted: not in the contents
    const int64_t skipped = std::min(skip, n);
    skip -= skipped;
    n -= skipped;
    const int64_t taken = std::min(take, n);
    take -= taken;
    if (taken > 0) w[it->first] += taken;
  }
  return w;
}

Batch TopKOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  BatchBuilder out(types_);
  if (in.empty()) return out.Finish();
  Row row(in.width());
  for (size_t r = 0; r < in.size(); ++r) {
    for (size_t c = 0; c < in.width(); ++c) row[c] = in.Get(c, r);
    auto it = contents_.try_emplace(row, 0).first;
    it->second += in.weights[r];
    if (it->second == 0) contents_.erase(it);
  }
  std::map<Row, int64_t> now = Window();
  // Emit new - old, in row order (deterministic).
  auto o = window_.begin();
  auto n = now.begin();
  while (o != window_.end() || n != now.end()) {
    if (n == now.end() || (o != window_.end() && o->first < n->first)) {
      out.AppendRow(o->first, -o->second);
      ++o;
    } else if (o == window_.end() || n->first < o->first) {
      out.AppendRow(n->first, n->second);
      ++n;
    } else {
      if (n->second != o->second) out.AppendRow(n->first, n->second - o->second);
      ++o;
      ++n;
    }
  }
  window_ = std::move(now);
  return out.Finish();
}

void TopKOp::SaveState(StateWriter& w) const {
  w.U64(contents_.size());
  for (const auto& [row, weight] : contents_) {
    std::string enc;
    for (const Value& v : row) EncodeValue(&enc, v);
    w.Str(enc);
    w.I64(weight);
  }
}

void TopKOp::RestoreState(StateReader& r) {
  contents_.clear();
  uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    std::string enc = r.Str();
    contents_[DecodeRow(enc)] = r.I64();
  }
  window_ = Window();
}

}  // namespace fld
