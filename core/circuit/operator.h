// The interface every circuit operator implements (core/operators/ holds one per file).
//
// Each step the circuit calls Step() once per operator, in topological order, with the change
// batches its inputs produced in this step; the operator returns its own change batch. Linear
// operators (filter, map, union) keep no state. Stateful ones (join, aggregate, distinct,
// upsert, integrate) keep exactly the traces and accumulators the DBSP rules need, and can save
// and restore them: restoring the saved state and feeding the same input changes must give the
// same outputs, byte for byte.
//
// Incremental checkpoints: an operator whose state is mostly a map of keyed entries (aggregate
// groups, join traces, distinct weights) has keyed state. It saves a small header and only the
// entries that changed since its previous save (StateDelta); the checkpoint store keeps the
// entries, so a checkpoint's cost follows the changes, not the state's size. Restoring reads
// the header, then every stored entry in key order.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/common/serialize.h"
#include "core/zset/batch.h"

namespace fld {

// The entries an operator changed since its previous save: puts and erases, in the order they
// must be applied (an erased key may be put again after its erase).
class StateDelta {
 public:
  void Put(std::string_view key, std::string_view value) { Add(1, key, value); }
  void Erase(std::string_view key) { Add(0, key, {}); }
  // f(key, value, is_put) in order.
  template <typename F>
  void ForEach(F f) const {
    StateReader r(bytes_);
    while (!r.AtEnd()) {
      const bool put = r.U64() != 0;
      std::string_view key = r.View();
      std::string_view value = r.View();
      f(key, value, put);
    }
  }
  size_t puts() const { return puts_; }
  size_t erases() const { return erases_; }
  size_t bytes() const { return bytes_.size(); }
  bool empty() const { return bytes_.empty(); }

 private:
  void Add(uint64_t put, std::string_view key, std::string_view value) {
    StateWriter w(&bytes_);
    w.U64(put);
    w.Str(key);
    w.Str(value);
    ++(put ? puts_ : erases_);
  }
  std::string bytes_;
  size_t puts_ = 0, erases_ = 0;
};

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

  // Keyed state (see the top of this file). TrackChanges is called once, before the first step,
  // when checkpoints will be taken (it makes the operator remember erased keys).
  virtual bool HasKeyedState() const { return false; }
  virtual void TrackChanges() {}
  // Writes the header to w and the entries changed since the previous SaveChanges (all of them
  // the first time) to d, then forgets the changes.
  virtual void SaveChanges(StateWriter& w, StateDelta& d) {}
  // Clears the state and reads the header; then RestoreEntry for each stored entry, in key
  // order; then EndRestore (the restored entries count as saved).
  virtual void BeginRestore(StateReader& r) {}
  virtual void RestoreEntry(std::string_view key, std::string_view value) {}
  virtual void EndRestore() {}
};

}  // namespace fld
