#include "core/plan/waterlines.h"

#include <map>

#include "core/operators/aggregate.h"
#include "core/operators/asof_join.h"
#include "core/operators/distinct.h"
#include "core/operators/emit_final.h"
#include "core/operators/join.h"
#include "core/operators/lateness.h"
#include "core/operators/map.h"
#include "core/operators/session.h"
#include "core/operators/window.h"

namespace fld::plan {

namespace {

class Deriver {
 public:
  explicit Deriver(const Circuit& c) : c_(c) {}

  const std::vector<WaterlineRef>& Of(int node) {
    if (auto it = memo_.find(node); it != memo_.end()) return it->second;
    std::vector<WaterlineRef> out(c_.node_types(node).size());
    const Operator& op = c_.op(node);
    const auto& ins = c_.node_inputs(node);
    if (auto* l = dynamic_cast<const LatenessOp*>(&op)) {
      out = Of(ins[0]);
      for (size_t i = 0; i < l->columns().size(); ++i) out[l->columns()[i].index] = l->Waterline(i);
    } else if (auto* m = dynamic_cast<const MapOp*>(&op)) {
      // A filter keeps the columns; a projection keeps a column's waterline through a monotone
      // function of it.
      const std::vector<WaterlineRef> in = Of(ins[0]);
      if (m->projections().empty()) {
        out = in;
      } else {
        for (size_t j = 0; j < m->projections().size(); ++j) {
          const BoundExpr& e = *m->projections()[j];
          int col = SingleColumn(e);
          if (col < 0 || col >= static_cast<int>(in.size()) || !in[col].valid() || !IsMonotoneIn(e, col)) continue;
          out[j] = e.op == ExprOp::kColumn ? in[col] : in[col].Through(e, col);
        }
      }
    } else if (dynamic_cast<const DistinctOp*>(&op) || dynamic_cast<const EmitFinalOp*>(&op)) {
      // emit_final releases a row once it lies below the waterline, so what it releases later
      // does not. (A temporal filter retracts old rows as time passes: none.)
      out = Of(ins[0]);
    } else if (auto* sess = dynamic_cast<const SessionOp*>(&op)) {
      // Only window_end: a change can retract rows of any age (core/operators/session.h).
      out.back() = Of(ins[0])[sess->ts_column()];
    } else if (auto* j = dynamic_cast<const AsofJoinOp*>(&op)) {
      // A left row's output changes with the row itself (time >= the left waterline) or with a
      // right row at or before its time (>= the right one): the smaller bounds the left time.
      out[j->left_ts()] = WaterlineRef::Min(Of(ins[0])[j->left_ts()], Of(ins[1])[j->right_ts()]);
    } else if (auto* a = dynamic_cast<const AggregateOp*>(&op)) {
      // A group changes only when one of its rows does, so its key keeps the input's waterline.
      const std::vector<WaterlineRef> in = Of(ins[0]);
      for (int k = 0; k < a->num_keys(); ++k) out[k] = in[k];
    }
    // Anything else (joins, unions, top-K, upsert, sources): none. A join can pair an old row of
    // one side with a new row of the other; an upsert retracts the row a key replaces.
    return memo_.emplace(node, std::move(out)).first->second;
  }

 private:
  const Circuit& c_;
  std::map<int, std::vector<WaterlineRef>> memo_;
};

}  // namespace

std::vector<WaterlineRef> NodeWaterlines(const Circuit& c, int node) {
  return Deriver(c).Of(node);
}

void AttachWaterlines(Circuit* c) {
  Deriver d(*c);
  for (size_t id = 0; id < c->num_nodes(); ++id) {
    Operator& op = c->op(static_cast<int>(id));
    const auto& ins = c->node_inputs(static_cast<int>(id));
    if (auto* a = dynamic_cast<AggregateOp*>(&op)) {
      const auto& in = d.Of(ins[0]);
      for (int k = 0; k < a->num_keys(); ++k) {
        if (!in[k].valid()) continue;
        a->SetWaterline(k, in[k]);
        break;
      }
    } else if (auto* dist = dynamic_cast<DistinctOp*>(&op)) {
      const auto& in = d.Of(ins[0]);
      for (size_t k = 0; k < in.size(); ++k) {
        if (!in[k].valid()) continue;
        dist->SetWaterline(static_cast<int>(k), in[k]);
        break;
      }
    } else if (auto* j = dynamic_cast<JoinOp*>(&op)) {
      const auto& l = d.Of(ins[0]);
      const auto& r = d.Of(ins[1]);
      for (size_t k = 0; k < j->left_keys().size(); ++k) {
        WaterlineRef w = WaterlineRef::Min(l[j->left_keys()[k]], r[j->right_keys()[k]]);
        if (!w.valid()) continue;
        j->SetWaterline(static_cast<int>(k), w);
        break;
      }
    } else if (auto* win = dynamic_cast<WindowOp*>(&op)) {
      const auto& in = d.Of(ins[0]);
      if (!win->order().empty() && in[win->order()[0].column].valid()) win->SetWaterline(in[win->order()[0].column]);
    } else if (auto* sess = dynamic_cast<SessionOp*>(&op)) {
      const auto& in = d.Of(ins[0]);
      if (in[sess->ts_column()].valid()) sess->SetWaterline(in[sess->ts_column()]);
    } else if (auto* j = dynamic_cast<AsofJoinOp*>(&op)) {
      const auto& l = d.Of(ins[0]);
      const auto& r = d.Of(ins[1]);
      if (l[j->left_ts()].valid() && r[j->right_ts()].valid()) j->SetWaterlines(l[j->left_ts()], r[j->right_ts()]);
    }
  }
}

}  // namespace fld::plan
