// The datagen input connector (Feldera's): generates rows for a table from a list of plans.
//
// Promises:
// - Determinism: row i of plan p is a pure function of (seed, p, i). Each row gets a fresh RNG
//   state mixed from those three numbers, and each column draws from it (columns in table order,
//   each from its own sub-stream). Rows therefore do not depend on batch sizes, chunking or the
//   number of threads, and Seek({"seed", "plan", "row"}) regenerates any range exactly.
// - Without a configured seed a random one is chosen; Position() carries it so a resume is exact.
// - Plans run in order; a plan without `limit` never ends (later plans never start). AtEnd()
//   once every plan is exhausted. Read() returns at most max_batch_size() rows and may span
//   plans. A plan with `rate` never gets ahead of rate * elapsed time (a token bucket holding at
//   most one second's worth); Read then returns fewer or no rows and sleeps at most ~1 ms.
// - Generation is columnar: per-field parameters (ranges, alias tables for Zipf, value lists)
//   are prepared once; the per-row loops fill the column vectors directly. With a thread pool
//   (the context's, or an own one when `workers` > 1 and the context has none) a Read's rows are
//   cut into chunks of worker_chunk_size generated in parallel into disjoint slices. Columns of
//   earlier batches are reused once nobody else holds them.
//
// Value semantics per field (range [a, b) is half-open, n = b - a):
//   increment: a + (i * scale) mod n          (integers without a range: 0, scale, 2*scale, ...
//                                              wrapping past the type's maximum)
//   uniform:   numbers (a + U[0, n)) * scale;  temporal a + scale * U[0, ceil(n / scale))
//   zipf:      numbers (a + K - 1) * scale with P(K = k) ~ k^-e, k in 1..n; temporal likewise
//              a + scale * (K - 1) over ceil(n / scale) steps. `a` is the most frequent value.
//   values:    the strategy picks an index into the list (increment: (i * scale) mod len).
//   DATE ranges count days, TIME and TIMESTAMP milliseconds (physical unit: microseconds);
//   defaults DATE/TIMESTAMP [1970-01-01, 2100-01-01), TIME [00:00, 24:00). Range ends may also be
//   strings that ParseValue accepts. DECIMAL ranges are decimal numbers, generated in steps of
//   the type's last digit. DOUBLE/REAL uniform is continuous over [a, b) (default [0, 1)).
//   BOOLEAN is the range [false, true]: increment alternates. Strings without `values` are the
//   decimal text of the number the strategy gives (default range for uniform: [0, 2^63)), or
//   come from a built-in word list (word, words, sentence, name, email, city_name, street_name,
//   state_abbr (the 50 US states' codes), buzzword).
//   null_percentage (0..100, nullable columns only) makes that share of the rows NULL.
//   DECIMAL of more than 18 digits: the same, range ends up to 38 digits, at most 2^64 steps;
//   without a range the unscaled values stay within 64 bits.
//   Nested types (Feldera's settings; GEOMETRY is refused, as Feldera's datagen has none):
//   BINARY/VARBINARY and ARRAY: the strategy draws the length over `range` (default [0, 5)),
//     as for an INTEGER; element j is generated from `value` as row j of a column would be
//     (increment gives 0, 1, 2, ...), each element from its own sub-stream. Bytes default to
//     [0, 256) and must stay in it.
//   MAP: likewise the number of entries, keys from `key`, values from `value` (equal keys
//     collapse into one entry). ROW: each field from `fields` (by name), with the row's index.
//   VARIANT: a BIGINT VARIANT holding the number the strategy gives.
//   `values` of these types (and of wide DECIMAL) are written as in a JSON input row.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pipelines/connectors/connector.h"

namespace fld {

struct DatagenPlan;  // one parsed plan (datagen.cc)

class DatagenConnector : public InputConnector {
 public:
  static constexpr size_t kDefaultMaxBatchSize = 100000;

  // `config` is the transport's config object. Throws fld::Error(kUsage) naming the offending key
  // or field and ctx.where.
  DatagenConnector(const nlohmann::json& config, const Schema& schema, const ConnectorContext& ctx,
                   size_t max_batch_size = kDefaultMaxBatchSize);
  ~DatagenConnector() override;

  using InputConnector::Read;
  Batch Read(size_t max_records) override;
  bool AtEnd() const override;
  size_t max_batch_size() const override { return max_batch_size_; }
  uint64_t records() const override { return records_; }
  std::optional<uint64_t> total_records() const override;
  nlohmann::json Position() const override;
  void Seek(const nlohmann::json& position) override;
  std::string Describe() const override;

  void SetThrottle(bool on) override { throttle_ = on; }
  bool Generated() const override { return true; }
  uint64_t seed() const { return seed_; }
  // Rows [begin, end) of plan `plan`, independent of the reading position (tests, replay).
  Batch Generate(size_t plan, uint64_t begin, uint64_t end) const;

 private:
  // Rows plan_ may produce now under its rate (max_rows when it has none).
  uint64_t Allowance(uint64_t max_rows);
  void StartPlan();

  Schema schema_;
  std::string where_;
  std::vector<std::unique_ptr<DatagenPlan>> plans_;
  uint64_t seed_ = 0;
  size_t max_batch_size_;
  bool throttle_ = true;
  ThreadPool* pool_ = nullptr;
  std::unique_ptr<ThreadPool> own_pool_;
  // Columns of recent batches, refilled by later Reads once the pipeline has dropped them: their
  // memory is already mapped, which saves the page faults and zeroing of fresh allocations.
  std::deque<std::shared_ptr<Column>> spare_;

  size_t plan_ = 0;   // current plan
  uint64_t row_ = 0;  // next row of the current plan
  uint64_t records_ = 0;

  // Rate limiting of the current plan.
  using Clock = std::chrono::steady_clock;
  bool bucket_started_ = false;
  Clock::time_point bucket_time_;
  double tokens_ = 0;
};

}  // namespace fld
