// Output buffering, Feldera's `enable_output_buffer`: a view's changes are held back and
// consolidated before they reach the output transport, so a destination that prefers few large
// batches (a file read by a batch job, a table that is rewritten) receives them so. An update of a
// row that is later updated again, or an insert that is later deleted, then never leaves the
// process.
//
// Configured on an output connector object, as Feldera spells it:
//   "enable_output_buffer": true,
//   "max_output_buffer_time_millis": 10000,     // default: no time limit
//   "max_output_buffer_size_records": 1000000   // default: 10,000,000
// The held changes are written, consolidated (equal rows' weights added, rows whose weight sums
// to 0 dropped, sorted by the rows' encodings: core/zset/batch.h Consolidate), as one batch:
//   - when the oldest of them has been held for max_output_buffer_time_millis;
//   - when, consolidated, they number at least max_output_buffer_size_records;
//   - before every checkpoint, and when the pipeline completes, stops, or fails on a bad record:
//     a checkpoint records each output's position, and a resumed run replays only the steps after
//     it, so a held change must be written by then (the next `fld run` neither loses it nor
//     writes it twice, under every fault-tolerance model).
// Between writes, what a reader of the destination sees is the state as of the last write; the
// changes written add up to the same contents as without buffering.
//
// BufferedOutputConnector wraps the transport's connector (MakeOutputConnector builds it when
// the flag is set); the controller calls Drain after each step, while idle (at the deadline
// DrainDeadline reports) and with `all` before checkpoints.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/common/thread_pool.h"
#include "pipelines/connectors/connector.h"

namespace fld {

struct OutputBufferOptions {
  bool enabled = false;
  std::optional<std::chrono::milliseconds> max_time;  // none: no time limit
  uint64_t max_records = 10'000'000;
};

class BufferedOutputConnector : public OutputConnector {
 public:
  BufferedOutputConnector(std::unique_ptr<OutputConnector> inner, OutputBufferOptions options, ThreadPool* pool);

  // Holds the change (consolidating what is held when it has grown enough), and writes what is
  // held at once when it reaches max_records.
  void Write(const Batch& delta, uint64_t step) override;
  bool Drain(OutputClock::time_point now, bool all) override;
  std::optional<OutputClock::time_point> DrainDeadline() const override;
  uint64_t buffered_records() const override { return held_rows_; }
  // Pass to the transport's connector: what it was given is written and flushed; the held
  // changes are not (Drain moves them).
  void Flush(bool durable) override { inner_->Flush(durable); }
  uint64_t records() const override { return inner_->records(); }
  uint64_t Position() const override { return inner_->Position(); }
  // Cuts the transport's output back to `position`; the held changes are dropped (a resume calls
  // it before replaying the steps that produce them again).
  void TruncateTo(uint64_t position) override;
  std::string Describe() const override;

 private:
  void Consolidate();  // the held parts into one consolidated batch
  bool WriteHeld();    // consolidated, to the transport (false: it all cancelled out); nothing held afterwards

  std::unique_ptr<OutputConnector> inner_;
  OutputBufferOptions options_;
  ThreadPool* pool_;
  std::vector<Batch> held_;  // held_[0] is consolidated when consolidated_rows_ > 0
  uint64_t held_rows_ = 0;   // rows in held_ (with duplicates not yet consolidated)
  uint64_t consolidated_rows_ = 0;
  uint64_t last_step_ = 0;
  OutputClock::time_point since_{};  // when the oldest held change arrived
};

}  // namespace fld
