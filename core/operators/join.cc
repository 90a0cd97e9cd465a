#include "core/operators/join.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace fld {

JoinOp::JoinOp(std::vector<PhysType> left_types, std::vector<PhysType> right_types, std::vector<int> left_keys,
               std::vector<int> right_keys, bool pad_left, bool pad_right)
    : pad_left_(pad_left), pad_right_(pad_right) {
  left_.types = std::move(left_types);
  right_.types = std::move(right_types);
  left_.keys = std::move(left_keys);
  right_.keys = std::move(right_keys);
}

std::string JoinOp::Name() const {
  if (pad_left_ && pad_right_) return "full_join";
  if (pad_left_) return "left_join";
  if (pad_right_) return "right_join";
  return left_.keys.empty() ? "cross_join" : "join";
}

std::string JoinOp::Describe() const {
  std::string s = Name();
  for (size_t i = 0; i < left_.keys.size(); ++i)
    s += fmt::format("{} left.${} = right.${}", i ? " and" : " on", left_.keys[i], right_.keys[i]);
  if (left_.gc.active()) s += fmt::format(" (discards rows below the waterline of key {})", left_.gc.column());
  for (const Side* side : {&left_, &right_})
    if (side->filter)
      s += fmt::format(" ({} rows where {})", side == &left_ ? "left" : "right", side->filter->ToString());
  std::string pruned;
  for (const Side* side : {&left_, &right_})
    for (size_t c = 0; c < side->needed.size(); ++c)
      if (!side->needed[c])
        pruned += fmt::format("{}{}.${}", pruned.empty() ? "" : " ", side == &left_ ? "left" : "right", c);
  if (!pruned.empty()) s += " (unread: " + pruned + ")";
  return s;
}

namespace {

// Key of row r, or false when a key column is NULL.
bool KeyOf(const Batch& b, size_t r, const std::vector<int>& keys, std::string* key) {
  key->clear();
  for (int c : keys) {
    if (b.cols[c]->IsNull(r)) return false;
    EncodeValue(key, *b.cols[c], r);
  }
  return true;
}

void AppendNulls(BatchBuilder* out, size_t first, size_t n) {
  for (size_t c = first; c < first + n; ++c) out->col(c).AppendNull();
}

}  // namespace

void JoinOp::SetNeededColumns(const std::vector<bool>& needed) {
  size_t nl = left_.types.size();
  left_.needed.assign(needed.begin(), needed.begin() + nl);
  right_.needed.assign(needed.begin() + nl, needed.end());
  for (Side* side : {&left_, &right_}) {
    for (int k : side->keys) side->needed[k] = true;
    if (std::all_of(side->needed.begin(), side->needed.end(), [](bool b) { return b; })) side->needed.clear();
  }
}

void JoinOp::SetSideFilter(bool left, BoundExprPtr pred) {
  (left ? left_ : right_).filter = std::move(pred);
}

void JoinOp::AppendSide(const Side& side, const Batch& b, size_t r, BatchBuilder* out, size_t first) {
  for (size_t c = 0; c < b.cols.size(); ++c) {
    if (side.needed.empty() || side.needed[c])
      out->col(first + c).AppendFrom(*b.cols[c], r);
    else
      out->col(first + c).AppendNull();
  }
}

void JoinOp::EncodeSide(const Side& side, const Batch& b, size_t r, std::string* out) {
  if (side.needed.empty()) return EncodeRow(out, b, r);
  for (size_t c = 0; c < b.cols.size(); ++c) {
    if (side.needed[c])
      EncodeValue(out, *b.cols[c], r);
    else
      out->push_back(0);  // NULL's encoding
  }
}

void JoinOp::Add(Side* side, const std::string& key, std::string row, int64_t w) {
  auto [kit, fresh] = side->trace.try_emplace(key);
  if (fresh) side->gc.Added(key);
  auto& rows = kit->second;
  auto it = rows.try_emplace(std::move(row), 0).first;
  it->second += w;
  if (it->second == 0) rows.erase(it);
  if (rows.empty()) {
    side->gc.Removed(key);
    side->trace.erase(kit);
  }
}

void JoinOp::SetWaterline(int key, WaterlineRef w) {
  left_.gc = WaterlineIndex(key, w);
  right_.gc = WaterlineIndex(key, std::move(w));
}

int64_t JoinOp::Count(const Side& s, const std::string& key) {
  auto it = s.trace.find(key);
  if (it == s.trace.end()) return 0;
  int64_t n = 0;
  for (const auto& [row, w] : it->second) n += w;
  return n;
}

void JoinOp::EmitPadded(const Side& side, bool side_is_left, const std::string& key, int64_t sign,
                        BatchBuilder* out) const {
  auto it = side.trace.find(key);
  if (it == side.trace.end()) return;
  size_t nl = left_.types.size(), nr = right_.types.size();
  for (const auto& [row, w] : it->second) {
    if (side_is_left) {
      DecodeRowInto(row, out, 0);
      AppendNulls(out, nl, nr);
    } else {
      AppendNulls(out, 0, nl);
      DecodeRowInto(row, out, nl);
    }
    out->AddWeight(sign * w);
  }
}

Batch JoinOp::Step(std::span<const Batch* const> inputs) {
  Batch kept[2];
  for (int i = 0; i < 2; ++i) {
    const Side& side = i == 0 ? left_ : right_;
    if (side.filter && !inputs[i]->empty()) kept[i] = Gather(*inputs[i], SelectTrue(*side.filter, *inputs[i]));
  }
  const Batch& dl = left_.filter && !inputs[0]->empty() ? kept[0] : *inputs[0];
  const Batch& dr = right_.filter && !inputs[1]->empty() ? kept[1] : *inputs[1];
  std::vector<PhysType> types = left_.types;
  types.insert(types.end(), right_.types.begin(), right_.types.end());
  BatchBuilder out(types);
  if (dl.empty() && dr.empty()) {
    CollectGarbage();
    return out.Finish();
  }
  const size_t nl = left_.types.size(), nr = right_.types.size();
  const bool outer = pad_left_ || pad_right_;

  // Keys touched by this step, and the padded rows they had before it.
  std::set<std::string> touched;
  std::string key;
  if (outer) {
    for (size_t r = 0; r < dl.size(); ++r)
      if (KeyOf(dl, r, left_.keys, &key)) touched.insert(key);
    for (size_t r = 0; r < dr.size(); ++r)
      if (KeyOf(dr, r, right_.keys, &key)) touched.insert(key);
    for (const auto& k : touched) {
      if (pad_left_ && Count(right_, k) == 0) EmitPadded(left_, true, k, -1, &out);
      if (pad_right_ && Count(left_, k) == 0) EmitPadded(right_, false, k, -1, &out);
    }
  }

  // ΔL ⋈ R_old, then fold ΔL into L.
  std::string row;
  for (size_t r = 0; r < dl.size(); ++r) {
    if (!KeyOf(dl, r, left_.keys, &key)) {
      if (pad_left_) {
        AppendSide(left_, dl, r, &out, 0);
        AppendNulls(&out, nl, nr);
        out.AddWeight(dl.weights[r]);
      }
      continue;
    }
    auto it = right_.trace.find(key);
    if (it != right_.trace.end()) {
      for (const auto& [rrow, w] : it->second) {
        AppendSide(left_, dl, r, &out, 0);
        DecodeRowInto(rrow, &out, nl);
        out.AddWeight(dl.weights[r] * w);
      }
    }
    row.clear();
    EncodeSide(left_, dl, r, &row);
    Add(&left_, key, row, dl.weights[r]);
  }
  // L_new ⋈ ΔR, then fold ΔR into R.
  for (size_t r = 0; r < dr.size(); ++r) {
    if (!KeyOf(dr, r, right_.keys, &key)) {
      if (pad_right_) {
        AppendNulls(&out, 0, nl);
        AppendSide(right_, dr, r, &out, nl);
        out.AddWeight(dr.weights[r]);
      }
      continue;
    }
    auto it = left_.trace.find(key);
    if (it != left_.trace.end()) {
      for (const auto& [lrow, w] : it->second) {
        DecodeRowInto(lrow, &out, 0);
        AppendSide(right_, dr, r, &out, nl);
        out.AddWeight(w * dr.weights[r]);
      }
    }
    row.clear();
    EncodeSide(right_, dr, r, &row);
    Add(&right_, key, row, dr.weights[r]);
  }

  if (outer) {
    for (const auto& k : touched) {
      if (pad_left_ && Count(right_, k) == 0) EmitPadded(left_, true, k, +1, &out);
      if (pad_right_ && Count(left_, k) == 0) EmitPadded(right_, false, k, +1, &out);
    }
  }
  CollectGarbage();
  return outer ? Consolidate(out.Finish()) : out.Finish();
}

void JoinOp::CollectGarbage() {
  for (Side* side : {&left_, &right_})
    for (const auto& k : side->gc.TakeBelow()) side->trace.erase(k);
}

namespace {
void SaveTrace(StateWriter& w, const std::unordered_map<std::string, std::map<std::string, int64_t>>& trace) {
  auto entries = SortedByKey(trace);
  w.U64(entries.size());
  for (const auto* e : entries) {
    const auto& rows = e->second;
    w.Str(e->first);
    w.U64(rows.size());
    for (const auto& [row, wt] : rows) {
      w.Str(row);
      w.I64(wt);
    }
  }
}
void LoadTrace(StateReader& r, std::unordered_map<std::string, std::map<std::string, int64_t>>* trace) {
  trace->clear();
  uint64_t nk = r.U64();
  for (uint64_t i = 0; i < nk; ++i) {
    std::string k = r.Str();
    auto& rows = (*trace)[k];
    uint64_t nr = r.U64();
    for (uint64_t j = 0; j < nr; ++j) {
      std::string row = r.Str();
      rows[row] = r.I64();
    }
  }
}
}  // namespace

void JoinOp::SaveState(StateWriter& w) const {
  SaveTrace(w, left_.trace);
  SaveTrace(w, right_.trace);
}

void JoinOp::RestoreState(StateReader& r) {
  LoadTrace(r, &left_.trace);
  LoadTrace(r, &right_.trace);
  for (Side* side : {&left_, &right_}) {
    side->gc.Clear();
    for (const auto& [k, rows] : side->trace) side->gc.Added(k);
  }
}

}  // namespace fld
