#include "core/circuit/circuit.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "core/common/error.h"
#include "core/operators/integrate.h"
#include "core/operators/lateness.h"
#include "core/operators/source.h"
#include "core/operators/temporal_filter.h"

namespace fld {

int Circuit::AddNode(std::unique_ptr<Operator> op, std::vector<int> inputs, std::vector<PhysType> types) {
  Node n;
  n.op = std::move(op);
  n.inputs = std::move(inputs);
  n.output = EmptyBatch(types);
  n.types = std::move(types);
  const bool inputs_insert =
      !n.inputs.empty() && std::all_of(n.inputs.begin(), n.inputs.end(), [&](int i) { return nodes_[i].inserts_only; });
  n.inserts_only = inputs_insert && n.op->PreservesInserts();
  if (inputs_insert) n.op->InputsInsertOnly();
  nodes_.push_back(std::move(n));
  return static_cast<int>(nodes_.size()) - 1;
}

int Circuit::AddRelation(Relation r) {
  relations_.push_back(std::move(r));
  pending_.emplace_back();
  return static_cast<int>(relations_.size()) - 1;
}

int Circuit::FindRelation(std::string_view name) const {
  for (size_t i = 0; i < relations_.size(); ++i)
    if (EqualsIgnoreCase(relations_[i].name, name)) return static_cast<int>(i);
  return -1;
}

void Circuit::Push(int table, Batch delta) {
  if (relations_[table].append_only) {
    auto neg = std::find_if(delta.weights.begin(), delta.weights.end(), [](int64_t w) { return w < 0; });
    if (neg != delta.weights.end())
      Fail(ErrorKind::kRuntime, "table {} is append_only: it accepts inserts only, and a change deletes a row",
           relations_[table].name);
  }
  if (!delta.empty()) pending_[table].push_back(std::move(delta));
}

int Circuit::ClockNode() {
  if (clock_node_ < 0) clock_node_ = AddNode(std::make_unique<ClockOp>(), {}, {PhysType::kI64});
  return clock_node_;
}

void Circuit::SetNow(int64_t micros) {
  if (clock_node_ < 0) return;
  static_cast<ClockOp*>(nodes_[clock_node_].op.get())->Set(micros);
  now_set_ = true;
}

std::optional<int64_t> Circuit::Now() const {
  if (clock_node_ < 0) return std::nullopt;
  return static_cast<const ClockOp*>(nodes_[clock_node_].op.get())->value();
}

void Circuit::Step() {
  if (clock_node_ >= 0 && !now_set_)
    SetNow(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
               .count());
  now_set_ = false;
  for (size_t r = 0; r < relations_.size(); ++r) {
    if (relations_[r].kind != Relation::Kind::kTable) continue;
    auto* src = static_cast<SourceOp*>(nodes_[relations_[r].input_node].op.get());
    src->Feed(std::move(pending_[r]));
    pending_[r].clear();
  }
  std::vector<const Batch*> ins;
  for (auto& n : nodes_) {
    ins.clear();
    for (int i : n.inputs) ins.push_back(&nodes_[i].output);
    n.output = n.op->Step(ins);
  }
  ++steps_;
}

bool Circuit::IsIntegrate(const Node& n) const {
  return dynamic_cast<const IntegrateOp*>(n.op.get()) != nullptr;
}

IntegrateOp* Circuit::ContentsOf(int relation) const {
  const Relation& r = relations_[relation];
  if (r.integrate_node < 0) Fail(ErrorKind::kUsage, "relation '{}' is not materialized", r.name);
  auto* op = static_cast<IntegrateOp*>(nodes_[r.integrate_node].op.get());
  if (!op->keeps()) Fail(ErrorKind::kUsage, "the contents of '{}' are kept outside the circuit", r.name);
  return op;
}

void Circuit::LoadContents(int relation, const Batch& contents) {
  ContentsOf(relation)->Load(contents);
}

Batch Circuit::Contents(int relation) const {
  return ContentsOf(relation)->Contents();
}

void Circuit::ContentsKeptOutside() {
  for (auto& n : nodes_)
    if (IsIntegrate(n)) static_cast<IntegrateOp*>(n.op.get())->KeepNothing();
}

void Circuit::WriteNodes(std::string* out, const std::function<void(size_t, StateWriter&)>& node) const {
  StateWriter w(out);
  w.U64(steps_);
  w.U64(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    std::string s;
    if (nodes_[i].op->HasState() && !IsIntegrate(nodes_[i])) {
      StateWriter nw(&s);
      node(i, nw);
    }
    w.Str(s);
  }
}

void Circuit::ReadNodes(std::string_view in, const std::function<void(size_t, StateReader&)>& node) {
  StateReader r(in);
  steps_ = r.U64();
  uint64_t n = r.U64();
  if (n != nodes_.size())
    Fail(ErrorKind::kCorruption, "saved state has {} operators but the circuit has {}", n, nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    std::string s = r.Str();
    if (!nodes_[i].op->HasState() || IsIntegrate(nodes_[i])) continue;
    StateReader nr(s);
    node(i, nr);
  }
}

void Circuit::SaveState(std::string* out) const {
  WriteNodes(out, [&](size_t i, StateWriter& w) { nodes_[i].op->SaveState(w); });
}

void Circuit::RestoreState(std::string_view in) {
  ReadNodes(in, [&](size_t i, StateReader& r) { nodes_[i].op->RestoreState(r); });
}

void Circuit::TrackChanges() {
  for (auto& n : nodes_)
    if (n.op->HasKeyedState() && !IsIntegrate(n)) n.op->TrackChanges();
}

void Circuit::SaveChanges(std::string* out, std::vector<std::pair<int, StateDelta>>* deltas) {
  WriteNodes(out, [&](size_t i, StateWriter& w) {
    Operator& op = *nodes_[i].op;
    if (!op.HasKeyedState()) return op.SaveState(w);
    StateDelta d;
    op.SaveChanges(w, d);
    if (!d.empty()) deltas->emplace_back(static_cast<int>(i), std::move(d));
  });
}

void Circuit::RestoreKeyed(std::string_view in, const std::function<void(int, const EntrySink&)>& entries,
                           StateSource* lazy) {
  ReadNodes(in, [&](size_t i, StateReader& r) {
    Operator& op = *nodes_[i].op;
    if (!op.HasKeyedState()) return op.RestoreState(r);
    op.BeginRestore(r);
    const bool backed = lazy && BacksState(nodes_[i]);
    if (backed)
      entries(static_cast<int>(i), [&](std::string_view k, std::string_view) { op.RestoreStoredKey(k); });
    else
      entries(static_cast<int>(i), [&](std::string_view k, std::string_view v) { op.RestoreEntry(k, v); });
    op.EndRestore();
    if (backed) op.BackState(lazy, static_cast<uint32_t>(i), true);
  });
}

bool Circuit::BacksState(const Node& n) const {
  return n.op->HasKeyedState() && !IsIntegrate(n) && n.op->CanBackState();
}

void Circuit::BackState(StateSource* source) {
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (BacksState(nodes_[i])) nodes_[i].op->BackState(source, static_cast<uint32_t>(i), false);
}

void Circuit::StateCommitted(bool evict) {
  for (auto& n : nodes_)
    if (BacksState(n)) n.op->StateCommitted(evict);
}

size_t Circuit::StateMemoryBytes() const {
  size_t bytes = 0;
  for (const auto& n : nodes_)
    if (BacksState(n)) bytes += n.op->StateMemoryBytes();
  return bytes;
}

uint64_t Circuit::LateRecords() const {
  uint64_t n = 0;
  for (const auto& node : nodes_)
    if (auto* l = dynamic_cast<const LatenessOp*>(node.op.get())) n += l->late_records();
  return n;
}

std::string Circuit::Explain(int relation) const {
  // Walk the sub-graph feeding the relation's node, printing it as an indented tree.
  std::string out;
  std::vector<bool> seen(nodes_.size(), false);
  auto rel_of = [&](int node) -> const Relation* {
    for (const auto& r : relations_)
      if (r.node == node && &r != &relations_[relation]) return &r;
    return nullptr;
  };
  std::function<void(int, int)> walk = [&](int id, int depth) {
    std::string pad(depth * 2, ' ');
    if (const Relation* r = rel_of(id); r && depth > 0) {
      out += fmt::format("{}{} {}\n", pad, r->kind == Relation::Kind::kTable ? "table" : "view", r->name);
      return;
    }
    out += fmt::format("{}{}{}\n", pad, nodes_[id].op->Describe(), seen[id] ? " (shared)" : "");
    if (seen[id]) return;
    seen[id] = true;
    for (int i : nodes_[id].inputs) walk(i, depth + 1);
  };
  walk(relations_[relation].node, 0);
  return out;
}

}  // namespace fld
