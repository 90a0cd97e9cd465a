#include "core/operators/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace fld {

SessionOp::SessionOp(std::vector<PhysType> input, int ts_column, std::vector<int> keys, int64_t gap)
    : input_(std::move(input)), ts_(ts_column), keys_(std::move(keys)), gap_(gap) {}

std::string SessionOp::Describe() const {
  std::string s = fmt::format("session ${} gap {}us", ts_, gap_);
  for (size_t i = 0; i < keys_.size(); ++i) s += fmt::format("{}${}", i ? ", " : " key ", keys_[i]);
  if (waterline_.valid()) s += " (discards sessions behind the waterline)";
  return s;
}

void SessionOp::EmitRange(const Times& times, int64_t lo, int64_t hi, int64_t sign, BatchBuilder* out) const {
  const size_t n = input_.size();
  auto b = times.lower_bound(lo), e = times.upper_bound(hi);
  while (b != e) {
    // One session: [b, last].
    auto last = b;
    for (auto next = std::next(last); next != e && next->first - last->first < gap_; ++next) last = next;
    const int64_t start = b->first, end = last->first + gap_;
    for (auto it = b;; ++it) {
      for (const auto& [row, w] : it->second) {
        DecodeRowInto(row, out, 0);
        out->col(n).Append(Value::Int(start));
        out->col(n + 1).Append(Value::Int(end));
        out->AddWeight(sign * w);
      }
      if (it == last) break;
    }
    b = std::next(last);
  }
}

Batch SessionOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  std::vector<PhysType> types = input_;
  types.push_back(PhysType::kI64);
  types.push_back(PhysType::kI64);
  BatchBuilder out(types);
  // The changes, per key and time.
  struct Change {
    int64_t t;
    std::string row;
    int64_t w;
  };
  std::map<std::string, std::vector<Change>> changes;
  const Column& ts = *in.cols[ts_];
  for (size_t r = 0; r < in.size(); ++r) {
    if (ts.IsNull(r)) continue;
    std::string key, row;
    EncodeRow(&key, in, r, keys_);
    EncodeRow(&row, in, r);
    changes[key].push_back({ts.i64[r], std::move(row), in.weights[r]});
  }
  for (auto& [key, cs] : changes) {
    Times& times = trace_[key];
    std::set<int64_t> changed;
    for (const auto& c : cs) changed.insert(c.t);
    // The sessions of old times ∪ changed times that hold a changed time: [lo, hi] ranges.
    auto prev_of = [&](int64_t t) -> std::optional<int64_t> {  // the largest union time < t
      std::optional<int64_t> p;
      if (auto it = times.lower_bound(t); it != times.begin()) p = std::prev(it)->first;
      if (auto it = changed.lower_bound(t); it != changed.begin() && (!p || *std::prev(it) > *p)) p = *std::prev(it);
      return p;
    };
    auto next_of = [&](int64_t t) -> std::optional<int64_t> {  // the smallest union time > t
      std::optional<int64_t> n;
      if (auto it = times.upper_bound(t); it != times.end()) n = it->first;
      if (auto it = changed.upper_bound(t); it != changed.end() && (!n || *it < *n)) n = *it;
      return n;
    };
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (int64_t t : changed) {
      if (!ranges.empty() && t <= ranges.back().second) continue;
      int64_t lo = t, hi = t;
      for (auto p = prev_of(lo); p && lo - *p < gap_; p = prev_of(lo)) lo = *p;
      for (auto n = next_of(hi); n && *n - hi < gap_; n = next_of(hi)) hi = *n;
      ranges.push_back({lo, hi});
    }
    for (const auto& [lo, hi] : ranges) EmitRange(times, lo, hi, -1, &out);
    for (auto& c : cs) {
      Rows& rows = times[c.t];
      auto it = rows.try_emplace(std::move(c.row), 0).first;
      it->second += c.w;
      if (it->second == 0) rows.erase(it);
      if (rows.empty()) times.erase(c.t);
    }
    for (const auto& [lo, hi] : ranges) EmitRange(times, lo, hi, +1, &out);
    if (times.empty()) trace_.erase(key);
  }
  CollectGarbage();
  return Consolidate(out.Finish());
}

void SessionOp::CollectGarbage() {
  if (!waterline_.valid()) return;
  std::optional<Value> w = waterline_.Current();
  if (!w || w->IsNull()) return;
  if (gc_bound_ && *gc_bound_ == w->i) return;  // nothing new to discard
  gc_bound_ = w->i;
  // Sessions whose last time is at most W - gap: their rows are all below that bound, and the
  // first time at or above it starts a later session (or is more than gap after them).
  const int64_t bound = w->i - gap_;
  for (auto it = trace_.begin(); it != trace_.end();) {
    Times& times = it->second;
    // The first time above the bound, then back to the start of its session.
    auto keep = times.upper_bound(bound);
    while (keep != times.begin() && keep != times.end() && keep->first - std::prev(keep)->first < gap_) --keep;
    times.erase(times.begin(), keep);
    it = times.empty() ? trace_.erase(it) : std::next(it);
  }
}

void SessionOp::SaveState(StateWriter& w) const {
  auto keys = SortedByKey(trace_);
  w.U64(keys.size());
  for (const auto* k : keys) {
    w.Str(k->first);
    w.U64(k->second.size());
    for (const auto& [t, rows] : k->second) {
      w.I64(t);
      w.U64(rows.size());
      for (const auto& [row, wt] : rows) {
        w.Str(row);
        w.I64(wt);
      }
    }
  }
}

void SessionOp::RestoreState(StateReader& r) {
  trace_.clear();
  uint64_t nk = r.U64();
  for (uint64_t i = 0; i < nk; ++i) {
    Times& times = trace_[r.Str()];
    uint64_t nt = r.U64();
    for (uint64_t j = 0; j < nt; ++j) {
      Rows& rows = times[r.I64()];
      uint64_t nr = r.U64();
      for (uint64_t k = 0; k < nr; ++k) {
        std::string row = r.Str();
        rows[row] = r.I64();
      }
    }
  }
}

}  // namespace fld
