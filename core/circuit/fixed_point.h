// The fixed point of mutually recursive views (DECLARE RECURSIVE VIEW), evaluated the DBSP way:
// within every step, the views start out empty and are iterated, X[i] = F(X[i-1], inputs), until
// they stop changing (least fixed point; F applies DISTINCT, so the views are sets); the step's
// output is the change of that fixed point since the last step. The result is the one a
// from-scratch iteration over the accumulated inputs gives, deletions and non-monotonic queries
// (EXCEPT, NOT EXISTS, aggregates over the recursion) included.
//
// Incrementally: the nested circuit F (core/plan builds it from the views' queries; its tables
// are the outer relations it reads and the views' previous iterates) exists once per iteration
// number i, each copy an ordinary incremental circuit whose input over the steps is iterate i-1.
// A step feeds the outer changes to every copy and copy i the change of iterate i-1, so each
// copy works in proportion to how much its iterate changed (semi-naive in both dimensions).
// When the last two iterates differ, a new copy is cloned from the last one (its saved state)
// and fed only their difference, until an iteration changes nothing. The copies live as long as
// the recursion was ever that deep. Past `max_iterations` copies the step fails with a run-time
// error naming the views (a recursion that does not terminate, or never settles).
//
// State: the number of copies and each copy's circuit state. The outputs (one per exposed view)
// are read through FixedPointOutputOp nodes that take the fixed point node as input.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/circuit/circuit.h"

namespace fld {

class FixedPointOp : public Operator {
 public:
  struct Layout {
    std::vector<int> inputs;         // per operator input: the nested relation it feeds
    std::vector<int> feedback_in;    // per recursive view: the nested relation of its previous iterate
    std::vector<int> feedback_out;   // per recursive view: the nested node of its new iterate
    std::vector<int> outputs;        // per exposed view: its nested node
    std::vector<std::string> names;  // the recursive views, for errors and plans
  };
  FixedPointOp(std::function<std::unique_ptr<Circuit>()> make, Layout layout, size_t max_iterations);
  Batch Step(std::span<const Batch* const> inputs) override;
  // The change of exposed view i in the last step.
  const Batch& Output(size_t i) const { return outputs_[i]; }
  size_t iterations() const { return copies_.size(); }
  std::string Name() const override { return "fixed_point"; }
  std::string Describe() const override;
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;

 private:
  std::function<std::unique_ptr<Circuit>()> make_;
  Layout layout_;
  size_t max_iterations_;
  std::vector<std::unique_ptr<Circuit>> copies_;  // copy i computes iterate i + 1
  std::vector<Batch> outputs_;
};

// Exposed view i of a fixed point node (its only input), each step.
class FixedPointOutputOp : public Operator {
 public:
  FixedPointOutputOp(const FixedPointOp* fp, size_t index) : fp_(fp), index_(index) {}
  Batch Step(std::span<const Batch* const>) override { return fp_->Output(index_); }
  std::string Name() const override { return "fixed_point_output"; }
  std::string Describe() const override { return "fixed_point_output " + std::to_string(index_); }

 private:
  const FixedPointOp* fp_;
  size_t index_;
};

}  // namespace fld
