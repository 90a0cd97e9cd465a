#include "core/operators/source.h"

namespace fld {

Batch SourceOp::Step(std::span<const Batch* const>) {
  Batch out = pending_.empty() ? EmptyBatch(types_) : Concat(pending_);
  pending_.clear();
  return out;
}

}  // namespace fld
