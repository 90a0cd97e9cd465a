#include "core/circuit/fixed_point.h"

#include <fmt/format.h>

#include "core/common/error.h"

namespace fld {

namespace {

Batch Negated(Batch b) {
  for (auto& w : b.weights) w = -w;
  return b;
}

bool IsZero(const Batch& b) {
  return Consolidate(b).empty();
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
  return s;
}

}  // namespace

FixedPointOp::FixedPointOp(std::function<std::unique_ptr<Circuit>()> make, Layout layout, size_t max_iterations)
    : make_(std::move(make)), layout_(std::move(layout)), max_iterations_(max_iterations) {
  copies_.push_back(make_());
  for (int node : layout_.outputs) outputs_.push_back(EmptyBatch(copies_[0]->node_types(node)));
}

std::string FixedPointOp::Describe() const {
  return fmt::format("fixed_point of {}", JoinNames(layout_.names));
}

Batch FixedPointOp::Step(std::span<const Batch* const> inputs) {
  const size_t nv = layout_.feedback_in.size();
  // prev[v]: the change of iterate i - 1 of view v in this step (iterate 0 is always empty).
  std::vector<Batch> prev(nv), cur(nv);
  for (size_t i = 0; i < copies_.size(); ++i) {
    Circuit& c = *copies_[i];
    for (size_t k = 0; k < inputs.size(); ++k) c.Push(layout_.inputs[k], *inputs[k]);
    if (i > 0)
      for (size_t v = 0; v < nv; ++v) c.Push(layout_.feedback_in[v], prev[v]);
    c.Step();
    for (size_t v = 0; v < nv; ++v) prev[v] = c.NodeOutput(layout_.feedback_out[v]);
    if (i + 1 < copies_.size()) continue;
    for (size_t k = 0; k < layout_.outputs.size(); ++k) outputs_[k] = c.NodeOutput(layout_.outputs[k]);
  }
  // The last iterate equalled the one before it as of the last step, so they still agree iff
  // their changes agree. Otherwise clone the last copy (its state: the inputs and iterate n - 1)
  // and feed it the difference: its output is the difference of the next two iterates.
  std::vector<Batch> diff(nv);
  bool settled = true;
  for (size_t v = 0; v < nv; ++v) {
    Batch before = EmptyBatch(copies_.back()->node_types(layout_.feedback_out[v]));
    if (copies_.size() > 1) before = copies_[copies_.size() - 2]->NodeOutput(layout_.feedback_out[v]);
    Batch parts[] = {prev[v], Negated(before)};
    diff[v] = Consolidate(parts);
    settled = settled && diff[v].empty();
  }
  while (!settled) {
    if (copies_.size() >= max_iterations_)
      Fail(ErrorKind::kRuntime,
           "recursive view{} {} did not reach a fixed point within {} iterations (a recursion that does not "
           "terminate, or that never settles)",
           nv == 1 ? "" : "s", JoinNames(layout_.names), max_iterations_);
    std::string state;
    copies_.back()->SaveState(&state);
    auto c = make_();
    c->RestoreState(state);
    for (size_t v = 0; v < nv; ++v) c->Push(layout_.feedback_in[v], diff[v]);
    c->Step();
    settled = true;
    for (size_t v = 0; v < nv; ++v) {
      diff[v] = c->NodeOutput(layout_.feedback_out[v]);
      settled = settled && IsZero(diff[v]);
    }
    for (size_t k = 0; k < layout_.outputs.size(); ++k) {
      Batch parts[] = {outputs_[k], c->NodeOutput(layout_.outputs[k])};
      outputs_[k] = Concat(parts);
    }
    copies_.push_back(std::move(c));
  }
  for (auto& o : outputs_) o = Consolidate(o);
  return Batch{};
}

void FixedPointOp::SaveState(StateWriter& w) const {
  w.U64(copies_.size());
  for (const auto& c : copies_) {
    std::string s;
    c->SaveState(&s);
    w.Str(s);
  }
}

void FixedPointOp::RestoreState(StateReader& r) {
  uint64_t n = r.U64();
  if (n == 0 || n > max_iterations_) Fail(ErrorKind::kCorruption, "saved fixed point has {} iterations", n);
  std::vector<std::unique_ptr<Circuit>> copies;
  for (uint64_t i = 0; i < n; ++i) {
    std::string s = r.Str();
    auto c = make_();
    c->RestoreState(s);
    copies.push_back(std::move(c));
  }
  copies_ = std::move(copies);
}

}  // namespace fld
