#include "core/operators/bag_set_op.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <cstring>

#include "core/common/error.h"

namespace fld {

namespace {

std::pair<int64_t, int64_t> PairOf(std::string_view v) {
  std::pair<int64_t, int64_t> p;
  std::memcpy(&p.first, v.data(), 8);
  std::memcpy(&p.second, v.data() + 8, 8);
  return p;
}

constexpr char kZeros[16] = {};

std::string BytesOf(std::pair<int64_t, int64_t> p) {
  std::string v(16, '\0');
  std::memcpy(v.data(), &p.first, 8);
  std::memcpy(v.data() + 8, &p.second, 8);
  return v;
}

void CheckEntry(std::string_view key, std::string_view value) {
  if (!RowEncodingValid(key) || value.size() != 16 || PairOf(value) == std::pair<int64_t, int64_t>{0, 0})
    Fail(ErrorKind::kCorruption, "an EXCEPT ALL / INTERSECT ALL's stored row is malformed");
}

}  // namespace

int64_t BagSetOp::Multiplicity(std::pair<int64_t, int64_t> lr) const {
  const int64_t l = std::max<int64_t>(lr.first, 0), r = std::max<int64_t>(lr.second, 0);
  return kind_ == Kind::kExceptAll ? std::max<int64_t>(l - r, 0) : std::min(l, r);
}

uint32_t BagSetOp::Locate(std::string_view key) {
  const uint32_t slot = weights_.Find(key);
  if (slot != ArenaMap::kNone) return slot;
  return stored_.Load(weights_, key, [&](const std::string& value) {
    CheckEntry(key, value);
    weights_.Insert(key, value);
  });
}

Batch BagSetOp::Step(std::span<const Batch* const> inputs) {
  const Batch l = Consolidate(*inputs[0]);
  const Batch r = Consolidate(*inputs[1]);
  // Old multiplicity of every touched row, then apply both changes, then emit new - old.
  struct Touched {
    const Batch* batch;
    uint32_t row;
    int64_t before;
    std::string key;
  };
  std::vector<Touched> order;  // first-touch order: left rows (sorted), then new right rows
  absl::flat_hash_map<std::string, size_t> touched;
  std::string key;
  auto apply = [&](const Batch& b, bool left) {
    for (size_t i = 0; i < b.size(); ++i) {
      key.clear();
      for (const auto& c : b.cols) EncodeCompactValue(&key, *c, i);
      uint32_t slot = Locate(key);
      if (slot == ArenaMap::kNone) slot = weights_.Insert(key, std::string_view(kZeros, 16));
      std::pair<int64_t, int64_t> lr = PairOf(weights_.Value(slot));
      if (touched.try_emplace(key, order.size()).second)
        order.push_back({&b, static_cast<uint32_t>(i), Multiplicity(lr), key});
      (left ? lr.first : lr.second) += b.weights[i];
      char* value = weights_.MutableValue(slot);
      std::memcpy(value, &lr.first, 8);
      std::memcpy(value + 8, &lr.second, 8);
    }
  };
  apply(l, true);
  apply(r, false);
  std::vector<uint32_t> lsel, rsel;
  std::vector<int64_t> lw, rw;
  for (const Touched& t : order) {
    const uint32_t slot = weights_.Find(t.key);
    const std::pair<int64_t, int64_t> lr = PairOf(weights_.Value(slot));
    const int64_t after = Multiplicity(lr);
    if (lr.first == 0 && lr.second == 0) {
      stored_.Erased(t.key);
      weights_.Erase(slot);
    }
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
  if (stored_.backed())
    Fail(ErrorKind::kRuntime, "except_all/intersect_all: the whole state of a store-backed operator is in the store");
  std::vector<std::pair<std::string_view, std::pair<int64_t, int64_t>>> rows;
  weights_.ForEachSlot([&](uint32_t s) { rows.emplace_back(weights_.Key(s), PairOf(weights_.Value(s))); });
  std::sort(rows.begin(), rows.end());
  w.U64(rows.size());
  for (const auto& [k, lr] : rows) {
    w.Str(k);
    w.I64(lr.first);
    w.I64(lr.second);
  }
}

void BagSetOp::RestoreState(StateReader& r) {
  weights_.Clear();
  stored_.Reset();
  RestoreWhole(r);
}

void BagSetOp::RestoreWhole(StateReader& r) {
  const uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    const std::string_view row = r.View();
    const int64_t a = r.I64();
    const int64_t b = r.I64();
    // (checkpoints before the state was keyed hold the rows in the row encoding)
    const std::string value = BytesOf({a, b});
    CheckEntry(row, value);
    const std::string key = CompactRow(row);
    if (weights_.Find(key) != ArenaMap::kNone)
      Fail(ErrorKind::kCorruption, "an EXCEPT ALL / INTERSECT ALL's saved state holds a row twice");
    weights_.Insert(key, value);
  }
}

// Keyed state: compact row encoding -> the two 8-byte weights, no header.
void BagSetOp::SaveChanges(StateWriter&, StateDelta& d) {
  stored_.SaveChanges(weights_, d);
}

void BagSetOp::BeginRestore(StateReader& r) {
  weights_.Clear();
  stored_.Reset();
  if (!r.AtEnd()) RestoreWhole(r);  // (stays changed: the next checkpoint stores it keyed)
}

void BagSetOp::RestoreEntry(std::string_view key, std::string_view value) {
  CheckEntry(key, value);
  if (weights_.Find(key) != ArenaMap::kNone)
    Fail(ErrorKind::kCorruption, "an EXCEPT ALL / INTERSECT ALL's stored state holds a row twice");
  weights_.MarkClean(weights_.Insert(key, value));  // as stored
}

void BagSetOp::StateCommitted(bool evict) {
  if (!stored_.Committed() || !evict) return;
  stored_.Evicted(weights_.EvictClean([](uint32_t) {}));
}

}  // namespace fld
