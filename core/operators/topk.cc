#include "core/operators/topk.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/common/byte_order.h"
#include "core/common/error.h"
#include "core/common/prefetch.h"

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
               std::vector<int> partition, RankKind rank, ThreadPool* pool)
    : types_(std::move(types)),
      keys_(std::move(keys)),
      limit_(limit),
      offset_(offset),
      partition_(std::move(partition)),
      rank_(rank),
      pool_(pool) {
  out_types_ = types_;
  if (rank_ != RankKind::kNone) out_types_.push_back(PhysType::kI64);
  const size_t shards = pool_ && !partition_.empty() ? pool_->workers() : 1;
  for (size_t s = 0; s < shards; ++s)
    shards_.push_back(std::make_unique<Shard>(
        Shard::Codec{[] { return Part{}; }, [this](const Part& p, std::string* out) { EncodePart(p, out); },
                     [this](std::string_view value, Part* p) { DecodePart(value, p); },
                     [](const Part& p) { return p.contents.empty() && p.pending.empty(); },
                     [](const Part& p) {
                       return p.contents.size() * kInlineKeyEntryBytes + p.pending.capacity() * sizeof(p.pending[0]) +
                              p.heap_bytes + p.edge.HeapBytes();
                     }}));
}

void TopKOp::SortPending(const Part& part) {
  // (A save walks a partition twice, counting then writing: the second finds them sorted.)
  if (!std::is_sorted(part.pending.begin(), part.pending.end(), InlineKeyLess()))
    std::sort(part.pending.begin(), part.pending.end(), InlineKeyLess());
}

void TopKOp::FlushPending(Part* part) {
  if (part->pending.empty()) return;
  SortPending(*part);  // each insert's path through the tree is then mostly the last one's
  for (const InlineKey& key : part->pending) {
    part->heap_bytes -= InlineKeyHeapBytes(key.view().size());
    AddRow(part, key.view(), 1);
  }
  std::vector<InlineKey>().swap(part->pending);
}

template <typename F>
void TopKOp::ForEachRow(const Part& part, F f) {
  SortPending(part);
  const auto& pending = part.pending;
  auto c = part.contents.begin();
  auto p = pending.begin();
  while (c != part.contents.end() || p != pending.end()) {
    std::string_view key;
    int64_t w = 0;
    if (p == pending.end() || (c != part.contents.end() && InlineKeyLess()(c->first, *p))) {
      key = c->first.view();
      w = c->second;
      ++c;
    } else {
      key = p->view();
      if (c != part.contents.end() && c->first.view() == key) {
        w = c->second;
        ++c;
      }
    }
    for (; p != pending.end() && p->view() == key; ++p) ++w;
    if (w != 0) f(key, w);
  }
}

void TopKOp::AddRow(Part* part, std::string_view key, int64_t w) {
  AddKeyWeight(&part->contents, key, w, &part->heap_bytes);
}

void TopKOp::EncodePart(const Part& part, std::string* out) const {
  StateWriter w(out);
  if (part.pending.empty()) {
    w.U64(part.contents.size());
    for (const auto& [key, weight] : part.contents) SaveRow(RowOfOrderKey(key.view(), keys_, types_), weight, w);
    return;
  }
  uint64_t n = 0;
  ForEachRow(part, [&](std::string_view, int64_t) { ++n; });
  w.U64(n);
  ForEachRow(part,
             [&](std::string_view key, int64_t weight) { SaveRow(RowOfOrderKey(key, keys_, types_), weight, w); });
}

TopKOp::Row TopKOp::StoredRow(std::string_view enc) const {
  if (!RowEncodingValid(enc)) Fail(ErrorKind::kCorruption, "a top-K's stored row is malformed");
  Row row = DecodeRow(enc);
  if (row.size() != types_.size())
    Fail(ErrorKind::kCorruption, "a top-K's stored row has {} columns, not {}", row.size(), types_.size());
  static constexpr Value::Kind kKind[] = {Value::Kind::kInt, Value::Kind::kDouble, Value::Kind::kString};
  for (size_t c = 0; c < row.size(); ++c)
    if (!row[c].IsNull() && row[c].kind != kKind[static_cast<int>(types_[c])])
      Fail(ErrorKind::kCorruption, "a top-K's stored row has a value of the wrong type in column {}", c);
  return row;
}

void TopKOp::DecodePart(std::string_view value, Part* part) const {
  StateReader r(value);
  const uint64_t n = r.U64();
  std::string key;
  for (uint64_t i = 0; i < n; ++i) {
    const Row row = StoredRow(r.View());
    const int64_t weight = r.I64();
    if (weight == 0) Fail(ErrorKind::kCorruption, "a top-K's stored row has weight 0");
    key.clear();
    AppendOrderKey(keys_, row, &key);
    AddRow(part, key, weight);
  }
  if (!r.AtEnd()) Fail(ErrorKind::kCorruption, "a top-K's stored partition has bytes after its rows");
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

void TopKOp::Window(const Part& part, std::vector<WindowRow>* out, InlineKey* edge, bool* full) const {
  std::vector<WindowRow>& w = *out;
  w.clear();
  const auto& contents = part.contents;
  std::string_view last;  // the edge: the last row taken (its sort part for RANK, DENSE_RANK)
  bool saturated;
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
      if (taken > 0) {
        last = it->first.view();
        w.push_back({it->first, 0, taken});
      }
    }
    saturated = take == 0;  // later rows get places past the window
  } else {
    int64_t before = 0, rank = 0, dense = 0, last_dense = 0;
    std::string_view prev;  // the sort part of the last row walked: peers share it
    bool has_prev = false;
    for (auto it = contents.begin(); it != contents.end(); ++it) {
      const int64_t n = it->second;
      if (n <= 0) continue;
      const std::string_view key = it->first.view();
      const size_t split = OrderKeySortBytes(key, keys_, types_);
      const bool peer = has_prev && key.substr(0, split) == prev;
      if (!peer) {
        rank = before + 1;
        ++dense;
      }
      prev = key.substr(0, split);
      has_prev = true;
      if (rank_ == RankKind::kRowNumber) {
        if (before >= limit_) break;
        for (int64_t c = 0; c < n && before + c < limit_; ++c) w.push_back({it->first, before + c + 1, 1});
        last = key;
      } else {
        const int64_t r = rank_ == RankKind::kRank ? rank : dense;
        if (r > limit_) break;
        w.push_back({it->first, r, n});
        last = prev;
        last_dense = dense;
      }
      before += n;
    }
    // Rows after the edge (not its peers) get a number, rank or dense rank past the limit.
    saturated = rank_ == RankKind::kDenseRank ? last_dense >= limit_ : before >= limit_;
  }
  if (edge) {
    *edge = InlineKey(last);
    *full = saturated;
  }
  std::sort(w.begin(), w.end(), [](const WindowRow& a, const WindowRow& b) { return Before(a, b); });
}

bool TopKOp::PastWindow(const Part& part, std::string_view key) const {
  if (!part.full) return false;
  if (rank_ == RankKind::kRank || rank_ == RankKind::kDenseRank)
    key = key.substr(0, OrderKeySortBytes(key, keys_, types_));
  return key > part.edge.view();
}

Batch TopKOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  if (in.empty()) return EmptyBatch(out_types_);
  const size_t n = in.size();
  std::vector<std::string> pkeys(n);
  if (!partition_.empty())
    for (uint32_t r = 0; r < n; ++r) EncodeRow(&pkeys[r], in, r, partition_);
  // Rows grouped by partition key, in key order, each key's in input order (SortedByBytes
  // compares the keys' first 16 bytes as integers, rarely the strings).
  auto by_key = [&](std::vector<uint32_t>* rows) {
    const std::vector<uint32_t> order =
        SortedByBytes(rows->size(), [&](size_t i) { return std::string_view(pkeys[(*rows)[i]]); });
    std::vector<uint32_t> sorted(order.size());
    for (size_t i = 0; i < order.size(); ++i) sorted[i] = (*rows)[order[i]];
    rows->swap(sorted);
  };
  const uint32_t shards = static_cast<uint32_t>(shards_.size());
  if (shards == 1) {
    std::vector<uint32_t> rows(n);
    for (uint32_t r = 0; r < n; ++r) rows[r] = r;
    if (!partition_.empty()) by_key(&rows);
    BatchBuilder out(out_types_);
    StepRows(*shards_[0], in, pkeys, rows, &out, nullptr);
    return out.Finish();
  }
  // Exchange: each shard steps the rows of its partitions; the outputs then merge in partition
  // key order.
  std::vector<std::vector<uint32_t>> rows(shards);
  for (uint32_t r = 0; r < n; ++r) rows[KeyShard(pkeys[r], shards)].push_back(r);
  std::vector<Batch> outs(shards);
  std::vector<std::vector<std::pair<std::string_view, uint32_t>>> emitted(shards);
  pool_->ParallelFor(shards, [&](size_t s) {
    by_key(&rows[s]);
    BatchBuilder b(out_types_);
    std::vector<std::pair<std::string_view, uint32_t>> keys;  // (this thread's: see AggregateOp::Step)
    StepRows(*shards_[s], in, pkeys, rows[s], &b, &keys);
    outs[s] = b.Finish();
    emitted[s] = std::move(keys);
  });
  return GatherRows(outs, MergeByKey(emitted), out_types_, pool_);
}

void TopKOp::StepRows(Shard& shard, const Batch& in, const std::vector<std::string>& pkeys,
                      std::span<const uint32_t> rows, BatchBuilder* out_rows,
                      std::vector<std::pair<std::string_view, uint32_t>>* emitted) const {
  BatchBuilder& out = *out_rows;
  const size_t n = rows.size();
  std::string key;
  std::vector<size_t> ends;
  std::vector<WindowRow> old, now;  // a partition's window before and after (reused: no allocation per group)
  // The rows come grouped by partition: starts[g] is where group g begins. Each group's lookups
  // are cache misses (the index, the partition, the end of its pending rows), prefetched in
  // stages some groups ahead (Partitions::PrefetchIndex, Resident).
  std::vector<uint32_t> starts;
  for (size_t i = 0; i < n; ++i)
    if (i == 0 || pkeys[rows[i]] != pkeys[rows[i - 1]]) starts.push_back(static_cast<uint32_t>(i));
  const size_t groups = starts.size();
  starts.push_back(static_cast<uint32_t>(n));
  constexpr size_t kIndexAhead = 12, kPartAhead = 6, kPendingAhead = 2;
  std::vector<const Part*> resident(groups, nullptr);
  auto pkey_of = [&](size_t g) -> const std::string& { return pkeys[rows[starts[g]]]; };
  for (size_t g = 0; g < std::min(groups, kIndexAhead); ++g) shard.PrefetchIndex(pkey_of(g));
  for (size_t g = 0; g < groups; ++g) {
    if (g + kIndexAhead < groups) shard.PrefetchIndex(pkey_of(g + kIndexAhead));
    if (g + kPartAhead < groups) {
      const Part* p = resident[g + kPartAhead] = shard.Resident(pkey_of(g + kPartAhead));
      if (p != nullptr) {
        fld::Prefetch(p);
        fld::Prefetch(reinterpret_cast<const char*>(p) + sizeof(Part) - 1);
      }
    }
    if (g + kPendingAhead < groups)
      if (const Part* p = resident[g + kPendingAhead]; p != nullptr && p->full)
        fld::Prefetch(p->pending.data() + p->pending.size());
    const size_t i = starts[g], j = starts[g + 1];
    const std::string& pkey = pkey_of(g);
    const size_t before_rows = out.size();
    Part& part = shard.Touch(pkey);
    // The rows' order keys, end to end in `key` (ends[k - i]: where row k's ends).
    key.clear();
    ends.clear();
    for (size_t k = i; k < j; ++k) {
      AppendOrderKey(keys_, in, rows[k], &key);
      ends.push_back(key.size());
    }
    auto key_of = [&](size_t k) {
      const size_t from = k == i ? 0 : ends[k - i - 1];
      return std::string_view(key).substr(from, ends[k - i] - from);
    };
    bool past = true;  // every row past the window's edge: the window stays, nothing to emit
    for (size_t k = i; k < j && past; ++k) past = PastWindow(part, key_of(k));
    bool positive = true;  // no retraction: the pending rows stay past any window
    for (size_t k = i; k < j && positive; ++k) positive = in.weights[rows[k]] > 0;
    if (!positive) FlushPending(&part);
    if (past) {
      for (size_t k = i; k < j; ++k) {
        const int64_t w = in.weights[rows[k]];
        if (!positive || w != 1) {  // (a pending row's weight is 1: no weight is stored)
          AddRow(&part, key_of(k), w);
          continue;
        }
        part.pending.emplace_back(key_of(k));
        part.heap_bytes += InlineKeyHeapBytes(key_of(k).size());
      }
      continue;
    }
    Window(part, &old);
    for (size_t k = i; k < j; ++k) AddRow(&part, key_of(k), in.weights[rows[k]]);
    Window(part, &now, &part.edge, &part.full);
    // Emit new - old, in output row order (deterministic).
    auto emit = [&](const WindowRow& e, int64_t weight) {
      Row row = RowOfOrderKey(e.row.view(), keys_, types_);
      if (rank_ != RankKind::kNone) row.push_back(Value::Int(e.rank));
      out.AppendRow(row, weight);
    };
    auto before = [](const WindowRow& a, const WindowRow& b) { return Before(a, b); };
    auto o = old.begin();
    auto w = now.begin();
    while (o != old.end() || w != now.end()) {
      if (w == now.end() || (o != old.end() && before(*o, *w))) {
        emit(*o, -o->copies);
        ++o;
      } else if (o == old.end() || before(*w, *o)) {
        emit(*w, w->copies);
        ++w;
      } else {
        if (w->copies != o->copies) emit(*w, w->copies - o->copies);
        ++o;
        ++w;
      }
    }
    if (emitted && out.size() > before_rows)
      emitted->emplace_back(pkey, static_cast<uint32_t>(out.size() - before_rows));
  }
  shard.EndStep();
}

// The whole state (the format of checkpoints before partitions were stored one by one, and of
// recursive circuits' copies): the integrated input as one list of rows (the partition of a row
// is a function of the row), the partitions in key order.
void TopKOp::SaveState(StateWriter& w) const {
  std::vector<std::pair<std::string_view, const Part*>> parts;
  for (const auto& shard : shards_) {
    if (shard->backed()) Fail(ErrorKind::kRuntime, "topk: the whole state of a store-backed top-K is in the store");
    for (const auto& [key, e] : shard->resident()) parts.emplace_back(key, &e.part);
  }
  std::sort(parts.begin(), parts.end());
  uint64_t n = 0;
  for (const auto& [key, part] : parts) ForEachRow(*part, [&](std::string_view, int64_t) { ++n; });
  w.U64(n);
  for (const auto& [key, part] : parts)
    ForEachRow(*part,
               [&](std::string_view okey, int64_t weight) { SaveRow(RowOfOrderKey(okey, keys_, types_), weight, w); });
}

void TopKOp::RestoreState(StateReader& r) {
  for (auto& shard : shards_) shard->BeginRestore();
  RestoreWhole(r);
}

void TopKOp::RestoreWhole(StateReader& r) {
  uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    const Row row = StoredRow(r.View());
    const int64_t weight = r.I64();
    std::string key;
    AppendOrderKey(keys_, row, &key);
    const std::string pkey = PartitionKey(row);
    Part& part = ShardOf(pkey).Touch(pkey);
    if (auto it = part.contents.find(key); it != part.contents.end()) AddRow(&part, key, -it->second);
    if (weight != 0) AddRow(&part, key, weight);
  }
  for (auto& shard : shards_) shard->EndStep();
}

// Keyed state: no header; one entry per partition, in the shard of its key. A checkpoint written
// before that holds the whole state in the header.
void TopKOp::BeginRestore(StateReader& r) {
  for (auto& shard : shards_) shard->BeginRestore();
  if (!r.AtEnd()) RestoreWhole(r);
}

void TopKOp::TrackChanges() {
  for (auto& shard : shards_) shard->TrackChanges();
}

void TopKOp::SaveChanges(StateWriter&, StateDelta& d) {
  for (auto& shard : shards_) shard->SaveChanges(d);
}

void TopKOp::RestoreEntry(std::string_view key, std::string_view value) {
  ShardOf(key).RestoreEntry(key, value);
}

void TopKOp::BackState(StateSource* source, uint32_t node, bool all_stored) {
  for (auto& shard : shards_) shard->Back(source, node, all_stored);
}

void TopKOp::StateCommitted(bool evict) {
  for (auto& shard : shards_) shard->Committed(evict);
}

size_t TopKOp::StateMemoryBytes() const {
  size_t n = 0;
  for (const auto& shard : shards_) n += shard->MemoryBytes();
  return n;
}

}  // namespace fld
