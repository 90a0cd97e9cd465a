// Tests of the window operator (core/operators/window.h) and of the per-partition top-K
// (core/operators/topk.h): random inserts and deletes, step by step; after every step the
// integral of the output changes must equal a from-scratch evaluation of the window functions
// over the integral of the input (naive code below: linear scans by the definitions, sharing
// nothing with the operators but the sort-key struct). Save/restore at a random step must give
// the same output changes byte for byte afterwards.
#include "core/operators/window.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/common/serialize.h"
#include "core/operators/topk.h"
#include "core/zset/batch.h"

namespace fld {
namespace {

using Row = std::vector<Value>;
using ZSet = std::map<Row, int64_t>;

void AddInto(ZSet* z, const Row& r, int64_t w) {
  auto it = z->try_emplace(r, 0).first;
  it->second += w;
  if (it->second == 0) z->erase(it);
}

std::string Show(const ZSet& z) {
  std::string s;
  for (const auto& [r, w] : z) {
    s += "(";
    for (const Value& v : r)
      s += v.IsNull()                       ? "NULL,"
           : v.kind == Value::Kind::kDouble ? std::to_string(v.d) + ","
                                            : std::to_string(v.i) + ",";
    s += ") x" + std::to_string(w) + "\n";
  }
  return s;
}

// Input columns: p (partition, NULLs), o (order key, NULLs, ties), v (value, NULLs), d (dyadic
// double), a default value.
const std::vector<PhysType> kTypes = {PhysType::kI64, PhysType::kI64, PhysType::kI64, PhysType::kF64, PhysType::kI64};

Row RandomRow(std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto maybe_null = [&](Value v) { return pick(0, 6) == 0 ? Value::Null() : v; };
  return {maybe_null(Value::Int(pick(0, 2))), maybe_null(Value::Int(pick(0, 6))), maybe_null(Value::Int(pick(-5, 9))),
          Value::Double(pick(-8, 8) * 0.25), Value::Int(pick(100, 103))};
}

// x sorts before y by the keys (NULL placed by nulls_first), peers compare equal.
int NaiveCompare(const std::vector<SortKey>& keys, const Row& x, const Row& y) {
  for (const SortKey& k : keys) {
    const Value &a = x[k.column], &b = y[k.column];
    if (a.IsNull() && b.IsNull()) continue;
    if (a.IsNull()) return k.nulls_first ? -1 : 1;
    if (b.IsNull()) return k.nulls_first ? 1 : -1;
    if (a == b) continue;
    return (a < b) != k.desc ? -1 : 1;
  }
  return 0;
}

// The sorted copies of each partition of `in`.
std::map<Row, std::vector<Row>> NaivePartitions(const ZSet& in, const std::vector<int>& partition,
                                                const std::vector<SortKey>& keys) {
  std::map<Row, std::vector<Row>> parts;
  for (const auto& [r, w] : in) {
    Row key;
    for (int c : partition) key.push_back(r[c]);
    for (int64_t k = 0; k < w; ++k) parts[key].push_back(r);
  }
  for (auto& [k, rows] : parts)
    std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
      int c = NaiveCompare(keys, a, b);
      return c != 0 ? c < 0 : a < b;
    });
  return parts;
}

// A DATE (days) or TIMESTAMP (microseconds) plus months, the day clamped to the month's last,
// with std::chrono's calendar.
int64_t NaiveAddMonths(int64_t v, int64_t months, bool date) {
  using namespace std::chrono;
  const int64_t day = date ? v : (v >= 0 ? v / kMicrosPerDay : -((-v + kMicrosPerDay - 1) / kMicrosPerDay));
  const int64_t tod = date ? 0 : v - day * kMicrosPerDay;
  year_month_day ymd{sys_days{days{day}}};
  const year_month ym = year_month{ymd.year(), ymd.month()} + std::chrono::months{months};
  const year_month_day_last last{ym.year(), month_day_last{ym.month()}};
  const year_month_day to{ym.year(), ym.month(), std::min(ymd.day(), last.day())};
  const int64_t out = sys_days{to}.time_since_epoch().count();
  return date ? out : out * kMicrosPerDay + tod;
}

// Whether row j of `rows` is in row i's frame, by the definitions.
bool InFrame(const WindowFn& f, const std::vector<SortKey>& keys, const std::vector<Row>& rows, int64_t i, int64_t j) {
  auto peer = [&](int64_t x, int64_t y) { return NaiveCompare(keys, rows[x], rows[y]) == 0; };
  // EXCLUDE: the row itself, its peer group, its peers but itself.
  if (f.exclude == WindowFn::Exclude::kCurrentRow && j == i) return false;
  if (f.exclude == WindowFn::Exclude::kGroup && peer(i, j)) return false;
  if (f.exclude == WindowFn::Exclude::kTies && peer(i, j) && j != i) return false;
  // The number of a row's peer group (counted from 0).
  auto group = [&](int64_t x) {
    int64_t g = 0;
    for (int64_t k = 1; k <= x; ++k)
      if (!peer(k - 1, k)) ++g;
    return g;
  };
  auto side = [&](const WindowBound& b, bool is_start) -> bool {  // j is on the inner side of b
    using K = WindowBound::Kind;
    if (b.kind == K::kUnboundedPreceding || b.kind == K::kUnboundedFollowing) return true;
    if (f.groups) {
      const int64_t gi = group(i), gj = group(j);
      int64_t at = b.kind == K::kCurrentRow ? gi : b.kind == K::kPreceding ? gi - b.rows : gi + b.rows;
      return is_start ? gj >= at : gj <= at;
    }
    if (f.rows) {
      int64_t at = b.kind == K::kCurrentRow ? i : b.kind == K::kPreceding ? i - b.rows : i + b.rows;
      return is_start ? j >= at : j <= at;
    }
    if (b.kind == K::kCurrentRow) return is_start ? (j >= i || peer(i, j)) : (j <= i || peer(i, j));
    const Value &vi = rows[i][keys[0].column], &vj = rows[j][keys[0].column];
    if (vi.IsNull()) return is_start ? (j >= i || peer(i, j)) : (j <= i || peer(i, j));
    if (vj.IsNull()) return is_start ? !keys[0].nulls_first : keys[0].nulls_first;
    if (b.offset != WindowBound::Offset::kNumber) {
      // INTERVAL offsets over DATE / TIMESTAMP: the instant (or calendar date) the bound
      // reaches, moved against the sort direction for PRECEDING; j is inside when it sorts at
      // or after it (start) or at or before it (end).
      const bool minus = (b.kind == K::kPreceding) != keys[0].desc;
      __int128 at, xj;
      if (b.offset == WindowBound::Offset::kMonths) {
        at = NaiveAddMonths(vi.i, minus ? -b.range.i : b.range.i, f.date_key);
        xj = vj.i;
      } else {
        const __int128 unit = f.date_key ? kMicrosPerDay : 1;
        at = vi.i * unit + (minus ? -b.range.i : b.range.i);
        xj = vj.i * unit;
      }
      const bool after = keys[0].desc ? xj <= at : xj >= at, before = keys[0].desc ? xj >= at : xj <= at;
      return is_start ? after : before;
    }
    // Distances in the sort direction, in 128 bits (no overflow).
    __int128 dist = static_cast<__int128>(vj.i) - vi.i;
    if (keys[0].desc) dist = -dist;
    __int128 off = b.range.i;
    __int128 at = b.kind == K::kPreceding ? -off : off;
    return is_start ? dist >= at : dist <= at;
  };
  return side(f.start, true) && side(f.end, false);
}

ZSet NaiveWindow(const ZSet& in, const std::vector<int>& partition, const std::vector<SortKey>& keys,
                 const std::vector<WindowFn>& fns) {
  ZSet out;
  for (const auto& [key, rows] : NaivePartitions(in, partition, keys)) {
    const int64_t n = static_cast<int64_t>(rows.size());
    for (int64_t i = 0; i < n; ++i) {
      Row r = rows[i];
      for (const WindowFn& f : fns) {
        Value v;
        int64_t before = 0, groups = 0;
        for (int64_t j = 0; j < n; ++j) {
          if (NaiveCompare(keys, rows[j], rows[i]) < 0) ++before;
          if (j <= i && (j == 0 || NaiveCompare(keys, rows[j - 1], rows[j]) != 0)) ++groups;
        }
        std::vector<int64_t> frame;
        for (int64_t j = 0; j < n; ++j)
          if (InFrame(f, keys, rows, i, j)) frame.push_back(j);
        switch (f.kind) {
          case WindowFnKind::kRowNumber:
            v = Value::Int(i + 1);
            break;
          case WindowFnKind::kRank:
            v = Value::Int(before + 1);
            break;
          case WindowFnKind::kDenseRank:
            v = Value::Int(groups);
            break;
          case WindowFnKind::kLag:
          case WindowFnKind::kLead: {
            int64_t j = f.kind == WindowFnKind::kLag ? i - f.offset : i + f.offset;
            v = j >= 0 && j < n ? rows[j][f.arg] : f.default_col >= 0 ? rows[i][f.default_col] : Value::Null();
            break;
          }
          case WindowFnKind::kFirstValue:
            if (!frame.empty()) v = rows[frame.front()][f.arg];
            break;
          case WindowFnKind::kNthValue:
            if (static_cast<int64_t>(frame.size()) >= f.offset) v = rows[frame[f.offset - 1]][f.arg];
            break;
          case WindowFnKind::kNtile: {
            // Hand out the rows one bucket at a time, the first n % k buckets one row larger.
            int64_t bucket = 1, left = n / f.offset + (n % f.offset > 0 ? 1 : 0);
            for (int64_t j = 0; j < i; ++j)
              if (--left == 0) {
                ++bucket;
                left = n / f.offset + (n % f.offset >= bucket ? 1 : 0);
              }
            v = Value::Int(bucket);
            break;
          }
          case WindowFnKind::kPercentRank:
            v = Value::Double(n > 1 ? static_cast<double>(before) / static_cast<double>(n - 1) : 0.0);
            break;
          case WindowFnKind::kCumeDist: {
            int64_t upto = 0;
            for (int64_t j = 0; j < n; ++j)
              if (NaiveCompare(keys, rows[j], rows[i]) <= 0) ++upto;
            v = Value::Double(static_cast<double>(upto) / static_cast<double>(n));
            break;
          }
          case WindowFnKind::kLastValue:
            if (!frame.empty()) v = rows[frame.back()][f.arg];
            break;
          case WindowFnKind::kAggregate: {
            int64_t count = 0, isum = 0;
            double dsum = 0;
            Value best;
            for (int64_t j : frame) {
              if (f.agg.kind == AggKind::kCountStar) {
                ++count;
                continue;
              }
              const Value& x = rows[j][f.agg.arg];
              if (x.IsNull()) continue;
              ++count;
              isum += x.i;
              dsum += x.d;
              if (best.IsNull() || (f.agg.kind == AggKind::kMin ? x < best : best < x)) best = x;
            }
            const bool dbl = f.agg.arg_type.phys() == PhysType::kF64;
            switch (f.agg.kind) {
              case AggKind::kCountStar:
              case AggKind::kCount:
                v = Value::Int(count);
                break;
              case AggKind::kSum:
                if (count) v = dbl ? Value::Double(dsum) : Value::Int(isum);
                break;
              case AggKind::kAvg:  // integers: truncated toward zero (C++ division)
                if (count) v = dbl ? Value::Double(dsum / static_cast<double>(count)) : Value::Int(isum / count);
                break;
              default:
                v = best;
            }
            break;
          }
        }
        r.push_back(v);
      }
      AddInto(&out, r, 1);
    }
  }
  return out;
}

WindowFn Fn(WindowFnKind kind, int arg = -1) {
  WindowFn f;
  f.kind = kind;
  f.arg = arg;
  f.result = PhysType::kI64;
  return f;
}

WindowFn Agg(AggKind kind, int arg, bool dbl, bool rows, WindowBound start, WindowBound end) {
  WindowFn f;
  f.kind = WindowFnKind::kAggregate;
  f.agg.kind = kind;
  f.agg.arg = arg;
  f.agg.arg_type = SqlType::Of(dbl ? TypeId::kDouble : TypeId::kBigInt);
  f.result = dbl && kind != AggKind::kCount && kind != AggKind::kCountStar ? PhysType::kF64 : PhysType::kI64;
  f.rows = rows;
  f.start = start;
  f.end = end;
  return f;
}

using K = WindowBound::Kind;
WindowBound B(K kind, int64_t off = 0) {
  return {kind, off, Value::Int(off)};
}

std::vector<WindowFn> AllFunctions() {
  std::vector<WindowFn> fns = {Fn(WindowFnKind::kRowNumber), Fn(WindowFnKind::kRank), Fn(WindowFnKind::kDenseRank)};
  WindowFn lag = Fn(WindowFnKind::kLag, 2);
  fns.push_back(lag);
  WindowFn lead = Fn(WindowFnKind::kLead, 2);
  lead.offset = 2;
  lead.default_col = 4;
  fns.push_back(lead);
  WindowFn first = Fn(WindowFnKind::kFirstValue, 2);
  first.rows = true;
  first.start = B(K::kPreceding, 1);
  first.end = B(K::kFollowing, 1);
  fns.push_back(first);
  WindowFn last = Fn(WindowFnKind::kLastValue, 2);  // default frame: up to the last peer
  fns.push_back(last);
  fns.push_back(Agg(AggKind::kSum, 2, false, false, B(K::kUnboundedPreceding), B(K::kCurrentRow)));
  fns.push_back(Agg(AggKind::kCountStar, -1, false, true, B(K::kPreceding, 2), B(K::kCurrentRow)));
  fns.push_back(Agg(AggKind::kMin, 2, false, false, B(K::kPreceding, 1), B(K::kFollowing, 1)));
  fns.push_back(Agg(AggKind::kMax, 2, false, true, B(K::kCurrentRow), B(K::kUnboundedFollowing)));
  fns.push_back(Agg(AggKind::kAvg, 2, false, false, B(K::kPreceding, 2), B(K::kFollowing, 0)));
  fns.push_back(Agg(AggKind::kSum, 3, true, true, B(K::kUnboundedPreceding), B(K::kFollowing, 1)));
  fns.push_back(Agg(AggKind::kCount, 2, false, false, B(K::kCurrentRow), B(K::kFollowing, 2)));
  fns.push_back(Agg(AggKind::kMax, 2, false, true, B(K::kFollowing, 1), B(K::kFollowing, 3)));
  fns.push_back(Agg(AggKind::kSum, 2, false, false, B(K::kPreceding, 3), B(K::kPreceding, 1)));
  for (int64_t k : {1, 3, 7}) {
    WindowFn ntile = Fn(WindowFnKind::kNtile);
    ntile.offset = k;
    fns.push_back(ntile);
  }
  fns.push_back(Fn(WindowFnKind::kPercentRank));
  fns.back().result = PhysType::kF64;
  fns.push_back(Fn(WindowFnKind::kCumeDist));
  fns.back().result = PhysType::kF64;
  WindowFn nth = Fn(WindowFnKind::kNthValue, 2);  // default frame
  nth.offset = 2;
  fns.push_back(nth);
  nth.offset = 3;
  nth.rows = true;
  nth.start = B(K::kPreceding, 2);
  nth.end = B(K::kFollowing, 2);
  fns.push_back(nth);
  return fns;
}

Batch MakeBatch(const std::vector<PhysType>& types, const std::vector<std::pair<Row, int64_t>>& ch) {
  BatchBuilder b(types);
  for (const auto& [r, w] : ch) b.AppendRow(r, w);
  return b.Finish();
}

std::string Save(const Operator& op) {
  std::string s;
  StateWriter w(&s);
  op.SaveState(w);
  return s;
}

std::vector<std::pair<std::string, int64_t>> Encoded(const Batch& b) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (size_t r = 0; r < b.size(); ++r) {
    std::string enc;
    EncodeRow(&enc, b, r);
    out.emplace_back(std::move(enc), b.weights[r]);
  }
  return out;
}

// Random valid changes, step by step; after every step I(output) == naive(I(input)); a copy
// restored from a checkpoint taken at a random step produces the same changes from then on.
void Check(const std::function<std::unique_ptr<Operator>()>& make, const std::function<ZSet(const ZSet&)>& naive,
           uint64_t seed, int sequences, const std::function<Row(std::mt19937_64&)>& random_row = RandomRow,
           const std::vector<PhysType>& types = kTypes) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int s = 0; s < sequences; ++s) {
    std::unique_ptr<Operator> op = make(), restored;
    ZSet in, out;
    const int steps = pick(1, 12), restore_at = pick(0, steps - 1);
    for (int step = 0; step < steps; ++step) {
      std::vector<std::pair<Row, int64_t>> ch;
      for (int k = pick(0, 8); k > 0; --k) {
        if (!in.empty() && pick(0, 9) < 4) {
          auto it = in.begin();
          std::advance(it, pick(0, static_cast<int>(in.size()) - 1));
          Row r = it->first;
          int64_t w = it->second >= 2 && pick(0, 1) ? -it->second : -1;
          ch.emplace_back(r, w);
          AddInto(&in, r, w);
        } else {
          Row r = random_row(rng);
          int64_t w = pick(0, 9) == 0 ? 2 : 1;
          ch.emplace_back(r, w);
          AddInto(&in, r, w);
        }
      }
      Batch b = MakeBatch(types, ch);
      const Batch* ptr[] = {&b};
      Batch d = op->Step(ptr);
      if (restored) {
        Batch d2 = restored->Step(ptr);
        REQUIRE(Encoded(d) == Encoded(d2));
      }
      for (size_t r = 0; r < d.size(); ++r) {
        Row row;
        for (size_t c = 0; c < d.width(); ++c) row.push_back(d.Get(c, r));
        AddInto(&out, row, d.weights[r]);
      }
      ZSet want = naive(in);
      INFO("sequence " << s << " step " << step << "\nactual\n" << Show(out) << "expected\n" << Show(want));
      REQUIRE(out == want);
      if (step == restore_at) {
        restored = make();
        std::string state = Save(*op);
        StateReader r(state);
        restored->RestoreState(r);
        REQUIRE(Save(*restored) == state);
      }
    }
  }
}

TEST_CASE("window: I(output) equals the window functions recomputed from scratch", "[operators][window]") {
  const std::vector<WindowFn> fns = AllFunctions();
  struct Shape {
    std::vector<int> partition;
    std::vector<SortKey> keys;
  };
  const Shape shapes[] = {
      {{0}, {{1, false, true}}},    // PARTITION BY p ORDER BY o (NULLs first)
      {{0}, {{1, true, false}}},    // ORDER BY o DESC NULLS LAST
      {{}, {{1, false, false}}},    // no partition, NULLs last
      {{0, 1}, {{2, true, true}}},  // two partition columns, ORDER BY v DESC NULLS FIRST
  };
  uint64_t seed = 7700;
  for (const Shape& sh : shapes) {
    std::vector<PhysType> types = kTypes;
    Check([&] { return std::make_unique<WindowOp>(types, sh.partition, sh.keys, fns); },
          [&](const ZSet& in) { return NaiveWindow(in, sh.partition, sh.keys, fns); }, seed++, 150);
  }
  // Without ORDER BY every row is a peer: the default frame is the whole partition.
  std::vector<WindowFn> unordered = {
      Fn(WindowFnKind::kRank),
      Agg(AggKind::kSum, 2, false, false, B(K::kUnboundedPreceding), B(K::kUnboundedFollowing)),
      Agg(AggKind::kMin, 2, false, false, B(K::kUnboundedPreceding), B(K::kUnboundedFollowing))};
  Check([&] { return std::make_unique<WindowOp>(kTypes, std::vector<int>{0}, std::vector<SortKey>{}, unordered); },
        [&](const ZSet& in) { return NaiveWindow(in, {0}, {}, unordered); }, seed++, 100);
}

// ---- aggregates computed from the frame's values: DISTINCT, ARRAY_AGG, MAP_AGG, STDDEV and
// VARIANCE over DECIMALs. Input: kTypes and a DECIMAL(30, 2) column (5) beyond 64 bits.
const SqlType kWide = SqlType::Decimal(30, 2);
const SqlType kNarrow = SqlType::Decimal(10, 2);  // column 2 read as DECIMAL(10, 2)
const std::vector<PhysType> kValueTypes = {PhysType::kI64, PhysType::kI64, PhysType::kI64,
                                           PhysType::kF64, PhysType::kI64, PhysType::kStr};

Row RandomValueRow(std::mt19937_64& rng) {
  Row r = RandomRow(rng);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const __int128 big = static_cast<__int128>(pick(-5, 9)) * 1000000000000000LL + pick(0, 3);
  r.push_back(pick(0, 6) == 0 ? Value::Null() : DecimalValue(big, kWide));
  return r;
}

WindowFn ValueAgg(AggKind kind, int arg, SqlType arg_type, SqlType result_type, bool distinct, bool rows,
                  WindowBound start, WindowBound end) {
  WindowFn f;
  f.kind = WindowFnKind::kAggregate;
  f.agg.kind = kind;
  f.agg.arg = arg;
  f.agg.distinct = distinct;
  f.agg.arg_type = arg_type;
  f.agg.result_type = result_type;
  f.result = result_type.phys();
  f.rows = rows;
  f.start = start;
  f.end = end;
  return f;
}

__int128 ISqrt(__int128 x) {
  __int128 r = static_cast<__int128>(std::sqrt(static_cast<long double>(x)));
  while (r > 0 && r * r > x) --r;
  while ((r + 1) * (r + 1) <= x) ++r;
  return r;
}

// The value of one of these aggregates over the frame rows[frame], by the definitions.
Value NaiveByValues(const WindowFn& f, const std::vector<Row>& rows, const std::vector<int64_t>& frame) {
  const AggSpec& a = f.agg;
  std::vector<Value> xs;  // the values of the rows that count, in frame order
  for (int64_t j : frame)
    if (a.filter < 0 || (!rows[j][a.filter].IsNull() && rows[j][a.filter].i != 0)) xs.push_back(rows[j][a.arg]);
  if (a.kind == AggKind::kArrayAgg) {
    if (xs.empty()) return Value::Null();
    if (a.distinct) {
      std::sort(xs.begin(), xs.end());
      xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
    }
    return Value::String(EncodeArrayValue(xs, a.arg_type));
  }
  if (a.kind == AggKind::kMapAgg) {
    bool any = false;
    std::map<Value, Value> m;
    for (int64_t j : frame) {
      if (a.filter >= 0 && (rows[j][a.filter].IsNull() || rows[j][a.filter].i == 0)) continue;
      any = true;
      const Value &k = rows[j][a.key], &v = rows[j][a.arg];
      if (k.IsNull()) continue;
      if (!m.contains(k) || m[k] < v) m[k] = v;
    }
    if (!any) return Value::Null();
    return Value::String(EncodeMapValue({m.begin(), m.end()}, a.result_type));
  }
  if (a.kind == AggKind::kArgMin || a.kind == AggKind::kArgMax) {
    // The (key, value) pairs of the frame, sorted; ARG_MIN takes the first with a non-NULL key
    // (else the first), ARG_MAX the last.
    std::vector<std::pair<Value, Value>> kv;
    for (int64_t j : frame)
      if (a.filter < 0 || (!rows[j][a.filter].IsNull() && rows[j][a.filter].i != 0))
        kv.emplace_back(rows[j][a.key], rows[j][a.arg]);
    if (kv.empty()) return Value::Null();
    std::sort(kv.begin(), kv.end());
    if (a.kind == AggKind::kArgMax) return kv.back().second;
    for (const auto& [k, v] : kv)
      if (!k.IsNull()) return v;
    return kv.front().second;
  }
  std::vector<Value> vals;
  for (const Value& x : xs)
    if (!x.IsNull()) vals.push_back(x);
  if (a.kind == AggKind::kBitAnd || a.kind == AggKind::kBitOr || a.kind == AggKind::kBitXor) {
    if (a.distinct) {
      std::sort(vals.begin(), vals.end());
      vals.erase(std::unique(vals.begin(), vals.end()), vals.end());
    }
    if (vals.empty()) return Value::Null();
    int64_t r = a.kind == AggKind::kBitAnd ? -1 : 0;
    for (const Value& x : vals)
      r = a.kind == AggKind::kBitAnd ? r & x.i : a.kind == AggKind::kBitOr ? r | x.i : r ^ x.i;
    return Value::Int(r);
  }
  if (a.distinct) {
    std::sort(vals.begin(), vals.end());
    vals.erase(std::unique(vals.begin(), vals.end()), vals.end());
  }
  const int64_t n = static_cast<int64_t>(vals.size());
  if (a.kind == AggKind::kCount) return Value::Int(n);
  if (n == 0) return Value::Null();
  if (a.arg_type.IsFloat()) {
    std::sort(vals.begin(), vals.end());
    double sum = 0;
    for (const Value& x : vals) sum += x.d;
    return a.kind == AggKind::kSum ? Value::Double(sum) : Value::Double(sum / static_cast<double>(n));
  }
  __int128 sum = 0, sumsq = 0;
  for (const Value& x : vals) {
    const __int128 u = UnscaledDecimal(x, a.arg_type);
    sum += u;
    sumsq += u * u;
  }
  if (a.kind == AggKind::kSum) return Value::Int(static_cast<int64_t>(sum));
  if (a.kind == AggKind::kAvg) return Value::Int(static_cast<int64_t>(sum / n));
  const bool samp = a.kind == AggKind::kStddevSamp || a.kind == AggKind::kVarSamp;
  const bool sd = a.kind == AggKind::kStddevSamp || a.kind == AggKind::kStddevPop;
  if (samp && n < 2) return Value::Null();
  const __int128 denom = static_cast<__int128>(n) * (samp ? n - 1 : n);
  if (a.arg_type.IsInteger()) {  // Feldera's integer formula
    const __int128 var = (sumsq - sum * sum / n) / (samp ? n - 1 : n);
    return Value::Int(static_cast<int64_t>(sd ? ISqrt(var) : var));
  }
  const __int128 num = static_cast<__int128>(n) * sumsq - sum * sum;
  const __int128 unit = a.arg_type.scale == 2 ? 100 : 1;
  if (a.arg_type.IsWideDecimal()) return DecimalValue(sd ? ISqrt(num / denom) : num / denom / unit, a.arg_type);
  // DECIMAL(p <= 18): in floating point, truncated to the scale (as GROUP BY computes it).
  const double var = static_cast<double>(num) / static_cast<double>(denom) / static_cast<double>(unit * unit);
  return Value::Int(static_cast<int64_t>(std::trunc((sd ? std::sqrt(var) : var) * static_cast<double>(unit))));
}

ZSet NaiveValueWindow(const ZSet& in, const std::vector<int>& partition, const std::vector<SortKey>& keys,
                      const std::vector<WindowFn>& fns) {
  ZSet out;
  for (const auto& [key, rows] : NaivePartitions(in, partition, keys)) {
    const int64_t n = static_cast<int64_t>(rows.size());
    for (int64_t i = 0; i < n; ++i) {
      Row r = rows[i];
      for (const WindowFn& f : fns) {
        std::vector<int64_t> frame;
        for (int64_t j = 0; j < n; ++j)
          if (InFrame(f, keys, rows, i, j)) frame.push_back(j);
        r.push_back(NaiveByValues(f, rows, frame));
      }
      AddInto(&out, r, 1);
    }
  }
  return out;
}

std::vector<WindowFn> ValueFunctions() {
  const SqlType big = SqlType::Of(TypeId::kBigInt), dbl = SqlType::Of(TypeId::kDouble);
  using X = WindowFn::Exclude;
  std::vector<WindowFn> fns;
  fns.push_back(ValueAgg(AggKind::kCount, 2, big, big, true, false, B(K::kUnboundedPreceding), B(K::kCurrentRow)));
  fns.push_back(ValueAgg(AggKind::kSum, 2, big, big, true, true, B(K::kPreceding, 2), B(K::kFollowing, 1)));
  fns.push_back(ValueAgg(AggKind::kAvg, 2, big, big, true, true, B(K::kPreceding, 1), B(K::kFollowing, 1)));
  fns.back().exclude = X::kCurrentRow;
  fns.push_back(ValueAgg(AggKind::kSum, 3, dbl, dbl, true, false, B(K::kPreceding, 1), B(K::kFollowing, 1)));
  fns.push_back(ValueAgg(AggKind::kCount, 3, dbl, big, true, false, B(K::kPreceding, 1), B(K::kFollowing, 1)));
  fns.back().groups = true;
  fns.back().exclude = X::kGroup;
  fns.push_back(
      ValueAgg(AggKind::kArrayAgg, 2, big, SqlType::Array(big), false, true, B(K::kPreceding, 1), B(K::kFollowing, 1)));
  fns.push_back(ValueAgg(AggKind::kArrayAgg, 2, big, SqlType::Array(big), true, false, B(K::kUnboundedPreceding),
                         B(K::kCurrentRow)));
  fns.push_back(
      ValueAgg(AggKind::kArrayAgg, 3, dbl, SqlType::Array(dbl), false, true, B(K::kPreceding, 1), B(K::kCurrentRow)));
  fns.back().agg.filter = 2;  // FILTER (WHERE v <> 0), v read as a BOOLEAN
  WindowFn map = ValueAgg(AggKind::kMapAgg, 2, big, SqlType::Map(big.WithNullable(false), big), false, true,
                          B(K::kUnboundedPreceding), B(K::kCurrentRow));
  map.agg.key = 4;
  map.agg.key_type = big;
  fns.push_back(map);
  map.rows = false;
  map.start = B(K::kPreceding, 2);
  map.end = B(K::kFollowing, 2);
  map.exclude = X::kTies;
  fns.push_back(map);
  fns.push_back(ValueAgg(AggKind::kStddevSamp, 5, kWide, kWide, false, true, B(K::kPreceding, 2), B(K::kFollowing, 2)));
  fns.push_back(
      ValueAgg(AggKind::kVarPop, 5, kWide, kWide, false, false, B(K::kUnboundedPreceding), B(K::kCurrentRow)));
  fns.push_back(ValueAgg(AggKind::kVarSamp, 5, kWide, kWide, true, true, B(K::kPreceding, 3), B(K::kCurrentRow)));
  fns.push_back(ValueAgg(AggKind::kStddevPop, 5, kWide, kWide, false, true, B(K::kPreceding, 1), B(K::kFollowing, 1)));
  fns.back().exclude = X::kCurrentRow;
  fns.push_back(ValueAgg(AggKind::kVarSamp, 2, kNarrow, kNarrow, false, true, B(K::kPreceding, 3), B(K::kCurrentRow)));
  fns.push_back(ValueAgg(AggKind::kStddevPop, 2, big, big, true, false, B(K::kUnboundedPreceding), B(K::kCurrentRow)));
  fns.push_back(ValueAgg(AggKind::kBitAnd, 2, big, big, false, true, B(K::kPreceding, 2), B(K::kFollowing, 1)));
  fns.push_back(ValueAgg(AggKind::kBitOr, 4, big, big, false, false, B(K::kUnboundedPreceding), B(K::kCurrentRow)));
  fns.push_back(ValueAgg(AggKind::kBitXor, 2, big, big, false, true, B(K::kPreceding, 1), B(K::kFollowing, 1)));
  fns.back().exclude = X::kCurrentRow;
  fns.push_back(ValueAgg(AggKind::kBitXor, 4, big, big, true, false, B(K::kPreceding, 3), B(K::kCurrentRow)));
  WindowFn arg = ValueAgg(AggKind::kArgMin, 2, big, big, false, true, B(K::kPreceding, 2), B(K::kFollowing, 1));
  arg.agg.key = 4;
  arg.agg.key_type = big;
  fns.push_back(arg);
  arg.agg.kind = AggKind::kArgMax;
  arg.rows = false;
  arg.exclude = X::kTies;
  fns.push_back(arg);
  arg.agg.filter = 2;
  arg.agg.kind = AggKind::kArgMin;
  fns.push_back(arg);
  return fns;
}

TEST_CASE("window: DISTINCT aggregates, ARRAY_AGG, MAP_AGG, STDDEV over DECIMAL, recomputed from scratch",
          "[operators][window]") {
  const std::vector<WindowFn> fns = ValueFunctions();
  const std::vector<SortKey> shapes[] = {{{1, false, true}}, {{1, true, false}}, {{1, false, false}, {2, false, true}}};
  uint64_t seed = 12100;
  for (const std::vector<SortKey>& keys : shapes) {
    Check([&] { return std::make_unique<WindowOp>(kValueTypes, std::vector<int>{0}, keys, fns); },
          [&](const ZSet& in) { return NaiveValueWindow(in, {0}, keys, fns); }, seed++, 120, RandomValueRow,
          kValueTypes);
    // Each alone: a change recomputes only the rows it reaches.
    for (const WindowFn& f : fns) {
      const std::vector<WindowFn> one = {f};
      Check([&] { return std::make_unique<WindowOp>(kValueTypes, std::vector<int>{0}, keys, one); },
            [&](const ZSet& in) { return NaiveValueWindow(in, {0}, keys, one); }, seed++, 40, RandomValueRow,
            kValueTypes);
    }
  }
}

// GROUPS frames and EXCLUDE variants (with the functions of AllFunctions, one set).
std::vector<WindowFn> GroupsAndExclude() {
  std::vector<WindowFn> fns;
  auto groups = [](WindowFn f) {
    f.rows = false;
    f.groups = true;
    return f;
  };
  using X = WindowFn::Exclude;
  auto exclude = [](WindowFn f, X x) {
    f.exclude = x;
    return f;
  };
  fns.push_back(groups(Agg(AggKind::kSum, 2, false, false, B(K::kPreceding, 1), B(K::kFollowing, 1))));
  fns.push_back(groups(Agg(AggKind::kCountStar, -1, false, false, B(K::kPreceding, 2), B(K::kCurrentRow))));
  fns.push_back(groups(Agg(AggKind::kMin, 2, false, false, B(K::kFollowing, 1), B(K::kFollowing, 2))));
  fns.push_back(groups(Agg(AggKind::kSum, 3, true, false, B(K::kUnboundedPreceding), B(K::kPreceding, 1))));
  WindowFn first = Fn(WindowFnKind::kFirstValue, 2);
  first.start = B(K::kPreceding, 1);
  first.end = B(K::kCurrentRow);
  fns.push_back(groups(first));
  fns.push_back(exclude(Agg(AggKind::kSum, 2, false, true, B(K::kPreceding, 2), B(K::kFollowing, 1)), X::kCurrentRow));
  fns.push_back(exclude(Agg(AggKind::kCount, 2, false, false, B(K::kPreceding, 2), B(K::kFollowing, 2)), X::kGroup));
  fns.push_back(exclude(Agg(AggKind::kMax, 2, false, false, B(K::kUnboundedPreceding), B(K::kCurrentRow)), X::kTies));
  fns.push_back(exclude(Agg(AggKind::kMin, 2, false, true, B(K::kPreceding, 1), B(K::kFollowing, 1)), X::kCurrentRow));
  fns.push_back(
      exclude(groups(Agg(AggKind::kAvg, 3, true, false, B(K::kPreceding, 1), B(K::kFollowing, 1))), X::kGroup));
  fns.push_back(exclude(Agg(AggKind::kSum, 3, true, true, B(K::kPreceding, 3), B(K::kCurrentRow)), X::kTies));
  WindowFn last = Fn(WindowFnKind::kLastValue, 2);
  last.rows = true;
  last.start = B(K::kPreceding, 2);
  last.end = B(K::kFollowing, 2);
  fns.push_back(exclude(last, X::kTies));
  fns.push_back(exclude(last, X::kGroup));
  WindowFn nth = Fn(WindowFnKind::kNthValue, 2);
  nth.offset = 2;
  fns.push_back(exclude(nth, X::kCurrentRow));
  fns.push_back(exclude(groups(nth), X::kTies));
  fns.push_back(exclude(Agg(AggKind::kCountStar, -1, false, false, B(K::kCurrentRow), B(K::kCurrentRow)), X::kTies));
  return fns;
}

TEST_CASE("window: GROUPS frames and EXCLUDE, recomputed from scratch", "[operators][window]") {
  const std::vector<WindowFn> fns = GroupsAndExclude();
  uint64_t seed = 8800;
  for (const std::vector<SortKey>& keys :
       {std::vector<SortKey>{{1, false, true}}, std::vector<SortKey>{{1, true, false}},
        std::vector<SortKey>{{1, false, true}, {2, true, false}}})
    Check([&] { return std::make_unique<WindowOp>(kTypes, std::vector<int>{0}, keys, fns); },
          [&](const ZSet& in) { return NaiveWindow(in, {0}, keys, fns); }, seed++, 150);
}

// One function per operator: a change recomputes only the rows it reaches, so each function's
// reach is exercised on its own (with all functions together NTILE reaches everything).
TEST_CASE("window: each function alone recomputes only what a change reaches", "[operators][window]") {
  std::vector<WindowFn> fns = AllFunctions();
  for (const WindowFn& f : GroupsAndExclude()) fns.push_back(f);
  WindowFn lag3 = Fn(WindowFnKind::kLag, 2);
  lag3.offset = -3;  // LAG with a negative offset reads ahead
  fns.push_back(lag3);
  const std::vector<SortKey> shapes[] = {{{1, false, true}}, {{1, true, false}}, {{1, false, false}, {2, false, true}}};
  uint64_t seed = 9900;
  for (const WindowFn& f : fns)
    for (const std::vector<SortKey>& keys : shapes) {
      const std::vector<WindowFn> one = {f};
      Check([&] { return std::make_unique<WindowOp>(kTypes, std::vector<int>{0}, keys, one); },
            [&](const ZSet& in) { return NaiveWindow(in, {0}, keys, one); }, seed++, 25);
    }
}

// Discarding rows behind a waterline of the order key: random changes at or after the waterline,
// which moves forward between steps; after every step I(output) equals the functions recomputed
// over all the input (the discarded rows included), a restored copy goes on identically, and the
// rows kept stay few however many steps run.
void CheckDiscarding(const std::vector<WindowFn>& fns, bool not_null, uint64_t seed, int sequences, int steps,
                     size_t max_kept, int check_every = 1) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const std::vector<int> partition = {0};
  const std::vector<SortKey> keys = {{1, false, true}};
  for (int s = 0; s < sequences; ++s) {
    auto cell = std::make_shared<WaterlineCell>();
    auto make = [&] {
      auto op = std::make_unique<WindowOp>(kTypes, partition, keys, fns);
      op->SetOrderKeyNotNull(not_null);
      op->SetWaterline(WaterlineRef(cell, SqlType::Of(TypeId::kBigInt)));
      return op;
    };
    std::unique_ptr<WindowOp> op = make(), restored;
    REQUIRE(op->discards());
    ZSet in, out;
    int64_t w = 0;
    const int restore_at = pick(0, steps - 1);
    size_t kept = 0;
    for (int step = 0; step < steps; ++step) {
      std::vector<std::pair<Row, int64_t>> ch;
      for (int k = pick(0, 6); k > 0; --k) {
        // A delete of a row at or after the waterline, or an insert there.
        std::vector<const Row*> live;
        for (const auto& [r, wt] : in)
          if (r[1].IsNull() || r[1].i >= w) live.push_back(&r);
        if (!live.empty() && pick(0, 9) < 3) {
          Row r = *live[pick(0, static_cast<int>(live.size()) - 1)];
          ch.emplace_back(r, -1);
          AddInto(&in, r, -1);
        } else {
          Row r = RandomRow(rng);
          r[1] = !not_null && pick(0, 9) == 0 ? Value::Null() : Value::Int(w + pick(0, 5));
          ch.emplace_back(r, 1);
          AddInto(&in, r, 1);
        }
      }
      // The waterline moves (as a lateness operator's would, before the window sees the step).
      w += pick(0, 2);
      cell->known = true;
      cell->value = Value::Int(w);
      Batch b = MakeBatch(kTypes, ch);
      const Batch* ptr[] = {&b};
      Batch d = op->Step(ptr);
      if (restored) {
        Batch d2 = restored->Step(ptr);
        REQUIRE(Encoded(d) == Encoded(d2));
      }
      for (size_t r = 0; r < d.size(); ++r) {
        Row row;
        for (size_t c = 0; c < d.width(); ++c) row.push_back(d.Get(c, r));
        AddInto(&out, row, d.weights[r]);
      }
      if (step % check_every == 0 || step == steps - 1) {  // (the naive evaluation is slow)
        ZSet want = NaiveWindow(in, partition, keys, fns);
        INFO("sequence " << s << " step " << step << " waterline " << w << "\nactual\n"
                         << Show(out) << "expected\n"
                         << Show(want));
        REQUIRE(out == want);
      }
      kept = std::max(kept, op->StateRows());
      if (step == restore_at) {
        restored = make();
        std::string state = Save(*op);
        StateReader r(state);
        restored->RestoreState(r);
        REQUIRE(Save(*restored) == state);
      }
    }
    INFO("rows kept at most " << kept << " of " << in.size());
    CHECK(kept <= max_kept);
  }
}

std::vector<WindowFn> RangeFunctions() {
  std::vector<WindowFn> fns;
  fns.push_back(Agg(AggKind::kSum, 2, false, false, B(K::kPreceding, 2), B(K::kCurrentRow)));
  fns.push_back(Agg(AggKind::kCount, 2, false, false, B(K::kPreceding, 1), B(K::kFollowing, 1)));
  fns.push_back(Agg(AggKind::kMin, 2, false, false, B(K::kCurrentRow), B(K::kFollowing, 2)));
  fns.push_back(Agg(AggKind::kMax, 2, false, false, B(K::kPreceding, 3), B(K::kPreceding, 1)));
  fns.push_back(Agg(AggKind::kAvg, 3, true, false, B(K::kPreceding, 2), B(K::kCurrentRow)));
  fns.back().exclude = WindowFn::Exclude::kCurrentRow;
  WindowFn first = Fn(WindowFnKind::kFirstValue, 2);
  first.start = B(K::kPreceding, 1);
  first.end = B(K::kFollowing, 1);
  fns.push_back(first);
  return fns;
}

TEST_CASE("window: rows behind the waterline are discarded, RANGE frames over a nullable key", "[operators][window]") {
  CheckDiscarding(RangeFunctions(), false, 1100, 40, 40, 10000);
  // Long runs: the state stays small (rows within a few keys of the waterline, and NULL keys).
  CheckDiscarding(RangeFunctions(), false, 1200, 2, 400, 400, 100);
}

TEST_CASE("window: rows behind the waterline are discarded, any bounded frame over a NOT NULL key",
          "[operators][window]") {
  std::vector<WindowFn> fns = RangeFunctions();
  for (WindowFnKind k : {WindowFnKind::kRowNumber, WindowFnKind::kRank, WindowFnKind::kDenseRank}) fns.push_back(Fn(k));
  fns.push_back(Fn(WindowFnKind::kLag, 2));
  fns.back().offset = 2;
  fns.push_back(Fn(WindowFnKind::kLead, 2));
  fns.back().default_col = 4;
  fns.push_back(Agg(AggKind::kSum, 2, false, true, B(K::kPreceding, 2), B(K::kFollowing, 1)));
  fns.push_back(Agg(AggKind::kCountStar, -1, false, false, B(K::kPreceding, 1), B(K::kFollowing, 1)));
  fns.back().groups = true;
  WindowFn nth = Fn(WindowFnKind::kNthValue, 2);
  nth.offset = 2;
  nth.rows = true;
  nth.start = B(K::kPreceding, 2);
  nth.end = B(K::kFollowing, 2);
  nth.exclude = WindowFn::Exclude::kTies;
  fns.push_back(nth);
  CheckDiscarding(fns, true, 1300, 40, 40, 10000);
  CheckDiscarding(fns, true, 1400, 2, 400, 200, 100);
  // Each alone, so that the rows kept are those one function needs.
  uint64_t seed = 1500;
  for (const WindowFn& f : fns) CheckDiscarding({f}, true, seed++, 10, 30, 10000);
}

TEST_CASE("window: no discarding where a future change can reach any row", "[operators][window]") {
  auto cell = std::make_shared<WaterlineCell>();
  auto discards = [&](std::vector<WindowFn> fns, bool not_null) {
    WindowOp op(kTypes, {0}, {{1, false, true}}, std::move(fns));
    op.SetOrderKeyNotNull(not_null);
    op.SetWaterline(WaterlineRef(cell, SqlType::Of(TypeId::kBigInt)));
    return op.discards();
  };
  CHECK(discards({Agg(AggKind::kSum, 2, false, false, B(K::kPreceding, 2), B(K::kCurrentRow))}, false));
  CHECK_FALSE(discards({Agg(AggKind::kSum, 2, false, false, B(K::kUnboundedPreceding), B(K::kCurrentRow))}, true));
  CHECK_FALSE(discards({Agg(AggKind::kSum, 2, false, false, B(K::kCurrentRow), B(K::kUnboundedFollowing))}, true));
  CHECK_FALSE(discards({Fn(WindowFnKind::kRowNumber)}, false));  // a NULL key would renumber every row
  CHECK(discards({Fn(WindowFnKind::kRowNumber)}, true));
  CHECK_FALSE(discards({Agg(AggKind::kSum, 2, false, true, B(K::kPreceding, 2), B(K::kCurrentRow))}, false));
  CHECK_FALSE(discards({Fn(WindowFnKind::kCumeDist)}, true));
  WindowOp desc(kTypes, {0}, {{1, true, false}}, {Fn(WindowFnKind::kRowNumber)});
  desc.SetOrderKeyNotNull(true);
  desc.SetWaterline(WaterlineRef(cell, SqlType::Of(TypeId::kBigInt)));
  CHECK_FALSE(desc.discards());
}

TEST_CASE("window: RANGE frames with INTERVAL offsets over DATE and TIMESTAMP keys", "[operators][window]") {
  // The order key o is a DATE (days) or a TIMESTAMP (microseconds) around the ends of January and
  // February 2024 (a leap year), so month offsets clamp days and day-time offsets cross months.
  const int64_t jan27 = 19749;  // 2024-01-27
  auto bound = [](K kind, int64_t v, WindowBound::Offset o) {
    WindowBound b{kind, 0, Value::Int(v)};
    b.offset = o;
    return b;
  };
  using O = WindowBound::Offset;
  const int64_t hour = kMicrosPerDay / 24;
  for (const bool date : {true, false}) {
    auto row = [&](std::mt19937_64& rng) {
      auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
      Row r = RandomRow(rng);
      if (!r[1].IsNull()) {
        const int64_t day = jan27 + pick(0, 40);
        r[1] = Value::Int(date ? day : day * kMicrosPerDay + pick(0, 3) * 6 * hour);
      }
      return r;
    };
    std::vector<WindowFn> fns;
    auto add = [&](AggKind kind, int arg, WindowBound start, WindowBound end) {
      fns.push_back(Agg(kind, arg, false, false, start, end));
      fns.back().date_key = date;
    };
    add(AggKind::kSum, 2, bound(K::kPreceding, 30 * kMicrosPerDay, O::kMicros), B(K::kCurrentRow));
    add(AggKind::kCountStar, -1, bound(K::kPreceding, 1, O::kMonths), B(K::kCurrentRow));
    add(AggKind::kCount, 2, bound(K::kPreceding, 36 * hour, O::kMicros), bound(K::kFollowing, 36 * hour, O::kMicros));
    add(AggKind::kMax, 2, bound(K::kPreceding, 21 * kMicrosPerDay, O::kMicros), bound(K::kFollowing, 1, O::kMonths));
    add(AggKind::kMin, 2, bound(K::kFollowing, 1, O::kMonths), B(K::kUnboundedFollowing));
    add(AggKind::kSum, 2, bound(K::kPreceding, 2, O::kMonths), bound(K::kPreceding, 13 * hour, O::kMicros));
    add(AggKind::kAvg, 2, bound(K::kPreceding, 0, O::kMicros), bound(K::kFollowing, 0, O::kMonths));
    fns.push_back(Fn(WindowFnKind::kLastValue, 2));
    fns.back().start = bound(K::kPreceding, 7 * kMicrosPerDay, O::kMicros);
    fns.back().end = bound(K::kFollowing, 6 * hour, O::kMicros);
    fns.back().date_key = date;
    for (const SortKey& key : {SortKey{1, false, true}, SortKey{1, true, false}}) {
      const std::vector<SortKey> keys = {key};
      Check([&] { return std::make_unique<WindowOp>(kTypes, std::vector<int>{0}, keys, fns); },
            [&](const ZSet& in) { return NaiveWindow(in, {0}, keys, fns); }, date ? 7900 : 7950, 150, row);
    }
  }
}

TEST_CASE("window: a change touches only its partition", "[operators][window]") {
  std::vector<WindowFn> fns = {Fn(WindowFnKind::kRowNumber)};
  WindowOp op(kTypes, {0}, {{1, false, true}}, fns);
  std::vector<std::pair<Row, int64_t>> load;
  for (int p = 0; p < 100; ++p)
    for (int o = 0; o < 10; ++o)
      load.push_back({{Value::Int(p), Value::Int(o), Value::Int(0), Value::Double(0), Value::Int(0)}, 1});
  Batch b = MakeBatch(kTypes, load);
  const Batch* ptr[] = {&b};
  REQUIRE(op.Step(ptr).size() == 1000);
  // A new first row of partition 7 renumbers its 10 rows: -10 +11, nothing else.
  Batch one = MakeBatch(kTypes, {{{Value::Int(7), Value::Int(-1), Value::Int(0), Value::Double(0), Value::Int(0)}, 1}});
  const Batch* ptr1[] = {&one};
  Batch d = op.Step(ptr1);
  REQUIRE(d.size() == 21);
  for (size_t r = 0; r < d.size(); ++r) REQUIRE(d.Get(0, r).i == 7);
}

ZSet NaiveRankTopK(const ZSet& in, const std::vector<int>& partition, const std::vector<SortKey>& keys, RankKind kind,
                   int64_t limit) {
  WindowFn f = Fn(kind == RankKind::kRowNumber ? WindowFnKind::kRowNumber
                  : kind == RankKind::kRank    ? WindowFnKind::kRank
                                               : WindowFnKind::kDenseRank);
  ZSet out;
  for (const auto& [row, w] : NaiveWindow(in, partition, keys, {f}))
    if (row.back().i <= limit) out[row] = w;
  return out;
}

TEST_CASE("top-K per partition: I(output) equals the rows ranked <= N recomputed from scratch", "[operators][window]") {
  uint64_t seed = 7800;
  const std::vector<SortKey> keys = {{1, true, false}};  // ORDER BY o DESC NULLS LAST: ties and NULLs
  for (RankKind kind : {RankKind::kRowNumber, RankKind::kRank, RankKind::kDenseRank})
    for (int64_t limit : {1, 2, 4}) {
      Check([&] { return std::make_unique<TopKOp>(kTypes, keys, limit, 0, std::vector<int>{0}, kind); },
            [&](const ZSet& in) { return NaiveRankTopK(in, {0}, keys, kind, limit); }, seed++, 80);
    }
}

}  // namespace
}  // namespace fld
