// Input and output connectors: where a table's changes come from and where a view's changes go.
// Their configuration objects have Feldera's shape:
//   {"transport": {"name": "datagen"|"nexmark"|"file_input"|"file_output", "config": {...}},
//    "format": {"name": "csv"|"json", "config": {...}}, "max_batch_size": N, "name": "..."}
// and, on outputs, Feldera's output buffer keys (pipelines/connectors/output_buffer.h).
// They come either from a table's/view's WITH ('connectors' = '[...]') property or from the
// spec's `connectors:` map (pipelines/spec.h); both are parsed by MakeInputConnector /
// MakeOutputConnector, which reject unknown keys naming the key and where it was written.
//
// Threading: the controller calls every method from its one thread; a connector may use the
// context's ThreadPool inside Read.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/common/thread_pool.h"
#include "core/types/schema.h"
#include "core/zset/batch.h"

namespace fld {

// State shared by the connectors of one pipeline that work as one source (the three nexmark
// tables: one connector per table, options on any one of them). The pipeline keeps one map per
// build, keyed by transport name, and calls Complete() once every connector is made.
class ConnectorGroup {
 public:
  virtual ~ConnectorGroup() = default;
  // Throws fld::Error(kUsage) when the group is incomplete (a table without its connector).
  virtual void Complete() = 0;
};
using ConnectorGroups = std::map<std::string, std::shared_ptr<ConnectorGroup>>;

struct ConnectorContext {
  std::string relation;  // table or view name
  std::string where;     // where the config was written, for errors: "bank.yaml:12" or "bank.yaml (SQL line 3)"
  std::string base_dir;  // relative paths are resolved against it (the spec's folder)
  ThreadPool* pool = nullptr;
  bool resume = false;  // outputs: keep the file's content (a resumed run cuts it back itself)
  // Only check the configuration (`fld check`): parse every key and value, check that input
  // files exist and that output folders exist or can be created, but open, create, truncate or
  // read nothing. The factories then return nullptr instead of a connector.
  bool validate_only = false;
  // Groups of linked connectors of the pipeline being built (null: the connector stands alone).
  ConnectorGroups* groups = nullptr;
  // Inputs: the table is append_only (Relation::append_only): a record that deletes is an error.
  bool append_only = false;
};

class InputConnector {
 public:
  virtual ~InputConnector() = default;
  // Takes up to max_records (Read(): max_batch_size()) records (rows, or insert/delete records)
  // and returns them as one batch over the table's columns (weights +1/-1). Never waits for
  // records that have not arrived: returns an empty batch when nothing is available now or the
  // input has ended (see AtEnd). A malformed record ends the batch before it; the Read that
  // reaches it first throws fld::Error(kRuntime) naming file, line and column and takes nothing.
  virtual Batch Read(size_t max_records) = 0;
  Batch Read() { return Read(max_batch_size()); }
  virtual bool AtEnd() const = 0;
  virtual size_t max_batch_size() const = 0;
  // Records taken so far (what Read returned, counted as records of the source).
  virtual uint64_t records() const = 0;
  // The number of records the input will produce in total, when known in advance (datagen with
  // a limit on every plan); for progress and ETA.
  virtual std::optional<uint64_t> total_records() const { return std::nullopt; }
  // Where reading stands, as a JSON value that Seek accepts: enough to resume exactly after the
  // last record returned by Read (datagen: plan and row; files: byte offset and line number).
  // The journal records it after every step; replay must reproduce it.
  virtual nlohmann::json Position() const = 0;
  // What a checkpoint stores: Position() plus anything else Seek needs (the files a folder input
  // has taken, bytes standard input read past the last record).
  virtual nlohmann::json CheckpointState() const { return Position(); }
  // Continues after the position of a checkpoint (CheckpointState) or, for inputs that are not
  // Replayable, of a journaled step.
  virtual void Seek(const nlohmann::json& position) = 0;
  // Replay: before re-reading a journaled step's records, the position the step ended at (a
  // followed file switches to the rotated file the step read rather than the newest one); null
  // when replay is over.
  virtual void ReplayTarget(const nlohmann::json& position) {}
  // Replay: after re-reading a journaled step's records, moves to the journaled position when it
  // is the same place under another name (the end of a finished file = the start of the next
  // one, which the original run reached by looking ahead). The controller then compares.
  virtual void ReplayedTo(const nlohmann::json& position) {}
  // A descriptor that polls readable (POLLIN) when Read may have records again after returning
  // none: a pipe, or an inotify descriptor for a followed file. -1 when the input has no such
  // signal (datagen's rate limit): the controller then looks again within half a millisecond.
  // Spurious wake-ups are allowed; a missed one is not (Read clears the signal before it reads).
  virtual int WaitFd() const { return -1; }
  // Turns rate limits off while replaying journaled steps, and on again after.
  virtual void SetThrottle(bool on) {}
  // True for inputs whose records are a pure function of their position (datagen): the journal
  // then fingerprints a sample of each batch instead of every row (a changed generator changes
  // every row, the sample included), which keeps the log's cost off the hot path.
  virtual bool Generated() const { return false; }
  // False for inputs that cannot be read again (standard input): the journal logs their rows.
  virtual bool Replayable() const { return true; }
  // A short description for logs: "datagen", "file_input(data.csv, csv)".
  virtual std::string Describe() const = 0;
};

using OutputClock = std::chrono::steady_clock;

class OutputConnector {
 public:
  virtual ~OutputConnector() = default;
  // Writes one step's change batch of the view (columns in the view's order). `step` numbers the
  // steps from 1.
  virtual void Write(const Batch& delta, uint64_t step) = 0;
  // Pushes buffered bytes to the file (and fsyncs it when `durable`).
  virtual void Flush(bool durable) = 0;
  // Records (rows) written so far.
  virtual uint64_t records() const = 0;
  // Bytes written so far; TruncateTo cuts the file back to such a position (used on resume so
  // output released after the last durable step is not written twice).
  virtual uint64_t Position() const = 0;
  virtual void TruncateTo(uint64_t position) = 0;
  virtual std::string Describe() const = 0;
  // Output buffering (pipelines/connectors/output_buffer.h): a connector that holds changes back
  // writes them on when they are due at `now` (or all of them with `all`) and returns whether it
  // wrote any; DrainDeadline is when the held ones fall due (none: nothing held, or no time
  // limit); buffered_records counts the rows held. A connector that holds nothing back has
  // nothing to drain.
  virtual bool Drain(OutputClock::time_point now, bool all) { return false; }
  virtual std::optional<OutputClock::time_point> DrainDeadline() const { return std::nullopt; }
  virtual uint64_t buffered_records() const { return 0; }
};

// Builds a connector from its configuration object. Throws fld::Error(kUsage) for an unknown
// transport or format, an unknown key (naming it and ctx.where), a wrong value type, a datagen
// field the table lacks, a missing input file or an output folder that cannot be created. With
// ctx.validate_only they check the same and return nullptr.
std::unique_ptr<InputConnector> MakeInputConnector(const nlohmann::json& config, const Schema& schema,
                                                   const ConnectorContext& ctx);
std::unique_ptr<OutputConnector> MakeOutputConnector(const nlohmann::json& config, const Schema& schema,
                                                     const ConnectorContext& ctx);

}  // namespace fld
