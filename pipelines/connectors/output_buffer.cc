#include "pipelines/connectors/output_buffer.h"

#include <algorithm>

namespace fld {

namespace {
// What is held is consolidated once it has doubled since the last consolidation, and not below
// this many rows: each row is consolidated O(1) times on average, and memory holds at most about
// twice the consolidated changes.
constexpr uint64_t kConsolidateRows = 1 << 16;
}  // namespace

BufferedOutputConnector::BufferedOutputConnector(std::unique_ptr<OutputConnector> inner, OutputBufferOptions options,
                                                 ThreadPool* pool)
    : inner_(std::move(inner)), options_(options), pool_(pool) {
  options_.max_records = std::max<uint64_t>(1, options_.max_records);
}

void BufferedOutputConnector::Write(const Batch& delta, uint64_t step) {
  last_step_ = step;
  if (delta.empty()) return;
  if (held_rows_ == 0) since_ = OutputClock::now();
  held_.push_back(delta);
  held_rows_ += delta.size();
  const uint64_t unconsolidated = held_rows_ - consolidated_rows_;
  if (held_rows_ >= options_.max_records || unconsolidated >= std::max(kConsolidateRows, consolidated_rows_)) {
    Consolidate();
    if (held_rows_ >= options_.max_records) WriteHeld();
  }
}

void BufferedOutputConnector::Consolidate() {
  if (held_.empty()) return;
  Batch all = fld::Consolidate(std::span<const Batch>(held_), pool_);
  held_.clear();
  held_rows_ = consolidated_rows_ = all.size();
  if (held_rows_ > 0) held_.push_back(std::move(all));
}

bool BufferedOutputConnector::WriteHeld() {
  Consolidate();
  const bool any = held_rows_ > 0;
  if (any) inner_->Write(held_[0], last_step_);
  held_.clear();
  held_rows_ = consolidated_rows_ = 0;
  return any;
}

bool BufferedOutputConnector::Drain(OutputClock::time_point now, bool all) {
  if (held_rows_ == 0) return false;
  if (!all && !(options_.max_time && now - since_ >= *options_.max_time)) return false;
  return WriteHeld();
}

std::optional<OutputClock::time_point> BufferedOutputConnector::DrainDeadline() const {
  if (held_rows_ == 0 || !options_.max_time) return std::nullopt;
  return since_ + *options_.max_time;
}

void BufferedOutputConnector::TruncateTo(uint64_t position) {
  held_.clear();
  held_rows_ = consolidated_rows_ = 0;
  inner_->TruncateTo(position);
}

std::string BufferedOutputConnector::Describe() const {
  return inner_->Describe() + " buffered";
}

}  // namespace fld
