#include "core/operators/join.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <tuple>

#include "core/common/prefetch.h"

namespace fld {

JoinOp::JoinOp(std::vector<PhysType> left_types, std::vector<PhysType> right_types, std::vector<int> left_keys,
               std::vector<int> right_keys, bool pad_left, bool pad_right, ThreadPool* pool)
    : pool_(pool), pad_left_(pad_left), pad_right_(pad_right) {
  const bool sharded = pool != nullptr && pool->workers() > 1 && !left_keys.empty();
  shards_.resize(sharded ? pool->workers() : 1);
  for (Shard& sh : shards_) {
    sh.left.types = left_types;
    sh.right.types = right_types;
    sh.left.keys = left_keys;
    sh.right.keys = right_keys;
    sh.left.stored = StoredEntries("L");
    sh.right.stored = StoredEntries("R");
    for (Side* side : {&sh.left, &sh.right}) {
      side->key_at.assign(side->types.size(), -1);
      for (size_t k = side->keys.size(); k-- > 0;)
        if (side->types[side->keys[k]] == PhysType::kI64) {
          side->key_at[side->keys[k]] = static_cast<int>(k);
          side->int_keys = true;
        }
    }
  }
}

std::string JoinOp::Name() const {
  if (pad_left_ && pad_right_) return "full_join";
  if (pad_left_) return "left_join";
  if (pad_right_) return "right_join";
  return shards_[0].left.keys.empty() ? "cross_join" : "join";
}

std::string JoinOp::Describe() const {
  const Side& left = shards_[0].left;
  const Side& right = shards_[0].right;
  std::string s = Name();
  for (size_t i = 0; i < left.keys.size(); ++i)
    s += fmt::format("{} left.${} = right.${}", i ? " and" : " on", left.keys[i], right.keys[i]);
  if (left.gc.active()) s += fmt::format(" (discards rows below the waterline of key {})", left.gc.column());
  for (const Side* side : {&left, &right})
    if (side->filter)
      s += fmt::format(" ({} rows where {})", side == &left ? "left" : "right", side->filter->ToString());
  std::string pruned;
  for (const Side* side : {&left, &right})
    for (size_t c = 0; c < side->needed.size(); ++c)
      if (!side->needed[c])
        pruned += fmt::format("{}{}.${}", pruned.empty() ? "" : " ", side == &left ? "left" : "right", c);
  if (!pruned.empty()) s += " (unread: " + pruned + ")";
  for (const Side* side : {&left, &right})
    if (side->source) s += fmt::format(" ({} side: the aggregate's groups)", side == &left ? "left" : "right");
  if (shards_.size() > 1) s += fmt::format(" ({} shards)", shards_.size());
  return s;
}

namespace {

// Key of row r (in the row encoding, or with `compact` in the compact one: what CompactRow
// would make of it), or false when a key column is NULL.
bool KeyOf(const Batch& b, size_t r, const std::vector<int>& keys, std::string* key, bool compact = false) {
  key->clear();
  for (int c : keys) {
    if (b.cols[c]->IsNull(r)) return false;
    if (compact)
      EncodeCompactValue(key, *b.cols[c], r);
    else
      EncodeValue(key, *b.cols[c], r);
  }
  return true;
}

void AppendNulls(BatchBuilder* out, size_t first, size_t n) {
  for (size_t c = first; c < first + n; ++c) out->col(c).AppendNull();
}

// One row of a kPacked or kSlack record (JoinOp's records, join.h).
struct PackedEntry {
  std::string_view row;
  int64_t w;
  const char* weight;  // the weight's bytes; nullptr when it is 1 and not stored
  const char* next;    // the next row
};

PackedEntry ReadEntry(const char* p) {
  PackedEntry e;
  const uint64_t head = GetVarint(&p);
  e.row = std::string_view(p, head >> 1);
  p += head >> 1;
  e.w = 1;
  e.weight = nullptr;
  if (head & 1) {
    std::memcpy(&e.w, p, 8);
    e.weight = p;
    p += 8;
  }
  e.next = p;
  return e;
}

}  // namespace

void JoinOp::SetNeededColumns(const std::vector<bool>& needed) {
  for (Shard& sh : shards_) {
    size_t nl = sh.left.types.size();
    sh.left.needed.assign(needed.begin(), needed.begin() + nl);
    sh.right.needed.assign(needed.begin() + nl, needed.end());
    for (Side* side : {&sh.left, &sh.right}) {
      for (int k : side->keys) side->needed[k] = true;
      if (std::all_of(side->needed.begin(), side->needed.end(), [](bool b) { return b; })) side->needed.clear();
    }
  }
}

void JoinOp::SetSideFilter(bool left, BoundExprPtr pred) {
  // Applied in Step before the exchange: kept in shard 0's configuration only.
  (left ? shards_[0].left : shards_[0].right).filter = std::move(pred);
}

bool JoinOp::ReadSideFrom(bool left, AggregateOp* agg) {
  Side& side = left ? shards_[0].left : shards_[0].right;
  if (pad_left_ || pad_right_ || side.filter || side.gc.active() || agg->has_waterline() ||
      agg->num_shards() != shards_.size() || agg->num_keys() != static_cast<int>(side.keys.size()) || side.keys.empty())
    return false;
  for (size_t k = 0; k < side.keys.size(); ++k)
    if (side.keys[k] != static_cast<int>(k)) return false;
  for (Shard& sh : shards_) (left ? sh.left : sh.right).source = agg;
  return true;
}

size_t JoinOp::OldRows(const Side& side, uint32_t shard, const Batch& d, const std::string& key, uint32_t hash,
                       ChangeIndex* index, KeyRows* out) {
  if (!index->built) {
    index->built = true;
    index->keys.resize(d.size());
    for (uint32_t r = 0; r < d.size(); ++r)
      if (KeyOf(d, r, side.keys, &index->keys[r])) index->rows.push_back(r);
    auto by_key = [&](uint32_t a, uint32_t b) { return index->keys[a] < index->keys[b]; };
    if (!std::is_sorted(index->rows.begin(), index->rows.end(), by_key))
      std::stable_sort(index->rows.begin(), index->rows.end(), by_key);
  }
  // The entries keep their strings' buffers from call to call: n of them are in use.
  size_t n = 0;
  auto next = [&]() -> std::pair<std::string, int64_t>& {
    if (n == out->size()) out->emplace_back();
    auto& e = (*out)[n++];
    e.first.clear();
    return e;
  };
  const auto& rows = index->rows;
  auto below = [&](uint32_t r, const std::string& k) { return index->keys[r] < k; };
  // From the last lookup's place when the key is not before it (at once when no change of the
  // side lies between the two keys).
  auto first = rows.begin();
  const auto at = rows.begin() + static_cast<ptrdiff_t>(index->at);
  if (index->at == 0 || below(*(at - 1), key))
    first = at == rows.end() || !below(*at, key) ? at : std::lower_bound(at, rows.end(), key, below);
  else
    first = std::lower_bound(rows.begin(), at, key, below);
  index->at = static_cast<size_t>(first - rows.begin());
  for (auto it = first; it != rows.end() && index->keys[*it] == key; ++it) {
    auto& e = next();
    EncodeRow(&e.first, d, *it);  // every column, as GroupRow gives them
    e.second = -d.weights[*it];
  }
  {
    auto& e = next();
    if (side.source->GroupRow(shard, key, hash, &e.first))
      e.second = 1;
    else
      --n;
  }
  if (n >= 2) {
    std::sort(out->begin(), out->begin() + static_cast<ptrdiff_t>(n),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    size_t m = 0;
    for (size_t i = 0; i < n; ++i) {
      if (m > 0 && (*out)[m - 1].first == (*out)[i].first)
        (*out)[m - 1].second += (*out)[i].second;
      else if (m++ != i)
        std::swap((*out)[m - 1], (*out)[i]);
      if ((*out)[m - 1].second == 0) --m;
    }
    n = m;
  }
  return n;
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
  for (size_t c = 0; c < b.cols.size(); ++c) {
    if ((side.needed.empty() || side.needed[c]) && side.key_at[c] < 0)
      EncodeCompactValue(out, *b.cols[c], r);
    else
      out->push_back(0);  // NULL's encoding
  }
}

std::string JoinOp::TraceRow(const Side& side, std::string_view row) {
  if (!RowEncodingValid(row)) Fail(ErrorKind::kCorruption, "a join's stored row is malformed");
  std::string compact = CompactRow(row);
  if (!side.int_keys) return compact;
  std::string out;
  out.reserve(compact.size());
  size_t pos = 0;
  for (size_t c = 0; pos < compact.size(); ++c) {
    const size_t at = pos;
    DecodeValue(compact, &pos);
    if (c < side.key_at.size() && side.key_at[c] >= 0)
      out.push_back(0);
    else
      out.append(compact, at, pos - at);
  }
  return out;
}

void JoinOp::KeyInts(const Side& side, std::string_view key, std::vector<int64_t>* vals) {
  vals->resize(side.keys.size());
  size_t pos = 0;
  for (size_t k = 0; k < side.keys.size() && pos < key.size(); ++k) {
    const Value v = DecodeValue(key, &pos);
    if (v.kind == Value::Kind::kInt) (*vals)[k] = v.i;
  }
}

void JoinOp::DecodeTraceRow(const Side& side, const std::vector<int64_t>& key_vals, std::string_view row,
                            BatchBuilder* out, size_t first) {
  if (!side.int_keys) return DecodeRowInto(row, out, first);
  size_t pos = 0;
  for (size_t c = 0; pos < row.size(); ++c) {
    Column& col = out->col(first + c);
    if (side.key_at[c] < 0) {
      DecodeValueInto(row, &pos, &col);
      continue;
    }
    ++pos;  // the NULL standing for the key's value
    col.i64.push_back(key_vals[static_cast<size_t>(side.key_at[c])]);
    if (!col.nulls.empty()) col.nulls.push_back(0);
  }
}

template <typename F>
void JoinOp::ForEachRow(const Side& side, uint32_t s, F f) {
  std::string_view rec = side.trace.Value(s);
  if (rec[0] == kBig) {
    uint32_t idx;
    std::memcpy(&idx, rec.data() + 1, 4);
    for (const auto& [row, w] : side.big[idx]) f(std::string_view(row), w);
    return;
  }
  if (rec[0] == kOne) {
    f(rec.substr(1), int64_t{1});
    return;
  }
  const std::string_view rows = PackedRows(rec);
  const char* p = rows.data();
  const char* end = p + rows.size();
  while (p < end) {
    const PackedEntry e = ReadEntry(p);
    f(e.row, e.w);
    p = e.next;
  }
}

template <typename F>
void JoinOp::ForEachKeyRow(const Side& side, uint32_t slot, std::string_view key, RowViews* buf, F f) {
  if (side.spine.empty()) {
    if (slot != ArenaMap::kNone) ForEachRow(side, slot, f);
    return;
  }
  buf->clear();
  if (slot != ArenaMap::kNone)
    ForEachRow(side, slot, [&](std::string_view row, int64_t w) { buf->emplace_back(row, w); });
  side.spine.ForKey(key, [&](std::string_view row, int64_t w) { buf->emplace_back(row, w); });
  if (buf->empty()) return;
  // (Equal rows are summed, so their order among themselves does not matter.)
  std::sort(buf->begin(), buf->end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < buf->size();) {
    int64_t w = (*buf)[i].second;
    size_t j = i + 1;
    for (; j < buf->size() && (*buf)[j].first == (*buf)[i].first; ++j) w += (*buf)[j].second;
    if (w != 0) f((*buf)[i].first, w);
    i = j;
  }
}

bool JoinOp::Dense(size_t lookups, size_t rows) const {
  return rows > 0 && lookups * spine_lookup_cost_ >= rows;
}

void JoinOp::BeforeLookups(Side* side, size_t lookups, size_t rows) {
  if (side->spine.empty() || lookups == 0) return;
  side->spine_cost += lookups * side->spine.runs() * spine_lookup_cost_;
  if (side->spine_cost <= side->spine.rows()) return;
  if (Dense(lookups, rows))
    FoldSpine(side);
  else
    side->spine.Merge();
  side->spine_cost = 0;
}

void JoinOp::FoldSpine(Side* side) {
  side->spine.Seal();
  // In batches: the keys' hashes first, so that their slots and records are prefetched some rows
  // ahead of their inserts (each is a cache miss, as in a step's loop).
  struct Row {
    std::string_view key, row;
    int64_t w;
    uint32_t hash;
  };
  std::vector<Row> batch;
  std::string key;
  auto flush = [&] {
    BurstPrefetch ahead(batch.size(), 2, [&](size_t stage, size_t i) {
      stage == 0 ? side->trace.Prefetch(batch[i].hash) : side->trace.PrefetchRecord(batch[i].hash);
    });
    for (size_t i = 0; i < batch.size(); ++i) {
      ahead.Before(i);
      key.assign(batch[i].key);
      Add(side, key, batch[i].row, batch[i].w, batch[i].hash);
    }
    batch.clear();
  };
  // Run by run, each freed once added: the trace grows as the spine shrinks.
  side->spine.Drain(
      [&](std::string_view k, std::string_view row, int64_t w) {
        batch.push_back({k, row, w, ArenaMap::Hash(k)});
        if (batch.size() == 1024) flush();
      },
      flush);
  side->spine_cost = 0;
  EraseEmptied(side);  // keys whose rows cancelled: a saved state holds no empty key
}

void JoinOp::FoldSpines() {
  auto fold = [&](size_t s) {
    FoldSpine(&shards_[s].left);
    FoldSpine(&shards_[s].right);
  };
  if (shards_.size() > 1 && pool_) {
    pool_->ParallelFor(shards_.size(), fold);  // a shard's traces are its worker's alone, as in a step
    return;
  }
  for (size_t s = 0; s < shards_.size(); ++s) fold(s);
}

std::string_view JoinOp::PackedRows(std::string_view rec) {
  if (rec[0] != kSlack) return rec.substr(1);
  uint32_t used;
  std::memcpy(&used, rec.data() + 1, 4);
  return rec.substr(5, used);
}

void JoinOp::FreeBig(Side* side, uint32_t s) {
  std::string_view rec = side->trace.Value(s);
  if (rec[0] != kBig) return;
  uint32_t idx;
  std::memcpy(&idx, rec.data() + 1, 4);
  for (const auto& [row, w] : side->big[idx]) side->big_bytes -= RowBytes(row);
  Rows().swap(side->big[idx]);
  side->free_big.push_back(idx);
}

void JoinOp::EraseKey(Side* side, uint32_t s) {
  FreeBig(side, s);
  Forget(side, s);
  side->trace.Erase(s);
}

uint32_t JoinOp::AllocBig(Side* side) {
  if (side->free_big.empty()) {
    side->big.emplace_back();
    return static_cast<uint32_t>(side->big.size() - 1);
  }
  const uint32_t idx = side->free_big.back();
  side->free_big.pop_back();
  return idx;
}

uint32_t JoinOp::Locate(Side* side, const std::string& key, uint32_t hash) {
  uint32_t s = side->trace.Find(key, hash);
  if (s != ArenaMap::kNone || !side->stored.backed()) return s;
  return side->stored.Load(side->trace, StandardRow(key), key,
                           [&](const std::string& value) { LoadEntry(side, key, value); });
}

namespace {
// The header of a packed row: its length, shifted, and whether a weight follows.
inline uint64_t EntryHeader(size_t len, int64_t w) {
  return (static_cast<uint64_t>(len) << 1) | (w != 1 ? 1 : 0);
}

void AppendPacked(std::string* out, std::string_view row, int64_t w) {
  char head[10];
  out->append(head, PutVarint(head, EntryHeader(row.size(), w)));
  out->append(row);
  if (w != 1) out->append(reinterpret_cast<const char*>(&w), 8);
}

// A kPacked record (`rec`, tag included) holding one row of weight 1 -> that row; else false.
bool SingleRow(std::string_view rec, std::string_view* row) {
  if (rec.size() < 2) return false;
  const PackedEntry e = ReadEntry(rec.data() + 1);
  if (e.next != rec.data() + rec.size() || e.weight != nullptr) return false;
  *row = e.row;
  return true;
}
}  // namespace

void JoinOp::Add(Side* side, const std::string& key, std::string_view row, int64_t w, uint32_t hash, bool load) {
  if (w == 0) return;
  uint32_t s = load ? Locate(side, key, hash) : side->trace.Find(key, hash);
  if (s == ArenaMap::kNone) {
    std::string& rec = side->scratch;  // a new key (most rows of a join on a near-unique key): no allocation
    rec.assign(1, w == 1 ? kOne : kPacked);
    if (w == 1)
      rec.append(row);
    else
      AppendPacked(&rec, row, w);
    side->trace.Insert(key, rec);
    side->gc.Added(key);
    return;
  }
  std::string_view rec = side->trace.Value(s);
  std::string one;  // a kOne record as kPacked: the rows are changed in that form
  if (rec[0] == kOne) {
    one.assign(1, kPacked);
    AppendPacked(&one, rec.substr(1), 1);
    rec = one;
  }
  // Writes a changed kPacked record, in the kOne form when it holds one row of weight 1.
  auto assign = [&](const std::string& next) {
    std::string_view single;
    if (SingleRow(next, &single)) {
      std::string rec_one(1, kOne);
      rec_one.append(single);
      side->trace.Assign(s, rec_one);
      return;
    }
    side->trace.Assign(s, next);
  };
  if (rec[0] == kBig) {
    uint32_t idx;
    std::memcpy(&idx, rec.data() + 1, 4);
    Rows& rows = side->big[idx];
    auto it = rows.find(row);
    if (it == rows.end()) {
      it = rows.emplace(std::string(row), 0).first;
      side->big_bytes += RowBytes(row);
    }
    it->second += w;
    if (it->second == 0) {
      side->big_bytes -= RowBytes(row);
      rows.erase(it);
    }
    side->trace.MarkDirty(s);  // the record stays; its rows changed
    if (rows.empty()) side->emptied.push_back(key);
    return;
  }
  // Packed (or with slack): find the row (or where it goes) in row order. Offsets into the
  // record are kept, not pointers: they stay valid when it is written in place.
  const bool slack = rec[0] == kSlack;
  const std::string_view rows_now = PackedRows(rec);
  const char* begin = rows_now.data();  // the first row
  const char* p = begin;
  const char* end = begin + rows_now.size();
  const size_t head = static_cast<size_t>(begin - rec.data());  // tag (and length) bytes
  while (p < end) {
    const PackedEntry e = ReadEntry(p);
    const int cmp = e.row.compare(row);
    if (cmp == 0) {
      const int64_t sum = e.w + w;
      if (e.weight != nullptr && sum != 0 && sum != 1 && one.empty()) {
        // A weight stored before and after: it changes in place.
        std::memcpy(side->trace.MutableValue(s) + head + static_cast<size_t>(e.weight - begin), &sum, 8);
        return;
      }
      std::string next(1, kPacked);
      next.append(begin, p);
      if (sum != 0) AppendPacked(&next, row, sum);
      next.append(e.next, end);
      assign(next);
      if (next.size() == 1) side->emptied.push_back(key);
      return;
    }
    if (cmp > 0) break;
    p = e.next;
  }
  // Insert before p: in place when the slack has room.
  const size_t before = static_cast<size_t>(p - begin), after = static_cast<size_t>(end - p);
  char head_bytes[10];
  const size_t head_size = PutVarint(head_bytes, EntryHeader(row.size(), w));
  const size_t add = head_size + row.size() + (w != 1 ? 8 : 0);
  const size_t used = before + add + after;
  // (Only while the rows fit a packed record: the key moves to an ordered map when they outgrow
  // one whatever its slack, so that a key's form does not depend on when it was last loaded.)
  if (slack && head + used <= rec.size() && 1 + used <= big_key_bytes_) {
    char* m = side->trace.MutableValue(s);
    std::memmove(m + head + before + add, m + head + before, after);
    char* q = m + head + before;
    std::memcpy(q, head_bytes, head_size);
    std::memcpy(q + head_size, row.data(), row.size());
    if (w != 1) std::memcpy(q + head_size + row.size(), &w, 8);
    const uint32_t u = static_cast<uint32_t>(used);
    std::memcpy(m + 1, &u, 4);
    return;
  }
  std::string next(1, kPacked);
  next.append(begin, p);
  AppendPacked(&next, row, w);
  next.append(p, end);
  if (next.size() <= big_key_bytes_) {
    if (begin == end || ReadEntry(begin).next == end) {
      assign(next);  // one or two rows: exact
      return;
    }
    // A third row or more: written with slack.
    std::string grown(1, kSlack);
    const uint32_t u = static_cast<uint32_t>(used);
    grown.append(reinterpret_cast<const char*>(&u), 4);
    grown.append(next, 1);
    grown.resize(grown.size() + used / 2);
    side->trace.Assign(s, grown);
    return;
  }
  // Too many rows for one record: the key moves to an ordered map.
  const uint32_t idx = AllocBig(side);
  Rows& rows = side->big[idx];
  const char* q = next.data() + 1;
  const char* qend = next.data() + next.size();
  while (q < qend) {
    const PackedEntry e = ReadEntry(q);
    rows.emplace_hint(rows.end(), std::string(e.row), e.w);
    side->big_bytes += RowBytes(e.row);
    q = e.next;
  }
  std::string big(1, kBig);
  big.append(reinterpret_cast<const char*>(&idx), 4);
  side->trace.Assign(s, big);
}

void JoinOp::SetWaterline(int key, WaterlineRef w) {
  for (Shard& sh : shards_) {
    sh.left.gc = WaterlineIndex(key, w);
    sh.right.gc = WaterlineIndex(key, w);
  }
}

int64_t JoinOp::Count(Side* s, const std::string& key) {
  uint32_t slot = Locate(s, key, ArenaMap::Hash(key));
  if (slot == ArenaMap::kNone) return 0;
  int64_t n = 0;
  ForEachRow(*s, slot, [&](std::string_view, int64_t w) { n += w; });
  return n;
}

void JoinOp::EmitPadded(Side* side_ptr, bool side_is_left, const std::string& key, int64_t sign, BatchBuilder* out) {
  const Side& side = *side_ptr;
  uint32_t slot = Locate(side_ptr, key, ArenaMap::Hash(key));
  if (slot == ArenaMap::kNone) return;
  size_t nl = shards_[0].left.types.size(), nr = shards_[0].right.types.size();
  std::vector<int64_t> key_vals;
  KeyInts(side, key, &key_vals);
  ForEachRow(side, slot, [&](std::string_view row, int64_t w) {
    if (side_is_left) {
      DecodeTraceRow(side, key_vals, row, out, 0);
      AppendNulls(out, nl, nr);
    } else {
      AppendNulls(out, 0, nl);
      DecodeTraceRow(side, key_vals, row, out, nl);
    }
    out->AddWeight(sign * w);
  });
}

Batch JoinOp::Step(std::span<const Batch* const> inputs) {
  Batch kept[2];
  for (int i = 0; i < 2; ++i) {
    const Side& side = i == 0 ? shards_[0].left : shards_[0].right;
    if (side.filter && !inputs[i]->empty()) kept[i] = Gather(*inputs[i], SelectTrue(*side.filter, *inputs[i]));
  }
  const Batch& dl = shards_[0].left.filter && !inputs[0]->empty() ? kept[0] : *inputs[0];
  const Batch& dr = shards_[0].right.filter && !inputs[1]->empty() ? kept[1] : *inputs[1];
  std::vector<PhysType> types = shards_[0].left.types;
  types.insert(types.end(), shards_[0].right.types.begin(), shards_[0].right.types.end());
  const bool outer = pad_left_ || pad_right_;
  const uint32_t shards = static_cast<uint32_t>(shards_.size());
  if (shards == 1 || (dl.empty() && dr.empty())) {
    BatchBuilder out(types);
    for (Shard& sh : shards_) StepShard(sh, dl, dr, &out, nullptr);
    return outer ? Consolidate(out.Finish(), pool_) : out.Finish();
  }
  // Exchange: each shard joins the rows of its keys. Outer joins' outputs are consolidated
  // (sorted) anyway; an inner join's are put back in input-row order.
  auto lrows = PartitionRows(dl, shards_[0].left.keys, shards, true);
  auto rrows = PartitionRows(dr, shards_[0].right.keys, shards, true);
  std::vector<Batch> outs(shards);
  std::vector<std::vector<uint32_t>> counts(shards);
  pool_->ParallelFor(shards, [&](size_t s) {
    BatchBuilder b(types);
    const Batch l = lrows[s].size() == dl.size() ? dl : Gather(dl, lrows[s]);
    const Batch r = rrows[s].size() == dr.size() ? dr : Gather(dr, rrows[s]);
    std::vector<uint32_t> n;  // (this thread's: see AggregateOp::Step)
    StepShard(shards_[s], l, r, &b, outer ? nullptr : &n);
    outs[s] = b.Finish();
    counts[s] = std::move(n);
  });
  if (outer) return Consolidate(outs, pool_);
  // Which shard each input row went to, then its output rows from that shard, in row order.
  std::vector<uint32_t> lshard(dl.size()), rshard(dr.size());
  for (uint32_t s = 0; s < shards; ++s) {
    for (uint32_t r : lrows[s]) lshard[r] = s;
    for (uint32_t r : rrows[s]) rshard[r] = s;
  }
  std::vector<RowRef> order;
  size_t total = 0;
  for (const Batch& b : outs) total += b.size();
  order.reserve(total);
  std::vector<size_t> next_count(shards, 0);
  std::vector<uint32_t> next_row(shards, 0);
  for (const std::vector<uint32_t>* owner : {&lshard, &rshard})
    for (uint32_t s : *owner) {
      const uint32_t n = counts[s][next_count[s]++];
      for (uint32_t k = 0; k < n; ++k) order.push_back({s, next_row[s]++});
    }
  return GatherRows(outs, order, types, pool_);
}

void JoinOp::StepShard(Shard& sh, const Batch& dl, const Batch& dr, BatchBuilder* out_rows,
                       std::vector<uint32_t>* counts) {
  Side& left = sh.left;
  Side& right = sh.right;
  BatchBuilder& out = *out_rows;
  if (dl.empty() && dr.empty()) {
    CollectGarbage(sh);
    return;
  }
  const size_t nl = left.types.size(), nr = right.types.size();
  const bool outer = pad_left_ || pad_right_;

  // Keys touched by this step (in the traces' form), and the padded rows they had before it.
  std::set<std::string> touched;
  if (outer) {
    std::string key;
    for (size_t r = 0; r < dl.size(); ++r)
      if (KeyOf(dl, r, left.keys, &key, true)) touched.insert(key);
    for (size_t r = 0; r < dr.size(); ++r)
      if (KeyOf(dr, r, right.keys, &key, true)) touched.insert(key);
    for (const auto& k : touched) {
      if (pad_left_ && Count(&right, k) == 0) EmitPadded(&left, true, k, -1, &out);
      if (pad_right_ && Count(&left, k) == 0) EmitPadded(&right, false, k, -1, &out);
    }
  }

  // ΔL ⋈ R_old, then fold ΔL into L.
  std::string row;
  size_t emitted = out.size();
  auto count_row = [&] {
    if (counts == nullptr) return;
    counts->push_back(static_cast<uint32_t>(out.size() - emitted));
    emitted = out.size();
  };
  // Each row's lookups (the other trace's key, then its own) are cache misses, since rows come in
  // input order: keys and hashes are computed first, and the slots and records a row reads (for a
  // side reading an aggregate, its groups') are prefetched some rows ahead: the other side's, and
  // the row's own side's unless that side reads an aggregate (which holds its rows: nothing is
  // added there).
  const uint32_t shard = static_cast<uint32_t>(&sh - shards_.data());
  const Side* fetch[2] = {nullptr, nullptr};
  // Per row: the key (the row encoding: an aggregate's groups are found by it) and its hash when a
  // side reads an aggregate, and the key in the traces' form (compact, CompactRow) and its hash
  // when a side keeps a trace.
  const bool by_key = left.source || right.source, by_trace_key = !left.source || !right.source;
  std::vector<std::string> keys, tkeys;
  std::vector<uint32_t> hashes, thashes;
  std::vector<uint8_t> valid;
  auto slots = [&](size_t r) {
    for (const Side* side : fetch)
      if (side) side->source ? side->source->PrefetchGroup(shard, hashes[r], false) : side->trace.Prefetch(thashes[r]);
  };
  auto records = [&](size_t r) {
    for (const Side* side : fetch)
      if (side)
        side->source ? side->source->PrefetchGroup(shard, hashes[r], true) : side->trace.PrefetchRecord(thashes[r]);
  };
  // (Without a side reading an aggregate, the compact key is encoded from the columns alone.)
  auto key_rows = [&](const Batch& b, const std::vector<int>& cols) {
    const size_t n = b.size();
    valid.assign(n, 0);
    if (by_key) {
      keys.resize(n);
      hashes.resize(n);
    }
    if (by_trace_key) {
      tkeys.resize(n);
      thashes.resize(n);
    }
    for (size_t r = 0; r < n; ++r) {
      if (!KeyOf(b, r, cols, by_key ? &keys[r] : &tkeys[r], !by_key)) continue;
      valid[r] = 1;
      if (by_key) hashes[r] = ArenaMap::Hash(keys[r]);
      if (by_key && by_trace_key) {
        tkeys[r].clear();
        AppendCompactRow(keys[r], &tkeys[r]);
      }
      if (by_trace_key) thashes[r] = ArenaMap::Hash(tkeys[r]);
    }
  };
  // Stage 0 of row r: its slots; stage 1: its records (in bursts, BurstPrefetch).
  auto fetch_stage = [&](size_t stage, size_t r) {
    if (valid[r]) stage == 0 ? slots(r) : records(r);
  };
  // A side reading an aggregate (ReadSideFrom) has stepped already: its old rows are computed.
  ChangeIndex right_index;
  KeyRows old_rows;
  RowViews key_rows_buf;
  std::string group_row;
  std::vector<int64_t> key_vals;  // a trace row's integer key columns (KeyInts)
  // Rows go to a side's spine (nothing to prefetch there) or its trace.
  const bool left_spine = SpineSide(left) && !Dense(dr.size(), dl.size());
  const bool right_spine = SpineSide(right) && !Dense(dl.size(), dr.size());
  BeforeLookups(&right, dl.size(), dr.size());
  fetch[0] = &right;
  fetch[1] = left.source || left_spine ? nullptr : &left;
  key_rows(dl, left.keys);
  BurstPrefetch left_ahead(dl.size(), 2, fetch_stage);
  for (size_t r = 0; r < dl.size(); count_row(), ++r) {
    left_ahead.Before(r);
    // The row encoding where a side reads an aggregate (its lookups), else the compact one.
    const std::string& key = by_key ? keys[r] : tkeys[r];
    if (!valid[r]) {
      if (pad_left_) {
        AppendSide(left, dl, r, &out, 0);
        AppendNulls(&out, nl, nr);
        out.AddWeight(dl.weights[r]);
      }
      continue;
    }
    if (right.source) {
      const size_t n = OldRows(right, shard, dr, key, hashes[r], &right_index, &old_rows);
      for (size_t i = 0; i < n; ++i) {
        AppendSide(left, dl, r, &out, 0);
        DecodeRowInto(old_rows[i].first, &out, nl);
        out.AddWeight(dl.weights[r] * old_rows[i].second);
      }
    } else if (uint32_t slot = Locate(&right, tkeys[r], thashes[r]); slot != ArenaMap::kNone || !right.spine.empty()) {
      KeyInts(right, key, &key_vals);
      ForEachKeyRow(right, slot, tkeys[r], &key_rows_buf, [&](std::string_view rrow, int64_t w) {
        AppendSide(left, dl, r, &out, 0);
        DecodeTraceRow(right, key_vals, rrow, &out, nl);
        out.AddWeight(dl.weights[r] * w);
      });
    }
    if (left.source) continue;  // the aggregate holds the rows
    row.clear();
    EncodeSide(left, dl, r, &row);
    if (left_spine)
      left.spine.Add(tkeys[r], row, dl.weights[r]);
    else
      Add(&left, tkeys[r], row, dl.weights[r], thashes[r]);
  }
  left.spine.Seal();
  // L_new ⋈ ΔR, then fold ΔR into R.
  BeforeLookups(&left, dr.size(), dl.size());
  fetch[0] = &left;
  fetch[1] = right.source || right_spine ? nullptr : &right;
  key_rows(dr, right.keys);
  BurstPrefetch right_ahead(dr.size(), 2, fetch_stage);
  for (size_t r = 0; r < dr.size(); count_row(), ++r) {
    right_ahead.Before(r);
    // The row encoding where a side reads an aggregate (its lookups), else the compact one.
    const std::string& key = by_key ? keys[r] : tkeys[r];
    if (!valid[r]) {
      if (pad_right_) {
        AppendNulls(&out, 0, nl);
        AppendSide(right, dr, r, &out, nl);
        out.AddWeight(dr.weights[r]);
      }
      continue;
    }
    if (left.source) {
      if (left.source->GroupRow(shard, key, hashes[r], &group_row)) {
        DecodeRowInto(group_row, &out, 0);
        AppendSide(right, dr, r, &out, nl);
        out.AddWeight(dr.weights[r]);
      }
    } else if (uint32_t slot = Locate(&left, tkeys[r], thashes[r]); slot != ArenaMap::kNone || !left.spine.empty()) {
      KeyInts(left, key, &key_vals);
      ForEachKeyRow(left, slot, tkeys[r], &key_rows_buf, [&](std::string_view lrow, int64_t w) {
        DecodeTraceRow(left, key_vals, lrow, &out, 0);
        AppendSide(right, dr, r, &out, nl);
        out.AddWeight(w * dr.weights[r]);
      });
    }
    if (right.source) continue;  // the aggregate holds the rows
    row.clear();
    EncodeSide(right, dr, r, &row);
    if (right_spine)
      right.spine.Add(tkeys[r], row, dr.weights[r]);
    else
      Add(&right, tkeys[r], row, dr.weights[r], thashes[r]);
  }
  right.spine.Seal();

  if (outer) {
    for (const auto& k : touched) {
      if (pad_left_ && Count(&right, k) == 0) EmitPadded(&left, true, k, +1, &out);
      if (pad_right_ && Count(&left, k) == 0) EmitPadded(&right, false, k, +1, &out);
    }
  }
  EraseEmptied(&left);
  EraseEmptied(&right);
  CollectGarbage(sh);
}

void JoinOp::EraseEmptied(Side* side) {
  for (const std::string& key : side->emptied) {
    const uint32_t s = side->trace.Find(key);
    if (s == ArenaMap::kNone) continue;  // listed twice
    bool empty = true;
    ForEachRow(*side, s, [&](std::string_view, int64_t) { empty = false; });
    if (!empty) continue;  // rows came back later in the step
    side->gc.Removed(key);
    EraseKey(side, s);
  }
  side->emptied.clear();
}

void JoinOp::CollectGarbage(Shard& sh) {
  for (Side* side : {&sh.left, &sh.right})
    for (const auto& k : side->gc.TakeBelow()) {
      uint32_t s = side->trace.Find(k);
      if (s != ArenaMap::kNone) EraseKey(side, s);
    }
}

// Saved as key count, then per key in key order (whatever the shards): key, row count, (row,
// weight) in row order.
void JoinOp::SaveTrace(StateWriter& w, bool left) const {
  std::vector<std::tuple<std::string, const Side*, uint32_t>> keys;
  for (const Shard& sh : shards_) {
    const Side& side = left ? sh.left : sh.right;
    side.trace.ForEachSlot([&](uint32_t s) { keys.emplace_back(StandardRow(side.trace.Key(s)), &side, s); });
  }
  std::sort(keys.begin(), keys.end());
  w.U64(keys.size());
  for (const auto& [key, side, s] : keys) {
    w.Str(key);
    WriteKeyRows(w, *side, s);
  }
}

void JoinOp::WriteKeyRows(StateWriter& w, const Side& side, uint32_t s) {
  uint64_t n = 0;
  ForEachRow(side, s, [&](std::string_view, int64_t) { ++n; });
  w.U64(n);
  ForEachRow(side, s, [&](std::string_view row, int64_t wt) {
    w.Str(row);
    w.I64(wt);
  });
}

void JoinOp::ClearSide(Side* side) {
  side->stored.Reset();
  side->trace.Clear();
  side->big.clear();
  side->free_big.clear();
  side->big_bytes = 0;
  side->gc.Clear();
  side->emptied.clear();
  side->spine.Clear();
  side->spine_cost = 0;
}

void JoinOp::ReadKeyRows(StateReader& r, Side* side, const std::string& key) {
  uint64_t nr = r.U64();
  const uint32_t hash = ArenaMap::Hash(key);
  for (uint64_t j = 0; j < nr; ++j) {
    const std::string row = TraceRow(*side, r.Str());  // saved in an older form: converted
    Add(side, key, row, r.I64(), hash, false);
  }
}

void JoinOp::LoadTrace(StateReader& r, bool left) {
  for (Shard& sh : shards_) ClearSide(left ? &sh.left : &sh.right);
  uint64_t nk = r.U64();
  for (uint64_t i = 0; i < nk; ++i) {
    std::string key = r.Str();
    Shard& sh = ShardOf(key);
    ReadKeyRows(r, left ? &sh.left : &sh.right, CompactRow(key));
  }
}

void JoinOp::SaveState(StateWriter& w) const {
  // The spines' rows are saved as trace rows: folding them changes where the rows are held, not
  // the state.
  const_cast<JoinOp*>(this)->FoldSpines();
  for (const Shard& sh : shards_)
    if (sh.left.stored.backed() || sh.right.stored.backed())
      Fail(ErrorKind::kRuntime, "join: the whole state of a store-backed join is in the store");
  SaveTrace(w, true);
  SaveTrace(w, false);
}

void JoinOp::RestoreState(StateReader& r) {
  LoadTrace(r, true);
  LoadTrace(r, false);
  // Every key stays changed: the next SaveChanges writes them all.
}

// Keyed state: 'L' or 'R' followed by the join key -> WriteKeyRows's bytes; no header.
void JoinOp::TrackChanges() {
  for (Shard& sh : shards_) {
    sh.left.trace.TrackErasures(true);
    sh.right.trace.TrackErasures(true);
    sh.left.stored.Track();
    sh.right.stored.Track();
  }
}

void JoinOp::SaveChanges(StateWriter&, StateDelta& d) {
  FoldSpines();  // their rows become changed keys of the traces
  std::string key, buf;
  // A key lives in one shard, so its erase still comes before a later put of it.
  for (Shard& sh : shards_)
    for (Side* side : {&sh.left, &sh.right}) {
      const char tag = side == &sh.left ? 'L' : 'R';
      side->trace.ForEachErased([&](std::string_view k) {
        key.assign(1, tag).append(StandardRow(k));
        d.Erase(key);
      });
      side->stored.Saved();
      side->trace.ForEachDirty([&](uint32_t s) {
        key.assign(1, tag).append(StandardRow(side->trace.Key(s)));
        std::string_view rec = side->trace.Value(s);
        if (rec[0] == kSlack) {  // stored without its slack, as kPacked
          buf.assign(1, kPacked);
          buf.append(PackedRows(rec));
          d.Put(key, buf);
          return;
        }
        if (rec[0] != kBig) {
          d.Put(key, rec);  // the record as it is: kOne or kPacked, then the row(s)
          return;
        }
        // A key's stored form depends on its rows alone, not on their history (which rows were
        // added one by one, which came folded from a spine with their retractions cancelled):
        // rows that fit a packed record are stored as one, whatever their form in memory.
        buf.assign(1, kPacked);
        ForEachRow(*side, s, [&](std::string_view row, int64_t w) {
          if (buf.size() <= big_key_bytes_) AppendPacked(&buf, row, w);
        });
        if (buf.size() <= big_key_bytes_) {
          std::string_view single;
          if (SingleRow(buf, &single)) {
            std::string one(1, kOne);
            d.Put(key, one.append(single));
            return;
          }
          d.Put(key, buf);
          return;
        }
        buf.assign(1, kBigRows);
        StateWriter w(&buf);
        WriteKeyRows(w, *side, s);
        d.Put(key, buf);
      });
      side->trace.ClearChanges();
    }
}

void JoinOp::BeginRestore(StateReader&) {
  for (Shard& sh : shards_) {
    ClearSide(&sh.left);
    ClearSide(&sh.right);
  }
}

void JoinOp::BackState(StateSource* source, uint32_t node, bool all_stored) {
  for (Shard& sh : shards_)
    for (Side* side : {&sh.left, &sh.right}) side->stored.Attach(source, node, all_stored);
}

void JoinOp::StateCommitted(bool evict) {
  for (Shard& sh : shards_)
    for (Side* side : {&sh.left, &sh.right}) {
      if (!side->stored.Committed() || !evict) continue;
      const size_t n = side->trace.EvictClean([&](uint32_t s) { FreeBig(side, s); });
      side->stored.Evicted(n);
      if (side->free_big.size() == side->big.size()) {
        std::vector<Rows>().swap(side->big);
        std::vector<uint32_t>().swap(side->free_big);
      }
    }
}

size_t JoinOp::StateMemoryBytes() const {
  size_t n = 0;
  for (const Shard& sh : shards_)
    for (const Side* side : {&sh.left, &sh.right}) {
      n +=
          side->trace.MemoryBytes() + side->big.capacity() * sizeof(Rows) + side->big_bytes + side->spine.MemoryBytes();
    }
  return n;
}

// An entry is a packed record (inserted as it is, after checking its framing) or kBig followed
// by WriteKeyRows's bytes.
void JoinOp::RestoreEntry(std::string_view key, std::string_view value) {
  if (key.empty() || (key[0] != 'L' && key[0] != 'R') || value.empty())
    Fail(ErrorKind::kCorruption, "a join's stored entry is malformed");
  const std::string_view k = key.substr(1);
  if (!RowEncodingValid(k)) Fail(ErrorKind::kCorruption, "a join's stored key is malformed");
  Shard& sh = ShardOf(k);
  Side* side = key[0] == 'L' ? &sh.left : &sh.right;
  // A side reading an aggregate keeps nothing (a store written before it did may hold its rows).
  if (side->source) return;
  LoadEntry(side, CompactRow(k), value);
}

void JoinOp::LoadEntry(Side* side, const std::string& k, std::string_view value) {
  if (value.empty()) Fail(ErrorKind::kCorruption, "a join's stored entry is malformed");
  const char tag = value[0];
  const char* p = value.data() + 1;
  const char* end = value.data() + value.size();
  // Checks the framing of a packed record's rows (each row's own encoding is checked only where
  // it is converted: the store's content hash guards the rest).
  auto check_rows = [&](bool wide) {
    if (p == end) Fail(ErrorKind::kCorruption, "a join's stored entry is malformed");
    for (const char* q = p; q < end;) {
      uint64_t head = 0;
      if (!GetVarintChecked(&q, end, &head)) Fail(ErrorKind::kCorruption, "a join's stored entry is cut short");
      const uint64_t len = wide ? head : head >> 1, weight = wide || (head & 1) ? 8 : 0;
      if (len > static_cast<uint64_t>(end - q) || static_cast<uint64_t>(end - q) - len < weight)
        Fail(ErrorKind::kCorruption, "a join's stored entry is cut short");
      q += len + weight;
    }
  };
  // Entries come from the store's unique keys, so a key cannot repeat (the store's content
  // hash guards against damage): no lookup before the insert.
  if (tag == kOne) {
    side->trace.Insert(k, value);
    side->gc.Added(k);
    return;
  }
  if (tag == kPacked) {
    check_rows(false);
    std::string_view single;
    if (SingleRow(value, &single)) {  // a damaged store's or another writer's: kept in the one-row form
      std::string one(1, kOne);
      one.append(single);
      side->trace.Insert(k, one);
    } else {
      side->trace.Insert(k, value);
    }
    side->gc.Added(k);
    return;
  }
  const uint32_t hash = ArenaMap::Hash(k);
  if (tag == kOneFull || tag == kOneOld) return Add(side, k, TraceRow(*side, value.substr(1)), 1, hash, false);
  if (tag == kPackedWide || tag == kPackedOld) {
    // Each row converted and added (their order may change).
    check_rows(true);
    while (p < end) {
      const size_t len = GetVarint(&p);
      int64_t w;
      std::memcpy(&w, p + len, 8);
      Add(side, k, TraceRow(*side, std::string_view(p, len)), w, hash, false);
      p += len + 8;
    }
    return;
  }
  if (tag != kBig && tag != kBigRows) Fail(ErrorKind::kCorruption, "a join's stored entry is malformed");
  // A key stored with its rows in an ordered map gets one again (not a packed record, even when
  // its rows would fit one now), so that it is saved again in the same form.
  StateReader r(value.substr(1));
  Rows rows;
  for (uint64_t j = 0, n = r.U64(); j < n; ++j) {
    std::string row = TraceRow(*side, r.Str());
    const int64_t w = r.I64();
    side->big_bytes += RowBytes(row);
    rows.emplace(std::move(row), w);
  }
  if (!r.AtEnd()) Fail(ErrorKind::kCorruption, "a join's stored entry has {} bytes too many", value.size());
  if (rows.empty()) Fail(ErrorKind::kCorruption, "a join's stored entry is malformed");
  const uint32_t idx = AllocBig(side);
  side->big[idx] = std::move(rows);
  std::string rec(1, kBig);
  rec.append(reinterpret_cast<const char*>(&idx), 4);
  side->trace.Insert(k, rec);
  side->gc.Added(k);
}

void JoinOp::EndRestore() {
  for (Shard& sh : shards_) {
    sh.left.trace.ClearChanges();
    sh.right.trace.ClearChanges();
  }
}

}  // namespace fld
