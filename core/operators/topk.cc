#include "core/operators/topk.h"

#include <fmt/format.h>

#include "core/common/error.h"

namespace fld {

int CompareByKeys(const std::vector<SortKey>& keys, const std::vector<Value>& a, const std::vector<Value>& b) {
  for (const SortKey& k : keys) {
    const Value& x = a[k.column];
    const Value& y = b[k.column];
    if (x.IsNull() || y.IsNull()) {
      if (x.IsNull() && y.IsNull()) continue;
      return (x.IsNull() ? k.nulls_first : !k.nulls_first) ? -1 : 1;
    }
    auto c = x <=> y;
    if (c == 0) continue;
    return (k.desc ? c > 0 : c < 0) ? -1 : 1;
  }
  return 0;
}

TopKOp::TopKOp(std::vector<PhysType> types, std::vector<SortKey> keys, int64_t limit, int64_t offset,
               std::vector<int> partition, RankKind rank)
    : types_(std::move(types)),
      keys_(std::move(keys)),
      limit_(limit),
      offset_(offset),
      partition_(std::move(partition)),
      rank_(rank) {
  out_types_ = types_;
  if (rank_ != RankKind::kNone) out_types_.push_back(PhysType::kI64);
}

std::string TopKOp::Describe() const {
  std::string s = "topk";
  if (!partition_.empty()) {
    s += " PARTITION BY";
    for (int c : partition_) s += fmt::format(" ${}", c);
  }
  for (const SortKey& k : keys_)
    s += fmt::format(" ${}{}{}", k.column, k.desc ? " DESC" : "", k.nulls_first ? " NULLS FIRST" : " NULLS LAST");
  static const char* kRank[] = {"LIMIT", "ROW_NUMBER <=", "RANK <=", "DENSE_RANK <="};
  s += fmt::format(" {} {}", kRank[static_cast<int>(rank_)], limit_);
  if (offset_ > 0) s += fmt::format(" OFFSET {}", offset_);
  return s;
}

std::string TopKOp::PartitionKey(const Row& row) const {
  std::string key;
  for (int c : partition_) EncodeValue(&key, row[c]);
  return key;
}

std::map<TopKOp::Row, int64_t> TopKOp::Window(const Contents& contents) const {
  std::map<Row, int64_t> w;
  if (rank_ == RankKind::kNone) {
    int64_t skip = offset_, take = limit_;
    for (auto it = contents.begin(); it != contents.end() && take > 0; ++it) {
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
  int64_t before = 0, rank = 0, dense = 0;
  const Row* prev = nullptr;
  for (auto it = contents.begin(); it != contents.end(); ++it) {
    const int64_t n = it->second;
    if (n <= 0) continue;
    const bool peer = prev && CompareByKeys(keys_, *prev, it->first) == 0;
    if (!peer) {
      rank = before + 1;
      ++dense;
    }
    prev = &it->first;
    Row out = it->first;
    out.emplace_back();
    if (rank_ == RankKind::kRowNumber) {
      if (before >= limit_) break;
      for (int64_t c = 0; c < n && before + c < limit_; ++c) {
        out.back() = Value::Int(before + c + 1);
        w[out] += 1;
      }
    } else {
      const int64_t r = rank_ == RankKind::kRank ? rank : dense;
      if (r > limit_) break;
      out.back() = Value::Int(r);
      w[out] += n;
    }
    before += n;
  }
  return w;
}

Batch TopKOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  BatchBuilder out(out_types_);
  if (in.empty()) return out.Finish();
  std::map<std::string, bool> touched;
  Row row(in.width());
  for (size_t r = 0; r < in.size(); ++r) {
    for (size_t c = 0; c < in.width(); ++c) row[c] = in.Get(c, r);
    std::string key = PartitionKey(row);
    auto part = contents_.try_emplace(key, Contents(SortedRowLess{&keys_})).first;
    auto it = part->second.try_emplace(row, 0).first;
    it->second += in.weights[r];
    if (it->second == 0) part->second.erase(it);
    touched[key] = true;
  }
  static const std::map<Row, int64_t> kNone;
  for (const auto& [key, unused] : touched) {
    auto part = contents_.find(key);
    std::map<Row, int64_t> now = Window(part->second);
    if (part->second.empty()) contents_.erase(part);
    auto old_it = window_.find(key);
    const std::map<Row, int64_t>& old = old_it == window_.end() ? kNone : old_it->second;
    // Emit new - old, in row order (deterministic).
    auto o = old.begin();
    auto n = now.begin();
    while (o != old.end() || n != now.end()) {
      if (n == now.end() || (o != old.end() && o->first < n->first)) {
        out.AppendRow(o->first, -o->second);
        ++o;
      } else if (o == old.end() || n->first < o->first) {
        out.AppendRow(n->first, n->second);
        ++n;
      } else {
        if (n->second != o->second) out.AppendRow(n->first, n->second - o->second);
        ++o;
        ++n;
      }
    }
    if (now.empty()) {
      if (old_it != window_.end()) window_.erase(old_it);
    } else {
      window_[key] = std::move(now);
    }
  }
  return out.Finish();
}

// The state is the integrated input as one list of rows (the partition of a row is a function
// of the row), the format unpartitioned top-K has always written.
void TopKOp::SaveState(StateWriter& w) const {
  uint64_t n = 0;
  for (const auto& [key, part] : contents_) n += part.size();
  w.U64(n);
  for (const auto& [key, part] : contents_)
    for (const auto& [row, weight] : part) {
      std::string enc;
      for (const Value& v : row) EncodeValue(&enc, v);
      w.Str(enc);
      w.I64(weight);
    }
}

void TopKOp::RestoreState(StateReader& r) {
  contents_.clear();
  window_.clear();
  uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    std::string enc = r.Str();
    Row row = DecodeRow(enc);
    std::string key = PartitionKey(row);
    auto part = contents_.try_emplace(key, Contents(SortedRowLess{&keys_})).first;
    part->second[std::move(row)] = r.I64();
  }
  for (const auto& [key, part] : contents_) {
    auto w = Window(part);
    if (!w.empty()) window_[key] = std::move(w);
  }
}

}  // namespace fld
