// The interface every circuit operator implements (core/operators/ holds one per file).
//
// Each step the circuit calls Step() once per operator, in topological order, with the change
// batches its inputs produced in this step; the operator returns its own change batch. Linear
// operators (filter, map, union) keep no state. Stateful ones (join, aggregate, distinct,
// upsert, integrate) keep exactly the traces and accumulators the DBSP rules need, and can save
// and restore them: restoring the saved state and feeding the same input changes must give the
// same outputs, byte for byte.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/common/serialize.h"
#include "core/zset/batch.h"

namespace fld {

class Operator {
 public:
  virtual ~Operator() = default;
  virtual Batch Step(std::span<const Batch* const> inputs) = 0;
  // "filter", "join", ... and a one-line description of its parameters for `fld check`.
  virtual std::string Name() const = 0;
  virtual std::string Describe() const { return Name(); }
  virtual bool HasState() const { return false; }
  virtual void SaveState(StateWriter& w) const {}
  virtual void RestoreState(StateReader& r) {}
};

}  // namespace fld
