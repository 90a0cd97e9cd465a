// The controller: runs a pipeline's step loop. Each step takes up to max_batch_size records from
// every input connector, pushes them into the circuit, runs one circuit step, and hands each
// output connector its view's change. When every input has ended it flushes the outputs and
// stores the materialized relations in the state store (wal/store.h) so `fld query` can read
// them. SIGINT/SIGTERM stop the loop after the current step.
#pragma once

#include <atomic>
#include <cstdint>

#include "pipelines/pipeline.h"

namespace fld {

struct RunSummary {
  uint64_t records = 0;
  uint64_t steps = 0;
  double seconds = 0;
  bool completed = false;  // every input ended (false: stopped by a signal)
};

class Controller {
 public:
  explicit Controller(Pipeline* pipeline) : p_(pipeline) {}
  RunSummary Run(const std::atomic<bool>* stop_requested);

 private:
  void StoreState(const RunSummary& s);
  Pipeline* p_;
};

}  // namespace fld
