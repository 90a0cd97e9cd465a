// The planner's part for group windows (see planner.h): GROUP BY HOP(ts, slide, size [, offset])
// and GROUP BY SESSION(ts, gap), Calcite's group-window functions, planned as the table functions
// TABLE(HOP(...)) and TABLE(SESSION(...)) (core/operators/hop.h, session.h) in front of the
// aggregate. Each row is put in its windows (a HOP row in every window holding its timestamp; a
// SESSION row in its session among the rows with the same other GROUP BY keys); the window's
// start and end become hidden input columns and GROUP BY keys, read by HOP_START/HOP_END and
// SESSION_START/SESSION_END. A row with a NULL timestamp belongs to no window. (GROUP BY
// TUMBLE(...) needs none of this: a row has one window, a scalar of its timestamp.)
#include <fmt/format.h>

#include <algorithm>

#include "core/expr/time.h"
#include "core/operators/hop.h"
#include "core/operators/map.h"
#include "core/operators/session.h"
#include "core/plan/planner.h"

namespace fld::plan {

using sql::Expr;
using sql::ExprKind;

Planner::Plan Planner::PlanGroupWindow(const sql::Select& s, Plan from, bool correlated, AggContext* agg) {
  const Expr* call = nullptr;
  std::vector<size_t> at;  // the positions of the call in GROUP BY (grouping sets may repeat it)
  for (size_t i = 0; i < s.group_by.size(); ++i) {
    const Expr* g = s.group_by[i].get();
    if (g->kind != ExprKind::kFunction || g->over || (g->name != "HOP" && g->name != "SESSION")) continue;
    if (call) {
      bool same = g->name == call->name && !s.grouping_sets.empty();
      if (same) {
        std::vector<BoundExprPtr> a = binder_.BindGroupWindowArgs(*call, from.scope),
                                  b = binder_.BindGroupWindowArgs(*g, from.scope);
        same = a.size() == b.size();
        for (size_t j = 0; same && j < a.size(); ++j) same = a[j]->Equals(*b[j]);
      }
      if (!same) ctx_.Error(g->pos, "only one HOP or SESSION is allowed in GROUP BY");
    }
    if (!call) call = g;
    at.push_back(i);
  }
  if (!call) return from;
  if (correlated)
    ctx_.Error(call->pos, fmt::format("GROUP BY {} in a correlated subquery is not supported yet", call->name));
  const bool hop = call->name == "HOP";
  std::vector<BoundExprPtr> args = binder_.BindGroupWindowArgs(*call, from.scope);
  auto is_call = [at](size_t i) { return std::find(at.begin(), at.end(), i) != at.end(); };

  // The timestamp and (SESSION) the other GROUP BY keys as columns: hidden ones for expressions.
  std::vector<BoundExprPtr> pre;
  for (size_t i = 0; i < from.scope.cols.size(); ++i)
    pre.push_back(MakeColumn(static_cast<int>(i), from.scope.cols[i].type));
  const size_t width = pre.size();
  auto column = [&](BoundExprPtr e) -> int {
    if (e->op == ExprOp::kColumn) return e->column_index;
    for (size_t i = width; i < pre.size(); ++i)
      if (pre[i]->Equals(*e)) return static_cast<int>(i);
    from.scope.cols.push_back({"", "", e->type, true});
    pre.push_back(std::move(e));
    return static_cast<int>(pre.size() - 1);
  };
  const int ts = column(args[0]->Clone());
  std::vector<int> item_column(s.group_by.size(), -1);  // SESSION: each other GROUP BY key's column
  std::vector<int> keys;
  if (!hop) {
    for (size_t i = 0; i < s.group_by.size(); ++i) {
      const Expr* g = s.group_by[i].get();
      if (is_call(i)) continue;
      if (g->kind == ExprKind::kLiteral)
        ctx_.Error(g->pos, "GROUP BY positions next to SESSION(...) are not supported yet; name the expression");
      item_column[i] = column(binder_.Bind(*g, from.scope));
      if (std::find(keys.begin(), keys.end(), item_column[i]) == keys.end()) keys.push_back(item_column[i]);
    }
  }
  if (pre.size() > width) from.node = AddMap(nullptr, std::move(pre), from.node, Types(from.scope));

  const int unwindowed = from.node;
  std::vector<PhysType> in_types = Types(from.scope);
  const SqlType wt = SqlType::Of(TypeId::kTimestamp, false);
  from.scope.cols.push_back({"", "", wt, true});  // the window's start
  from.scope.cols.push_back({"", "", wt, true});  // and end
  const std::vector<PhysType> out_types = Types(from.scope);
  const int64_t gap = hop ? 0 : args[1]->literal.i;
  auto sessions = [this, in_types, ts, gap, out_types](int input, std::vector<int> session_keys) {
    return circuit_->AddNode(std::make_unique<SessionOp>(in_types, ts, std::move(session_keys), gap), {input},
                             out_types);
  };
  if (hop) {
    const bool months = args[1]->type.id == TypeId::kIntervalYearMonth;
    const int64_t slide = args[1]->literal.i, size = args[2]->literal.i;
    const int64_t offset = args.size() > 3 ? args[3]->literal.i : 0;
    if (size / slide > 100000)
      ctx_.Error(call->args[1]->pos, "HOP puts each row in more than 100000 windows; use a larger slide");
    from.node = circuit_->AddNode(std::make_unique<HopOp>(ts, slide, size, offset, months), {from.node}, out_types);
  } else {
    from.node = sessions(from.node, keys);
  }
  agg->window_call = call;
  agg->window_args = std::move(args);
  agg->window_start = static_cast<int>(from.scope.cols.size() - 2);
  agg->window_end = static_cast<int>(from.scope.cols.size() - 1);
  agg->window_node = from.node;
  if (s.grouping_sets.empty()) return from;
  // A set that leaves out HOP's window has two readings (each row once, or once per window, as
  // TABLE(HOP(...)) would give): refused.
  for (const auto& set : s.grouping_sets) {
    bool windowed = false;
    for (int i : set) windowed = windowed || is_call(static_cast<size_t>(i));
    if (hop && !windowed)
      ctx_.Error(call->pos, "a grouping set without GROUP BY HOP(...)'s window is not supported yet");
  }

  // GROUPING SETS / ROLLUP / CUBE with SESSION: each set reads its own sessions, formed among the
  // rows with the same keys of that set (a set without the window: each row with a timestamp
  // once). With HOP every set reads the rows in their windows.
  if (hop) return from;
  agg->window_input = [=, this](const std::vector<int>& items) {
    std::vector<int> set_keys;
    for (int i : items) {
      const int c = item_column[static_cast<size_t>(i)];
      if (c >= 0 && std::find(set_keys.begin(), set_keys.end(), c) == set_keys.end()) set_keys.push_back(c);
    }
    return sessions(unwindowed, set_keys);
  };
  return from;
}

}  // namespace fld::plan
