// Sorted runs on disk: a materialized relation's changes waiting for the next checkpoint, moved
// out of memory once they grow large, and the merge of such runs (with what is still in memory)
// into one stream in encoding order, which the checkpoint writes into the state store
// (StateStore::StageRelation).
//
// A run's file is scratch: nothing reads it after this process ends (a resume recomputes the
// changes since the checkpoint from the checkpoint and the log), so it is never synced, the
// SpilledRun object deletes it, and the controller empties the folder when it starts. A file
// that cannot be written (a full disk) or reads back short is an I/O error naming the file.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/zset/batch.h"

namespace fld {

// Rows in encoding order (EncodeRow's bytes, compared with memcmp): appends the next row's
// encoding to *enc, sets *weight and returns true; returns false once there are none left.
using RowPull = std::function<bool(std::string* enc, int64_t* weight)>;

// The rows of a consolidation of `parts` (ConsolidateRows), encoded one at a time. The result
// refers to both arguments: they must outlive it.
RowPull ConsolidatedPull(std::span<const Batch> parts, const ConsolidatedRows& rows);

// The union of sources, each in encoding order with distinct encodings: one row per encoding,
// its weights summed; a sum of 0 is left out.
RowPull MergeSorted(std::vector<RowPull> sources);

// The rows of `source`, pulled on a thread of their own some blocks ahead of the caller (at most
// about 4 MiB of encodings): the checkpoint merges its runs there while its transaction writes
// into the store. An exception thrown by `source` is rethrown by the pull that reaches it;
// destroying the last copy of the result before the end stops the thread.
RowPull PullAhead(RowPull source);

class SpilledRun {
 public:
  // Writes `rows` (in encoding order, distinct encodings) to a new file at `path`.
  static std::unique_ptr<SpilledRun> Write(const std::string& path, const RowPull& rows);
  ~SpilledRun();  // deletes the file
  SpilledRun(const SpilledRun&) = delete;
  SpilledRun& operator=(const SpilledRun&) = delete;

  const std::string& path() const { return path_; }
  uint64_t rows() const { return rows_; }
  uint64_t bytes() const { return bytes_; }
  // The rows, read back in order (any number of readers, each with its own file handle).
  RowPull Read() const;

 private:
  SpilledRun() = default;
  std::string path_;
  uint64_t rows_ = 0, bytes_ = 0;
};

}  // namespace fld
