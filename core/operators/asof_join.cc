#include "core/operators/asof_join.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>

namespace fld {

AsofJoinOp::Side::Side(const char* prefix, AsofJoinOp* op)
    : trace(Partitions<Keyed>::Codec{[] { return Keyed{}; },
                                     [this, op](const Keyed& k, std::string* out) {
                                       StateWriter w(out);
                                       op->EncodeKeyed(*this, k, w);
                                     },
                                     [this, op](std::string_view value, Keyed* k) {
                                       StateReader r(value);
                                       op->DecodeKeyed(*this, r, k);
                                       if (!r.AtEnd())
                                         Fail(ErrorKind::kCorruption,
                                              "an as-of join's stored key has bytes after its rows");
                                     },
                                     [](const Keyed& k) { return k.rows.empty(); },
                                     [](const Keyed& k) { return k.rows.size() * kInlineKeyEntryBytes + k.heap; }},
            prefix) {}

AsofJoinOp::AsofJoinOp(std::vector<SqlType> left_types, std::vector<SqlType> right_types, std::vector<int> left_keys,
                       std::vector<int> right_keys, int left_ts, int right_ts, bool strict, bool pad_left)
    : left_("L", this), right_("R", this), strict_(strict), pad_left_(pad_left) {
  left_.types = std::move(left_types);
  right_.types = std::move(right_types);
  left_.keys = std::move(left_keys);
  right_.keys = std::move(right_keys);
  left_.ts = left_ts;
  right_.ts = right_ts;
  for (Side* side : {&left_, &right_}) {
    for (const SqlType& t : side->types) side->phys.push_back(t.phys());
    side->order = {SortKey{side->ts, false, true}};
  }
}

void AsofJoinOp::EncodeKeyed(const Side& side, const Keyed& k, StateWriter& w) const {
  // Rows grouped by time: count the times first.
  uint64_t times = 0;
  std::string_view prev;
  for (const auto& [okey, w] : k.rows) {
    const std::string_view t = side.TimeOf(okey.view());
    if (times == 0 || t != prev) ++times;
    prev = t;
  }
  w.U64(times);
  for (auto it = k.rows.begin(); it != k.rows.end();) {
    const std::string_view t = side.TimeOf(it->first.view());
    auto end = it;
    uint64_t n = 0;
    for (; end != k.rows.end() && side.TimeOf(end->first.view()) == t; ++end) ++n;
    const std::vector<Value> first = RowOfOrderKey(it->first.view(), side.order, side.phys);
    w.Str(EncodeRowValue({first[side.ts]}, {side.types[side.ts]}));
    w.U64(n);
    for (; it != end; ++it) {
      w.Str(EncodeRowValue(RowOfOrderKey(it->first.view(), side.order, side.phys), side.types));
      w.I64(it->second);
    }
  }
}

void AsofJoinOp::DecodeKeyed(const Side& side, StateReader& r, Keyed* k) const {
  const uint64_t times = r.U64();
  std::string okey;
  for (uint64_t i = 0; i < times; ++i) {
    const std::string t = r.Str();
    const uint64_t n = r.U64();
    for (uint64_t j = 0; j < n; ++j) {
      const std::string row = r.Str();
      const int64_t w = r.I64();
      const std::vector<Value> values = DecodeRowValue(row, side.types);
      // (re-encoding checks the bytes: a malformed row or one with bytes after it differs)
      if (EncodeRowValue(values, side.types) != row || EncodeRowValue({values[side.ts]}, {side.types[side.ts]}) != t ||
          w == 0)
        Fail(ErrorKind::kCorruption, "an as-of join's stored row is malformed");
      okey.clear();
      AppendOrderKey(side.order, values, &okey);
      auto [it, fresh] = k->rows.try_emplace(InlineKey(okey), 0);
      if (fresh) k->heap += InlineKeyHeapBytes(okey.size());
      it->second += w;
    }
  }
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

// The least byte string after every string that begins with t (empty: none, t is all 0xff).
std::string After(std::string_view t) {
  std::string s(t);
  while (!s.empty() && static_cast<unsigned char>(s.back()) == 0xff) s.pop_back();
  if (!s.empty()) s.back() = static_cast<char>(static_cast<unsigned char>(s.back()) + 1);
  return s;
}

// The first row whose time is t or after. (Looked up as an InlineKey: compared in registers,
// InlineKey::Compare.)
template <typename Rows>
auto FirstAt(const Rows& rows, std::string_view t) {
  return rows.lower_bound(InlineKey(t));
}

// The first row whose time is after t.
template <typename Rows>
auto FirstAfter(const Rows& rows, std::string_view t) {
  const std::string a = After(t);
  return a.empty() ? rows.end() : rows.lower_bound(InlineKey(a));
}

// A range of left times affected by a step: [lo, hi) when !strict, (lo, hi] when strict; hi
// unset: unbounded. Times are the match values' order keys.
struct Range {
  std::string lo;
  std::optional<std::string> hi;
  bool point = false;  // exactly lo (a left change)
};

}  // namespace

void AsofJoinOp::Add(Side* side, const std::string& key, const std::string& okey, int64_t w) {
  Keyed& k = side->trace.Touch(key);
  AddKeyWeight(&k.rows, okey, w, &k.heap);  // an empty key is erased at the end of the step
}

AsofJoinOp::Match AsofJoinOp::MatchOf(const Keyed* right, std::string_view t) const {
  if (!right) return std::nullopt;
  // The last row at a time before t (strict) or at or before it; the last of its time's rows,
  // the one a tie goes to.
  auto it = strict_ ? FirstAt(right->rows, t) : FirstAfter(right->rows, t);
  if (it == right->rows.begin()) return std::nullopt;
  --it;
  return std::make_pair(it->first.view(), it->second);
}

void AsofJoinOp::Emit(std::string_view lkey, int64_t lw, const Match& match, int64_t sign, BatchBuilder* out) const {
  if (!match && !pad_left_) return;
  const size_t nl = left_.types.size(), nr = right_.types.size();
  // (decoded into buffers kept across calls: this runs per output row)
  RowOfOrderKeyInto(lkey, left_.order, left_.phys, &left_row_);
  for (size_t c = 0; c < nl; ++c) out->col(c).Append(left_row_[c]);
  int64_t w = lw;
  if (match) {
    RowOfOrderKeyInto(match->first, right_.order, right_.phys, &right_row_);
    for (size_t c = 0; c < nr; ++c) out->col(nl + c).Append(right_row_[c]);
    w *= match->second;
  } else {
    for (size_t c = 0; c < nr; ++c) out->col(nl + c).AppendNull();
  }
  out->AddWeight(sign * w);
}

Batch AsofJoinOp::Step(std::span<const Batch* const> inputs) {
  const Batch& dl = *inputs[0];
  const Batch& dr = *inputs[1];
  std::vector<PhysType> types = left_.phys;
  types.insert(types.end(), right_.phys.begin(), right_.phys.end());
  BatchBuilder out(types);
  if (dl.empty() && dr.empty()) {
    EndStep();
    return out.Finish();
  }
  const size_t nl = left_.types.size(), nr = right_.types.size();

  // Changes, encoded (the row's order key, its time a prefix of it); left rows that can never
  // match (NULL key or time) go straight out.
  struct Change {
    std::string key, okey;
    std::string_view t;
    int64_t w;
  };
  std::vector<Change> lchanges, rchanges;
  std::string key;
  auto change = [&](const Side& side, const Batch& b, size_t r, std::vector<Change>* to) {
    Change c{key, {}, {}, b.weights[r]};
    AppendOrderKey(side.order, b, r, &c.okey);
    to->push_back(std::move(c));
  };
  for (size_t r = 0; r < dl.size(); ++r) {
    if (!KeyOf(dl, r, left_.keys, &key) || dl.cols[left_.ts]->IsNull(r)) {
      if (pad_left_) {
        for (size_t c = 0; c < nl; ++c) out.col(c).AppendFrom(*dl.cols[c], r);
        for (size_t c = 0; c < nr; ++c) out.col(nl + c).AppendNull();
        out.AddWeight(dl.weights[r]);
      }
      continue;
    }
    change(left_, dl, r, &lchanges);
  }
  for (size_t r = 0; r < dr.size(); ++r) {
    if (!KeyOf(dr, r, right_.keys, &key) || dr.cols[right_.ts]->IsNull(r)) continue;  // matches nothing
    change(right_, dr, r, &rchanges);
  }
  for (Change& c : lchanges) c.t = left_.TimeOf(c.okey);
  for (Change& c : rchanges) c.t = right_.TimeOf(c.okey);

  // Per key, the left times whose match may change.
  std::map<std::string, std::set<std::string_view>> right_times;  // key -> changed right times
  for (const auto& c : rchanges) right_times[c.key].insert(c.t);
  std::map<std::string, std::vector<Range>> affected;
  for (const auto& c : lchanges) affected[c.key].push_back({std::string(c.t), std::nullopt, true});
  for (const auto& [k, ts] : right_times) {
    const Keyed* old = right_.trace.Find(k);
    for (const std::string_view t : ts) {
      // The next right time after t, before or after the step.
      std::optional<std::string> next;
      if (auto n = ts.upper_bound(t); n != ts.end()) next = std::string(*n);
      if (old) {
        auto n = FirstAfter(old->rows, t);
        if (n != old->rows.end()) {
          const std::string_view nt = right_.TimeOf(n->first.view());
          if (!next || nt < *next) next = std::string(nt);
        }
      }
      affected[k].push_back({std::string(t), next, false});
    }
  }
  // The affected left times present in `rows` (before or after the step).
  auto collect = [&](const std::vector<Range>& ranges, const Keyed& left, std::set<std::string_view>* out_times) {
    for (const auto& rg : ranges) {
      if (rg.point) {
        auto it = FirstAt(left.rows, rg.lo);
        if (it != left.rows.end() && left_.TimeOf(it->first.view()) == rg.lo) out_times->insert(rg.lo);
        continue;
      }
      auto b = strict_ ? FirstAfter(left.rows, rg.lo) : FirstAt(left.rows, rg.lo);
      auto e = !rg.hi ? left.rows.end() : strict_ ? FirstAfter(left.rows, *rg.hi) : FirstAt(left.rows, *rg.hi);
      // (b and e begin times' rows: b steps from time to time, not row to row, onto e)
      for (; b != e; b = FirstAfter(left.rows, left_.TimeOf(b->first.view())))
        out_times->insert(left_.TimeOf(b->first.view()));
    }
  };
  auto emit_key = [&](const std::string& k, const std::vector<Range>& ranges, int64_t sign) {
    const Keyed* left = left_.trace.Find(k);
    if (!left) return;
    std::set<std::string_view> times;
    collect(ranges, *left, &times);
    const Keyed* right = right_.trace.Find(k);
    for (const std::string_view t : times) {
      const Match match = MatchOf(right, t);
      for (auto it = FirstAt(left->rows, t), e = FirstAfter(left->rows, t); it != e; ++it)
        Emit(it->first.view(), it->second, match, sign, &out);
    }
  };

  for (const auto& [k, ranges] : affected) emit_key(k, ranges, -1);
  for (const auto& c : lchanges) Add(&left_, c.key, c.okey, c.w);
  for (const auto& c : rchanges) Add(&right_, c.key, c.okey, c.w);
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
  std::string bound;
  if (wl && wr) {
    std::vector<Value> row(left_.types.size(), Value::Null());
    row[left_.ts] = std::min(*wl, *wr);
    AppendOrderKey(left_.order, row, &bound);
    bound = std::string(left_.TimeOf(bound));
  }
  // Discards what is new to discard, among the keys in memory (a key read back from the store is
  // cleaned at the next move of the waterlines).
  auto erase = [](Keyed& k, Rows::iterator end) {
    for (auto it = k.rows.begin(); it != end; ++it) k.heap -= InlineKeyHeapBytes(it->first.view().size());
    k.rows.erase(k.rows.begin(), end);
  };
  if (wl && wr && bound != gc_bound_) {
    gc_bound_ = bound;
    auto& left = left_.trace.resident();
    for (auto it = left.begin(); it != left.end(); ++it) {
      Keyed& k = it->second.part;
      auto end = k.rows.lower_bound(InlineKey(bound));
      if (end == k.rows.begin()) continue;
      erase(k, end);
      left_.trace.Changed(it);
    }
    // Right rows below it never change again, and only the last time below it can still be a
    // match (of a left row at or above it); the earlier ones go.
    auto& right = right_.trace.resident();
    for (auto it = right.begin(); it != right.end(); ++it) {
      Keyed& k = it->second.part;
      auto below = k.rows.lower_bound(InlineKey(bound));
      if (below == k.rows.begin()) continue;
      const std::string last_time(right_.TimeOf(std::prev(below)->first.view()));
      auto keep = k.rows.lower_bound(InlineKey(last_time));
      if (keep == k.rows.begin()) continue;
      erase(k, keep);
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
      EncodeKeyed(*side, e.part, w);
    }
  }
}

void AsofJoinOp::RestoreSide(StateReader& r, Side* side) {
  const uint64_t nk = r.U64();
  for (uint64_t i = 0; i < nk; ++i) {
    Keyed& k = side->trace.Touch(r.Str());
    DecodeKeyed(*side, r, &k);
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
