// The controller: runs a pipeline's step loop with fault tolerance.
//
// The loop polls every input without waiting (InputConnector::Read never blocks) and holds what
// they return. A step runs as soon as records are held and either the spec's
// min_batch_size_records are held or the oldest has waited max_buffering_delay_usecs (both 0 by
// default: at once), or an input's max_batch_size is reached; and before every checkpoint, stop
// or input error, so nothing read is left out of them. A malformed record fails the run after
// the step holding everything before it (on every input) is stored.
//
// Each step takes up to max_batch_size records from every input, journals what it took
// (exactly_once: a WAL record per step, wal/log_format.h), pushes it through the circuit and
// hands each output connector its relation's change. Outputs are released (written to their
// files) only after the journal records of their steps are durable (group commit: an fsync as
// soon as no input is waiting, else one per ~20 ms of steps). Every checkpoint_interval_secs, at the end, and on a
// graceful stop, one LMDB transaction stores the operator state, the materialized relations, the input positions and
// the output positions (wal/store.h); log segments it covers are then deleted.
//
// Start-up: take the storage lock (one writer), then
//   - no checkpoint: start fresh (output files truncated);
//   - a checkpoint of a different program or connector configuration: refuse, saying what
//     changed and how to start over;
//   - a completed run: re-read its inputs from where they stopped (appended lines, new files, a
//     new standard input) and update the views and outputs incrementally; with nothing new, say
//     so and change nothing;
//   - otherwise resume: verify the checkpoint's checksums and restore it, read and check the
//     whole log after it (refusing on corruption before anything is changed), cut a torn log
//     tail, seek inputs, cut output files back to the checkpoint's lengths, replay the journaled
//     steps (every input must reproduce its record count and hash), continue.
// at_least_once skips the journal (outputs after the last checkpoint may repeat); none keeps no
// log and always starts over.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "pipelines/pipeline.h"

namespace fld {

struct RunSummary {
  uint64_t records = 0;        // records taken from inputs by this process
  uint64_t steps = 0;          // steps run by this process (replayed ones included)
  uint64_t replayed = 0;       // steps replayed from the journal
  uint64_t total_records = 0;  // records over the pipeline's whole life
  double seconds = 0;
  bool completed = false;     // every input ended
  bool no_new_input = false;  // a completed pipeline's inputs had nothing new: nothing was done
  uint64_t checkpoints = 0;
  uint64_t evictions = 0;  // times operator state left memory for the store (storage.cache_mib)
  uint64_t log_bytes = 0;
};

struct ControllerOptions {
  bool reset = false;     // delete the storage's state and log first
  bool progress = false;  // draw a progress line on stderr (a terminal)
};

class Controller {
 public:
  Controller(PipelineSpec spec, ControllerOptions options);
  ~Controller();
  RunSummary Run(const std::atomic<bool>* stop_requested);
  // A flag (set from a signal handler: `fld checkpoint`) that makes the loop checkpoint now.
  void SetCheckpointFlag(std::atomic<bool>* flag);
  const Pipeline& pipeline() const { return *pipeline_; }
  // For a process about to exit after Run: closes the state store, the log and the connectors
  // and ends the controller's threads, but leaves the operators' state allocated (freeing the
  // state of millions of groups or partitions one allocation at a time only delays the exit;
  // the process ends right after, as compilers end without freeing their trees). Nothing may be
  // called after it but pipeline().spec().
  void CloseForExit();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<Pipeline> pipeline_;
};

// Deletes a pipeline's stored state and log (the lock file stays). Refuses while it runs.
void ClearStorage(const PipelineSpec& spec);

}  // namespace fld
