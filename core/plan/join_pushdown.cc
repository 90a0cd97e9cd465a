#include "core/plan/join_pushdown.h"

#include <map>

#include "core/operators/aggregate.h"
#include "core/operators/join.h"
#include "core/operators/map.h"

namespace fld::plan {

namespace {

void ColumnRefs(const BoundExpr& e, std::vector<bool>* used) {
  if (e.op == ExprOp::kColumn && e.column_index >= 0 && e.column_index < static_cast<int>(used->size()))
    (*used)[e.column_index] = true;
  for (const auto& a : e.args) ColumnRefs(*a, used);
}

bool HasOp(const BoundExpr& e, ExprOp op) {
  if (e.op == op) return true;
  for (const auto& a : e.args)
    if (HasOp(*a, op)) return true;
  return false;
}

void Conjuncts(const BoundExpr& e, std::vector<const BoundExpr*>* out) {
  if (e.op == ExprOp::kAnd) {
    for (const auto& a : e.args) Conjuncts(*a, out);
    return;
  }
  out->push_back(&e);
}

BoundExprPtr Shifted(const BoundExpr& e, int by) {
  BoundExprPtr c = e.Clone();
  std::vector<BoundExpr*> todo{c.get()};
  while (!todo.empty()) {
    BoundExpr* x = todo.back();
    todo.pop_back();
    if (x->op == ExprOp::kColumn) x->column_index -= by;
    for (auto& a : x->args) todo.push_back(a.get());
  }
  return c;
}

class Pass {
 public:
  explicit Pass(Circuit* c) : c_(c), consumers_(c->num_nodes()), is_relation_(c->num_nodes(), false) {
    for (size_t n = 0; n < c->num_nodes(); ++n)
      for (int i : c->node_inputs(static_cast<int>(n))) consumers_[i].push_back(static_cast<int>(n));
    for (const Relation& r : c->relations())
      for (int n : {r.node, r.input_node, r.integrate_node})
        if (n >= 0) is_relation_[n] = true;
  }

  // Which output columns of `node` some consumer reads.
  const std::vector<bool>& Needed(int node) {
    if (auto it = memo_.find(node); it != memo_.end()) return it->second;
    const size_t width = c_->node_types(node).size();
    std::vector<bool> used(width, false);
    bool all = is_relation_[node] || consumers_[node].empty();
    for (int m : consumers_[node]) {
      auto* map = dynamic_cast<const MapOp*>(&c_->op(m));
      if (all || !map) {
        all = true;
        break;
      }
      if (map->predicate()) ColumnRefs(*map->predicate(), &used);
      if (map->projections().empty()) {
        const std::vector<bool>& through = Needed(m);
        for (size_t i = 0; i < width && i < through.size(); ++i) used[i] = used[i] || through[i];
      } else {
        for (const auto& p : map->projections()) ColumnRefs(*p, &used);
      }
    }
    if (all) used.assign(width, true);
    return memo_.emplace(node, std::move(used)).first->second;
  }

  void Run() {
    for (size_t n = 0; n < c_->num_nodes(); ++n) {
      auto* join = dynamic_cast<JoinOp*>(&c_->op(static_cast<int>(n)));
      if (!join) continue;
      join->SetNeededColumns(Needed(static_cast<int>(n)));
      PushFilter(static_cast<int>(n), join);
      const std::vector<int>& in = c_->node_inputs(static_cast<int>(n));
      for (int side = 0; side < 2 && side < static_cast<int>(in.size()); ++side)
        if (auto* agg = dynamic_cast<AggregateOp*>(&c_->op(in[side]))) join->ReadSideFrom(side == 0, agg);
    }
  }

 private:
  // The conjuncts of the filters that every row of the join passes before anything reads it:
  // a chain of single consumers, filters that keep the columns, ending at most at one
  // filter+map.
  void PushFilter(int node, JoinOp* join) {
    if (join->outer()) return;
    std::vector<const BoundExpr*> conj;
    for (int n = node; !is_relation_[n] && consumers_[n].size() == 1;) {
      auto* map = dynamic_cast<const MapOp*>(&c_->op(consumers_[n][0]));
      if (!map) break;
      if (map->predicate()) Conjuncts(*map->predicate(), &conj);
      if (!map->projections().empty()) break;
      n = consumers_[n][0];
    }
    const int nl = static_cast<int>(join->left_width());
    const size_t width = c_->node_types(node).size();
    BoundExprPtr side[2];
    for (const BoundExpr* e : conj) {
      // A scalar subquery's row-count check must see the rows it saw before; a condition on
      // NOW() may hold later for a row it rejects now, so the row must not be dropped.
      if (HasOp(*e, ExprOp::kScalarSubquery) || HasOp(*e, ExprOp::kNow)) continue;
      std::vector<bool> used(width, false);
      ColumnRefs(*e, &used);
      bool any_left = false, any_right = false;
      for (size_t i = 0; i < width; ++i)
        if (used[i]) (static_cast<int>(i) < nl ? any_left : any_right) = true;
      if (any_left == any_right) continue;  // both sides, or a constant
      const int s = any_left ? 0 : 1;
      BoundExprPtr part = Shifted(*e, s == 0 ? 0 : nl);
      if (side[s]) {
        SqlType t = side[s]->type;
        t.nullable = t.nullable || part->type.nullable;
        std::vector<BoundExprPtr> args;
        args.push_back(std::move(side[s]));
        args.push_back(std::move(part));
        side[s] = MakeCall(ExprOp::kAnd, t, std::move(args));
      } else {
        side[s] = std::move(part);
      }
    }
    for (int s = 0; s < 2; ++s)
      if (side[s]) join->SetSideFilter(s == 0, std::move(side[s]));
  }

  Circuit* c_;
  std::vector<std::vector<int>> consumers_;
  std::vector<bool> is_relation_;
  std::map<int, std::vector<bool>> memo_;
};

}  // namespace

void PushIntoJoins(Circuit* c) {
  Pass(c).Run();
}

}  // namespace fld::plan
