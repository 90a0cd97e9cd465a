// Top-K: ORDER BY ... LIMIT n [OFFSET m] of a view, maintained incrementally.
//
// The output is the Z-set of the rows at positions m .. m+n-1 of the input's integrated
// contents sorted by the keys (each row counted as many times as its weight). Per step the
// operator folds the change into its state (the integrated input, kept sorted), walks the first
// m+n rows again and emits the difference between the old and the new window: a step costs
// O(|delta| log |state| + m + n), whatever the size of the input.
// Order: the keys in turn (ASC or DESC; NULL sorts as the smallest value unless NULLS FIRST /
// LAST says otherwise, as in Feldera), then the whole row, so that ties at the window's edge are
// broken the same way on every run and after every restore.
// State: the integrated input (row -> weight); the window is recomputed from it on restore.
#pragma once

#include <map>
#include <vector>

#include "core/circuit/operator.h"

namespace fld {

struct SortKey {
  int column = 0;
  bool desc = false;
  bool nulls_first = true;
};

class TopKOp : public Operator {
 public:
  TopKOp(std::vector<PhysType> types, std::vector<SortKey> keys, int64_t limit, int64_t offset);
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return "topk"; }
  std::string Describe() const override;
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;

 private:
  using Row = std::vector<Value>;
  struct Less {
    const std::vector<SortKey>* keys;
    bool operator()(const Row& a, const Row& b) const;
  };
  // The current window: row -> copies.
  std::map<Row, int64_t> Window() const;

  std::vector<PhysType> types_;
  std::vector<SortKey> keys_;
  int64_t limit_, offset_;
  std::map<Row, int64_t, Less> contents_;
  std::map<Row, int64_t> window_;
};

}  // namespace fld
