#include "core/operators/window.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <unordered_map>

#include "core/common/error.h"
#include "core/common/int512.h"
#include "core/expr/time.h"
#include "core/operators/moment.h"

namespace fld {

namespace {

const char* FnName(const WindowFn& f) {
  switch (f.kind) {
    case WindowFnKind::kRowNumber:
      return "ROW_NUMBER";
    case WindowFnKind::kRank:
      return "RANK";
    case WindowFnKind::kDenseRank:
      return "DENSE_RANK";
    case WindowFnKind::kLag:
      return "LAG";
    case WindowFnKind::kLead:
      return "LEAD";
    case WindowFnKind::kFirstValue:
      return "FIRST_VALUE";
    case WindowFnKind::kLastValue:
      return "LAST_VALUE";
    case WindowFnKind::kAggregate:
      return AggName(f.agg.kind);
    case WindowFnKind::kNtile:
      return "NTILE";
    case WindowFnKind::kPercentRank:
      return "PERCENT_RANK";
    case WindowFnKind::kCumeDist:
      return "CUME_DIST";
    case WindowFnKind::kNthValue:
      return "NTH_VALUE";
  }
  return "?";
}

std::string BoundText(const WindowBound& b, bool rows) {
  auto off = [&] {
    if (rows) return fmt::format("{}", b.rows);
    if (b.offset == WindowBound::Offset::kMicros) return fmt::format("INTERVAL {} MICROSECONDS", b.range.i);
    if (b.offset == WindowBound::Offset::kMonths) return fmt::format("INTERVAL {} MONTHS", b.range.i);
    return b.range.kind == Value::Kind::kDouble ? fmt::format("{}", b.range.d) : fmt::format("{}", b.range.i);
  };
  switch (b.kind) {
    case WindowBound::Kind::kUnboundedPreceding:
      return "UNBOUNDED PRECEDING";
    case WindowBound::Kind::kPreceding:
      return off() + " PRECEDING";
    case WindowBound::Kind::kCurrentRow:
      return "CURRENT ROW";
    case WindowBound::Kind::kFollowing:
      return off() + " FOLLOWING";
    case WindowBound::Kind::kUnboundedFollowing:
      return "UNBOUNDED FOLLOWING";
  }
  return "?";
}

bool Framed(const WindowFn& f) {
  return f.kind == WindowFnKind::kFirstValue || f.kind == WindowFnKind::kLastValue ||
         f.kind == WindowFnKind::kNthValue || f.kind == WindowFnKind::kAggregate;
}

// v + delta (delta: the offset, negated when `minus`), saturating at the ends of int64.
Value Shift(const Value& v, const Value& off, bool minus) {
  if (v.kind == Value::Kind::kDouble) return Value::Double(minus ? v.d - off.d : v.d + off.d);
  int64_t r;
  if (minus ? __builtin_sub_overflow(v.i, off.i, &r) : __builtin_add_overflow(v.i, off.i, &r))
    r = (minus ? off.i > 0 : off.i < 0) ? INT64_MIN : INT64_MAX;
  return Value::Int(r);
}

int64_t Saturate(__int128 x) {
  return x > INT64_MAX ? INT64_MAX : x < INT64_MIN ? INT64_MIN : static_cast<int64_t>(x);
}

// The order-key value a RANGE bound reaches from the key v (minus: v - offset, else v + offset).
// A DATE key with a day-time offset is compared as the date's midnight, so the reached instant
// is rounded to a date: up (round_up) for a bound that keeps the keys at or after it, down for
// one that keeps those at or before it. A months offset moves the calendar date (the day clamped
// to the month's last), keeping a TIMESTAMP's time of day.
Value RangeTarget(const Value& v, const WindowBound& b, bool date_key, bool minus, bool round_up) {
  switch (b.offset) {
    case WindowBound::Offset::kNumber:
      return Shift(v, b.range, minus);
    case WindowBound::Offset::kMicros: {
      if (!date_key) return Shift(v, b.range, minus);
      const __int128 t = static_cast<__int128>(v.i) * kMicrosPerDay + (minus ? -b.range.i : b.range.i);
      __int128 q = t / kMicrosPerDay;
      const __int128 r = t % kMicrosPerDay;
      if (r < 0) --q;  // floor
      if (r != 0 && round_up) ++q;
      return Value::Int(Saturate(q));
    }
    case WindowBound::Offset::kMonths: {
      // Offsets beyond any representable date reach past every key.
      const int64_t m = std::min<int64_t>(b.range.i, 12 * 1000000);
      if (date_key) return Value::Int(AddMonthsToDays(v.i, minus ? -m : m));
      const int64_t days = FloorDiv(v.i, kMicrosPerDay), tod = v.i - days * kMicrosPerDay;
      return Value::Int(Saturate(static_cast<__int128>(AddMonthsToDays(days, minus ? -m : m)) * kMicrosPerDay + tod));
    }
  }
  return v;
}

bool IsMomentKind(AggKind k) {
  return k == AggKind::kStddevPop || k == AggKind::kStddevSamp || k == AggKind::kVarPop || k == AggKind::kVarSamp;
}

// Aggregates computed from the values of each frame rather than from prefix sums: the DISTINCT
// ones, ARRAY_AGG, MAP_AGG, and STDDEV/VARIANCE over DECIMAL (exactly, as GROUP BY does).
bool ByValues(const AggSpec& a) {
  return a.distinct || a.kind == AggKind::kArrayAgg || a.kind == AggKind::kMapAgg || a.kind == AggKind::kArgMin ||
         a.kind == AggKind::kArgMax || a.kind == AggKind::kBitAnd || a.kind == AggKind::kBitOr ||
         a.kind == AggKind::kBitXor || (IsMomentKind(a.kind) && a.arg_type.id == TypeId::kDecimal);
}

// The values of a frame as a multiset (value -> copies), with exact running sums over integers
// and decimals (in units of the scale): of every copy, and of each distinct value once.
struct FrameValues {
  const AggSpec* agg;
  bool exact;
  bool keep_nulls;  // ARRAY_AGG(DISTINCT x) lists NULL too
  std::map<Value, int64_t> values;
  int64_t n = 0;  // copies
  Int512 sum, sumsq, dsum, dsumsq;

  explicit FrameValues(const AggSpec* a)
      : agg(a),
        exact(a->arg_type.phys() == PhysType::kI64 || a->arg_type.IsWideDecimal()),
        keep_nulls(a->kind == AggKind::kArrayAgg) {}
  void Add(const Value& v, int64_t w) {
    if (v.IsNull() && !keep_nulls) return;
    auto it = values.try_emplace(v, 0).first;
    const bool was = it->second > 0;
    it->second += w;
    const bool is = it->second > 0;
    if (it->second == 0) values.erase(it);
    if (v.IsNull()) return;
    n += w;
    if (!exact) return;
    const Int512 x = Int512::Of(UnscaledDecimal(v, agg->arg_type));
    const Int512 xw = x * Int512::Of(w), xxw = x * xw;
    sum = sum + xw;
    sumsq = sumsq + xxw;
    if (was != is) {
      dsum = is ? dsum + x : dsum - x;
      dsumsq = is ? dsumsq + x * x : dsumsq - x * x;
    }
  }
  // The non-NULL distinct values.
  int64_t Distinct() const {
    const int64_t k = static_cast<int64_t>(values.size());
    return !values.empty() && values.begin()->first.IsNull() ? k - 1 : k;
  }

  Value Result() const {
    const AggSpec& a = *agg;
    const bool d = a.distinct;
    const int64_t c = d ? Distinct() : n;
    if (a.kind == AggKind::kCount) return Value::Int(c);
    if (a.kind == AggKind::kArrayAgg) {  // DISTINCT: the values in order
      if (values.empty()) return Value::Null();
      std::vector<Value> elements;
      for (const auto& [v, w] : values) elements.push_back(v);
      return Value::String(EncodeArrayValue(elements, a.arg_type));
    }
    if (c == 0) return Value::Null();
    if (a.kind == AggKind::kBitAnd || a.kind == AggKind::kBitOr || a.kind == AggKind::kBitXor) {
      // AND and OR of the values; XOR of every copy (of each distinct value once with DISTINCT).
      uint64_t r = a.kind == AggKind::kBitAnd ? ~uint64_t{0} : 0;
      for (const auto& [v, w] : values) {
        if (v.IsNull()) continue;
        const uint64_t x = static_cast<uint64_t>(v.i);
        if (a.kind == AggKind::kBitAnd)
          r &= x;
        else if (a.kind == AggKind::kBitOr)
          r |= x;
        else if (d || (w & 1))
          r ^= x;
      }
      return Value::Int(static_cast<int64_t>(r));
    }
    if (!exact) {
      // DOUBLE: added in value order, so the result does not depend on the order rows came in.
      double s = 0, sq = 0;
      for (const auto& [v, w] : values) {
        if (v.IsNull()) continue;
        const double k = d ? 1.0 : static_cast<double>(w);
        s += v.d * k;
        sq += v.d * v.d * k;
      }
      if (a.kind == AggKind::kSum) return Value::Double(s);
      if (a.kind == AggKind::kAvg) return AverageOf(a.arg_type, c, 0, s);
      return MomentOf(a.kind, c, Value::Double(s), Value::Double(sq), a.arg_type);
    }
    const Int512& s512 = d ? dsum : sum;
    const Int512& sq512 = d ? dsumsq : sumsq;
    if (IsMomentKind(a.kind)) {
      if (a.arg_type.IsWideDecimal()) return WideMomentOf(a.kind, Int512::Of(c), s512, sq512, a.arg_type);
      Int128 s, sq;
      if (!s512.ToInt128(&s) || !sq512.ToInt128(&sq))
        Fail(ErrorKind::kRuntime, "numeric overflow in {}", AggName(a.kind));
      return MomentOfSums(a.kind, c, s, sq, a.arg_type);
    }
    Int128 s;
    if (!s512.ToInt128(&s)) Fail(ErrorKind::kRuntime, "DECIMAL overflow in SUM");
    if (a.kind == AggKind::kSum && a.result_type.IsWideDecimal()) {
      if (!DecimalFits(s, a.result_type.precision))
        Fail(ErrorKind::kRuntime, "DECIMAL overflow in SUM: the sum does not fit {}",
             a.result_type.WithNullable(true).ToString());
      return DecimalValue(s, a.result_type);
    }
    if (a.kind == AggKind::kAvg && a.arg_type.IsWideDecimal()) return DecimalValue(s / c, a.arg_type);
    if (s > INT64_MAX || s < INT64_MIN) Fail(ErrorKind::kRuntime, "integer overflow in SUM");
    if (a.kind == AggKind::kSum) return Value::Int(static_cast<int64_t>(s));
    return AverageOf(a.arg_type, c, static_cast<int64_t>(s), 0);
  }
};

}  // namespace

WindowOp::WindowOp(std::vector<PhysType> in_types, std::vector<int> partition, std::vector<SortKey> order,
                   std::vector<WindowFn> fns)
    : PartitionedOperator(Partitions<Part>::Codec{
          [] { return Part{}; },
          [this](const Part& p, std::string* out) {
            // The rows (SaveSortedRows' form: the count, then per row its encoding and weight, in
            // order), then the discarded counts.
            StateWriter w(out);
            w.U64(p.rows.size());
            for (const auto& [okey, weight] : p.rows) SaveRow(RowOfOrderKey(okey.view(), order_, in_types_), weight, w);
            w.I64(p.dropped_rows);
            w.I64(p.dropped_groups);
          },
          [this](std::string_view value, Part* p) {
            StateReader r(value);
            const uint64_t n = r.U64();
            std::string okey;
            for (uint64_t i = 0; i < n; ++i) {
              StoredRowKey(r.View(), &okey);
              const int64_t weight = r.I64();
              if (weight == 0) Fail(ErrorKind::kCorruption, "a window's stored row has weight 0");
              AddRow(p, okey, weight);
            }
            p->dropped_rows = r.I64();
            p->dropped_groups = r.I64();
            if (!r.AtEnd()) Fail(ErrorKind::kCorruption, "a window's stored partition has bytes after its counts");
          },
          [](const Part& p) { return p.rows.empty() && p.dropped_rows == 0; },
          [](const Part& p) { return p.rows.size() * kInlineKeyEntryBytes + p.heap; }}),
      in_types_(std::move(in_types)),
      partition_(std::move(partition)),
      order_(std::move(order)),
      fns_(std::move(fns)),
      cache_(std::make_unique<RowCache>()) {
  out_types_ = in_types_;
  for (const WindowFn& f : fns_) {
    out_types_.push_back(f.result);
    need_base_ = need_base_ || f.kind == WindowFnKind::kRowNumber || f.kind == WindowFnKind::kRank ||
                 f.kind == WindowFnKind::kDenseRank;
  }
}

std::string WindowOp::Describe() const {
  std::string s = "window";
  if (!partition_.empty()) {
    s += " PARTITION BY";
    for (int c : partition_) s += fmt::format(" ${}", c);
  }
  if (!order_.empty()) {
    s += " ORDER BY";
    for (const SortKey& k : order_)
      s += fmt::format(" ${}{}{}", k.column, k.desc ? " DESC" : "", k.nulls_first ? " NULLS FIRST" : " NULLS LAST");
  }
  for (const WindowFn& f : fns_) {
    s += fmt::format(" {}(", FnName(f));
    if (f.kind == WindowFnKind::kAggregate && f.agg.kind != AggKind::kCountStar) {
      if (f.agg.distinct) s += "DISTINCT ";
      if (f.agg.kind == AggKind::kMapAgg) s += fmt::format("${}, ", f.agg.key);
      s += fmt::format("${}", f.agg.arg);
      if (f.agg.filter >= 0) s += fmt::format(" FILTER ${}", f.agg.filter);
    }
    if (f.arg >= 0) s += fmt::format("${}", f.arg);
    if (f.kind == WindowFnKind::kNtile) s += fmt::format("{}", f.offset);
    if (f.kind == WindowFnKind::kNthValue) s += fmt::format(", {}", f.offset);
    if (f.kind == WindowFnKind::kLag || f.kind == WindowFnKind::kLead) {
      s += fmt::format(", {}", f.offset);
      if (f.default_col >= 0) s += fmt::format(", ${}", f.default_col);
    }
    s += ")";
    if (Framed(f)) {
      const bool counted = f.rows || f.groups;
      s += fmt::format(" {} {} .. {}",
                       f.rows     ? "ROWS"
                       : f.groups ? "GROUPS"
                                  : "RANGE",
                       BoundText(f.start, counted), BoundText(f.end, counted));
      if (f.exclude == WindowFn::Exclude::kCurrentRow) s += " EXCLUDE CURRENT ROW";
      if (f.exclude == WindowFn::Exclude::kGroup) s += " EXCLUDE GROUP";
      if (f.exclude == WindowFn::Exclude::kTies) s += " EXCLUDE TIES";
    }
  }
  if (gc_) s += fmt::format(" (discards rows behind the waterline of ${})", order_[0].column);
  return s;
}

std::string WindowOp::PartitionKey(const Row& row) const {
  std::string key;
  for (int c : partition_) EncodeValue(&key, row[c]);
  return key;
}

std::vector<WindowOp::Out> WindowOp::Compute(const std::vector<const Row*>& rows, size_t lo, size_t hi, int64_t base,
                                             int64_t base_groups) const {
  const int64_t n = static_cast<int64_t>(rows.size());
  // Peer groups: [peer_start, peer_end) and the group's number.
  std::vector<int64_t> peer_start(n), peer_end(n), dense(n);
  for (int64_t i = 0; i < n; ++i) {
    const bool peer = i > 0 && (rows[i] == rows[i - 1] || CompareByKeys(order_, *rows[i - 1], *rows[i]) == 0);
    peer_start[i] = peer ? peer_start[i - 1] : i;
    dense[i] = peer ? dense[i - 1] : (i > 0 ? dense[i - 1] : 0) + 1;
  }
  for (int64_t i = n - 1; i >= 0; --i)
    peer_end[i] = i + 1 < n && peer_start[i + 1] == peer_start[i] ? peer_end[i + 1] : i + 1;
  // Peer group g (0-based, dense[i] - 1): its first row and the row after its last.
  const int64_t ngroups = n > 0 ? dense[n - 1] : 0;
  std::vector<int64_t> group_start(ngroups), group_end(ngroups);
  for (int64_t i = 0; i < n; ++i) {
    group_end[dense[i] - 1] = i + 1;
    if (peer_start[i] == i) group_start[dense[i] - 1] = i;
  }

  // Only the rows [L, H) are computed.
  const int64_t L = static_cast<int64_t>(lo), H = static_cast<int64_t>(hi);
  std::vector<std::vector<Value>> vals(fns_.size(), std::vector<Value>(static_cast<size_t>(n)));
  std::vector<int64_t> fs(n), fe(n);
  for (size_t f = 0; f < fns_.size(); ++f) {
    const WindowFn& fn = fns_[f];
    std::vector<Value>& out = vals[f];
    switch (fn.kind) {
      case WindowFnKind::kRowNumber:
        for (int64_t i = L; i < H; ++i) out[i] = Value::Int(base + i + 1);
        continue;
      case WindowFnKind::kRank:
        for (int64_t i = L; i < H; ++i) out[i] = Value::Int(base + peer_start[i] + 1);
        continue;
      case WindowFnKind::kDenseRank:
        for (int64_t i = L; i < H; ++i) out[i] = Value::Int(base_groups + dense[i]);
        continue;
      case WindowFnKind::kNtile: {
        // q rows per bucket, the first r buckets one more.
        const int64_t q = n / fn.offset, r = n % fn.offset, big = r * (q + 1);
        for (int64_t i = L; i < H; ++i) out[i] = Value::Int(i < big ? i / (q + 1) + 1 : r + (i - big) / q + 1);
        continue;
      }
      case WindowFnKind::kPercentRank:
        for (int64_t i = L; i < H; ++i)
          out[i] = Value::Double(n > 1 ? static_cast<double>(peer_start[i]) / static_cast<double>(n - 1) : 0.0);
        continue;
      case WindowFnKind::kCumeDist:
        for (int64_t i = L; i < H; ++i)
          out[i] = Value::Double(static_cast<double>(peer_end[i]) / static_cast<double>(n));
        continue;
      case WindowFnKind::kLag:
      case WindowFnKind::kLead: {
        const int64_t off = std::clamp<int64_t>(fn.offset, -n - 1, n + 1);
        for (int64_t i = L; i < H; ++i) {
          const int64_t j = fn.kind == WindowFnKind::kLag ? i - off : i + off;
          if (j >= 0 && j < n)
            out[i] = (*rows[j])[fn.arg];
          else
            out[i] = fn.default_col >= 0 ? (*rows[i])[fn.default_col] : Value::Null();
        }
        continue;
      }
      default:
        break;
    }
    // The frame [fs, fe) of each row.
    const bool desc = !order_.empty() && order_[0].desc;
    const int key = order_.empty() ? -1 : order_[0].column;
    // The non-NULL rows of the order key (RANGE offsets search among them): [a, b).
    int64_t a = 0, b = n;
    if (!fn.rows && !fn.groups && key >= 0) {
      while (a < n && (*rows[a])[key].IsNull()) ++a;
      b = a;
      while (b < n && !(*rows[b])[key].IsNull()) ++b;
    }
    // Whether x sorts strictly before y by the order key.
    auto before = [&](const Value& x, const Value& y) { return desc ? y < x : x < y; };
    auto bound = [&](const WindowBound& bd, int64_t i, bool is_end) -> int64_t {
      switch (bd.kind) {
        case WindowBound::Kind::kUnboundedPreceding:
          return 0;
        case WindowBound::Kind::kUnboundedFollowing:
          return n;
        case WindowBound::Kind::kCurrentRow:
          if (fn.rows) return is_end ? i + 1 : i;
          return is_end ? peer_end[i] : peer_start[i];
        default:
          break;
      }
      const bool preceding = bd.kind == WindowBound::Kind::kPreceding;
      if (fn.groups) {
        // The first row (start) or the row after the last (end) of the group k back / ahead.
        const int64_t k = std::min<int64_t>(bd.rows, ngroups + 1);
        const int64_t g = dense[i] - 1 + (preceding ? -k : k);
        if (g < 0) return 0;
        if (g >= ngroups) return n;
        return is_end ? group_end[g] : group_start[g];
      }
      if (fn.rows) {
        const int64_t k = std::min<int64_t>(bd.rows, n + 1);
        const int64_t p = preceding ? i - k : i + k;
        return std::clamp<int64_t>(is_end ? p + 1 : p, 0, n);
      }
      const Value& v = (*rows[i])[key];
      if (v.IsNull()) return is_end ? peer_end[i] : peer_start[i];
      // PRECEDING moves against the sort direction: v - off ascending, v + off descending. The
      // start keeps the keys sorting at or after the target, the end those at or before it.
      const Value t = RangeTarget(v, bd, fn.date_key, preceding != desc, is_end == desc);
      std::vector<const Row*>::const_iterator first = rows.begin() + a, last = rows.begin() + b;
      auto it = is_end ? std::partition_point(first, last, [&](const Row* r) { return !before(t, (*r)[key]); })
                       : std::partition_point(first, last, [&](const Row* r) { return before((*r)[key], t); });
      return it - rows.begin();
    };
    for (int64_t i = L; i < H; ++i) {
      fs[i] = bound(fn.start, i, false);
      fe[i] = std::max(fs[i], bound(fn.end, i, true));
    }
    // The frame less what EXCLUDE takes out: up to three runs of rows, in order.
    struct Seg {
      int64_t s, e;
    };
    auto segments = [&](int64_t i, Seg* seg) -> int {
      if (fn.exclude == WindowFn::Exclude::kNoOthers) {
        seg[0] = {fs[i], fe[i]};
        return 1;
      }
      const int64_t xs = fn.exclude == WindowFn::Exclude::kCurrentRow ? i : peer_start[i];
      const int64_t xe = fn.exclude == WindowFn::Exclude::kCurrentRow ? i + 1 : peer_end[i];
      int k = 0;
      if (fs[i] < std::min(fe[i], xs)) seg[k++] = {fs[i], std::min(fe[i], xs)};
      if (fn.exclude == WindowFn::Exclude::kTies && fs[i] <= i && i < fe[i]) seg[k++] = {i, i + 1};
      if (std::max(fs[i], xe) < fe[i]) seg[k++] = {std::max(fs[i], xe), fe[i]};
      return k;
    };
    Seg seg[3];
    if (fn.kind == WindowFnKind::kFirstValue || fn.kind == WindowFnKind::kLastValue) {
      for (int64_t i = L; i < H; ++i) {
        const int k = segments(i, seg);
        if (k == 0) continue;
        out[i] = (*rows[fn.kind == WindowFnKind::kFirstValue ? seg[0].s : seg[k - 1].e - 1])[fn.arg];
      }
      continue;
    }
    if (fn.kind == WindowFnKind::kNthValue) {
      for (int64_t i = L; i < H; ++i) {
        int64_t left = fn.offset;
        for (int k = 0, ks = segments(i, seg); k < ks; ++k) {
          if (seg[k].e - seg[k].s >= left) {
            out[i] = (*rows[seg[k].s + left - 1])[fn.arg];
            break;
          }
          left -= seg[k].e - seg[k].s;
        }
      }
      continue;
    }
    const AggSpec& agg = fn.agg;
    if (ByValues(agg)) {
      // A row counts unless FILTER (ARRAY_AGG, MAP_AGG) says no.
      auto counts = [&](int64_t j) {
        if (agg.filter < 0) return true;
        const Value& f = (*rows[j])[agg.filter];
        return !f.IsNull() && f.i != 0;
      };
      if (agg.kind == AggKind::kArrayAgg && !agg.distinct) {
        // The values in frame order, NULL included; NULL over an empty frame.
        for (int64_t i = L; i < H; ++i) {
          std::vector<Value> elements;
          bool any = false;
          for (int k = 0, ks = segments(i, seg); k < ks; ++k)
            for (int64_t j = seg[k].s; j < seg[k].e; ++j)
              if (counts(j)) {
                any = true;
                elements.push_back((*rows[j])[agg.arg]);
              }
          if (any) out[i] = Value::String(EncodeArrayValue(elements, agg.arg_type));
        }
        continue;
      }
      if (agg.kind == AggKind::kMapAgg) {
        // One entry per non-NULL key, the largest value of a key winning (as in GROUP BY); NULL
        // over an empty frame.
        for (int64_t i = L; i < H; ++i) {
          std::map<Value, Value> entries;
          bool any = false;
          for (int k = 0, ks = segments(i, seg); k < ks; ++k)
            for (int64_t j = seg[k].s; j < seg[k].e; ++j) {
              if (!counts(j)) continue;
              any = true;
              const Value& key = (*rows[j])[agg.key];
              if (key.IsNull()) continue;
              const Value& v = (*rows[j])[agg.arg];
              auto [it, fresh] = entries.try_emplace(key, v);
              if (!fresh && it->second < v) it->second = v;
            }
          if (any) out[i] = Value::String(EncodeMapValue({entries.begin(), entries.end()}, agg.result_type));
        }
        continue;
      }
      if (agg.kind == AggKind::kArgMin || agg.kind == AggKind::kArgMax) {
        // As GROUP BY: the value at the smallest (largest) key, ties to the smallest (largest)
        // value; rows with a NULL key count only when every key is NULL (ARG_MIN: they sort
        // first). NULL over a frame with no rows.
        const bool is_min = agg.kind == AggKind::kArgMin;
        for (int64_t i = L; i < H; ++i) {
          const Value *bk = nullptr, *bv = nullptr;
          for (int k = 0, ks = segments(i, seg); k < ks; ++k)
            for (int64_t j = seg[k].s; j < seg[k].e; ++j) {
              if (!counts(j)) continue;
              const Value& key = (*rows[j])[agg.key];
              const Value& v = (*rows[j])[agg.arg];
              bool better;
              if (!bk)
                better = true;
              else if (is_min && key.IsNull() != bk->IsNull())
                better = bk->IsNull();  // a non-NULL key beats a NULL one
              else if (is_min)
                better = key < *bk || (!(*bk < key) && v < *bv);
              else
                better = *bk < key || (!(key < *bk) && *bv < v);
              if (better) bk = &key, bv = &v;
            }
          if (bv) out[i] = *bv;
        }
        continue;
      }
      if (fn.exclude != WindowFn::Exclude::kNoOthers) {
        for (int64_t i = L; i < H; ++i) {
          FrameValues fv(&agg);
          for (int k = 0, ks = segments(i, seg); k < ks; ++k)
            for (int64_t j = seg[k].s; j < seg[k].e; ++j)
              if (counts(j)) fv.Add((*rows[j])[agg.arg], 1);
          out[i] = fv.Result();
        }
        continue;
      }
      // A sliding multiset: both ends of the frame only move forward.
      FrameValues fv(&agg);
      int64_t wlo = L < H ? fs[L] : 0, whi = wlo;
      for (int64_t i = L; i < H; ++i) {
        for (; whi < fe[i]; ++whi)
          if (whi >= wlo && counts(whi)) fv.Add((*rows[whi])[agg.arg], 1);
        for (; wlo < fs[i]; ++wlo)
          if (wlo < whi && counts(wlo)) fv.Add((*rows[wlo])[agg.arg], -1);
        out[i] = fv.Result();
      }
      continue;
    }
    if (agg.kind == AggKind::kCountStar) {
      for (int64_t i = L; i < H; ++i) {
        int64_t c = 0;
        for (int k = 0, ks = segments(i, seg); k < ks; ++k) c += seg[k].e - seg[k].s;
        out[i] = Value::Int(c);
      }
      continue;
    }
    if (agg.kind == AggKind::kMin || agg.kind == AggKind::kMax) {
      const bool is_min = agg.kind == AggKind::kMin;
      if (fn.exclude != WindowFn::Exclude::kNoOthers) {
        // Over the runs, row by row.
        for (int64_t i = L; i < H; ++i) {
          const Value* best = nullptr;
          for (int k = 0, ks = segments(i, seg); k < ks; ++k)
            for (int64_t j = seg[k].s; j < seg[k].e; ++j) {
              const Value& v = (*rows[j])[agg.arg];
              if (!v.IsNull() && (!best || (is_min ? v < *best : *best < v))) best = &v;
            }
          if (best) out[i] = *best;
        }
        continue;
      }
      // A sliding multiset: both ends of the frame only move forward.
      std::map<Value, int64_t> window;
      int64_t wlo = L < H ? fs[L] : 0, whi = wlo;
      for (int64_t i = L; i < H; ++i) {
        for (; whi < fe[i]; ++whi)
          if (whi >= wlo && !(*rows[whi])[agg.arg].IsNull()) ++window[(*rows[whi])[agg.arg]];
        for (; wlo < fs[i]; ++wlo) {
          if (wlo >= whi || (*rows[wlo])[agg.arg].IsNull()) continue;
          auto it = window.find((*rows[wlo])[agg.arg]);
          if (--it->second == 0) window.erase(it);
        }
        if (!window.empty()) out[i] = is_min ? window.begin()->first : window.rbegin()->first;
      }
      continue;
    }
    // COUNT, SUM, AVG from prefix counts and sums (exact in 128 bits for integers and decimals,
    // as in GROUP BY: a wide DECIMAL sum beyond 38 digits is an error). DOUBLE sums are added in
    // frame order from 0 (a prefix sum from the slice's start is the same sum), so a row's value
    // does not depend on which slice it was computed in.
    const bool exact = agg.arg_type.phys() == PhysType::kI64 || agg.arg_type.IsWideDecimal();
    std::vector<int64_t> cnt(n + 1, 0);
    std::vector<__int128> isum(exact ? n + 1 : 0, 0);
    std::vector<double> dsum(exact ? 0 : n + 1, 0);
    for (int64_t i = 0; i < n; ++i) {
      const Value& v = (*rows[i])[agg.arg];
      cnt[i + 1] = cnt[i] + (v.IsNull() ? 0 : 1);
      if (exact && __builtin_add_overflow(isum[i], v.IsNull() ? 0 : UnscaledDecimal(v, agg.arg_type), &isum[i + 1]))
        Fail(ErrorKind::kRuntime, "DECIMAL overflow in SUM");
      if (!exact) dsum[i + 1] = dsum[i] + (v.IsNull() ? 0 : v.d);
    }
    for (int64_t i = L; i < H; ++i) {
      const int ks = segments(i, seg);
      int64_t c = 0;
      for (int k = 0; k < ks; ++k) c += cnt[seg[k].e] - cnt[seg[k].s];
      if (agg.kind == AggKind::kCount) {
        out[i] = Value::Int(c);
        continue;
      }
      if (c == 0) continue;  // NULL
      int64_t is = 0;
      double ds = 0;
      if (exact) {
        __int128 s = 0;
        for (int k = 0; k < ks; ++k) s += isum[seg[k].e] - isum[seg[k].s];
        if (agg.kind == AggKind::kSum && agg.result_type.IsWideDecimal()) {
          if (!DecimalFits(s, agg.result_type.precision))
            Fail(ErrorKind::kRuntime, "DECIMAL overflow in SUM: the sum does not fit {}",
                 agg.result_type.WithNullable(true).ToString());
          out[i] = DecimalValue(s, agg.result_type);
          continue;
        }
        if (agg.kind == AggKind::kAvg && agg.arg_type.IsWideDecimal()) {
          out[i] = DecimalValue(s / c, agg.arg_type);  // truncated to the argument's scale
          continue;
        }
        if (s > INT64_MAX || s < INT64_MIN) Fail(ErrorKind::kRuntime, "integer overflow in SUM");
        is = static_cast<int64_t>(s);
      } else if (ks == 1 && seg[0].s == 0) {
        ds = dsum[seg[0].e];
      } else {
        for (int k = 0; k < ks; ++k)
          for (int64_t j = seg[k].s; j < seg[k].e; ++j)
            if (!(*rows[j])[agg.arg].IsNull()) ds += (*rows[j])[agg.arg].d;
      }
      if (agg.kind == AggKind::kSum)
        out[i] = exact ? Value::Int(is) : Value::Double(ds);
      else
        out[i] = AverageOf(agg.arg_type, c, is, ds);
    }
  }

  // Per copy: the input row and its values, sorted by (row order, values) so that two results
  // can be compared by a merge.
  std::vector<Out> result(static_cast<size_t>(H - L));
  for (int64_t i = L; i < H; ++i) {
    Out& o = result[i - L];
    o.row = rows[i];
    o.vals.reserve(fns_.size());
    for (size_t f = 0; f < fns_.size(); ++f) o.vals.push_back(std::move(vals[f][i]));
  }
  SortedRowLess less{&order_};
  std::sort(result.begin(), result.end(), [&](const Out& x, const Out& y) {
    if (x.row != y.row) return less(*x.row, *y.row);
    return x.vals < y.vals;
  });
  return result;
}

bool WindowOp::Depends(const Value& of, const Value& src_key, const Rel& rel, bool context) const {
  if (rel.peer || rel.dist == 0) return true;
  const bool desc = !order_.empty() && order_[0].desc;
  auto before = [&](const Value& x, const Value& y) { return desc ? y < x : x < y; };
  for (const WindowFn& fn : fns_) {
    switch (fn.kind) {
      case WindowFnKind::kRowNumber:
      case WindowFnKind::kRank:
      case WindowFnKind::kDenseRank:
        // They count the rows before them (counts, not rows, when reading).
        if (!context && !rel.after) return true;
        continue;
      case WindowFnKind::kNtile:
      case WindowFnKind::kPercentRank:
      case WindowFnKind::kCumeDist:
        return true;
      case WindowFnKind::kLag:
      case WindowFnKind::kLead: {
        // LAG k reads the row k before (LEAD: after); a negative k the other way.
        int64_t k = fn.kind == WindowFnKind::kLag ? fn.offset : -fn.offset;
        if ((k > 0 && !rel.after && rel.dist <= k) || (k < 0 && rel.after && rel.dist <= -k)) return true;
        continue;
      }
      default:
        break;
    }
    // A framed function: src before the row against the frame's start, after it against its end.
    const WindowBound& bd = rel.after ? fn.end : fn.start;
    using BK = WindowBound::Kind;
    if (bd.kind == BK::kUnboundedPreceding || bd.kind == BK::kUnboundedFollowing) return true;
    if (bd.kind == BK::kCurrentRow) continue;  // peers only
    const bool toward = rel.after ? bd.kind == BK::kFollowing : bd.kind == BK::kPreceding;
    if (!toward) continue;  // the frame ends (starts) on the row's own side
    if (fn.rows) {
      if (rel.dist <= bd.rows) return true;
      continue;
    }
    if (fn.groups) {
      if (rel.gdist <= bd.rows) return true;
      continue;
    }
    if (of.IsNull() || src_key.IsNull()) continue;  // a NULL key's offset frame is its peers
    const Value t = RangeTarget(of, bd, fn.date_key, !rel.after != desc, rel.after == desc);
    if (rel.after ? !before(t, src_key) : !before(src_key, t)) return true;
  }
  return false;
}

void WindowOp::SetWaterline(WaterlineRef w) {
  waterline_ = std::move(w);
  // Discarding needs an ascending first key and functions whose reach is bounded (see window.h).
  bool ok = waterline_.valid() && !order_.empty() && !order_[0].desc;
  for (const WindowFn& fn : fns_) {
    switch (fn.kind) {
      case WindowFnKind::kNtile:
      case WindowFnKind::kPercentRank:
      case WindowFnKind::kCumeDist:
        ok = false;
        break;
      case WindowFnKind::kRowNumber:
      case WindowFnKind::kRank:
      case WindowFnKind::kDenseRank:
      case WindowFnKind::kLag:
      case WindowFnKind::kLead:
        ok = ok && key_not_null_;
        break;
      default:
        if (fn.start.kind == WindowBound::Kind::kUnboundedPreceding ||
            fn.end.kind == WindowBound::Kind::kUnboundedFollowing || ((fn.rows || fn.groups) && !key_not_null_))
          ok = false;
    }
  }
  gc_ = ok;
}

size_t WindowOp::StateRows() const {
  size_t n = 0;
  for (const auto& [key, e] : parts_.resident()) n += e.part.rows.size();
  return n;
}

// Walks a partition's rows from one row away from another (`of` fixed, `src` moving, or the
// reverse), keeping the distance in rows and peer groups between them, counted over the rows
// present both before and after the step (weight: the smaller of the two), so never more than
// the true distance.
struct Walker {
  const std::vector<SortKey>* order;
  int64_t dist = 1, groups = 0;             // rows, peer groups passed (+1 each for the next row)
  const std::vector<Value>* rep = nullptr;  // a row of the last group passed
  // The peer-group distance from the fixed row to `r` (the next row of the walk).
  int64_t GDist(const std::vector<Value>& r) const {
    return rep && CompareByKeys(*order, *rep, r) == 0 ? groups : groups + 1;
  }
  void Pass(const std::vector<Value>& r, int64_t w) {
    if (w <= 0) return;
    dist += w;
    if (!rep || CompareByKeys(*order, *rep, r) != 0) {
      ++groups;
      rep = &r;
    }
  }
};

// The rows of one partition's tree decoded as walks reach them, each once, at a stable address
// (the tree must not change meanwhile): the walks and Compute read rows as vectors of Values,
// the tree holds only their order keys. Reset before each partition: the rows' buffers stay
// for the next one.
class WindowOp::RowCache {
 public:
  void Reset(const WindowOp* op) {
    op_ = op;
    used_ = 0;
    index_.clear();
  }
  const Row& operator()(Contents::const_iterator it) {
    auto [e, fresh] = index_.try_emplace(&it->first, nullptr);
    if (fresh) {
      if (used_ == rows_.size()) rows_.emplace_back();
      Row* row = &rows_[used_++];
      RowOfOrderKeyInto(it->first.view(), op_->order_, op_->in_types_, row);
      e->second = row;
    }
    return *e->second;
  }

 private:
  const WindowOp* op_ = nullptr;
  std::deque<Row> rows_;  // [0, used_) in use
  size_t used_ = 0;
  absl::flat_hash_map<const InlineKey*, const Row*> index_;
};

WindowOp::~WindowOp() = default;

WindowOp::Contents::iterator WindowOp::AddRow(Part* p, std::string_view okey, int64_t w) {
  auto [it, fresh] = p->rows.try_emplace(InlineKey(okey), 0);
  if (fresh) p->heap += InlineKeyHeapBytes(okey.size());
  it->second += w;
  return it;
}

void WindowOp::StoredRowKey(std::string_view enc, std::string* okey) const {
  if (!RowEncodingFits(enc, in_types_))
    Fail(ErrorKind::kCorruption, "a window's stored row is malformed or does not fit the columns");
  okey->clear();
  AppendOrderKey(order_, DecodeRow(enc), okey);
}

Batch WindowOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  BatchBuilder out(out_types_);
  // The change, split by partition (in key order, so the output order is deterministic): each
  // row's order key and weight.
  std::map<std::string, std::vector<std::pair<std::string, int64_t>>> changes;
  std::string pkey;
  for (size_t r = 0; r < in.size(); ++r) {
    pkey.clear();
    for (int c : partition_) EncodeValue(&pkey, *in.cols[c], r);
    std::string okey;
    AppendOrderKey(order_, in, r, &okey);
    changes[pkey].emplace_back(std::move(okey), in.weights[r]);
  }
  SortedRowLess less{&order_};
  Row buf;
  auto emit = [&](const Out& o, int64_t w) {
    buf = *o.row;
    buf.insert(buf.end(), o.vals.begin(), o.vals.end());
    out.AppendRow(buf, w);
  };
  for (auto& [key, rows] : changes) {
    Part& part = parts_.Touch(key);
    Contents& c = part.rows;
    // Fold the change in, remembering the old weights. Rows whose weight drops to 0 stay
    // (uncounted) until both results are computed. From then on the tree does not change until
    // those are erased, so its iterators and the decoded rows stay valid.
    std::vector<std::pair<std::string_view, int64_t>> folded;  // each changed row once: key, old weight
    {
      absl::flat_hash_set<std::string_view> seen;
      for (const auto& [okey, w] : rows) {
        const int64_t before = AddRow(&part, okey, w)->second - w;
        if (seen.insert(okey).second) folded.emplace_back(okey, before);
      }
    }
    std::vector<Contents::iterator> changed;
    absl::flat_hash_map<const InlineKey*, int64_t> old_w;
    for (const auto& [okey, before] : folded) {
      auto it = c.find(InlineKey(okey));
      changed.push_back(it);
      old_w.emplace(&it->first, before);
    }
    RowCache& row = *cache_;
    row.Reset(this);
    auto old_weight = [&](Contents::const_iterator it) {
      auto o = old_w.find(&it->first);
      return o == old_w.end() ? it->second : o->second;
    };
    auto min_weight = [&](Contents::const_iterator it) { return std::min(it->second, old_weight(it)); };
    InlineKeyLess key_less;
    auto first =
        *std::min_element(changed.begin(), changed.end(), [&](auto x, auto y) { return key_less(x->first, y->first); });
    auto last =
        *std::max_element(changed.begin(), changed.end(), [&](auto x, auto y) { return key_less(x->first, y->first); });
    // src relative to of; `moving`: the one the walk moves.
    auto rel = [&](const Walker& wk, const Row& of, const Row& src, bool after, const Row& moving) {
      Rel r;
      r.after = after;
      r.peer = CompareByKeys(order_, of, src) == 0;
      r.dist = wk.dist;
      r.gdist = r.peer ? 0 : wk.GDist(moving);
      return r;
    };
    // The rows whose output may change: back from the first change while a change there can
    // reach them, forward from the last.
    Contents::iterator a_lo = first, a_hi = last;
    {
      Walker wk{&order_};
      wk.rep = &row(first);
      for (auto it = first; it != c.begin();) {
        auto prev = std::prev(it);
        if (!Depends(Key(row(prev)), Key(row(first)), rel(wk, row(prev), row(first), true, row(prev)), false)) break;
        it = a_lo = prev;
        wk.Pass(row(prev), min_weight(prev));
      }
    }
    {
      Walker wk{&order_};
      wk.rep = &row(last);
      for (auto it = std::next(last); it != c.end(); ++it) {
        if (!Depends(Key(row(it)), Key(row(last)), rel(wk, row(it), row(last), false, row(it)), false)) break;
        a_hi = it;
        wk.Pass(row(it), min_weight(it));
      }
    }
    // The rows they read: back from the first of them, forward from the last, then back to the
    // start of the first one's peer group.
    Contents::iterator c_lo = a_lo, c_hi = a_hi;
    {
      Walker wk{&order_};
      wk.rep = &row(a_lo);
      for (auto it = a_lo; it != c.begin();) {
        auto prev = std::prev(it);
        if (!Depends(Key(row(a_lo)), Key(row(prev)), rel(wk, row(a_lo), row(prev), false, row(prev)), true)) break;
        it = c_lo = prev;
        wk.Pass(row(prev), min_weight(prev));
      }
      while (c_lo != c.begin() && SortPart(std::prev(c_lo)->first) == SortPart(c_lo->first)) --c_lo;
    }
    {
      Walker wk{&order_};
      wk.rep = &row(a_hi);
      for (auto it = std::next(a_hi); it != c.end(); ++it) {
        if (!Depends(Key(row(a_hi)), Key(row(it)), rel(wk, row(a_hi), row(it), true, row(it)), true)) break;
        c_hi = it;
        wk.Pass(row(it), min_weight(it));
      }
    }
    // The rows and peer groups before the slice (the same before and after the step), counted
    // on the order keys (peers share their sort part), nothing decoded.
    int64_t base = part.dropped_rows, base_groups = part.dropped_groups;
    if (need_base_) {
      std::string_view prev;
      bool has_prev = false;
      for (auto it = c.begin(); it != c_lo; ++it) {
        if (it->second <= 0) continue;
        base += it->second;
        const std::string_view sort = SortPart(it->first);
        if (!has_prev || sort != prev) ++base_groups;
        prev = sort;
        has_prev = true;
      }
    }
    // The slice before and after, and the results of the rows [a_lo, a_hi] in each.
    auto slice = [&](bool after, std::vector<const Row*>* v, size_t* lo, size_t* hi) {
      for (auto it = c_lo;; ++it) {
        if (it == a_lo) *lo = v->size();
        const int64_t w = after ? it->second : old_weight(it);
        if (w > 0) {
          const Row* r = &row(it);
          for (int64_t k = 0; k < w; ++k) v->push_back(r);
        }
        if (it == a_hi) *hi = v->size();
        if (it == c_hi) break;
      }
    };
    std::vector<const Row*> old_rows, new_rows;
    size_t olo = 0, ohi = 0, nlo = 0, nhi = 0;
    slice(false, &old_rows, &olo, &ohi);
    slice(true, &new_rows, &nlo, &nhi);
    std::vector<Out> old = Compute(old_rows, olo, ohi, base, base_groups);
    std::vector<Out> now = Compute(new_rows, nlo, nhi, base, base_groups);
    // Emit now - old: a merge of the two sorted results.
    auto cmp = [&](const Out& x, const Out& y) {
      if (x.row != y.row) return less(*x.row, *y.row) ? -1 : 1;
      return x.vals < y.vals ? -1 : y.vals < x.vals ? 1 : 0;
    };
    size_t i = 0, j = 0;
    while (i < old.size() || j < now.size()) {
      const int c2 = i == old.size() ? 1 : j == now.size() ? -1 : cmp(old[i], now[j]);
      if (c2 < 0) {
        emit(old[i++], -1);
      } else if (c2 > 0) {
        emit(now[j++], +1);
      } else {
        ++i;
        ++j;
      }
    }
    // (erased by key: erasing from a B-tree moves its other entries)
    for (const auto& [okey, before] : folded) {
      auto it = c.find(InlineKey(okey));
      if (it->second != 0) continue;
      part.heap -= InlineKeyHeapBytes(okey.size());
      c.erase(it);
    }
    Collect(part);
  }
  // A few untouched partitions in memory, in turn, so that idle ones shrink too (one read back
  // from the store is cleaned when a change reaches it).
  auto& resident = parts_.resident();
  if (gc_ && !resident.empty()) {
    auto it = resident.lower_bound(sweep_next_);
    for (size_t k = std::min<size_t>(16, resident.size()); k > 0; --k) {
      if (it == resident.end()) it = resident.begin();
      if (!changes.contains(it->first)) {
        if (Collect(it->second.part)) parts_.Changed(it);
      }
      ++it;
    }
    sweep_next_ = it == resident.end() ? std::string() : it->first;
  }
  parts_.EndStep();
  return out.Finish();
}

bool WindowOp::Collect(Part& p) const {
  if (!gc_) return false;
  const std::optional<Value> w = waterline_.Current();
  if (!w || w->IsNull()) return false;
  const int key = order_[0].column;
  Contents& c = p.rows;
  RowCache& row = *cache_;
  row.Reset(this);
  // The non-NULL keys, ascending; g: the first at or after the waterline.
  auto begin = c.begin();
  if (order_[0].nulls_first)
    while (begin != c.end() && row(begin)[key].IsNull()) ++begin;
  auto g = begin;
  while (g != c.end() && !row(g)[key].IsNull() && row(g)[key] < *w) ++g;
  if (g == begin) return false;
  // Every future change sorts at or after g with a key >= W. The rows it may still change: back
  // from g while a row of key W there reaches them.
  auto nonfinal = g;
  {
    Walker wk{&order_};
    for (auto it = g; it != begin;) {
      auto prev = std::prev(it);
      Rel r;
      r.after = true;
      r.dist = wk.dist;
      r.gdist = wk.GDist(row(prev));
      if (!Depends(row(prev)[key], *w, r, false)) break;
      it = nonfinal = prev;
      wk.Pass(row(prev), prev->second);
    }
  }
  // What those rows (or a future row at g) read: back from the first of them.
  auto keep = nonfinal;
  {
    const Value of = nonfinal == g ? *w : row(nonfinal)[key];
    Walker wk{&order_};
    if (nonfinal != g) wk.rep = &row(nonfinal);
    for (auto it = nonfinal; it != begin;) {
      auto prev = std::prev(it);
      Rel r;
      r.after = false;
      r.peer = nonfinal != g && SortPart(nonfinal->first) == SortPart(prev->first);
      r.dist = wk.dist;
      r.gdist = r.peer ? 0 : wk.GDist(row(prev));
      if (!Depends(of, row(prev)[key], r, true)) break;
      it = keep = prev;
      wk.Pass(row(prev), prev->second);
    }
  }
  while (keep != begin && keep != c.end() && SortPart(std::prev(keep)->first) == SortPart(keep->first)) --keep;
  // Discard [begin, keep): final, and read by no row that may still change. Only the ranking
  // functions need their counts.
  std::string_view prev;
  bool has_prev = false;
  for (auto it = begin; it != keep; ++it) {
    if (need_base_) {
      p.dropped_rows += it->second;
      const std::string_view sort = SortPart(it->first);
      if (!has_prev || sort != prev) ++p.dropped_groups;
      prev = sort;
      has_prev = true;
    }
    p.heap -= InlineKeyHeapBytes(it->first.view().size());
  }
  if (keep == begin) return false;
  c.erase(begin, keep);
  return true;
}

// The whole state (the format of checkpoints before partitions were stored one by one, and of
// recursive circuits' copies): every partition's rows as one list (the partition of a row is a
// function of the row), then the discarded counts of the partitions that have some.
void WindowOp::SaveState(StateWriter& w) const {
  if (parts_.backed()) Fail(ErrorKind::kRuntime, "window: the whole state of a store-backed window is in the store");
  const auto& resident = parts_.resident();
  uint64_t n = 0;
  for (const auto& [key, e] : resident) n += e.part.rows.size();
  w.U64(n);
  for (const auto& [key, e] : resident)
    for (const auto& [okey, weight] : e.part.rows) SaveRow(RowOfOrderKey(okey.view(), order_, in_types_), weight, w);
  uint64_t d = 0;
  for (const auto& [key, e] : resident) d += e.part.dropped_rows != 0;
  w.U64(d);
  for (const auto& [key, e] : resident) {
    if (e.part.dropped_rows == 0) continue;
    w.Str(key);
    w.I64(e.part.dropped_rows);
    w.I64(e.part.dropped_groups);
  }
}

void WindowOp::RestoreState(StateReader& r) {
  parts_.BeginRestore();
  RestoreWhole(r);
}

void WindowOp::RestoreWhole(StateReader& r) {
  uint64_t n = r.U64();
  std::string okey;
  for (uint64_t i = 0; i < n; ++i) {
    const std::string_view enc = r.View();
    StoredRowKey(enc, &okey);
    const int64_t weight = r.I64();
    Part& part = parts_.Touch(PartitionKey(DecodeRow(enc)));
    // (a row listed twice: the last weight, as the map this replaced kept it)
    if (auto it = part.rows.find(InlineKey(okey)); it != part.rows.end()) {
      part.heap -= InlineKeyHeapBytes(okey.size());
      part.rows.erase(it);
    }
    if (weight != 0) AddRow(&part, okey, weight);
  }
  if (!r.AtEnd()) {  // else saved before rows were discarded
    uint64_t d = r.U64();
    for (uint64_t i = 0; i < d; ++i) {
      Part& part = parts_.Touch(r.Str());
      part.dropped_rows = r.I64();
      part.dropped_groups = r.I64();
    }
  }
  parts_.EndStep();
}

// Keyed state: no header; one entry per partition. A checkpoint written before that holds the
// whole state in the header.
void WindowOp::BeginRestore(StateReader& r) {
  parts_.BeginRestore();
  sweep_next_.clear();
  if (!r.AtEnd()) RestoreWhole(r);
}

}  // namespace fld
