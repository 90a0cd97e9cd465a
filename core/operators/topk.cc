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

void SaveRow(const std::vector<Value>& row, int64_t weight, StateWriter& w) {
  std::string enc;
  for (const Value& v : row) EncodeValue(&enc, v);
  w.Str(enc);
  w.I64(weight);
}

void SaveSortedRows(const SortedRows& rows, StateWriter& w) {
  w.U64(rows.size());
  for (const auto& [row, weight] : rows) SaveRow(row, weight, w);
}

void LoadSortedRows(StateReader& r, size_t width, const char* what, SortedRows* rows) {
  const uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    const std::string_view enc = r.View();
    if (!RowEncodingValid(enc)) Fail(ErrorKind::kCorruption, "a {}'s stored row is malformed", what);
    std::vector<Value> row = DecodeRow(enc);
    if (row.size() != width)
      Fail(ErrorKind::kCorruption, "a {}'s stored row has {} columns, not {}", what, row.size(), width);
    (*rows)[std::move(row)] = r.I64();
  }
}

TopKOp::TopKOp(std::vector<PhysType> types, std::vector<SortKey> keys, int64_t limit, int64_t offset,
               std::vector<int> partition, RankKind rank)
    : PartitionedOperator(Partitions<Part>::Codec{
          [this] {
            return Part{Contents(SortedRowLess{&keys_}), {}};
          },
          [](const Part& p, std::string* out) {
            StateWriter w(out);
            SaveSortedRows(p.contents, w);
          },
          [this](std::string_view value, Part* p) {
            StateReader r(value);
            LoadSortedRows(r, types_.size(), "top-K", &p->contents);
            if (!r.AtEnd()) Fail(ErrorKind::kCorruption, "a top-K's stored partition has bytes after its rows");
            p->window = Window(p->contents);
          },
          [](const Part& p) { return p.contents.empty(); },
          [this](const Part& p) { return (p.contents.size() + p.window.size()) * row_bytes_; }}),
      types_(std::move(types)),
      keys_(std::move(keys)),
      limit_(limit),
      offset_(offset),
      partition_(std::move(partition)),
      rank_(rank) {
  out_types_ = types_;
  if (rank_ != RankKind::kNone) out_types_.push_back(PhysType::kI64);
  // A map node (about 48 bytes), the weight, the row's vector and its values.
  row_bytes_ = 48 + 8 + sizeof(Row) + (types_.size() + 1) * sizeof(Value);
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
  std::map<std::string, Part*> touched;  // in key order: the output's order is deterministic
  Row row(in.width());
  for (size_t r = 0; r < in.size(); ++r) {
    for (size_t c = 0; c < in.width(); ++c) row[c] = in.Get(c, r);
    std::string key = PartitionKey(row);
    Part& part = parts_.Touch(key);
    auto it = part.contents.try_emplace(row, 0).first;
    it->second += in.weights[r];
    if (it->second == 0) part.contents.erase(it);
    touched[std::move(key)] = &part;
  }
  for (auto& [key, part] : touched) {
    std::map<Row, int64_t> now = Window(part->contents);
    const std::map<Row, int64_t>& old = part->window;
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
    part->window = std::move(now);
  }
  parts_.EndStep();
  return out.Finish();
}

// The whole state (the format of checkpoints before partitions were stored one by one, and of
// recursive circuits' copies): the integrated input as one list of rows (the partition of a row
// is a function of the row).
void TopKOp::SaveState(StateWriter& w) const {
  if (parts_.backed()) Fail(ErrorKind::kRuntime, "topk: the whole state of a store-backed top-K is in the store");
  uint64_t n = 0;
  for (const auto& [key, e] : parts_.resident()) n += e.part.contents.size();
  w.U64(n);
  for (const auto& [key, e] : parts_.resident())
    for (const auto& [row, weight] : e.part.contents) SaveRow(row, weight, w);
}

void TopKOp::RestoreState(StateReader& r) {
  parts_.BeginRestore();
  RestoreWhole(r);
}

void TopKOp::RestoreWhole(StateReader& r) {
  uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    std::string enc = r.Str();
    Row row = DecodeRow(enc);
    const int64_t weight = r.I64();
    parts_.Touch(PartitionKey(row)).contents[std::move(row)] = weight;
  }
  for (auto& [key, e] : parts_.resident()) e.part.window = Window(e.part.contents);
  parts_.EndStep();
}

// Keyed state: no header; one entry per partition. A checkpoint written before that holds the
// whole state in the header.
void TopKOp::BeginRestore(StateReader& r) {
  parts_.BeginRestore();
  if (!r.AtEnd()) RestoreWhole(r);
}

}  // namespace fld
