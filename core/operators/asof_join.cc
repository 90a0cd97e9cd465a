#include "core/operators/asof_join.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

namespace fld {

AsofJoinOp::AsofJoinOp(std::vector<SqlType> left_types, std::vector<SqlType> right_types, std::vector<int> left_keys,
                       std::vector<int> right_keys, int left_ts, int right_ts, bool strict, bool pad_left)
    : strict_(strict), pad_left_(pad_left) {
  left_.types = std::move(left_types);
  right_.types = std::move(right_types);
  left_.keys = std::move(left_keys);
  right_.keys = std::move(right_keys);
  left_.ts = left_ts;
  right_.ts = right_ts;
}

std::string AsofJoinOp::Describe() const {
  std::string s = fmt::format("{} match left.${} {} right.${}", Name(), left_.ts, strict_ ? ">" : ">=", right_.ts);
  for (size_t i = 0; i < left_.keys.size(); ++i)
    s += fmt::format("{} left.${} = right.${}", i ? " and" : " on", left_.keys[i], right_.keys[i]);
  if (left_waterline_.valid() && right_waterline_.valid()) s += " (discards left rows below the waterlines)";
  return s;
}

namespace {

bool KeyOf(const Batch& b, size_t r, const std::vector<int>& keys, std::string* key) {
  key->clear();
  for (int c : keys) {
    if (b.cols[c]->IsNull(r)) return false;
    EncodeValue(key, *b.cols[c], r);
  }
  return true;
}

std::vector<Value> RowValues(const Batch& b, size_t r) {
  std::vector<Value> v;
  v.reserve(b.width());
  for (size_t c = 0; c < b.width(); ++c) v.push_back(b.Get(c, r));
  return v;
}

std::string TimeEncoding(const Value& v, const SqlType& type) {
  return EncodeRowValue({v}, {type});
}

// Adds w to rows[row] in times[t], dropping entries that reach zero.
template <typename Trace>
void Add(Trace* trace, const std::string& key, const std::string& t, const std::string& row, int64_t w) {
  auto& times = (*trace)[key];
  auto& rows = times[t];
  auto it = rows.try_emplace(row, 0).first;
  it->second += w;
  if (it->second == 0) rows.erase(it);
  if (rows.empty()) times.erase(t);
  if (times.empty()) trace->erase(key);
}

// A range of left times affected by a step: [lo, hi) when !strict, (lo, hi] when strict; hi
// unset: unbounded.
struct Range {
  std::string lo;
  std::optional<std::string> hi;
  bool point = false;  // exactly lo (a left change)
};

}  // namespace

const AsofJoinOp::Rows* AsofJoinOp::Match(const Times* times, const std::string& t) const {
  if (!times) return nullptr;
  auto it = strict_ ? times->lower_bound(t) : times->upper_bound(t);
  if (it == times->begin()) return nullptr;
  --it;
  return &it->second;
}

void AsofJoinOp::Emit(const std::string& lrow, int64_t lw, const Rows* match, int64_t sign, BatchBuilder* out) const {
  if (!match && !pad_left_) return;
  const size_t nl = left_.types.size(), nr = right_.types.size();
  std::vector<Value> lv = DecodeRowValue(lrow, left_.types);
  for (size_t c = 0; c < nl; ++c) out->col(c).Append(lv[c]);
  int64_t w = lw;
  if (match) {
    // Ties on the match value: the right row that sorts last.
    const auto& [rrow, rw] = *match->rbegin();
    std::vector<Value> rv = DecodeRowValue(rrow, right_.types);
    for (size_t c = 0; c < nr; ++c) out->col(nl + c).Append(rv[c]);
    w *= rw;
  } else {
    for (size_t c = 0; c < nr; ++c) out->col(nl + c).AppendNull();
  }
  out->AddWeight(sign * w);
}

Batch AsofJoinOp::Step(std::span<const Batch* const> inputs) {
  const Batch& dl = *inputs[0];
  const Batch& dr = *inputs[1];
  std::vector<PhysType> types;
  for (const auto& t : left_.types) types.push_back(t.phys());
  for (const auto& t : right_.types) types.push_back(t.phys());
  BatchBuilder out(types);
  if (dl.empty() && dr.empty()) {
    CollectGarbage();
    return out.Finish();
  }
  const SqlType& ts_type = left_.types[left_.ts];
  const size_t nl = left_.types.size(), nr = right_.types.size();

  // Changes, encoded; left rows that can never match (NULL key or time) go straight out.
  struct Change {
    std::string key, t, row;
    int64_t w;
  };
  std::vector<Change> lchanges, rchanges;
  std::string key;
  for (size_t r = 0; r < dl.size(); ++r) {
    if (!KeyOf(dl, r, left_.keys, &key) || dl.cols[left_.ts]->IsNull(r)) {
      if (pad_left_) {
        for (size_t c = 0; c < nl; ++c) out.col(c).AppendFrom(*dl.cols[c], r);
        for (size_t c = 0; c < nr; ++c) out.col(nl + c).AppendNull();
        out.AddWeight(dl.weights[r]);
      }
      continue;
    }
    lchanges.push_back({key, TimeEncoding(dl.Get(left_.ts, r), ts_type), EncodeRowValue(RowValues(dl, r), left_.types),
                        dl.weights[r]});
  }
  for (size_t r = 0; r < dr.size(); ++r) {
    if (!KeyOf(dr, r, right_.keys, &key) || dr.cols[right_.ts]->IsNull(r)) continue;  // matches nothing
    rchanges.push_back({key, TimeEncoding(dr.Get(right_.ts, r), ts_type),
                        EncodeRowValue(RowValues(dr, r), right_.types), dr.weights[r]});
  }

  // Per key, the left times whose match may change.
  std::map<std::string, std::set<std::string>> right_times;  // key -> changed right times
  for (const auto& c : rchanges) right_times[c.key].insert(c.t);
  std::map<std::string, std::vector<Range>> affected;
  for (const auto& c : lchanges) affected[c.key].push_back({c.t, std::nullopt, true});
  for (const auto& [k, ts] : right_times) {
    auto it = right_.trace.find(k);
    const Times* old = it == right_.trace.end() ? nullptr : &it->second;
    for (const auto& t : ts) {
      // The next right time after t, before or after the step.
      std::optional<std::string> next;
      if (auto n = ts.upper_bound(t); n != ts.end()) next = *n;
      if (old) {
        auto n = old->upper_bound(t);
        if (n != old->end() && (!next || n->first < *next)) next = n->first;
      }
      affected[k].push_back({t, next, false});
    }
  }
  // The affected left times present in `times` (before or after the step).
  auto collect = [&](const std::vector<Range>& ranges, const Times& times, std::set<std::string>* out_times) {
    for (const auto& rg : ranges) {
      if (rg.point) {
        if (times.contains(rg.lo)) out_times->insert(rg.lo);
        continue;
      }
      auto b = strict_ ? times.upper_bound(rg.lo) : times.lower_bound(rg.lo);
      auto e = !rg.hi ? times.end() : strict_ ? times.upper_bound(*rg.hi) : times.lower_bound(*rg.hi);
      for (auto i = b; i != e; ++i) out_times->insert(i->first);
    }
  };
  auto emit_key = [&](const std::string& k, const std::vector<Range>& ranges, int64_t sign) {
    auto lit = left_.trace.find(k);
    if (lit == left_.trace.end()) return;
    std::set<std::string> times;
    collect(ranges, lit->second, &times);
    auto rit = right_.trace.find(k);
    const Times* rtimes = rit == right_.trace.end() ? nullptr : &rit->second;
    for (const auto& t : times) {
      const Rows* match = Match(rtimes, t);
      for (const auto& [lrow, lw] : lit->second.at(t)) Emit(lrow, lw, match, sign, &out);
    }
  };

  for (const auto& [k, ranges] : affected) emit_key(k, ranges, -1);
  for (const auto& c : lchanges) Add(&left_.trace, c.key, c.t, c.row, c.w);
  for (const auto& c : rchanges) Add(&right_.trace, c.key, c.t, c.row, c.w);
  for (const auto& [k, ranges] : affected) emit_key(k, ranges, +1);
  CollectGarbage();
  return Consolidate(out.Finish());
}

void AsofJoinOp::CollectGarbage() {
  if (!left_waterline_.valid() || !right_waterline_.valid()) return;
  std::optional<Value> wl = left_waterline_.Current(), wr = right_waterline_.Current();
  if (!wl || !wr) return;
  std::string bound = TimeEncoding(std::min(*wl, *wr), left_.types[left_.ts]);
  if (bound == gc_bound_) return;  // nothing new to discard
  gc_bound_ = bound;
  for (auto it = left_.trace.begin(); it != left_.trace.end();) {
    Times& times = it->second;
    times.erase(times.begin(), times.lower_bound(bound));
    it = times.empty() ? left_.trace.erase(it) : std::next(it);
  }
  // Right rows below it never change again, and only the last time below it can still be a
  // match (of a left row at or above it); the earlier ones go.
  for (auto& [k, times] : right_.trace) {
    auto last = times.lower_bound(bound);
    if (last == times.begin()) continue;
    --last;
    times.erase(times.begin(), last);
  }
}

namespace {

void SaveSide(StateWriter& w,
              const std::unordered_map<std::string, std::map<std::string, std::map<std::string, int64_t>>>& trace) {
  auto keys = SortedByKey(trace);
  w.U64(keys.size());
  for (const auto* k : keys) {
    w.Str(k->first);
    w.U64(k->second.size());
    for (const auto& [t, rows] : k->second) {
      w.Str(t);
      w.U64(rows.size());
      for (const auto& [row, wt] : rows) {
        w.Str(row);
        w.I64(wt);
      }
    }
  }
}

void LoadSide(StateReader& r,
              std::unordered_map<std::string, std::map<std::string, std::map<std::string, int64_t>>>* trace) {
  trace->clear();
  uint64_t nk = r.U64();
  for (uint64_t i = 0; i < nk; ++i) {
    auto& times = (*trace)[r.Str()];
    uint64_t nt = r.U64();
    for (uint64_t j = 0; j < nt; ++j) {
      auto& rows = times[r.Str()];
      uint64_t nr = r.U64();
      for (uint64_t k = 0; k < nr; ++k) {
        std::string row = r.Str();
        rows[row] = r.I64();
      }
    }
  }
}

}  // namespace

void AsofJoinOp::SaveState(StateWriter& w) const {
  SaveSide(w, left_.trace);
  SaveSide(w, right_.trace);
}

void AsofJoinOp::RestoreState(StateReader& r) {
  LoadSide(r, &left_.trace);
  LoadSide(r, &right_.trace);
}

}  // namespace fld
