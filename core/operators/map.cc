#include "core/operators/map.h"

#include <algorithm>
#include <atomic>

#include "core/common/thread_pool.h"

namespace fld {

namespace {
// Marks the input columns e reads in *reads (growing it), and returns false when e calls a
// function implemented outside SQL. A lambda's body reads its own columns, not the input's.
bool Scan(const BoundExpr& e, std::vector<bool>* reads) {
  if (e.op == ExprOp::kColumn && e.column_index >= 0) {
    const size_t c = static_cast<size_t>(e.column_index);
    if (reads->size() <= c) reads->resize(c + 1, false);
    (*reads)[c] = true;
  }
  bool pure = !(e.op == ExprOp::kCall && e.external);
  for (const auto& a : e.args) pure = Scan(*a, reads) && pure;
  if (e.lambda) {
    std::vector<bool> own;
    pure = Scan(*e.lambda, &own) && pure;
  }
  return pure;
}
}  // namespace

MapOp::MapOp(BoundExprPtr predicate, std::vector<BoundExprPtr> projections, ThreadPool* pool)
    : predicate_(std::move(predicate)), projections_(std::move(projections)), pool_(pool) {
  // Without a filter, a projected column reference takes the input's column: the slices need
  // only what computed columns read.
  bool pure = true;
  if (predicate_) pure = Scan(*predicate_, &reads_) && pure;
  for (const auto& p : projections_)
    if (predicate_ || p->op != ExprOp::kColumn) pure = Scan(*p, &reads_) && pure;
  bool computes = predicate_ != nullptr;  // (else only references: nothing to spread)
  for (const auto& p : projections_) computes = computes || p->op != ExprOp::kColumn;
  parallel_ = pool_ && pool_->workers() > 1 && pure && computes;
}

Batch MapOp::Apply(const Batch& in) const {
  Batch filtered;
  const Batch* src = &in;
  if (predicate_ && !in.empty()) {
    std::vector<uint32_t> sel = SelectTrue(*predicate_, in);
    if (sel.size() != in.size()) {
      // Only the columns an expression reads are gathered (all, without a projection); the
      // others stay as they were (a slice's are empty): nothing reads them.
      Batch narrow;
      std::vector<size_t> read;
      for (size_t c = 0; c < in.width(); ++c) {
        if (!Reads(c)) continue;
        read.push_back(c);
        narrow.cols.push_back(in.cols[c]);
      }
      narrow.weights = in.weights;
      filtered = Gather(narrow, sel);
      std::vector<ColumnPtr> cols = in.cols;
      for (size_t k = 0; k < read.size(); ++k) cols[read[k]] = std::move(filtered.cols[k]);
      filtered.cols = std::move(cols);
      src = &filtered;
    }
  }
  if (projections_.empty()) return *src;
  Batch out;
  out.cols.reserve(projections_.size());
  for (const auto& p : projections_) out.cols.push_back(Evaluate(*p, *src));
  out.weights = src->weights;
  return out;
}

Batch MapOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  const size_t n = in.size();
  const size_t slices = parallel_ ? std::min(pool_->workers(), n / kSliceRows) : 1;
  if (slices <= 1) return Apply(in);
  // Only the columns the slices read are copied into them (all, without a projection); the
  // others stay empty.
  std::vector<Batch> parts(slices);
  std::atomic<bool> failed{false};
  pool_->ParallelFor(slices, [&](size_t s) {
    try {
      const size_t begin = n * s / slices, end = n * (s + 1) / slices;
      Batch slice;
      slice.cols.reserve(in.width());
      for (size_t c = 0; c < in.width(); ++c) {
        slice.cols.push_back(Reads(c) ? Slice(*in.cols[c], begin, end) : std::make_shared<Column>(in.cols[c]->phys));
      }
      slice.weights.assign(in.weights.begin() + static_cast<ptrdiff_t>(begin),
                           in.weights.begin() + static_cast<ptrdiff_t>(end));
      parts[s] = Apply(slice);
    } catch (...) {
      failed = true;
    }
  });
  // A row failed: the batch again on this thread, which fails on the row it would have alone.
  if (failed) return Apply(in);
  // The slices' results in order. Without a filter, a projected column reference is the input's
  // column itself, and the weights are the input's.
  Batch out;
  const size_t width = projections_.empty() ? in.width() : projections_.size();
  out.cols.reserve(width);
  for (size_t j = 0; j < width; ++j) {
    if (!predicate_ && projections_[j]->op == ExprOp::kColumn) {
      out.cols.push_back(in.cols[static_cast<size_t>(projections_[j]->column_index)]);
      continue;
    }
    std::vector<ColumnPtr> cols(slices);
    for (size_t s = 0; s < slices; ++s) cols[s] = std::move(parts[s].cols[j]);
    out.cols.push_back(Concat(std::move(cols)));
  }
  if (!predicate_) {
    out.weights = in.weights;
  } else {
    for (const Batch& part : parts) out.weights.insert(out.weights.end(), part.weights.begin(), part.weights.end());
  }
  return out;
}

std::string MapOp::Describe() const {
  std::string s = Name();
  if (predicate_) s += " where " + predicate_->ToString();
  if (!projections_.empty()) {
    s += " select ";
    for (size_t i = 0; i < projections_.size(); ++i) s += (i ? ", " : "") + projections_[i]->ToString();
  }
  return s;
}

}  // namespace fld
