// The journal entry the controller writes to the WAL for every step (the record's payload), and
// the batch fingerprint replay checks.
//
// For each input that produced records in the step: its index among the pipeline's inputs, the
// record count, a hash of the batch, the connector's position after the step, and, for inputs
// that cannot be read again (standard input), the rows themselves. Replay re-reads exactly
// `count` records of a re-readable input and must reproduce the hash and position (a mismatch
// means the input changed under the pipeline and is refused); a logged input's rows are taken
// from the log and its position is restored with Seek.
//
// When the program reads NOW(), the entry also holds the step's time, so a replay computes with
// the times of the original run (core/operators/temporal_filter.h).
//
// Payload layout: u32 n | n bytes of JSON {"i": [[index, count, hash, position(, 1 = logged)],
// ...](, "now": microseconds since the epoch)} | then, for each logged input, its rows: u64 rows | (str row encoding,
// i64 weight)*. (Older entries mark a logged input by a null position.)
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/common/thread_pool.h"
#include "core/zset/batch.h"

namespace fld {

struct JournalInput {
  uint32_t index = 0;
  uint64_t count = 0;
  uint64_t hash = 0;
  nlohmann::json position;
  bool logged = false;  // the rows are in the log (the input cannot be read again)
  std::optional<Batch> rows;
};

std::string EncodeJournal(const std::vector<JournalInput>& inputs, std::optional<int64_t> now = std::nullopt);
// Decodes a payload; logged rows are decoded into batches of `types_of(index)`; the step's time
// goes to *now (nullopt when the entry has none).
std::vector<JournalInput> DecodeJournal(const std::string& payload,
                                        const std::vector<std::vector<PhysType>>& input_types,
                                        std::optional<int64_t>* now = nullptr);

// A position-sensitive 64-bit fingerprint of a batch's rows and weights (not cryptographic).
uint64_t BatchHash(const Batch& b, ThreadPool* pool = nullptr);
// The fingerprint the journal records for an input's batch: BatchHash of every row, or for
// generated inputs (InputConnector::Generated) of the first, middle and last rows and the count.
uint64_t JournalHash(const Batch& b, bool generated, ThreadPool* pool);

}  // namespace fld
