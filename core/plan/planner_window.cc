// The planner's part for window functions (f(...) OVER (...)): see planner.h and
// core/operators/window.h.
#include <fmt/format.h>

#include <functional>

#include "core/operators/map.h"
#include "core/operators/moment.h"
#include "core/operators/topk.h"
#include "core/operators/window.h"
#include "core/plan/planner.h"
#include "core/types/schema.h"

namespace fld::plan {

using sql::Expr;
using sql::ExprKind;
using sql::FrameBound;
using sql::WindowSpec;

namespace {

bool IsRankName(std::string_view n) {
  return n == "ROW_NUMBER" || n == "RANK" || n == "DENSE_RANK";
}

// The calls with OVER in e (not inside subqueries).
void CollectWindowCalls(const Expr& e, std::vector<const Expr*>* out) {
  if (e.kind == ExprKind::kFunction && e.over) {
    out->push_back(&e);
    return;
  }
  for (const auto& a : e.args)
    if (a) CollectWindowCalls(*a, out);
}

}  // namespace

void Planner::NoteRankLimit(const sql::Select& s, const std::vector<const Expr*>& conj) {
  if (s.from.size() != 1 || s.from[0]->kind != sql::TableRef::Kind::kSubquery) return;
  const sql::TableRef& ref = *s.from[0];
  const sql::Query& q = *ref.subquery;
  if (!q.select || !q.with.empty() || !q.order_by.empty() || q.limit || q.offset) return;
  const sql::Select& inner = *q.select;
  if (inner.distinct || !inner.group_by.empty() || inner.having) return;
  std::vector<const Expr*> calls;
  const sql::SelectItem* rank_item = nullptr;
  for (const auto& item : inner.items) {
    if (item.expr->kind == ExprKind::kStar) continue;
    size_t before = calls.size();
    CollectWindowCalls(*item.expr, &calls);
    if (calls.size() == before + 1 && calls.back() == item.expr.get()) rank_item = &item;
  }
  if (calls.size() != 1 || !rank_item || rank_item->alias.empty()) return;
  const Expr& call = *rank_item->expr;
  if (!IsRankName(call.name) || !call.args.empty() || call.star_arg) return;
  int64_t limit = -1;
  for (const Expr* c : conj) {
    if (c->kind != ExprKind::kBinary) continue;
    const Expr* col = c->args[0].get();
    const Expr* lit = c->args[1].get();
    sql::Op op = c->op;
    if (col->kind == ExprKind::kLiteral) {  // N >= rn
      std::swap(col, lit);
      op = op == sql::Op::kGe ? sql::Op::kLe : op == sql::Op::kGt ? sql::Op::kLt : op;
    }
    if (col->kind != ExprKind::kColumnRef || !EqualsIgnoreCase(col->name, rank_item->alias)) continue;
    if (!col->qualifier.empty() && !EqualsIgnoreCase(col->qualifier, ref.alias)) continue;
    if (lit->kind != ExprKind::kLiteral || lit->lit_kind != sql::LiteralKind::kInteger || lit->text.size() > 18)
      continue;
    const int64_t n = std::stoll(lit->text);
    int64_t l;
    if (op == sql::Op::kLe || op == sql::Op::kEq)
      l = n;  // rn = N keeps a subset of rn <= N
    else if (op == sql::Op::kLt)
      l = n - 1;
    else
      continue;
    limit = limit < 0 ? l : std::min(limit, l);
  }
  if (limit >= 0) rank_limits_[&call] = std::max<int64_t>(limit, 0);
}

Planner::Plan Planner::PlanWindows(const sql::Select& s, Plan from, AggContext* outer) {
  std::vector<const Expr*> calls;
  for (const auto& item : s.items)
    if (item.expr->kind != ExprKind::kStar) CollectWindowCalls(*item.expr, &calls);

  // The input of the window operators: the FROM columns, then the partition keys, order keys and
  // arguments that are not plain columns (hidden).
  std::vector<BoundExprPtr> pre;
  Scope scope = from.scope;
  for (size_t i = 0; i < from.scope.cols.size(); ++i)
    pre.push_back(MakeColumn(static_cast<int>(i), from.scope.cols[i].type));
  const size_t width = pre.size();
  auto column = [&](BoundExprPtr e) -> int {
    if (e->op == ExprOp::kColumn) return e->column_index;
    for (size_t i = width; i < pre.size(); ++i)
      if (pre[i]->Equals(*e)) return static_cast<int>(i);
    scope.cols.push_back({"", "", e->type, true});
    pre.push_back(std::move(e));
    return static_cast<int>(pre.size() - 1);
  };
  auto bind = [&](const Expr& e) {
    if (ContainsWindow(e)) ctx_.Error(e.pos, "window function calls cannot be nested");
    if (!outer && ContainsAggregate(e)) ctx_.Error(e.pos, "aggregate functions are not allowed in a window");
    // In an aggregate block: over the aggregate's output (GROUP BY keys, aggregates).
    BoundExprPtr b = outer ? binder_.BindAggregate(e, outer) : binder_.Bind(e, from.scope);
    if (b->type.id == TypeId::kNull) b = binder_.Coerce(std::move(b), SqlType::Of(TypeId::kInteger), e.pos);
    return b;
  };
  // A constant integer: a ROWS offset, LAG/LEAD's offset.
  auto constant_int = [&](const Expr& e, std::string_view what) -> int64_t {
    BoundExprPtr b = binder_.Bind(e, from.scope);
    if (!b->type.IsInteger() || !b->IsConstant()) ctx_.Error(e.pos, fmt::format("{} must be a constant integer", what));
    Value v = EvaluateConstant(*b);
    if (v.IsNull()) ctx_.Error(e.pos, fmt::format("{} must not be NULL", what));
    return v.i;
  };

  struct Group {
    std::vector<int> partition;
    std::vector<SortKey> order;
    std::vector<WindowFn> fns;
    std::vector<const Expr*> calls;
    std::vector<SqlType> types;
    // STDDEV/VARIANCE calls: computed from three of fns (COUNT, SUM, SUM of squares; their
    // calls are null) by a MomentOp after the window operator.
    std::vector<std::pair<const Expr*, MomentSpec>> moments;
  };
  std::vector<Group> groups;
  for (const Expr* call : calls) {
    const Expr& e = *call;
    for (const auto& a : e.args)
      if (ContainsWindow(*a)) ctx_.Error(a->pos, "window function calls cannot be nested");
    // The window: its own clauses, or a named window's (WINDOW name AS (...)) with additions,
    // which may itself add to another named window. As in PostgreSQL, a window that adds to
    // another cannot override its PARTITION BY or ORDER BY, nor copy one with a frame clause
    // (OVER name alone takes the named window as it is).
    std::vector<const WindowSpec*> chain{e.over.get()};  // the call's window, then the ones it names
    while (!chain.back()->ref.empty()) {
      const WindowSpec& w = *chain.back();
      const WindowSpec* named = nullptr;
      for (const auto& [name, spec] : s.windows)
        if (EqualsIgnoreCase(name, w.ref)) named = spec.get();
      if (!named) ctx_.Error(w.pos, fmt::format("unknown window '{}'", w.ref));
      if (chain.size() > s.windows.size()) ctx_.Error(named->pos, "window definitions refer to each other in a cycle");
      chain.push_back(named);
    }
    for (size_t i = 0; i + 1 < chain.size(); ++i) {
      const WindowSpec& w = *chain[i];
      if (i == 0 && w.partition_by.empty() && w.order_by.empty() && !w.has_frame) continue;  // OVER name
      if (!w.partition_by.empty())
        ctx_.Error(w.partition_by[0]->pos, fmt::format("cannot override PARTITION BY of window '{}'", w.ref));
      for (size_t j = i + 1; j < chain.size() && !w.order_by.empty(); ++j)
        if (!chain[j]->order_by.empty())
          ctx_.Error(w.order_by[0].expr->pos, fmt::format("cannot override ORDER BY of window '{}'", w.ref));
      if (chain[i + 1]->has_frame)
        ctx_.Error(w.pos, fmt::format("cannot copy window '{}' because it has a frame clause", w.ref));
    }
    const auto& partition_by = chain.back()->partition_by;
    const std::vector<sql::OrderItem>* order_ptr = &chain.back()->order_by;
    for (const WindowSpec* w : chain)
      if (!w->order_by.empty()) {
        order_ptr = &w->order_by;
        break;
      }
    const auto& order_by = *order_ptr;
    const WindowSpec* framed = chain[0];
    for (const WindowSpec* w : chain)
      if (w->has_frame) {
        framed = w;
        break;
      }

    Group g;
    for (size_t i = 0; i < window_lead_; ++i) g.partition.push_back(static_cast<int>(i));
    for (const auto& p : partition_by) g.partition.push_back(column(bind(*p)));
    std::vector<SqlType> order_types;
    for (const auto& o : order_by) {
      SortKey k;
      BoundExprPtr b = bind(*o.expr);
      order_types.push_back(b->type);
      k.column = column(std::move(b));
      k.desc = o.desc;
      // NULL is the smallest value unless NULLS FIRST / LAST says otherwise (as in ORDER BY ... LIMIT).
      k.nulls_first = o.nulls_first.value_or(!o.desc);
      g.order.push_back(k);
    }

    WindowFn fn;
    SqlType type;
    bool moment = false;  // STDDEV/VARIANCE: fn is COUNT(x); these are SUM(x), SUM(x * x)
    AggSpec moment_sum, moment_sq;
    MomentSpec moment_spec;
    const std::string& name = e.name;
    if (e.distinct && !IsAggregateName(name))
      ctx_.Error(e.pos, fmt::format("DISTINCT is only for aggregate functions, not {}", name));
    if (e.filter && !IsAggregateName(name))
      ctx_.Error(e.filter->pos, fmt::format("FILTER is only for aggregate functions, not {}", name));
    auto nargs = [&](size_t lo, size_t hi) {
      if (e.star_arg || e.args.size() < lo || e.args.size() > hi)
        ctx_.Error(e.pos, lo == hi ? fmt::format("{} takes {} argument{}", name, lo, lo == 1 ? "" : "s")
                                   : fmt::format("{} takes {} to {} arguments", name, lo, hi));
    };
    if (IsRankName(name)) {
      nargs(0, 0);
      fn.kind = name == "ROW_NUMBER" ? WindowFnKind::kRowNumber
                : name == "RANK"     ? WindowFnKind::kRank
                                     : WindowFnKind::kDenseRank;
      type = SqlType::Of(TypeId::kBigInt, false);
    } else if (name == "LAG" || name == "LEAD") {
      nargs(1, 3);
      fn.kind = name == "LAG" ? WindowFnKind::kLag : WindowFnKind::kLead;
      BoundExprPtr v = bind(*e.args[0]);
      type = v->type.WithNullable(true);
      if (e.args.size() >= 2) fn.offset = constant_int(*e.args[1], fmt::format("{}'s offset", name));
      if (e.args.size() == 3) {
        BoundExprPtr d = bind(*e.args[2]);
        type = binder_.CommonType(type, d->type, e.args[2]->pos).WithNullable(true);
        fn.default_col = column(binder_.Coerce(std::move(d), type, e.args[2]->pos));
      }
      fn.arg = column(binder_.Coerce(std::move(v), type, e.args[0]->pos));
    } else if (name == "FIRST_VALUE" || name == "LAST_VALUE") {
      nargs(1, 1);
      fn.kind = name == "FIRST_VALUE" ? WindowFnKind::kFirstValue : WindowFnKind::kLastValue;
      BoundExprPtr v = bind(*e.args[0]);
      type = v->type.WithNullable(true);
      fn.arg = column(std::move(v));
    } else if (IsAggregateName(name)) {
      AggContext agg;
      agg.input = &from.scope;
      agg.outer = outer;
      binder_.BindAggregate(e, &agg);
      fn.kind = WindowFnKind::kAggregate;
      fn.agg = agg.aggs[0];
      AggKind& k = fn.agg.kind;
      const bool is_moment =
          k == AggKind::kStddevPop || k == AggKind::kStddevSamp || k == AggKind::kVarPop || k == AggKind::kVarSamp;
      const bool collects =
          k == AggKind::kArrayAgg || k == AggKind::kMapAgg || k == AggKind::kArgMin || k == AggKind::kArgMax;
      const bool bits = k == AggKind::kBitAnd || k == AggKind::kBitOr || k == AggKind::kBitXor;
      if (k != AggKind::kCountStar && k != AggKind::kCount && k != AggKind::kSum && k != AggKind::kAvg &&
          k != AggKind::kMin && k != AggKind::kMax && !is_moment && !collects && !bits)
        ctx_.Error(e.pos, fmt::format("{} as a window function is not supported yet", name));
      // STDDEV/VARIANCE of integers and floats (not DISTINCT): from COUNT, SUM and SUM of squares
      // (a MomentOp after the window); over DECIMALs and with DISTINCT the window operator
      // computes them from each frame's values, exactly.
      moment = is_moment && !fn.agg.distinct && (fn.agg.arg_type.IsInteger() || fn.agg.arg_type.IsFloat());
      if (collects) {
        // ARRAY_AGG / MAP_AGG: NULL over a frame with no rows (as PostgreSQL's array_agg); FILTER
        // as a column, since NULL elements count.
        fn.agg.result_type = fn.agg.result_type.WithNullable(true);
        if (agg.filters[0]) fn.agg.filter = column(std::move(agg.filters[0]));
        if (k == AggKind::kMapAgg || k == AggKind::kArgMin || k == AggKind::kArgMax)
          fn.agg.key = column(std::move(agg.keys[0]));
      }
      if (agg.filters[0]) {
        // f(x) FILTER (WHERE c): f over CASE WHEN c THEN x END (COUNT(*): COUNT of CASE WHEN c
        // THEN 0 END), as every one of these skips NULLs.
        if (k == AggKind::kCountStar) {
          k = AggKind::kCount;
          agg.args[0] = MakeLiteral(Value::Int(0), SqlType::Of(TypeId::kInteger, false));
          fn.agg.arg_type = agg.args[0]->type;
        }
        const SqlType t = agg.args[0]->type.WithNullable(true);
        std::vector<BoundExprPtr> when;
        when.push_back(std::move(agg.filters[0]));
        when.push_back(std::move(agg.args[0]));
        agg.args[0] = MakeCall(ExprOp::kCase, t, std::move(when));
        fn.agg.arg_type = fn.agg.arg_type.WithNullable(true);
        fn.agg.result_type = fn.agg.result_type.WithNullable(k != AggKind::kCount);
      }
      if (moment) {
        // COUNT(x), SUM(x) and SUM(x * x), as BIGINT (integers) or DOUBLE; the sums overflow
        // with an error, never silently.
        const SqlType st = SqlType::Of(fn.agg.arg_type.IsFloat() ? TypeId::kDouble : TypeId::kBigInt, true);
        BoundExprPtr x = binder_.Coerce(std::move(agg.args[0]), st, e.pos);
        std::vector<BoundExprPtr> sq;
        sq.push_back(x->Clone());
        sq.push_back(x->Clone());
        moment_sum = fn.agg;
        moment_sum.kind = AggKind::kSum;
        moment_sum.arg_type = moment_sum.result_type = st;
        moment_sq = moment_sum;
        moment_sq.arg = column(MakeCall(ExprOp::kMul, st, std::move(sq)));
        moment_sum.arg = column(std::move(x));
        moment_spec.kind = k;
        moment_spec.arg_type = fn.agg.arg_type;
        type = fn.agg.result_type;
        k = AggKind::kCount;
        fn.agg.arg = moment_sum.arg;
        fn.agg.result_type = SqlType::Of(TypeId::kBigInt, false);
      } else {
        if (agg.args[0]) fn.agg.arg = column(std::move(agg.args[0]));
        type = fn.agg.result_type;
      }
    } else if (name == "NTILE" || name == "NTH_VALUE") {
      // A constant bucket count / position, at least 1 (as in PostgreSQL).
      const bool ntile = name == "NTILE";
      nargs(ntile ? 1 : 2, ntile ? 1 : 2);
      const Expr& k = *e.args[ntile ? 0 : 1];
      fn.offset = constant_int(k, fmt::format("{}'s {}", name, ntile ? "bucket count" : "position"));
      if (fn.offset < 1) ctx_.Error(k.pos, fmt::format("{}'s argument must be greater than zero", name));
      if (ntile) {
        fn.kind = WindowFnKind::kNtile;
        type = SqlType::Of(TypeId::kInteger, false);
      } else {
        fn.kind = WindowFnKind::kNthValue;
        BoundExprPtr v = bind(*e.args[0]);
        type = v->type.WithNullable(true);
        fn.arg = column(std::move(v));
      }
    } else if (name == "PERCENT_RANK" || name == "CUME_DIST") {
      nargs(0, 0);
      fn.kind = name == "PERCENT_RANK" ? WindowFnKind::kPercentRank : WindowFnKind::kCumeDist;
      type = SqlType::Of(TypeId::kDouble, false);
    } else if (IsWindowOnlyName(name)) {
      ctx_.Error(e.pos, fmt::format("the window function {} is not supported yet", name));
    } else {
      ctx_.Error(e.pos, fmt::format("{} is not a window function", name));
    }
    fn.result = moment ? PhysType::kI64 : type.phys();

    // The frame (used by FIRST_VALUE, LAST_VALUE, NTH_VALUE and the aggregates; the others ignore
    // it).
    if (!framed->has_frame) {
      fn.rows = false;
      fn.start.kind = WindowBound::Kind::kUnboundedPreceding;
      fn.end.kind = g.order.empty() ? WindowBound::Kind::kUnboundedFollowing : WindowBound::Kind::kCurrentRow;
    } else {
      fn.rows = framed->unit == sql::FrameUnit::kRows;
      fn.groups = framed->unit == sql::FrameUnit::kGroups;
      fn.exclude = static_cast<WindowFn::Exclude>(framed->exclude);
      if (fn.groups && g.order.empty()) ctx_.Error(framed->pos, "a GROUPS frame needs ORDER BY");
      using K = FrameBound::Kind;
      const FrameBound& fs = framed->start;
      const FrameBound& fe = framed->end;
      if (fs.kind == K::kUnboundedFollowing) ctx_.Error(fs.pos, "a frame cannot start at UNBOUNDED FOLLOWING");
      if (fe.kind == K::kUnboundedPreceding) ctx_.Error(fe.pos, "a frame cannot end at UNBOUNDED PRECEDING");
      if (fs.kind == K::kCurrentRow && fe.kind == K::kPreceding)
        ctx_.Error(fe.pos, "a frame starting at the current row cannot end at a preceding row");
      if (fs.kind == K::kFollowing && (fe.kind == K::kPreceding || fe.kind == K::kCurrentRow))
        ctx_.Error(fe.pos, "a frame starting at a following row cannot end before it");
      auto convert = [&](const FrameBound& b, WindowBound* out) {
        out->kind = static_cast<WindowBound::Kind>(b.kind);
        if (b.kind != K::kPreceding && b.kind != K::kFollowing) return;
        if (fn.rows || fn.groups) {
          out->rows = constant_int(*b.offset, fn.rows ? "a ROWS frame offset" : "a GROUPS frame offset");
          if (out->rows < 0) ctx_.Error(b.offset->pos, "a frame offset must not be negative");
          return;
        }
        if (g.order.size() != 1) ctx_.Error(b.pos, "a RANGE frame with an offset needs exactly one ORDER BY column");
        const SqlType& kt = order_types[0];
        BoundExprPtr off = binder_.Bind(*b.offset, from.scope);
        if (kt.IsTemporal()) {
          // An INTERVAL: over DATE / TIMESTAMP either kind, over TIME a day-time one.
          const bool months = off->type.id == TypeId::kIntervalYearMonth;
          if (!off->IsConstant() || !off->type.IsInterval() || (months && kt.id == TypeId::kTime))
            ctx_.Error(b.offset->pos,
                       fmt::format("a RANGE frame offset over a {} column must be a constant {}INTERVAL",
                                   kt.WithNullable(true).ToString(), kt.id == TypeId::kTime ? "day-time " : ""));
          out->range = EvaluateConstant(*off);
          out->offset = kt.id == TypeId::kTime ? WindowBound::Offset::kNumber
                        : months               ? WindowBound::Offset::kMonths
                                               : WindowBound::Offset::kMicros;
          fn.date_key = kt.id == TypeId::kDate;
        } else {
          if (!kt.IsNumeric())
            ctx_.Error(b.offset->pos, fmt::format("RANGE frame offsets over {} columns are not supported",
                                                  kt.WithNullable(true).ToString()));
          if (!off->IsConstant() || !off->type.IsNumeric())
            ctx_.Error(b.offset->pos, "a RANGE frame offset must be a constant number");
          off = binder_.Coerce(std::move(off), kt.WithNullable(false), b.offset->pos);
          out->range = EvaluateConstant(*off);
        }
        const bool negative =
            out->range.IsNull() || (out->range.kind == Value::Kind::kDouble ? out->range.d < 0 : out->range.i < 0);
        if (negative) ctx_.Error(b.offset->pos, "a frame offset must not be negative or NULL");
      };
      convert(fs, &fn.start);
      convert(fe, &fn.end);
    }

    // One operator per distinct (PARTITION BY, ORDER BY).
    Group* into = nullptr;
    for (Group& o : groups) {
      bool same = o.partition == g.partition && o.order.size() == g.order.size();
      for (size_t i = 0; same && i < g.order.size(); ++i)
        same = o.order[i].column == g.order[i].column && o.order[i].desc == g.order[i].desc &&
               o.order[i].nulls_first == g.order[i].nulls_first;
      if (same) into = &o;
    }
    if (!into) {
      groups.push_back(std::move(g));
      into = &groups.back();
    }
    if (moment) {
      const int at = static_cast<int>(into->fns.size());
      moment_spec.count = at;
      moment_spec.sum = at + 1;
      moment_spec.sumsq = at + 2;
      into->moments.push_back({call, moment_spec});
      into->fns.push_back(fn);
      into->calls.push_back(nullptr);
      into->types.push_back(fn.agg.result_type);
      for (const AggSpec* a : {&moment_sum, &moment_sq}) {
        fn.agg = *a;
        fn.result = a->result_type.phys();
        into->fns.push_back(fn);
        into->calls.push_back(nullptr);
        into->types.push_back(a->result_type);
      }
      continue;
    }
    into->fns.push_back(fn);
    into->calls.push_back(call);
    into->types.push_back(type);
  }

  std::vector<PhysType> types = Types(scope);
  Plan out;
  out.scope = scope;
  out.node = pre.size() == width ? from.node : AddMap(nullptr, std::move(pre), from.node, types);
  for (Group& g : groups) {
    // `rn <= N` over the only window call: a per-partition top-K.
    auto limit = rank_limits_.find(g.calls[0]);
    if (calls.size() == 1 && limit != rank_limits_.end()) {
      const RankKind rank = g.fns[0].kind == WindowFnKind::kRowNumber ? RankKind::kRowNumber
                            : g.fns[0].kind == WindowFnKind::kRank    ? RankKind::kRank
                                                                      : RankKind::kDenseRank;
      std::vector<PhysType> in_types = types;
      types.push_back(PhysType::kI64);
      out.node = circuit_->AddNode(
          std::make_unique<TopKOp>(in_types, g.order, limit->second, 0, g.partition, rank, circuit_->pool()),
          {out.node}, types);
    } else {
      std::vector<PhysType> in_types = types;
      for (const WindowFn& f : g.fns) types.push_back(f.result);
      auto op = std::make_unique<WindowOp>(in_types, g.partition, g.order, g.fns);
      op->SetOrderKeyNotNull(!g.order.empty() && !scope.cols[g.order[0].column].type.nullable);
      out.node = circuit_->AddNode(std::move(op), {out.node}, types);
    }
    const int base = static_cast<int>(out.scope.cols.size());
    for (size_t i = 0; i < g.calls.size(); ++i) {
      const int index = static_cast<int>(out.scope.cols.size());
      out.scope.cols.push_back({"", "", g.types[i], true});
      if (g.calls[i]) binder_.SetSubqueryColumn(g.calls[i], index, g.types[i]);
    }
    if (!g.moments.empty()) {
      std::vector<MomentSpec> specs;
      for (auto [call, m] : g.moments) {
        m.count += base;
        m.sum += base;
        m.sumsq += base;
        specs.push_back(m);
        const SqlType t = m.arg_type.WithNullable(true);
        binder_.SetSubqueryColumn(call, static_cast<int>(out.scope.cols.size()), t);
        out.scope.cols.push_back({"", "", t, true});
        types.push_back(t.phys());
      }
      out.node = circuit_->AddNode(std::make_unique<MomentOp>(std::move(specs)), {out.node}, types);
    }
  }
  return out;
}

}  // namespace fld::plan
