// The planner's part for ARRAY(subquery) (see planner.h): the subquery's rows become one array
// per domain value (per combination of the enclosing columns it reads), an ARRAY_AGG grouped by
// the domain columns, whose elements are ordered by the subquery's ORDER BY (ascending or
// descending throughout; without one, by value, as ARRAY_AGG). PlanSubquery joins the arrays
// back to the enclosing rows, an empty array (not NULL) where the subquery has no row, as in
// PostgreSQL.
#include <fmt/format.h>

#include "core/operators/aggregate.h"
#include "core/plan/functions.h"
#include "core/plan/planner.h"

namespace fld::plan {

using sql::Expr;
using sql::ExprKind;

Planner::Plan Planner::ArrayOfRows(Plan body, const sql::Query& q, size_t k, bool limited, sql::Pos pos) {
  size_t added = 0;  // ORDER BY expressions AppendOrderByColumns made trailing select items
  if (q.select)
    for (const auto& item : q.select->items) added += item.alias.starts_with(kOrderColumnPrefix) ? 1 : 0;
  // The top-K of LIMIT / OFFSET drops those columns: the order must then be the output's.
  if (limited && added > 0)
    ctx_.Error(pos, "LIMIT or OFFSET in ARRAY(subquery) ordered by what it does not return is not supported yet");
  const size_t m = body.scope.cols.size() - k - (limited ? 0 : added);
  if (m != 1) ctx_.Error(pos, fmt::format("ARRAY(subquery) must return one column, not {}", m));
  const SqlType vtype = body.scope.cols[k].type;

  // The ORDER BY keys over the subquery's output (and its trailing order columns).
  Scope out;
  for (size_t i = 0; i < body.scope.cols.size(); ++i)
    out.cols.push_back({"", i < k ? "" : body.scope.cols[i].name, body.scope.cols[i].type, i < k});
  std::vector<BoundExprPtr> fields;
  std::vector<SqlType> field_types;
  const bool desc = !q.order_by.empty() && q.order_by[0].desc;
  for (const auto& o : q.order_by) {
    if (o.desc != desc)
      ctx_.Error(o.expr->pos, "ARRAY(subquery) ordered both ascending and descending is not supported yet");
    BoundExprPtr key;
    const Expr& e = *o.expr;
    if (e.kind == ExprKind::kLiteral && e.lit_kind == sql::LiteralKind::kInteger) {
      if (e.text != "1")
        ctx_.Error(e.pos, fmt::format("ORDER BY position {} is not in the select list (1..1)", e.text));
      key = MakeColumn(static_cast<int>(k), vtype);
    } else {
      key = binder_.Bind(e, out);
    }
    // NULL is the smallest value unless NULLS FIRST / LAST says otherwise (Feldera's rule). The
    // keys sort ascending, NULL first (ROW values compare field by field, NULL smallest); a
    // descending order is the ascending one of the array reversed.
    bool nulls_first = o.nulls_first.value_or(!o.desc);
    if (desc) nulls_first = !nulls_first;
    if (!nulls_first && key->type.nullable) {
      std::vector<BoundExprPtr> a;
      a.push_back(key->Clone());
      field_types.push_back(SqlType::Of(TypeId::kBoolean, false));
      fields.push_back(MakeCall(ExprOp::kIsNull, field_types.back(), std::move(a)));
    }
    field_types.push_back(key->type);
    fields.push_back(std::move(key));
  }
  if (fields.empty()) {
    field_types.push_back(vtype);
    fields.push_back(MakeColumn(static_cast<int>(k), vtype));
  }

  // [domain columns, value, ROW(keys)], then ARRAY_AGG(value) ordered by the keys, per domain.
  std::vector<BoundExprPtr> proj;
  std::vector<ScopeColumn> cols;
  for (size_t i = 0; i <= k; ++i) {
    proj.push_back(MakeColumn(static_cast<int>(i), body.scope.cols[i].type));
    cols.push_back(body.scope.cols[i]);
  }
  const SqlType key_type = SqlType::Row(std::move(field_types), false);
  proj.push_back(MakeCall(ExprOp::kRow, key_type, std::move(fields)));
  cols.push_back({"", "", key_type, true});
  Plan in = Project(body, std::move(proj), std::move(cols));
  AggSpec spec;
  spec.kind = AggKind::kArrayAgg;
  spec.arg = static_cast<int>(k);
  spec.key = static_cast<int>(k + 1);
  spec.arg_type = vtype;
  spec.key_type = key_type;
  spec.result_type = SqlType::Array(vtype, false);
  Plan a;
  for (size_t i = 0; i < k; ++i) a.scope.cols.push_back(body.scope.cols[i]);
  a.scope.cols.push_back({"", "", spec.result_type, true});
  std::vector<AggSpec> specs{spec};
  a.node = circuit_->AddNode(
      std::make_unique<AggregateOp>(Types(in.scope), static_cast<int>(k), std::move(specs), circuit_->pool()),
      {in.node}, Types(a.scope));
  if (!desc) return a;
  proj.clear();
  for (size_t i = 0; i < k; ++i) proj.push_back(MakeColumn(static_cast<int>(i), a.scope.cols[i].type));
  const FunctionDef* reverse = FindFunction("ARRAY_REVERSE");
  sql::Expr call;
  call.kind = ExprKind::kFunction;
  call.name = "ARRAY_REVERSE";
  call.pos = pos;
  std::vector<BoundExprPtr> args;
  args.push_back(MakeColumn(static_cast<int>(k), spec.result_type));
  BoundExprPtr reversed = BindLibraryCall(binder_, *reverse, call, std::move(args));
  reversed->type = spec.result_type;
  proj.push_back(std::move(reversed));
  return Project(a, std::move(proj), a.scope.cols);
}

}  // namespace fld::plan
