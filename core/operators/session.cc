#include "core/operators/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/common/byte_order.h"
#include "core/common/error.h"

namespace fld {

namespace {

constexpr uint64_t kSign = uint64_t{1} << 63;

// A timestamp as the first 8 bytes of a row's key: big-endian with the sign bit flipped, so the
// bytes order as the times do.
std::string TimeKey(int64_t t) {
  std::string key;
  AppendBigEndian64(static_cast<uint64_t>(t) ^ kSign, &key);
  return key;
}

int64_t TimeOf(const InlineKey& k) {
  return static_cast<int64_t>(BigEndian64At(k.view().data()) ^ kSign);
}

std::string_view RowOf(const InlineKey& k) {
  return k.view().substr(8);
}

// The first row at time t or later, and after t.
template <typename Rows>
auto FirstAt(const Rows& rows, int64_t t) {
  return rows.lower_bound(InlineKey(TimeKey(t)));
}
template <typename Rows>
auto FirstAfter(const Rows& rows, int64_t t) {
  return t == INT64_MAX ? rows.end() : FirstAt(rows, t + 1);
}

void Add(SessionKey* k, std::string_view key, int64_t w) {
  AddKeyWeight(&k->rows, key, w, &k->heap);
}

}  // namespace

SessionOp::SessionOp(std::vector<PhysType> input, int ts_column, std::vector<int> keys, int64_t gap)
    : PartitionedOperator(Partitions<SessionKey>::Codec{
          [] { return SessionKey{}; },
          [this](const SessionKey& k, std::string* out) {
            StateWriter w(out);
            EncodeKey(k, w);
          },
          [this](std::string_view value, SessionKey* k) {
            StateReader r(value);
            DecodeKey(r, k);
            if (!r.AtEnd()) Fail(ErrorKind::kCorruption, "a session window's stored key has bytes after its rows");
          },
          [](const SessionKey& k) { return k.rows.empty(); },
          [](const SessionKey& k) { return k.rows.size() * kInlineKeyEntryBytes + k.heap; }}),
      input_(std::move(input)),
      ts_(ts_column),
      keys_(std::move(keys)),
      gap_(gap) {}

std::string SessionOp::Describe() const {
  std::string s = fmt::format("session ${} gap {}us", ts_, gap_);
  for (size_t i = 0; i < keys_.size(); ++i) s += fmt::format("{}${}", i ? ", " : " key ", keys_[i]);
  if (waterline_.valid()) s += " (discards sessions behind the waterline)";
  return s;
}

void SessionOp::EncodeKey(const SessionKey& k, StateWriter& w) const {
  uint64_t times = 0;
  for (auto it = k.rows.begin(); it != k.rows.end(); it = FirstAfter(k.rows, TimeOf(it->first))) ++times;
  w.U64(times);
  for (auto it = k.rows.begin(); it != k.rows.end();) {
    const int64_t t = TimeOf(it->first);
    const auto end = FirstAfter(k.rows, t);
    w.I64(t);
    w.U64(static_cast<uint64_t>(std::distance(it, end)));
    for (; it != end; ++it) {
      w.Str(RowOf(it->first));
      w.I64(it->second);
    }
  }
}

void SessionOp::DecodeKey(StateReader& r, SessionKey* k) const {
  const uint64_t times = r.U64();
  std::string key;
  for (uint64_t i = 0; i < times; ++i) {
    const int64_t t = r.I64();
    const uint64_t n = r.U64();
    for (uint64_t j = 0; j < n; ++j) {
      const std::string_view row = r.View();
      const int64_t w = r.I64();
      // (a checkpoint before rows were compact holds them in the row encoding)
      if (!RowEncodingFits(row, input_) || w == 0)
        Fail(ErrorKind::kCorruption, "a session window's stored row is malformed or does not fit the columns");
      key = TimeKey(t);
      AppendCompactRow(row, &key);
      Add(k, key, w);
    }
  }
}

void SessionOp::EmitRange(const Rows& rows, int64_t lo, int64_t hi, int64_t sign, BatchBuilder* out) const {
  const size_t n = input_.size();
  auto b = FirstAt(rows, lo), e = FirstAfter(rows, hi);
  while (b != e) {
    // One session: [b, last] (rows of one time are consecutive, 0 apart).
    auto last = b;
    for (auto next = std::next(last); next != e && TimeOf(next->first) - TimeOf(last->first) < gap_; ++next)
      last = next;
    const int64_t start = TimeOf(b->first), end = TimeOf(last->first) + gap_;
    for (auto it = b;; ++it) {
      DecodeRowInto(RowOf(it->first), out, 0);
      out->col(n).Append(Value::Int(start));
      out->col(n + 1).Append(Value::Int(end));
      out->AddWeight(sign * it->second);
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
  // The changes, per key: each row's key in the tree (time, then row) and weight.
  struct Change {
    int64_t t;
    std::string key;
    int64_t w;
  };
  std::map<std::string, std::vector<Change>> changes;
  const Column& ts = *in.cols[ts_];
  for (size_t r = 0; r < in.size(); ++r) {
    if (ts.IsNull(r)) continue;
    std::string key, row = TimeKey(ts.i64[r]);
    EncodeRow(&key, in, r, keys_);
    for (const auto& c : in.cols) EncodeCompactValue(&row, *c, r);
    changes[key].push_back({ts.i64[r], std::move(row), in.weights[r]});
  }
  for (auto& [key, cs] : changes) {
    SessionKey& k = parts_.Touch(key);
    const Rows& rows = k.rows;
    std::set<int64_t> changed;
    for (const auto& c : cs) changed.insert(c.t);
    // The sessions of old times ∪ changed times that hold a changed time: [lo, hi] ranges.
    auto prev_of = [&](int64_t t) -> std::optional<int64_t> {  // the largest union time < t
      std::optional<int64_t> p;
      if (auto it = FirstAt(rows, t); it != rows.begin()) p = TimeOf(std::prev(it)->first);
      if (auto it = changed.lower_bound(t); it != changed.begin() && (!p || *std::prev(it) > *p)) p = *std::prev(it);
      return p;
    };
    auto next_of = [&](int64_t t) -> std::optional<int64_t> {  // the smallest union time > t
      std::optional<int64_t> n;
      if (auto it = FirstAfter(rows, t); it != rows.end()) n = TimeOf(it->first);
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
    for (const auto& [lo, hi] : ranges) EmitRange(rows, lo, hi, -1, &out);
    for (const auto& c : cs) Add(&k, c.key, c.w);
    for (const auto& [lo, hi] : ranges) EmitRange(rows, lo, hi, +1, &out);
  }
  CollectGarbage();
  parts_.EndStep();
  return Consolidate(out.Finish());
}

void SessionOp::CollectGarbage() {
  if (!waterline_.valid()) return;
  std::optional<Value> w = waterline_.Current();
  if (!w || w->IsNull()) return;
  if (gc_bound_ && *gc_bound_ == w->i) return;  // nothing new to discard
  gc_bound_ = w->i;
  // Sessions whose last time is at most W - gap: their rows are all below that bound, and the
  // first time at or above it starts a later session (or is more than gap after them). Among the
  // keys in memory (one read back from the store is cleaned at the next move of the waterline).
  const int64_t bound = w->i - gap_;
  auto& resident = parts_.resident();
  for (auto it = resident.begin(); it != resident.end(); ++it) {
    SessionKey& k = it->second.part;
    // The first row after the bound, then back to the start of its session.
    auto keep = FirstAfter(k.rows, bound);
    while (keep != k.rows.begin() && keep != k.rows.end() &&
           TimeOf(keep->first) - TimeOf(std::prev(keep)->first) < gap_)
      --keep;
    if (keep == k.rows.begin()) continue;
    for (auto e = k.rows.begin(); e != keep; ++e) k.heap -= InlineKeyHeapBytes(e->first.view().size());
    k.rows.erase(k.rows.begin(), keep);
    parts_.Changed(it);
  }
}

// The whole state (the format of checkpoints before keys were stored one by one, and of recursive
// circuits' copies): U64 keys, then per key in order its encoding and its rows.
void SessionOp::SaveState(StateWriter& w) const {
  if (parts_.backed()) Fail(ErrorKind::kRuntime, "session: the whole state of a store-backed session is in the store");
  w.U64(parts_.resident().size());
  for (const auto& [key, e] : parts_.resident()) {
    w.Str(key);
    EncodeKey(e.part, w);
  }
}

void SessionOp::RestoreWhole(StateReader& r) {
  const uint64_t nk = r.U64();
  for (uint64_t i = 0; i < nk; ++i) {
    SessionKey& k = parts_.Touch(r.Str());
    DecodeKey(r, &k);
  }
  parts_.EndStep();
}

void SessionOp::RestoreState(StateReader& r) {
  parts_.BeginRestore();
  gc_bound_.reset();
  RestoreWhole(r);
}

// Keyed state: no header; one entry per key. A checkpoint written before that holds the whole
// state in the header.
void SessionOp::BeginRestore(StateReader& r) {
  parts_.BeginRestore();
  gc_bound_.reset();
  if (!r.AtEnd()) RestoreWhole(r);
}

}  // namespace fld
