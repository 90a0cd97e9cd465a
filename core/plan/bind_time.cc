// The binder's part for dates, times and intervals (see binder.h): interval arithmetic, the
// date/time functions of core/expr/time.h and the group-window functions TUMBLE/TUMBLE_START/
// TUMBLE_END, HOP_START/HOP_END and SESSION_START/SESSION_END. Rules follow Feldera's
// documentation ("Date- and Time-Related Operations").
#include <fmt/format.h>

#include "core/common/error.h"
#include "core/expr/time.h"
#include "core/plan/binder.h"

namespace fld::plan {

using sql::Expr;
using sql::ExprKind;
using sql::Pos;

namespace {

std::string TypeName(const SqlType& t) {
  return t.WithNullable(true).ToString();
}

BoundExprPtr Call(ExprOp op, SqlType type, BoundExprPtr a, BoundExprPtr b = nullptr) {
  std::vector<BoundExprPtr> args;
  args.push_back(std::move(a));
  if (b) args.push_back(std::move(b));
  return MakeCall(op, type, std::move(args));
}

BoundExprPtr Time(TimeFn fn, TimeUnit unit, SqlType type, BoundExprPtr a, BoundExprPtr b = nullptr,
                  BoundExprPtr c = nullptr) {
  std::vector<BoundExprPtr> args;
  args.push_back(std::move(a));
  if (b) args.push_back(std::move(b));
  if (c) args.push_back(std::move(c));
  return MakeTimeCall(fn, unit, type, std::move(args));
}

bool IsTemporalOrNull(const SqlType& t) {
  return t.IsTemporal() || t.id == TypeId::kNull;
}

}  // namespace

// Coerce, keeping e's nullability.
BoundExprPtr Binder::CoerceSameNull(BoundExprPtr e, const SqlType& target, Pos pos) const {
  const bool nullable = e->type.nullable;
  return Coerce(std::move(e), target.WithNullable(nullable), pos);
}

BoundExprPtr Binder::TimeArith(ExprOp op, BoundExprPtr& a, BoundExprPtr& b, Pos pos) const {
  const SqlType ta = a->type, tb = b->type;
  const bool any = ta.IsTemporal() || tb.IsTemporal() || ta.IsInterval() || tb.IsInterval();
  if (!any) return nullptr;
  const bool nullable = ta.nullable || tb.nullable || op == ExprOp::kDiv;
  auto fail = [&]() -> BoundExprPtr {
    if (op == ExprOp::kSub && ta.IsTemporal() && tb.IsTemporal())
      ctx_.Error(pos, fmt::format("the difference of {} and {} needs a unit: (a - b) SECOND, (a - b) DAY, "
                                  "(a - b) MONTH ...",
                                  TypeName(ta), TypeName(tb)));
    ctx_.Error(pos, fmt::format("cannot apply arithmetic to {} and {}", TypeName(ta), TypeName(tb)));
  };
  // A bare NULL takes the type the other side calls for.
  if (ta.id == TypeId::kNull || tb.id == TypeId::kNull) {
    const SqlType& other = ta.id == TypeId::kNull ? tb : ta;
    SqlType t = other;
    if (other.IsTemporal() && op == ExprOp::kSub && ta.id == TypeId::kNull) return fail();
    if (other.IsTemporal() && op != ExprOp::kAdd && op != ExprOp::kSub) return fail();
    return MakeLiteral(Value::Null(), t.WithNullable(true));
  }
  // date/time +- interval, interval + date/time
  if ((op == ExprOp::kAdd || op == ExprOp::kSub) && (ta.IsTemporal() || tb.IsTemporal())) {
    BoundExprPtr x = std::move(ta.IsTemporal() ? a : b);
    BoundExprPtr iv = std::move(ta.IsTemporal() ? b : a);
    if (!iv->type.IsInterval() || (op == ExprOp::kSub && !ta.IsTemporal())) {
      // Not ours after all: put the operands back for the error.
      (ta.IsTemporal() ? a : b) = std::move(x);
      (ta.IsTemporal() ? b : a) = std::move(iv);
      return fail();
    }
    if (op == ExprOp::kSub) {
      SqlType it = iv->type;
      iv = Call(ExprOp::kNeg, it, std::move(iv));
    }
    const SqlType xt = x->type.WithNullable(nullable);
    if (iv->type.id == TypeId::kIntervalYearMonth) {
      if (xt.id == TypeId::kTime) return x;  // whole months leave a time of day unchanged
      return Time(TimeFn::kAddMonths, TimeUnit::kMonth, xt, std::move(x), std::move(iv));
    }
    switch (xt.id) {
      case TypeId::kTimestamp:
        return Call(ExprOp::kAdd, xt, std::move(x), std::move(iv));
      case TypeId::kDate:
        return Time(TimeFn::kDateAddMicros, TimeUnit::kDay, xt, std::move(x), std::move(iv));
      default:
        return Time(TimeFn::kTimeAddMicros, TimeUnit::kMicrosecond, xt, std::move(x), std::move(iv));
    }
  }
  // interval +- interval
  if (ta.IsInterval() && tb.IsInterval()) {
    if ((op != ExprOp::kAdd && op != ExprOp::kSub) || ta.id != tb.id) return fail();
    SqlType t = CommonType(ta, tb, pos).WithNullable(nullable);
    return Call(op, t, std::move(a), std::move(b));
  }
  // interval * number, number * interval, interval / number
  const bool iv_left = ta.IsInterval();
  const SqlType& num = iv_left ? tb : ta;
  if (!num.IsNumeric() || (op != ExprOp::kMul && op != ExprOp::kDiv) || (op == ExprOp::kDiv && !iv_left)) return fail();
  BoundExprPtr iv = std::move(iv_left ? a : b);
  BoundExprPtr n = Coerce(std::move(iv_left ? b : a), SqlType::Of(TypeId::kDouble, num.nullable), pos);
  SqlType t = iv->type.WithNullable(nullable);
  return Time(op == ExprOp::kMul ? TimeFn::kIntervalMul : TimeFn::kIntervalDiv, TimeUnit::kMicrosecond, t,
              std::move(iv), std::move(n));
}

// (a - b) unit
BoundExprPtr Binder::BindIntervalCast(const Expr& e, const ChildBinder& child) {
  const Expr& sub = *e.args[0];
  if (!e.cast_type.IsInterval() || sub.kind != ExprKind::kBinary || sub.op != sql::Op::kSub) return nullptr;
  BoundExprPtr a = child(*sub.args[0]);
  BoundExprPtr b = child(*sub.args[1]);
  if (!IsTemporalOrNull(a->type) || !IsTemporalOrNull(b->type)) {
    // An ordinary CAST of an interval difference ((i1 - i2) SECOND): arithmetic, then the cast.
    BoundExprPtr d = TimeArith(ExprOp::kSub, a, b, sub.pos);
    if (!d) ctx_.Error(e.pos, fmt::format("(a - b) {} needs dates, times or timestamps", e.cast_type.ToString()));
    return CoerceSameNull(std::move(d), e.cast_type, e.pos);
  }
  SqlType common = CommonType(a->type, b->type, sub.pos);
  if (common.id == TypeId::kNull) return MakeLiteral(Value::Null(), e.cast_type);
  if (common.id == TypeId::kTime && e.cast_type.id == TypeId::kIntervalYearMonth)
    ctx_.Error(e.pos, "the difference of two TIMEs cannot be a YEAR/MONTH interval");
  const bool nullable = a->type.nullable || b->type.nullable;
  a = CoerceSameNull(std::move(a), common, sub.pos);
  b = CoerceSameNull(std::move(b), common, sub.pos);
  return Time(TimeFn::kDiffInterval, TimeUnit::kMicrosecond, e.cast_type.WithNullable(nullable), std::move(a),
              std::move(b));
}

BoundExprPtr Binder::WindowStart(const Expr& e, const ChildBinder& child, BoundExprPtr* size) {
  if (e.args.size() < 2 || e.args.size() > 3)
    ctx_.Error(e.pos, fmt::format("{} takes a timestamp, a size and an optional offset", e.name));
  BoundExprPtr ts = child(*e.args[0]);
  if (ts->type.id != TypeId::kTimestamp)
    ctx_.Error(e.args[0]->pos, fmt::format("{} needs a TIMESTAMP, not {}", e.name, TypeName(ts->type)));
  auto interval = [&](const Expr& a) {
    BoundExprPtr v = child(a);
    if (!v->type.IsInterval() || !v->IsConstant())
      ctx_.Error(a.pos, fmt::format("{} needs a constant INTERVAL here", e.name));
    return MakeLiteral(EvaluateConstant(*v), v->type.WithNullable(false));
  };
  BoundExprPtr sz = interval(*e.args[1]);
  if (sz->literal.IsNull() || sz->literal.i <= 0) ctx_.Error(e.args[1]->pos, "a window's size must be positive");
  // A size in months or years: calendar-aligned windows starting on the first of a month.
  const bool months = sz->type.id == TypeId::kIntervalYearMonth;
  BoundExprPtr off =
      e.args.size() > 2
          ? interval(*e.args[2])
          : MakeLiteral(Value::Int(0), months
                                           ? SqlType::Interval(IntervalField::kMonth, IntervalField::kMonth, false)
                                           : SqlType::Interval(IntervalField::kSecond, IntervalField::kSecond, false));
  if (off->type.id != sz->type.id)
    ctx_.Error(e.args[2]->pos, months ? "a window sized in months or years takes its offset in months or years"
                                      : "a window sized in days or less takes its offset in days or less");
  if (off->literal.IsNull()) ctx_.Error(e.args[2]->pos, "a window's offset must not be NULL");
  if (size) *size = sz->Clone();
  SqlType t = ts->type;
  return Time(TimeFn::kWindowStart, months ? TimeUnit::kMonth : TimeUnit::kMicrosecond, t, std::move(ts), std::move(sz),
              std::move(off));
}

// The end of the window starting at `start` (a bound TIMESTAMP) and lasting `size` (an INTERVAL
// literal, in months or microseconds).
BoundExprPtr Binder::WindowEnd(BoundExprPtr start, BoundExprPtr size) const {
  SqlType t = start->type;
  if (size->type.id == TypeId::kIntervalYearMonth)
    return Time(TimeFn::kAddMonths, TimeUnit::kMonth, t, std::move(start), std::move(size));
  return Call(ExprOp::kAdd, t, std::move(start), std::move(size));
}

std::vector<BoundExprPtr> Binder::BindGroupWindowArgs(const Expr& e, const Scope& scope) {
  const bool hop = e.name.rfind("HOP", 0) == 0;
  const size_t lo = hop ? 3 : 2, hi = hop ? 4 : 2;
  if (e.args.size() < lo || e.args.size() > hi)
    ctx_.Error(e.pos, hop ? fmt::format("{} takes a timestamp, a slide, a size and an optional offset", e.name)
                          : fmt::format("{} takes a timestamp and a gap", e.name));
  std::vector<BoundExprPtr> out;
  out.push_back(Bind(*e.args[0], scope));
  if (out[0]->type.id != TypeId::kTimestamp)
    ctx_.Error(e.args[0]->pos, fmt::format("{} needs a TIMESTAMP, not {}", e.name, TypeName(out[0]->type)));
  for (size_t i = 1; i < e.args.size(); ++i) {
    const Expr& a = *e.args[i];
    BoundExprPtr v = Bind(a, scope);
    if (!v->type.IsInterval() || !v->IsConstant())
      ctx_.Error(a.pos, fmt::format("{} needs a constant INTERVAL here", e.name));
    if (!hop && v->type.id == TypeId::kIntervalYearMonth)
      ctx_.Error(a.pos, fmt::format("{} needs a day-time INTERVAL gap, not months or years", e.name));
    if (v->type.id != out.back()->type.id && i > 1)
      ctx_.Error(a.pos, fmt::format("{}'s intervals must be all in months/years or all in days or less", e.name));
    Value x = EvaluateConstant(*v);
    if (x.IsNull() || (i < 3 && x.i <= 0)) ctx_.Error(a.pos, fmt::format("{}'s intervals must be positive", e.name));
    out.push_back(MakeLiteral(x, v->type.WithNullable(false)));
  }
  return out;
}

BoundExprPtr Binder::GroupWindowBound(const Expr& e, AggContext* agg) {
  if (e.kind != ExprKind::kFunction || e.over) return nullptr;
  const std::string& n = e.name;
  if (n == "HOP_START" || n == "HOP_END" || n == "SESSION_START" || n == "SESSION_END") {
    const std::string want = n.substr(0, n.find('_'));
    const Expr* call = agg->window_call;
    std::vector<BoundExprPtr> args = BindGroupWindowArgs(e, *agg->input);
    bool same = call && call->name == want && args.size() == agg->window_args.size();
    for (size_t i = 0; same && i < args.size(); ++i) same = args[i]->Equals(*agg->window_args[i]);
    if (!same) ctx_.Error(e.pos, fmt::format("{} needs GROUP BY {}(...) with the same arguments", n, want));
    const int col = n.size() > 6 && n.substr(n.size() - 4) == "_END" ? agg->window_end : agg->window_start;
    for (size_t g = 0; g < agg->group_exprs.size(); ++g) {
      const BoundExpr& k = *agg->group_exprs[g];
      if (k.op == ExprOp::kColumn && k.column_index == col) return MakeColumn(static_cast<int>(g), k.type);
    }
    ctx_.Error(e.pos, fmt::format("internal error: {}'s window is not a GROUP BY key", n));
  }
  if (n != "TUMBLE_START" && n != "TUMBLE_END") return nullptr;
  BoundExprPtr size;
  BoundExprPtr start = WindowStart(
      e, [&](const Expr& c) { return Bind(c, *agg->input); }, &size);
  for (size_t g = 0; g < agg->group_exprs.size(); ++g) {
    if (!start->Equals(*agg->group_exprs[g])) continue;
    BoundExprPtr col = MakeColumn(static_cast<int>(g), agg->group_exprs[g]->type);
    if (n == "TUMBLE_START") return col;
    return WindowEnd(std::move(col), std::move(size));
  }
  ctx_.Error(e.pos, fmt::format("{} needs GROUP BY TUMBLE(...) with the same arguments", n));
}

BoundExprPtr Binder::BindTimeFunction(const Expr& e, const ChildBinder& child) {
  const std::string& n = e.name;
  auto need = [&](size_t lo, size_t hi) {
    if (e.args.size() < lo || e.args.size() > hi)
      ctx_.Error(e.pos, lo == hi ? fmt::format("{} takes {} argument{}", n, lo, lo == 1 ? "" : "s")
                                 : fmt::format("{} takes {} to {} arguments", n, lo, hi));
  };
  // A unit written as a bare word (DAY, SQL_TSI_DAY, 'day').
  auto unit_arg = [&](const Expr& a) {
    std::string word;
    if (a.kind == ExprKind::kColumnRef && a.qualifier.empty()) word = a.name;
    if (a.kind == ExprKind::kLiteral && a.lit_kind == sql::LiteralKind::kString) word = a.text;
    std::string upper;
    for (char c : word) upper.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    std::optional<TimeUnit> u = ParseTimeUnit(upper);
    if (!u) ctx_.Error(a.pos, fmt::format("expected a time unit (YEAR, MONTH, DAY, HOUR, ...) in {}", n));
    return *u;
  };
  // An operand of a date/time type; a string literal converts to `want` (when given).
  auto temporal = [&](const Expr& a, std::optional<TypeId> want, bool interval_ok) {
    BoundExprPtr v = child(a);
    if (v->type.id == TypeId::kNull) return MakeLiteral(Value::Null(), SqlType::Of(want.value_or(TypeId::kTimestamp)));
    if (want && v->op == ExprOp::kLiteral && v->type.IsString())
      return Coerce(std::move(v), SqlType::Of(*want, false), a.pos);
    if (want && *want == TypeId::kTimestamp && v->type.id == TypeId::kDate)
      return CoerceSameNull(std::move(v), SqlType::Of(TypeId::kTimestamp), a.pos);
    // DATE_TRUNC(timestamp, unit): the timestamp's date, as Feldera's compiler converts it (its
    // demos truncate TIMESTAMP columns to DAY with DATE_TRUNC).
    if (want && *want == TypeId::kDate && v->type.id == TypeId::kTimestamp)
      return CoerceSameNull(std::move(v), SqlType::Of(TypeId::kDate), a.pos);
    if (want ? v->type.id != *want : !(v->type.IsTemporal() || (interval_ok && v->type.IsInterval())))
      ctx_.Error(a.pos, fmt::format("{} needs {}, not {}", n,
                                    want ? SqlType::Of(*want).ToString() : std::string("a date, time or timestamp"),
                                    TypeName(v->type)));
    return v;
  };
  auto check_unit = [&](const Expr& where, TimeUnit u, const SqlType& t, bool extract) {
    bool ok = true;
    if (t.id == TypeId::kTime)
      ok = u <= TimeUnit::kHour || u == TimeUnit::kNanosecond || (extract && u == TimeUnit::kEpoch);
    if (t.id == TypeId::kIntervalDayTime) ok = (u <= TimeUnit::kDay && u != TimeUnit::kWeek) || u == TimeUnit::kEpoch;
    if (t.id == TypeId::kIntervalYearMonth) ok = IsMonthsUnit(u);
    if (!extract && !IsMicrosUnit(u) && !IsMonthsUnit(u)) ok = false;
    if (!ok) ctx_.Error(where.pos, fmt::format("{} does not apply to {} in {}", TimeUnitName(u), TypeName(t), n));
  };

  if (n == "NOW" || n == "CURRENT_TIMESTAMP" || n == "LOCALTIMESTAMP") {
    if (!e.args.empty()) ctx_.Error(e.pos, fmt::format("{}() takes no arguments", n));
    if (!now_allowed_) ctx_.Error(e.pos, fmt::format("{}() is supported only in queries (views), not here", n));
    auto now = std::make_unique<BoundExpr>();
    now->op = ExprOp::kNow;
    now->type = SqlType::Of(TypeId::kTimestamp, false);
    return now;
  }
  if (n == "SESSION" || n == "HOP")
    ctx_.Error(e.pos, fmt::format("{}(...) is allowed only as a GROUP BY item (read its bounds with {}_START and "
                                  "{}_END), or as a table function: FROM TABLE({}(TABLE t, DESCRIPTOR(col), ...))",
                                  n, n, n, n));
  if (n == "SESSION_START" || n == "SESSION_END" || n == "HOP_START" || n == "HOP_END")
    ctx_.Error(e.pos, fmt::format("{} needs GROUP BY {}(...) with the same arguments", n, n.substr(0, n.find('_'))));
  if (n == "TUMBLE" || n == "TUMBLE_START" || n == "TUMBLE_END") {
    BoundExprPtr size;
    BoundExprPtr start = WindowStart(e, child, &size);
    if (n != "TUMBLE_END") return start;
    return WindowEnd(std::move(start), std::move(size));
  }

  static const std::pair<std::string_view, TimeUnit> kParts[] = {
      {"YEAR", TimeUnit::kYear},
      {"QUARTER", TimeUnit::kQuarter},
      {"MONTH", TimeUnit::kMonth},
      {"WEEK", TimeUnit::kWeek},
      {"DAYOFMONTH", TimeUnit::kDay},
      {"DAYOFWEEK", TimeUnit::kDow},
      {"DAYOFYEAR", TimeUnit::kDoy},
      {"HOUR", TimeUnit::kHour},
      {"MINUTE", TimeUnit::kMinute},
      {"SECOND", TimeUnit::kSecond},
      {"MILLISECOND", TimeUnit::kMillisecond},
      {"EPOCH", TimeUnit::kEpoch},
  };
  std::optional<TimeUnit> part;
  for (const auto& [name, u] : kParts)
    if (n == name) part = u;
  if (part || n == "EXTRACT" || n == "DATE_PART") {
    need(part ? 1 : 2, part ? 1 : 2);
    TimeUnit u = part ? *part : unit_arg(*e.args[0]);
    const Expr& xe = *e.args[part ? 0 : 1];
    BoundExprPtr x = temporal(xe, std::nullopt, true);
    check_unit(xe, u, x->type, true);
    bool nullable = x->type.nullable;
    return Time(TimeFn::kExtract, u, SqlType::Of(TypeId::kBigInt, nullable), std::move(x));
  }
  const bool floor_to = (n == "FLOOR" || n == "CEIL" || n == "CEILING") && e.text == "TO";
  if (floor_to || n == "DATE_TRUNC" || n == "TIMESTAMP_TRUNC" || n == "TIME_TRUNC") {
    need(2, 2);
    std::optional<TypeId> want;
    if (n == "DATE_TRUNC") want = TypeId::kDate;
    if (n == "TIMESTAMP_TRUNC") want = TypeId::kTimestamp;
    if (n == "TIME_TRUNC") want = TypeId::kTime;
    BoundExprPtr x = temporal(*e.args[0], want, false);
    TimeUnit u = unit_arg(*e.args[1]);
    check_unit(*e.args[1], u, x->type, false);
    SqlType t = x->type;
    return Time(n == "FLOOR" || !floor_to ? TimeFn::kTrunc : TimeFn::kCeil, u, t, std::move(x));
  }
  if (n == "TIMESTAMPADD") {
    need(3, 3);
    TimeUnit u = unit_arg(*e.args[0]);
    if (!IsMicrosUnit(u) && !IsMonthsUnit(u))
      ctx_.Error(e.args[0]->pos, fmt::format("TIMESTAMPADD cannot add {}", TimeUnitName(u)));
    BoundExprPtr k = child(*e.args[1]);
    if (!k->type.IsInteger() && k->type.id != TypeId::kNull)
      ctx_.Error(e.args[1]->pos, fmt::format("TIMESTAMPADD needs an integer count, not {}", TypeName(k->type)));
    k = CoerceSameNull(std::move(k), SqlType::Of(TypeId::kBigInt), e.args[1]->pos);
    BoundExprPtr x = temporal(*e.args[2], std::nullopt, false);
    // A DATE plus hours, minutes or seconds becomes a TIMESTAMP (Feldera's rule).
    if (x->type.id == TypeId::kDate && IsMicrosUnit(u) && u < TimeUnit::kDay)
      x = CoerceSameNull(std::move(x), SqlType::Of(TypeId::kTimestamp), e.args[2]->pos);
    // count * (the unit's microseconds or months), as an interval
    SqlType ivt = IsMonthsUnit(u) ? SqlType::Interval(IntervalField::kMonth, IntervalField::kMonth)
                                  : SqlType::Interval(IntervalField::kSecond, IntervalField::kSecond);
    const bool k_nullable = k->type.nullable;
    BoundExprPtr iv = Call(ExprOp::kMul, ivt.WithNullable(k_nullable), std::move(k),
                           MakeLiteral(Value::Int(UnitSize(u)), SqlType::Of(TypeId::kBigInt, false)));
    return TimeArith(ExprOp::kAdd, x, iv, e.pos);
  }
  if (n == "TIMESTAMPDIFF" || n == "DATEDIFF") {
    need(3, 3);
    TimeUnit u = unit_arg(*e.args[0]);
    BoundExprPtr a = temporal(*e.args[1], std::nullopt, false);
    BoundExprPtr b = temporal(*e.args[2], std::nullopt, false);
    SqlType common = CommonType(a->type, b->type, e.pos);
    check_unit(*e.args[0], u, common, false);
    const bool nullable = a->type.nullable || b->type.nullable;
    a = CoerceSameNull(std::move(a), common, e.args[1]->pos);
    b = CoerceSameNull(std::move(b), common, e.args[2]->pos);
    return Time(TimeFn::kDiff, u, SqlType::Of(TypeId::kInteger, nullable), std::move(a), std::move(b));
  }
  if (n == "DATE_ADD" || n == "DATE_SUB") {
    need(2, 2);
    BoundExprPtr x = temporal(*e.args[0], std::nullopt, false);
    BoundExprPtr iv = child(*e.args[1]);
    BoundExprPtr r = TimeArith(n == "DATE_ADD" ? ExprOp::kAdd : ExprOp::kSub, x, iv, e.pos);
    return r;
  }
  if (n == "FORMAT_DATE" || n == "FORMAT_TIMESTAMP" || n == "FORMAT_TIME") {
    need(2, 2);
    TypeId want = n == "FORMAT_DATE" ? TypeId::kDate : n == "FORMAT_TIME" ? TypeId::kTime : TypeId::kTimestamp;
    BoundExprPtr f = child(*e.args[0]);
    if (!f->type.IsString() && f->type.id != TypeId::kNull)
      ctx_.Error(e.args[0]->pos, fmt::format("{} needs a format string first", n));
    f = CoerceSameNull(std::move(f), SqlType::Of(TypeId::kVarchar), e.args[0]->pos);
    BoundExprPtr x = temporal(*e.args[1], want, false);
    const bool nullable = f->type.nullable || x->type.nullable;
    return Time(TimeFn::kFormat, TimeUnit::kMicrosecond, SqlType::Of(TypeId::kVarchar, nullable), std::move(f),
                std::move(x));
  }
  if (n == "PARSE_DATE" || n == "PARSE_TIMESTAMP" || n == "PARSE_TIME") {
    need(2, 2);
    TypeId want = n == "PARSE_DATE" ? TypeId::kDate : n == "PARSE_TIME" ? TypeId::kTime : TypeId::kTimestamp;
    std::vector<BoundExprPtr> args;
    for (const auto& a : e.args) {
      BoundExprPtr v = child(*a);
      if (!v->type.IsString() && v->type.id != TypeId::kNull)
        ctx_.Error(a->pos, fmt::format("{} needs strings (a format and a text), not {}", n, TypeName(v->type)));
      args.push_back(Coerce(std::move(v), SqlType::Of(TypeId::kVarchar, true), a->pos));
    }
    return Time(TimeFn::kParse, TimeUnit::kMicrosecond, SqlType::Of(want, true), std::move(args[0]),
                std::move(args[1]));
  }
  return nullptr;
}

}  // namespace fld::plan
