// Filter + map (projection): a linear operator, so it is its own incremental version: it keeps
// the rows whose predicate is TRUE and computes the output columns from them; weights pass
// through unchanged. Column references in the projection share the input's column vectors.
//
// With a pool of more than one worker, a batch of at least 2 * kSliceRows rows is cut into one
// slice of rows per worker (its columns that the expressions read, copied), the slices are
// evaluated in parallel and their results concatenated in order: the output is the same as on
// one thread. When a row fails, the batch is evaluated again on the calling thread, so that the
// error is the one a single thread raises (the first failing row of the first failing
// expression). An expression calling a user-defined function implemented outside SQL is evaluated on the calling
// thread alone: nothing says that implementation may run on two threads at once.
#pragma once

#include <vector>

#include "core/circuit/operator.h"
#include "core/expr/expr.h"

namespace fld {

class ThreadPool;

class MapOp : public Operator {
 public:
  static constexpr size_t kSliceRows = 2048;
  // predicate may be null (no filter); an empty projection list means "all input columns".
  MapOp(BoundExprPtr predicate, std::vector<BoundExprPtr> projections, ThreadPool* pool = nullptr);
  bool PreservesInserts() const override { return true; }
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return predicate_ ? (projections_.empty() ? "filter" : "filter+map") : "map"; }
  std::string Describe() const override;
  const BoundExpr* predicate() const { return predicate_.get(); }
  const std::vector<BoundExprPtr>& projections() const { return projections_; }

 private:
  // The filter and the projection over b, on the calling thread. Columns no expression reads
  // may be empty (a slice's).
  Batch Apply(const Batch& b) const;
  // Whether the output needs input column c: an expression reads it, or nothing is projected.
  bool Reads(size_t c) const { return projections_.empty() || (c < reads_.size() && reads_[c]); }

  BoundExprPtr predicate_;
  std::vector<BoundExprPtr> projections_;
  ThreadPool* pool_;
  bool parallel_ = false;    // a pool of more than one worker, and no external function called
  std::vector<bool> reads_;  // input columns the expressions read (see Reads)
};

}  // namespace fld
