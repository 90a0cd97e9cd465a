// The journal entry the controller writes to the WAL for every step (the record's payload), and
// the batch fingerprint replay checks.
//
// For each input that produced records in the step: its index among the pipeline's inputs, the
// record count, a hash of the batch, the connector's position after the step (for re-readable
// inputs: datagen, files) — or, for inputs that cannot be read again (standard input), the rows
// themselves. Replay re-reads exactly `count` records and must reproduce the hash and position;
// a mismatch means the input changed under the pipeline and is refused.
//
// Payload layout: u32 n | n bytes of JSON {"i": [[index, count, hash, position], ...]} | then,
// for each input whose position is null, its rows: u64 rows | (str row encoding, i64 weight)*.
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
  nlohmann::json position;  // null when the rows are logged
  std::optional<Batch> rows;
};

std::string EncodeJournal(const std::vector<JournalInput>& inputs);
// Decodes a payload; logged rows are decoded into batches of `types_of(index)`.
std::vector<JournalInput> DecodeJournal(const std::string& payload,
                                        const std::vector<std::vector<PhysType>>& input_types);

// A position-sensitive 64-bit fingerprint of a batch's rows and weights (not cryptographic).
uint64_t BatchHash(const Batch& b, ThreadPool* pool = nullptr);
// The fingerprint the journal records for an input's batch: BatchHash of every row, or for
// generated inputs (InputConnector::Generated) of the first, middle and last rows and the count.
uint64_t JournalHash(const Batch& b, bool generated, ThreadPool* pool);

}  // namespace fld
