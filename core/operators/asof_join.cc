#include "core/operators/asof_join.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

namespace fld {

namespace {

// A key's rows: U64 times, then per time its encoding, U64 rows and per row its encoding and weight.
void EncodeTimes(const std::map<std::string, std::map<std::string, int64_t>>& times, StateWriter& w) {
  w.U64(times.size());
  for (const auto& [t, rows] : times) {
    w.Str(t);
    w.U64(rows.size());
    for (const auto& [row, wt] : rows) {
      w.Str(row);
      w.I64(wt);
    }
  }
}

// Decodes one key's rows into *times; returns the number of rows.
size_t DecodeTimes(StateReader& r, std::map<std::string, std::map<std::string, int64_t>>* times) {
  size_t n = 0;
  const uint64_t nt = r.U64();
  for (uint64_t j = 0; j < nt; ++j) {
    auto& rows = (*times)[r.Str()];
    const uint64_t nr = r.U64();
    for (uint64_t k = 0; k < nr; ++k) {
      std::string row = r.Str();
      rows[row] = r.I64();
    }
    n += nr;
  }
  return n;
}

}  // namespace

AsofJoinOp::Side::Side(const char* prefix)
    : trace(Partitions<Keyed>::Codec{
                [] { return Keyed{}; },
                [](const Keyed& k, std::string* out) {
                  StateWriter w(out);
                  EncodeTimes(k.times, w);
                },
                [](std::string_view value, Keyed* k) {
                  StateReader r(value);
                  k->rows = DecodeTimes(r, &k->times);
                  if (!r.AtEnd()) Fail(ErrorKind::kCorruption, "an as-of join's stored key has bytes after its rows");
                },
                [](const Keyed& k) { return k.times.empty(); },
                // A map node per time and per row (about 48 bytes each), their strings and weights.
                [](const Keyed& k) { return k.times.size() * 96 + k.rows * 120; }},
            prefix) {}

AsofJoinOp::AsofJoinOp(std::vector<SqlType> left_types, std::vector<SqlType> right_types, std::vector<int> left_keys,
                       std::vector<int> right_keys, int left_ts, int right_ts, bool strict, bool pad_left)
    : left_("L"), right_("R"), strict_(strict), pad_left_(pad_left) {
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

// A range of left times affected by a step: [lo, hi) when !strict, (lo, hi] when strict; hi
// unset: unbounded.
struct Range {
  std::string lo;
  std::optional<std::string> hi;
  bool point = false;  // exactly lo (a left change)
};

}  // namespace

void AsofJoinOp::Add(Side* side, const std::string& key, const std::string& t, const std::string& row, int64_t w) {
  Keyed& k = side->trace.Touch(key);
  auto& rows = k.times[t];
  auto [it, fresh] = rows.try_emplace(row, 0);
  k.rows += fresh;
  it->second += w;
  if (it->second == 0) {
    rows.erase(it);
    --k.rows;
  }
  if (rows.empty()) k.times.erase(t);  // an empty key is erased at the end of the step
}

const AsofJoinOp::Rows* AsofJoinOp::Match(const Keyed* keyed, const std::string& t) const {
  if (!keyed) return nullptr;
  const Times* times = &keyed->times;
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
    EndStep();
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
    const Keyed* keyed = right_.trace.Find(k);
    const Times* old = keyed ? &keyed->times : nullptr;
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
    const Keyed* left = left_.trace.Find(k);
    if (!left) return;
    std::set<std::string> times;
    collect(ranges, left->times, &times);
    const Keyed* right = right_.trace.Find(k);
    for (const auto& t : times) {
      const Rows* match = Match(right, t);
      for (const auto& [lrow, lw] : left->times.at(t)) Emit(lrow, lw, match, sign, &out);
    }
  };

  for (const auto& [k, ranges] : affected) emit_key(k, ranges, -1);
  for (const auto& c : lchanges) Add(&left_, c.key, c.t, c.row, c.w);
  for (const auto& c : rchanges) Add(&right_, c.key, c.t, c.row, c.w);
  for (const auto& [k, ranges] : affected) emit_key(k, ranges, +1);
  EndStep();
  return Consolidate(out.Finish());
}

void AsofJoinOp::EndStep() {
  std::optional<Value> wl, wr;
  if (left_waterline_.valid() && right_waterline_.valid()) {
    wl = left_waterline_.Current();
    wr = right_waterline_.Current();
  }
  std::string bound = wl && wr ? TimeEncoding(std::min(*wl, *wr), left_.types[left_.ts]) : std::string();
  // Discards what is new to discard, among the keys in memory (a key read back from the store is
  // cleaned at the next move of the waterlines).
  if (wl && wr && bound != gc_bound_) {
    gc_bound_ = bound;
    auto& left = left_.trace.resident();
    for (auto it = left.begin(); it != left.end(); ++it) {
      Keyed& k = it->second.part;
      auto end = k.times.lower_bound(bound);
      if (end == k.times.begin()) continue;
      for (auto t = k.times.begin(); t != end; ++t) k.rows -= t->second.size();
      k.times.erase(k.times.begin(), end);
      left_.trace.Changed(it);
    }
    // Right rows below it never change again, and only the last time below it can still be a
    // match (of a left row at or above it); the earlier ones go.
    auto& right = right_.trace.resident();
    for (auto it = right.begin(); it != right.end(); ++it) {
      Keyed& k = it->second.part;
      auto last = k.times.lower_bound(bound);
      if (last == k.times.begin() || std::prev(last) == k.times.begin()) continue;
      --last;
      for (auto t = k.times.begin(); t != last; ++t) k.rows -= t->second.size();
      k.times.erase(k.times.begin(), last);
      right_.trace.Changed(it);
    }
  }
  left_.trace.EndStep();
  right_.trace.EndStep();
}

// The whole state (the format of checkpoints before keys were stored one by one, and of recursive
// circuits' copies), per side: U64 keys, then per key in order its encoding and its rows.
void AsofJoinOp::SaveState(StateWriter& w) const {
  for (const Side* side : {&left_, &right_}) {
    if (side->trace.backed())
      Fail(ErrorKind::kRuntime, "asof_join: the whole state of a store-backed as-of join is in the store");
    w.U64(side->trace.resident().size());
    for (const auto& [key, e] : side->trace.resident()) {
      w.Str(key);
      EncodeTimes(e.part.times, w);
    }
  }
}

void AsofJoinOp::RestoreSide(StateReader& r, Side* side) {
  const uint64_t nk = r.U64();
  for (uint64_t i = 0; i < nk; ++i) {
    Keyed& k = side->trace.Touch(r.Str());
    k.rows += DecodeTimes(r, &k.times);
  }
  side->trace.EndStep();
}

void AsofJoinOp::RestoreState(StateReader& r) {
  left_.trace.BeginRestore();
  right_.trace.BeginRestore();
  RestoreSide(r, &left_);
  RestoreSide(r, &right_);
}

// Keyed state: no header; one entry per key and side. A checkpoint written before that holds the
// whole state in the header.
void AsofJoinOp::BeginRestore(StateReader& r) {
  left_.trace.BeginRestore();
  right_.trace.BeginRestore();
  gc_bound_.clear();
  if (r.AtEnd()) return;
  RestoreSide(r, &left_);
  RestoreSide(r, &right_);
}

void AsofJoinOp::RestoreEntry(std::string_view key, std::string_view value) {
  if (key.empty() || (key[0] != 'L' && key[0] != 'R'))
    Fail(ErrorKind::kCorruption, "an as-of join's stored entry is malformed");
  (key[0] == 'L' ? left_ : right_).trace.RestoreEntry(key.substr(1), value);
}

void AsofJoinOp::TrackChanges() {
  left_.trace.TrackChanges();
  right_.trace.TrackChanges();
}

void AsofJoinOp::SaveChanges(StateWriter&, StateDelta& d) {
  left_.trace.SaveChanges(d);
  right_.trace.SaveChanges(d);
}

void AsofJoinOp::BackState(StateSource* source, uint32_t node, bool all_stored) {
  left_.trace.Back(source, node, all_stored);
  right_.trace.Back(source, node, all_stored);
}

void AsofJoinOp::StateCommitted(bool evict) {
  left_.trace.Committed(evict);
  right_.trace.Committed(evict);
}

size_t AsofJoinOp::StateMemoryBytes() const {
  return left_.trace.MemoryBytes() + right_.trace.MemoryBytes();
}

}  // namespace fld
