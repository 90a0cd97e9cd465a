#include "core/zset/batch.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstring>
#include <map>
#include <unordered_map>
#include <utility>

#include "core/common/byte_order.h"
#include "core/common/prefetch.h"
#include "core/common/serialize.h"
#include "core/common/thread_pool.h"

namespace fld {

Value Column::Get(size_t r) const {
  if (IsNull(r)) return Value::Null();
  switch (phys) {
    case PhysType::kI64:
      return Value::Int(i64[r]);
    case PhysType::kF64:
      return Value::Double(f64[r]);
    case PhysType::kStr:
      return Value::String(str[r]);
  }
  return Value::Null();
}

void Column::Reserve(size_t n) {
  switch (phys) {
    case PhysType::kI64:
      i64.reserve(n);
      break;
    case PhysType::kF64:
      f64.reserve(n);
      break;
    case PhysType::kStr:
      str.reserve(n);
      break;
  }
}

void Column::SetNull(size_t r) {
  if (nulls.empty()) nulls.assign(size(), 0);
  nulls[r] = 1;
}

void Column::CompactNulls() {
  if (!nulls.empty() && std::find(nulls.begin(), nulls.end(), 1) == nulls.end()) nulls.clear();
}

void Column::AppendNull() {
  size_t n = size();
  switch (phys) {
    case PhysType::kI64:
      i64.push_back(0);
      break;
    case PhysType::kF64:
      f64.push_back(0);
      break;
    case PhysType::kStr:
      str.emplace_back();
      break;
  }
  if (nulls.empty()) nulls.assign(n, 0);
  nulls.push_back(1);
}

void Column::Append(const Value& v) {
  if (v.IsNull()) {
    AppendNull();
    return;
  }
  switch (phys) {
    case PhysType::kI64:
      i64.push_back(v.kind == Value::Kind::kDouble ? static_cast<int64_t>(v.d) : v.i);
      break;
    case PhysType::kF64:
      f64.push_back(v.kind == Value::Kind::kInt ? static_cast<double>(v.i) : v.d);
      break;
    case PhysType::kStr:
      str.push_back(v.s);
      break;
  }
  if (!nulls.empty()) nulls.push_back(0);
}

void Column::AppendFrom(const Column& src, size_t r) {
  if (src.IsNull(r)) {
    AppendNull();
    return;
  }
  switch (phys) {
    case PhysType::kI64:
      i64.push_back(src.i64[r]);
      break;
    case PhysType::kF64:
      f64.push_back(src.f64[r]);
      break;
    case PhysType::kStr:
      str.push_back(src.str[r]);
      break;
  }
  if (!nulls.empty()) nulls.push_back(0);
}

Batch EmptyBatch(std::span<const PhysType> types) {
  Batch b;
  for (PhysType t : types) b.cols.push_back(std::make_shared<Column>(t));
  return b;
}

BatchBuilder::BatchBuilder(std::span<const PhysType> types) {
  for (PhysType t : types) cols_.push_back(std::make_shared<Column>(t));
}

void BatchBuilder::AppendRow(std::span<const Value> row, int64_t w) {
  assert(row.size() == cols_.size());
  for (size_t c = 0; c < cols_.size(); ++c) cols_[c]->Append(row[c]);
  weights_.push_back(w);
}

void BatchBuilder::AppendFrom(const Batch& src, size_t r, int64_t w) {
  for (size_t c = 0; c < cols_.size(); ++c) cols_[c]->AppendFrom(*src.cols[c], r);
  weights_.push_back(w);
}

Batch BatchBuilder::Finish() {
  Batch b;
  for (auto& c : cols_) {
    c->CompactNulls();
    b.cols.push_back(std::move(c));
  }
  b.weights = std::move(weights_);
  cols_.clear();
  return b;
}

// ---- Row encoding ----
// tag 0: NULL; tag 1: int64 little-endian (8 bytes); tag 2: double bits (8 bytes);
// tag 3: u32 length then bytes.
namespace {
inline void Put64(std::string* out, uint64_t v) {
  char buf[8];
  std::memcpy(buf, &v, 8);
  out->append(buf, 8);
}
inline uint64_t Get64(std::string_view in, size_t pos) {
  uint64_t v;
  std::memcpy(&v, in.data() + pos, 8);
  return v;
}
}  // namespace

void EncodeValue(std::string* out, const Column& c, size_t r) {
  if (c.IsNull(r)) {
    out->push_back(0);
    return;
  }
  switch (c.phys) {
    case PhysType::kI64:
      out->push_back(1);
      Put64(out, static_cast<uint64_t>(c.i64[r]));
      break;
    case PhysType::kF64: {
      out->push_back(2);
      double d = c.f64[r] == 0.0 ? 0.0 : c.f64[r];  // -0.0 and 0.0 are the same value
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      Put64(out, bits);
      break;
    }
    case PhysType::kStr: {
      out->push_back(3);
      uint32_t n = static_cast<uint32_t>(c.str[r].size());
      out->append(reinterpret_cast<const char*>(&n), 4);
      out->append(c.str[r]);
      break;
    }
  }
}

void EncodeValue(std::string* out, const Value& v) {
  switch (v.kind) {
    case Value::Kind::kNull:
      out->push_back(0);
      break;
    case Value::Kind::kInt:
      out->push_back(1);
      Put64(out, static_cast<uint64_t>(v.i));
      break;
    case Value::Kind::kDouble: {
      out->push_back(2);
      double d = v.d == 0.0 ? 0.0 : v.d;
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      Put64(out, bits);
      break;
    }
    case Value::Kind::kString: {
      out->push_back(3);
      uint32_t n = static_cast<uint32_t>(v.s.size());
      out->append(reinterpret_cast<const char*>(&n), 4);
      out->append(v.s);
      break;
    }
  }
}

void EncodeRow(std::string* out, const Batch& b, size_t r, std::span<const int> cols) {
  for (int c : cols) EncodeValue(out, *b.cols[c], r);
}

// Out of line: GCC 12 drops a loop of prefetches once it is inlined into the caller's loop.
void PrefetchRow(const Batch& b, size_t r) {
  for (const ColumnPtr& c : b.cols) {
    const void* at = c->phys == PhysType::kI64   ? static_cast<const void*>(c->i64.data() + r)
                     : c->phys == PhysType::kF64 ? static_cast<const void*>(c->f64.data() + r)
                                                 : static_cast<const void*>(c->str.data() + r);
    fld::Prefetch(at);
    if (!c->nulls.empty()) fld::Prefetch(c->nulls.data() + r);
  }
}

void EncodeRow(std::string* out, const Batch& b, size_t r) {
  for (const auto& c : b.cols) EncodeValue(out, *c, r);
}

namespace {
constexpr uint8_t kCompactInt = 0x10;  // + the number of bytes that follow (0..8)
constexpr bool IsCompactInt(uint8_t tag) {
  return tag >= kCompactInt && tag <= kCompactInt + 8;
}

void PutCompactInt(std::string* out, int64_t v) {
  const uint64_t z = ZigZag(v);
  const int n = z == 0 ? 0 : (64 - __builtin_clzll(z) + 7) / 8;
  char buf[9];
  buf[0] = static_cast<char>(kCompactInt + n);
  for (int i = 0; i < n; ++i) buf[1 + i] = static_cast<char>((z >> (8 * i)) & 0xFF);
  out->append(buf, 1 + static_cast<size_t>(n));
}

// The integer of a compact value whose tag is at in[pos] (a tag 0x10..0x18), advancing pos.
int64_t GetCompactInt(std::string_view in, size_t* pos) {
  const int n = static_cast<uint8_t>(in[*pos]) - kCompactInt;
  uint64_t z = 0;
  for (int i = 0; i < n; ++i) z |= static_cast<uint64_t>(static_cast<uint8_t>(in[*pos + 1 + i])) << (8 * i);
  *pos += 1 + static_cast<size_t>(n);
  return UnZigZag(z);
}
}  // namespace

void EncodeCompactValue(std::string* out, const Column& c, size_t r) {
  if (c.phys == PhysType::kI64 && !c.IsNull(r))
    PutCompactInt(out, c.i64[r]);
  else
    EncodeValue(out, c, r);
}

std::string CompactRow(std::string_view row) {
  std::string out;
  out.reserve(row.size());
  AppendCompactRow(row, &out);
  return out;
}

void AppendCompactRow(std::string_view row, std::string* out) {
  size_t pos = 0;
  while (pos < row.size()) {
    const size_t at = pos;
    const Value v = DecodeValue(row, &pos);
    if (v.kind == Value::Kind::kInt)
      PutCompactInt(out, v.i);
    else
      out->append(row.substr(at, pos - at));
  }
}

std::string StandardRow(std::string_view row) {
  std::string out;
  out.reserve(row.size() + 8);
  size_t pos = 0;
  while (pos < row.size()) {
    const size_t at = pos;
    if (IsCompactInt(static_cast<uint8_t>(row[pos]))) {
      EncodeValue(&out, DecodeValue(row, &pos));
    } else {
      DecodeValue(row, &pos);
      out.append(row.substr(at, pos - at));
    }
  }
  return out;
}

Value DecodeValue(std::string_view in, size_t* pos) {
  uint8_t tag = static_cast<uint8_t>(in[*pos]);
  if (IsCompactInt(tag)) return Value::Int(GetCompactInt(in, pos));
  *pos += 1;
  switch (tag) {
    case 1: {
      int64_t v = static_cast<int64_t>(Get64(in, *pos));
      *pos += 8;
      return Value::Int(v);
    }
    case 2: {
      uint64_t bits = Get64(in, *pos);
      *pos += 8;
      double d;
      std::memcpy(&d, &bits, 8);
      return Value::Double(d);
    }
    case 3: {
      uint32_t n;
      std::memcpy(&n, in.data() + *pos, 4);
      *pos += 4;
      Value v = Value::String(std::string(in.substr(*pos, n)));
      *pos += n;
      return v;
    }
    default:
      return Value::Null();
  }
}

bool NextEncodedValue(std::string_view in, size_t* pos, EncodedValue* v) {
  const size_t at = *pos;
  if (at >= in.size()) return false;
  const uint8_t tag = static_cast<uint8_t>(in[at]);
  const size_t left = in.size() - at - 1;  // bytes after the tag
  if (IsCompactInt(tag)) {
    if (left < static_cast<size_t>(tag - kCompactInt)) return false;
    v->kind = EncodedValue::Kind::kInt;
    v->bits = static_cast<uint64_t>(GetCompactInt(in, pos));
    return true;
  }
  if (tag == 0) {
    v->kind = EncodedValue::Kind::kNull;
    *pos = at + 1;
  } else if (tag == 1 || tag == 2) {
    if (left < 8) return false;
    v->kind = tag == 1 ? EncodedValue::Kind::kInt : EncodedValue::Kind::kDouble;
    v->bits = Get64(in, at + 1);
    *pos = at + 9;
  } else if (tag == 3) {
    uint32_t n;
    if (left < 4) return false;
    std::memcpy(&n, in.data() + at + 1, 4);
    if (left - 4 < n) return false;
    v->kind = EncodedValue::Kind::kString;
    v->bytes = in.substr(at + 5, n);
    *pos = at + 5 + n;
  } else {
    return false;
  }
  return true;
}

bool RowEncodingValid(std::string_view in) {
  size_t pos = 0;
  EncodedValue v;
  while (pos < in.size())
    if (!NextEncodedValue(in, &pos, &v)) return false;
  return true;
}

bool RowEncodingFits(std::string_view in, std::span<const PhysType> types) {
  size_t pos = 0, c = 0;
  EncodedValue v;
  for (; pos < in.size(); ++c) {
    if (c == types.size() || !NextEncodedValue(in, &pos, &v)) return false;
    if (v.kind == EncodedValue::Kind::kInt && types[c] != PhysType::kI64) return false;
    if (v.kind == EncodedValue::Kind::kDouble && types[c] != PhysType::kF64) return false;
    if (v.kind == EncodedValue::Kind::kString && types[c] != PhysType::kStr) return false;
  }
  return c == types.size();
}

std::vector<Value> DecodeRow(std::string_view in) {
  std::vector<Value> row;
  DecodeRowInto(in, &row);
  return row;
}

void DecodeRowInto(std::string_view in, std::vector<Value>* row) {
  size_t pos = 0;
  while (pos < in.size()) row->push_back(DecodeValue(in, &pos));
}

void DecodeValueInto(std::string_view in, size_t* pos, Column* col) {
  const uint8_t tag = static_cast<uint8_t>(in[*pos]);
  if (tag == 1 && col->phys == PhysType::kI64) {
    col->i64.push_back(static_cast<int64_t>(Get64(in, *pos + 1)));
    if (!col->nulls.empty()) col->nulls.push_back(0);
    *pos += 9;
  } else if (IsCompactInt(tag) && col->phys == PhysType::kI64) {
    col->i64.push_back(GetCompactInt(in, pos));
    if (!col->nulls.empty()) col->nulls.push_back(0);
  } else {
    col->Append(DecodeValue(in, pos));
  }
}

void DecodeRowInto(std::string_view in, BatchBuilder* b, size_t first_col) {
  size_t pos = 0, c = first_col;
  while (pos < in.size()) DecodeValueInto(in, &pos, &b->col(c++));
}

namespace {

inline uint64_t F64Bits(double d) {
  if (d == 0.0) d = 0.0;  // as EncodeValue: -0.0 and 0.0 are the same value
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return bits;
}

// memcmp's order of the encodings (EncodeValue) of a[x] and b[y], two values of one column type:
// the tag (0 = NULL first), then the bytes, which for a string start with its length.
int CompareEncoded(const Column& a, size_t x, const Column& b, size_t y) {
  const bool an = a.IsNull(x), bn = b.IsNull(y);
  if (an || bn) return an == bn ? 0 : (an ? -1 : 1);
  switch (a.phys) {
    case PhysType::kI64: {
      const uint64_t u = ByteOrder64(static_cast<uint64_t>(a.i64[x])), v = ByteOrder64(static_cast<uint64_t>(b.i64[y]));
      return u == v ? 0 : (u < v ? -1 : 1);
    }
    case PhysType::kF64: {
      const uint64_t u = ByteOrder64(F64Bits(a.f64[x])), v = ByteOrder64(F64Bits(b.f64[y]));
      return u == v ? 0 : (u < v ? -1 : 1);
    }
    case PhysType::kStr: {
      const std::string& s = a.str[x];
      const std::string& t = b.str[y];
      if (s.size() != t.size()) {
        const uint32_t u = ByteOrder32(static_cast<uint32_t>(s.size())),
                       v = ByteOrder32(static_cast<uint32_t>(t.size()));
        if (u != v) return u < v ? -1 : 1;
      }
      const int c = std::memcmp(s.data(), t.data(), std::min(s.size(), t.size()));
      return c;
    }
  }
  return 0;
}

// The first 8 bytes of row r's encoding (EncodeRow; zero-padded) as a big-endian integer: its
// order is memcmp's order of those bytes. Written from the columns, nothing encoded.
uint64_t EncodedPrefix(const Batch& b, size_t r) {
  unsigned char buf[8] = {};
  size_t at = 0;
  auto put = [&](const void* p, size_t n) {
    n = std::min(n, sizeof buf - at);
    std::memcpy(buf + at, p, n);
    at += n;
  };
  for (size_t c = 0; c < b.cols.size() && at < sizeof buf; ++c) {
    const Column& col = *b.cols[c];
    if (col.IsNull(r)) {
      buf[at++] = 0;
      continue;
    }
    switch (col.phys) {
      case PhysType::kI64:
        buf[at++] = 1;
        put(&col.i64[r], 8);
        break;
      case PhysType::kF64: {
        buf[at++] = 2;
        const uint64_t bits = F64Bits(col.f64[r]);
        put(&bits, 8);
        break;
      }
      case PhysType::kStr: {
        buf[at++] = 3;
        const uint32_t n = static_cast<uint32_t>(col.str[r].size());
        put(&n, 4);
        put(col.str[r].data(), col.str[r].size());
        break;
      }
    }
  }
  uint64_t v;
  std::memcpy(&v, buf, 8);
  return ByteOrder64(v);
}

}  // namespace

Batch Consolidate(const Batch& b, ThreadPool* pool, size_t parallel_rows) {
  return Consolidate(std::span<const Batch>(&b, 1), pool, parallel_rows);
}

Batch Consolidate(std::span<const Batch> parts, ThreadPool* pool, size_t parallel_rows) {
  if (parts.empty()) return Batch{};
  const Batch* shape = &parts[0];
  for (const Batch& p : parts)
    if (!p.empty()) shape = &p;
  std::vector<PhysType> types;
  for (const auto& c : shape->cols) types.push_back(c->phys);
  ConsolidatedRows c = ConsolidateRows(parts, pool, parallel_rows);
  Batch out = GatherRows(parts, c.rows, types, pool);
  out.weights = std::move(c.weights);
  return out;
}

ConsolidatedRows ConsolidateRows(std::span<const Batch> parts, ThreadPool* pool, size_t parallel_rows) {
  // Sort references to the rows in their encodings' order, then sum the weights of equal
  // neighbours. Each reference carries its encoding's first 8 bytes as a big-endian integer, so
  // most comparisons are one integer compare; the rest compare column by column as memcmp
  // would compare the encodings.
  //
  // With a pool, the references are cut into buckets by ranges of that prefix (bounds taken from
  // a sample): equal rows have equal prefixes, so each bucket consolidates alone, in parallel,
  // and the buckets in order are the whole result, the same as on one thread.
  if (parts.empty()) return {};
  const Batch* shape = &parts[0];
  for (const Batch& p : parts)
    if (!p.empty()) shape = &p;
  const size_t width = shape->cols.size();
  struct Entry {  // 16 bytes: the weight is read from the part when groups are summed
    uint64_t prefix;
    RowRef ref;
  };
  size_t total = 0;
  for (const Batch& p : parts) total += p.size();
  const bool parallel = pool != nullptr && pool->workers() > 1 && total >= std::max<size_t>(parallel_rows, 1);
  // Pieces of at most kPiece rows of one part, each filling its range of `order`.
  constexpr size_t kPiece = size_t{1} << 16;
  struct Piece {
    uint32_t part;
    size_t row, end, at;
  };
  std::vector<Piece> pieces;
  for (size_t p = 0, at = 0; p < parts.size(); ++p)
    for (size_t r = 0; r < parts[p].size(); r += kPiece) {
      const size_t end = std::min(parts[p].size(), r + kPiece);
      pieces.push_back({static_cast<uint32_t>(p), r, end, at});
      at += end - r;
    }
  // Left uninitialized (the fill writes every entry): the pages are first touched by the fill,
  // in parallel, not zeroed on this thread.
  std::unique_ptr<Entry[]> order(new Entry[total]);
  auto fill = [&](size_t i) {
    const Piece& pc = pieces[i];
    const Batch& b = parts[pc.part];
    for (size_t r = pc.row, k = pc.at; r < pc.end; ++r, ++k)
      order[k] = {EncodedPrefix(b, r), {pc.part, static_cast<uint32_t>(r)}};
  };
  if (parallel)
    pool->ParallelFor(pieces.size(), fill);
  else
    for (size_t i = 0; i < pieces.size(); ++i) fill(i);

  auto compare = [&](const RowRef& x, const RowRef& y) {
    const Batch &bx = parts[x.part], &by = parts[y.part];
    for (size_t c = 0; c < width; ++c)
      if (int d = CompareEncoded(*bx.cols[c], x.row, *by.cols[c], y.row)) return d;
    return 0;
  };
  // Equal rows stay in input order, so each group's first row represents it.
  auto less = [&](const Entry& x, const Entry& y) {
    if (x.prefix != y.prefix) return x.prefix < y.prefix;
    if (int d = compare(x.ref, y.ref)) return d < 0;
    return x.ref.part != y.ref.part ? x.ref.part < y.ref.part : x.ref.row < y.ref.row;
  };
  // A first part that is itself consolidated (strictly ascending rows: the pending changes of a
  // materialized view after their last consolidation) is a sorted run: only the other parts'
  // entries are sorted, then merged with it.
  size_t run = 0;
  if (parts.size() > 1 && parts[0].size() > 1) {
    run = parts[0].size();
    for (size_t k = 1; k < run; ++k)
      if (order[k - 1].prefix > order[k].prefix ||
          (order[k - 1].prefix == order[k].prefix && compare(order[k - 1].ref, order[k].ref) >= 0)) {
        run = 0;
        break;
      }
  }
  // Sorts entries [lo, hi), whose first `sorted` are in order already, and appends each group
  // of equal rows (weight not 0) to rows/weights.
  auto consolidate = [&](Entry* lo, Entry* hi, size_t sorted, std::vector<RowRef>* rows,
                         std::vector<int64_t>* weights) {
    // (By their prefixes, radix from 4096 entries, then runs of equal prefixes by `less`.)
    SortByPrefix(
        lo + sorted, hi, [](const Entry& e) { return e.prefix; }, less, 4096);
    if (sorted > 0) std::inplace_merge(lo, lo + sorted, hi, less);
    // The weights are read in sorted order, scattered over the parts: fetch some ahead.
    constexpr ptrdiff_t kAhead = 16;
    Entry* fetched = lo;
    for (Entry* i = lo; i < hi;) {
      for (; fetched < hi && fetched - i < kAhead; ++fetched)
        fld::Prefetch(parts[fetched->ref.part].weights.data() + fetched->ref.row);
      auto weight = [&](const Entry* e) { return parts[e->ref.part].weights[e->ref.row]; };
      int64_t w = weight(i);
      Entry* j = i + 1;
      for (; j < hi && j->prefix == i->prefix && compare(j->ref, i->ref) == 0; ++j) w += weight(j);
      if (w != 0) {
        rows->push_back(i->ref);
        weights->push_back(w);
      }
      i = j;
    }
  };
  std::vector<RowRef> rows;
  std::vector<int64_t> weights;
  if (!parallel) {
    consolidate(order.get(), order.get() + total, run, &rows, &weights);
    return {std::move(rows), std::move(weights)};
  }
  // Bucket bounds: prefixes at even quantiles of an evenly spaced sample (distinct, ascending).
  // Bucket k holds the prefixes in [bounds[k-1], bounds[k]).
  const size_t buckets = 4 * pool->workers();
  std::vector<uint64_t> sample;
  const size_t want = 64 * buckets;
  for (size_t i = 0; i < want; ++i) sample.push_back(order[i * total / want].prefix);
  std::sort(sample.begin(), sample.end());
  std::vector<uint64_t> bounds;
  for (size_t k = 1; k < buckets; ++k) {
    const uint64_t v = sample[k * sample.size() / buckets];
    if (bounds.empty() || v > bounds.back()) bounds.push_back(v);
  }
  const size_t nb = bounds.size() + 1;
  auto bucket_of = [&](uint64_t prefix) {
    return static_cast<size_t>(std::upper_bound(bounds.begin(), bounds.end(), prefix) - bounds.begin());
  };
  // Scatter: each piece counts its entries per bucket, then copies them to its slots. A piece's
  // counters start a stride of whole cache lines after the last's, a line apart: no two threads
  // write one line.
  const size_t stride = (nb + 7) / 8 * 8 + 8;
  std::vector<size_t> counts(pieces.size() * stride, 0);
  pool->ParallelFor(pieces.size(), [&](size_t i) {
    for (size_t k = pieces[i].at, e = k + (pieces[i].end - pieces[i].row); k < e; ++k)
      ++counts[i * stride + bucket_of(order[k].prefix)];
  });
  // The sorted run's entries per bucket: its pieces come first, so they lead each bucket.
  std::vector<size_t> run_in(nb, 0);
  for (size_t i = 0; i < pieces.size() && run > 0 && pieces[i].part == 0; ++i)
    for (size_t b = 0; b < nb; ++b) run_in[b] += counts[i * stride + b];
  std::vector<size_t> start(nb + 1, 0);
  for (size_t b = 0; b < nb; ++b) {
    size_t at = start[b];
    for (size_t i = 0; i < pieces.size(); ++i) {
      const size_t c = counts[i * stride + b];
      counts[i * stride + b] = at;
      at += c;
    }
    start[b + 1] = at;
  }
  std::unique_ptr<Entry[]> scattered(new Entry[total]);
  pool->ParallelFor(pieces.size(), [&](size_t i) {
    size_t* next = &counts[i * stride];
    for (size_t k = pieces[i].at, e = k + (pieces[i].end - pieces[i].row); k < e; ++k)
      scattered[next[bucket_of(order[k].prefix)]++] = order[k];
  });
  order.reset();
  std::vector<std::vector<RowRef>> bucket_rows(nb);
  std::vector<std::vector<int64_t>> bucket_weights(nb);
  pool->ParallelFor(nb, [&](size_t b) {
    consolidate(scattered.get() + start[b], scattered.get() + start[b + 1], run_in[b], &bucket_rows[b],
                &bucket_weights[b]);
  });
  scattered.reset();
  // Bucket b's rows are rows at[b] .. at[b+1] of the result.
  std::vector<size_t> at(nb + 1, 0);
  for (size_t b = 0; b < nb; ++b) at[b + 1] = at[b] + bucket_rows[b].size();
  rows.resize(at[nb]);
  weights.resize(at[nb]);
  pool->ParallelFor(nb, [&](size_t b) {
    std::copy(bucket_rows[b].begin(), bucket_rows[b].end(), rows.begin() + static_cast<ptrdiff_t>(at[b]));
    std::copy(bucket_weights[b].begin(), bucket_weights[b].end(), weights.begin() + static_cast<ptrdiff_t>(at[b]));
  });
  return {std::move(rows), std::move(weights)};
}

ColumnPtr Concat(std::vector<ColumnPtr>&& parts) {
  if (parts.size() == 1) return std::move(parts[0]);
  auto col = std::make_shared<Column>(parts[0]->phys);
  size_t total = 0;
  bool any_null = false;
  for (const auto& p : parts) {
    total += p->size();
    any_null |= p->HasNulls();
  }
  col->Reserve(total);
  if (any_null) col->nulls.reserve(total);
  for (const auto& p : parts) {
    const Column& src = *p;
    switch (src.phys) {
      case PhysType::kI64:
        col->i64.insert(col->i64.end(), src.i64.begin(), src.i64.end());
        break;
      case PhysType::kF64:
        col->f64.insert(col->f64.end(), src.f64.begin(), src.f64.end());
        break;
      case PhysType::kStr:
        if (p.use_count() == 1) {  // no one else sees it: its strings move (Columns are made non-const)
          auto& strs = const_cast<Column&>(src).str;
          col->str.insert(col->str.end(), std::make_move_iterator(strs.begin()), std::make_move_iterator(strs.end()));
        } else {
          col->str.insert(col->str.end(), src.str.begin(), src.str.end());
        }
        break;
    }
    if (any_null) {
      if (src.HasNulls())
        col->nulls.insert(col->nulls.end(), src.nulls.begin(), src.nulls.end());
      else
        col->nulls.insert(col->nulls.end(), src.size(), 0);
    }
  }
  return col;
}

ColumnPtr Slice(const Column& c, size_t begin, size_t end) {
  auto col = std::make_shared<Column>(c.phys);
  switch (c.phys) {
    case PhysType::kI64:
      col->i64.assign(c.i64.begin() + begin, c.i64.begin() + end);
      break;
    case PhysType::kF64:
      col->f64.assign(c.f64.begin() + begin, c.f64.begin() + end);
      break;
    case PhysType::kStr:
      col->str.assign(c.str.begin() + begin, c.str.begin() + end);
      break;
  }
  if (c.HasNulls()) {
    col->nulls.assign(c.nulls.begin() + begin, c.nulls.begin() + end);
    col->CompactNulls();
  }
  return col;
}

Batch Concat(std::span<const Batch> parts) {
  const Batch* first = nullptr;
  size_t total = 0, nonempty = 0;
  for (const auto& p : parts) {
    if (!first) first = &p;
    total += p.size();
    if (!p.empty()) ++nonempty;
  }
  if (!first) return Batch();
  if (nonempty <= 1) {
    for (const auto& p : parts)
      if (!p.empty()) return p;
    return parts[0];
  }
  Batch out;
  for (size_t c = 0; c < first->width(); ++c) {
    std::vector<ColumnPtr> cols(parts.size());  // (shared with the parts: nothing is moved)
    for (size_t i = 0; i < parts.size(); ++i) cols[i] = parts[i].cols[c];
    out.cols.push_back(Concat(std::move(cols)));
  }
  out.weights.reserve(total);
  for (const auto& p : parts) out.weights.insert(out.weights.end(), p.weights.begin(), p.weights.end());
  return out;
}

size_t MemoryBytes(const Batch& b) {
  size_t bytes = b.weights.capacity() * sizeof(int64_t);
  for (const auto& c : b.cols) {
    bytes += sizeof(Column) + c->i64.capacity() * 8 + c->f64.capacity() * 8 + c->nulls.capacity() +
             c->str.capacity() * sizeof(std::string);
    for (const auto& s : c->str)
      if (s.capacity() > 15) bytes += s.capacity() + 1;  // beyond the inline buffer
  }
  return bytes;
}

namespace {

// The batch whose k-th row (k < n) is row at(k).row of parts[at(k).part]: Gather and GatherRows.
// With a pool, ranges of rows are copied in parallel.
template <typename At>
Batch GatherFrom(std::span<const Batch> parts, size_t n, std::span<const PhysType> types, At at,
                 ThreadPool* pool = nullptr) {
  // Ranges of at least kMinRange rows, about four per worker (a fork-join costs microseconds;
  // copying a range of a few columns, tens of them).
  constexpr size_t kMinRange = 4096;
  const bool parallel = pool != nullptr && pool->workers() > 1 && n >= 2 * kMinRange;
  const size_t range = parallel ? std::max(kMinRange, (n + 4 * pool->workers() - 1) / (4 * pool->workers())) : n;
  std::vector<std::shared_ptr<Column>> cols;
  std::vector<bool> nulls(types.size(), false);
  for (size_t c = 0; c < types.size(); ++c) {
    cols.push_back(std::make_shared<Column>(types[c]));
    for (const Batch& p : parts) nulls[c] = nulls[c] || p.cols[c]->HasNulls();
  }
  Batch out;
  // Sizing zeroes the vectors (and faults their pages in): one column per task.
  auto size = [&](size_t c) {
    if (c == types.size()) return out.weights.resize(n);
    Column& col = *cols[c];
    switch (types[c]) {
      case PhysType::kI64:
        col.i64.resize(n);
        break;
      case PhysType::kF64:
        col.f64.resize(n);
        break;
      case PhysType::kStr:
        col.str.resize(n);
        break;
    }
    if (nulls[c]) col.nulls.resize(n);
  };
  if (parallel)
    pool->ParallelFor(types.size() + 1, size);
  else
    for (size_t c = 0; c <= types.size(); ++c) size(c);
  auto copy = [&](size_t lo, size_t hi) {
    for (size_t c = 0; c < types.size(); ++c) {
      Column& col = *cols[c];
      switch (types[c]) {
        case PhysType::kI64:
          for (size_t k = lo; k < hi; ++k) col.i64[k] = parts[at(k).part].cols[c]->i64[at(k).row];
          break;
        case PhysType::kF64:
          for (size_t k = lo; k < hi; ++k) col.f64[k] = parts[at(k).part].cols[c]->f64[at(k).row];
          break;
        case PhysType::kStr:
          for (size_t k = lo; k < hi; ++k) col.str[k] = parts[at(k).part].cols[c]->str[at(k).row];
          break;
      }
      if (nulls[c])
        for (size_t k = lo; k < hi; ++k) col.nulls[k] = parts[at(k).part].cols[c]->IsNull(at(k).row);
    }
    for (size_t k = lo; k < hi; ++k) out.weights[k] = parts[at(k).part].weights[at(k).row];
  };
  if (parallel)
    pool->ParallelFor((n + range - 1) / range, [&](size_t i) { copy(i * range, std::min(n, (i + 1) * range)); });
  else
    copy(0, n);
  for (auto& col : cols) {
    if (!col->nulls.empty()) col->CompactNulls();
    out.cols.push_back(std::move(col));
  }
  return out;
}

}  // namespace

Batch GatherRows(std::span<const Batch> parts, std::span<const RowRef> order, std::span<const PhysType> types,
                 ThreadPool* pool) {
  return GatherFrom(
      parts, order.size(), types, [&](size_t k) { return order[k]; }, pool);
}

Batch Gather(const Batch& b, std::span<const uint32_t> sel) {
  std::vector<PhysType> types;
  for (const auto& c : b.cols) types.push_back(c->phys);
  return GatherFrom(std::span<const Batch>(&b, 1), sel.size(), types, [&](size_t k) { return RowRef{0, sel[k]}; });
}

}  // namespace fld
