#include "core/operators/window.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/common/error.h"
#include "core/expr/time.h"

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

}  // namespace

WindowOp::WindowOp(std::vector<PhysType> in_types, std::vector<int> partition, std::vector<SortKey> order,
                   std::vector<WindowFn> fns)
    : in_types_(std::move(in_types)), partition_(std::move(partition)), order_(std::move(order)), fns_(std::move(fns)) {
  out_types_ = in_types_;
  for (const WindowFn& f : fns_) out_types_.push_back(f.result);
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
    if (f.kind == WindowFnKind::kAggregate && f.agg.kind != AggKind::kCountStar) s += fmt::format("${}", f.agg.arg);
    if (f.arg >= 0) s += fmt::format("${}", f.arg);
    if (f.kind == WindowFnKind::kNtile) s += fmt::format("{}", f.offset);
    if (f.kind == WindowFnKind::kNthValue) s += fmt::format(", {}", f.offset);
    if (f.kind == WindowFnKind::kLag || f.kind == WindowFnKind::kLead) {
      s += fmt::format(", {}", f.offset);
      if (f.default_col >= 0) s += fmt::format(", ${}", f.default_col);
    }
    s += ")";
    if (Framed(f))
      s += fmt::format(" {} {} .. {}", f.rows ? "ROWS" : "RANGE", BoundText(f.start, f.rows), BoundText(f.end, f.rows));
  }
  return s;
}

std::string WindowOp::PartitionKey(const Row& row) const {
  std::string key;
  for (int c : partition_) EncodeValue(&key, row[c]);
  return key;
}

std::vector<WindowOp::Out> WindowOp::Compute(const Contents& part) const {
  // Every copy of every row, in order.
  std::vector<const Row*> rows;
  for (const auto& [row, w] : part)
    for (int64_t c = 0; c < w; ++c) rows.push_back(&row);
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

  std::vector<std::vector<Value>> vals(fns_.size(), std::vector<Value>(static_cast<size_t>(n)));
  std::vector<int64_t> fs(n), fe(n);
  for (size_t f = 0; f < fns_.size(); ++f) {
    const WindowFn& fn = fns_[f];
    std::vector<Value>& out = vals[f];
    switch (fn.kind) {
      case WindowFnKind::kRowNumber:
        for (int64_t i = 0; i < n; ++i) out[i] = Value::Int(i + 1);
        continue;
      case WindowFnKind::kRank:
        for (int64_t i = 0; i < n; ++i) out[i] = Value::Int(peer_start[i] + 1);
        continue;
      case WindowFnKind::kDenseRank:
        for (int64_t i = 0; i < n; ++i) out[i] = Value::Int(dense[i]);
        continue;
      case WindowFnKind::kNtile: {
        // q rows per bucket, the first r buckets one more.
        const int64_t q = n / fn.offset, r = n % fn.offset, big = r * (q + 1);
        for (int64_t i = 0; i < n; ++i) out[i] = Value::Int(i < big ? i / (q + 1) + 1 : r + (i - big) / q + 1);
        continue;
      }
      case WindowFnKind::kPercentRank:
        for (int64_t i = 0; i < n; ++i)
          out[i] = Value::Double(n > 1 ? static_cast<double>(peer_start[i]) / static_cast<double>(n - 1) : 0.0);
        continue;
      case WindowFnKind::kCumeDist:
        for (int64_t i = 0; i < n; ++i)
          out[i] = Value::Double(static_cast<double>(peer_end[i]) / static_cast<double>(n));
        continue;
      case WindowFnKind::kLag:
      case WindowFnKind::kLead: {
        const int64_t off = std::clamp<int64_t>(fn.offset, -n - 1, n + 1);
        for (int64_t i = 0; i < n; ++i) {
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
    if (!fn.rows && key >= 0) {
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
    for (int64_t i = 0; i < n; ++i) {
      fs[i] = bound(fn.start, i, false);
      fe[i] = std::max(fs[i], bound(fn.end, i, true));
    }
    if (fn.kind == WindowFnKind::kFirstValue || fn.kind == WindowFnKind::kLastValue) {
      for (int64_t i = 0; i < n; ++i) {
        if (fs[i] >= fe[i]) continue;
        out[i] = (*rows[fn.kind == WindowFnKind::kFirstValue ? fs[i] : fe[i] - 1])[fn.arg];
      }
      continue;
    }
    if (fn.kind == WindowFnKind::kNthValue) {
      for (int64_t i = 0; i < n; ++i)
        if (fe[i] - fs[i] >= fn.offset) out[i] = (*rows[fs[i] + fn.offset - 1])[fn.arg];
      continue;
    }
    const AggSpec& agg = fn.agg;
    if (agg.kind == AggKind::kCountStar) {
      for (int64_t i = 0; i < n; ++i) out[i] = Value::Int(fe[i] - fs[i]);
      continue;
    }
    if (agg.kind == AggKind::kMin || agg.kind == AggKind::kMax) {
      // A sliding multiset: both ends of the frame only move forward.
      std::map<Value, int64_t> window;
      int64_t lo = 0, hi = 0;
      for (int64_t i = 0; i < n; ++i) {
        for (; hi < fe[i]; ++hi)
          if (hi >= lo && !(*rows[hi])[agg.arg].IsNull()) ++window[(*rows[hi])[agg.arg]];
        for (; lo < fs[i]; ++lo) {
          if (lo >= hi || (*rows[lo])[agg.arg].IsNull()) continue;
          auto it = window.find((*rows[lo])[agg.arg]);
          if (--it->second == 0) window.erase(it);
        }
        if (!window.empty()) out[i] = agg.kind == AggKind::kMin ? window.begin()->first : window.rbegin()->first;
      }
      continue;
    }
    // COUNT, SUM, AVG from prefix counts and sums (exact in 128 bits for integers and decimals,
    // as in GROUP BY: a wide DECIMAL sum beyond 38 digits is an error).
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
    for (int64_t i = 0; i < n; ++i) {
      const int64_t c = cnt[fe[i]] - cnt[fs[i]];
      if (agg.kind == AggKind::kCount) {
        out[i] = Value::Int(c);
        continue;
      }
      if (c == 0) continue;  // NULL
      int64_t is = 0;
      double ds = 0;
      if (exact) {
        const __int128 s = isum[fe[i]] - isum[fs[i]];
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
      } else if (fs[i] == 0 || fe[i] - fs[i] > 1024) {
        ds = dsum[fe[i]] - dsum[fs[i]];
      } else {
        // A short frame not at the start: summed in order, as a from-scratch sum would be.
        for (int64_t j = fs[i]; j < fe[i]; ++j)
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
  std::vector<Out> result(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    result[i].row = rows[i];
    result[i].vals.reserve(fns_.size());
    for (size_t f = 0; f < fns_.size(); ++f) result[i].vals.push_back(std::move(vals[f][i]));
  }
  SortedRowLess less{&order_};
  std::sort(result.begin(), result.end(), [&](const Out& x, const Out& y) {
    if (x.row != y.row) return less(*x.row, *y.row);
    return x.vals < y.vals;
  });
  return result;
}

Batch WindowOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  BatchBuilder out(out_types_);
  if (in.empty()) return out.Finish();
  // The change, split by partition (in key order, so the output order is deterministic).
  std::map<std::string, std::vector<std::pair<Row, int64_t>>> changes;
  for (size_t r = 0; r < in.size(); ++r) {
    Row row(in.width());
    for (size_t c = 0; c < in.width(); ++c) row[c] = in.Get(c, r);
    std::string key = PartitionKey(row);
    changes[key].emplace_back(std::move(row), in.weights[r]);
  }
  SortedRowLess less{&order_};
  Row buf;
  auto emit = [&](const Out& o, int64_t w) {
    buf = *o.row;
    buf.insert(buf.end(), o.vals.begin(), o.vals.end());
    out.AppendRow(buf, w);
  };
  for (auto& [key, rows] : changes) {
    auto part = parts_.try_emplace(key, Contents(SortedRowLess{&order_})).first;
    Contents& c = part->second;
    std::vector<Out> old = Compute(c);
    // Rows whose weight drops to 0 stay (uncounted) until both results are compared, so the old
    // result's row pointers stay valid.
    for (auto& [row, w] : rows) c.try_emplace(std::move(row), 0).first->second += w;
    std::vector<Out> now = Compute(c);
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
    std::erase_if(c, [](const auto& e) { return e.second == 0; });
    if (c.empty()) parts_.erase(part);
  }
  return out.Finish();
}

void WindowOp::SaveState(StateWriter& w) const {
  uint64_t n = 0;
  for (const auto& [key, part] : parts_) n += part.size();
  w.U64(n);
  for (const auto& [key, part] : parts_)
    for (const auto& [row, weight] : part) {
      std::string enc;
      for (const Value& v : row) EncodeValue(&enc, v);
      w.Str(enc);
      w.I64(weight);
    }
}

void WindowOp::RestoreState(StateReader& r) {
  parts_.clear();
  uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    std::string enc = r.Str();
    Row row = DecodeRow(enc);
    std::string key = PartitionKey(row);
    auto part = parts_.try_emplace(key, Contents(SortedRowLess{&order_})).first;
    part->second[std::move(row)] = r.I64();
  }
}

}  // namespace fld
