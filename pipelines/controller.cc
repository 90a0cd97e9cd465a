#include "pipelines/controller.h"

#include <fcntl.h>
#include <fmt/chrono.h>
#include <malloc.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "core/common/error.h"
#include "core/sql/parser.h"
#include "pipelines/journal.h"
#include "pipelines/live_status.h"
#include "wal/lock.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"
#include "wal/store.h"

namespace fld {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// The default storage.cache_mib: half the memory this process may use (its cgroup's limit
// when there is one, else the machine's).
size_t DefaultCacheBytes() {
  uint64_t limit = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  if (FILE* f = std::fopen("/sys/fs/cgroup/memory.max", "r")) {
    unsigned long long v = 0;
    if (std::fscanf(f, "%llu", &v) == 1 && v > 0 && v < limit) limit = v;
    std::fclose(f);
  }
  return static_cast<size_t>(limit / 2);
}

constexpr auto kGroupCommit = std::chrono::milliseconds(20);
// The longest the loop waits for input before it looks at stops, requests and deadlines again,
// and how soon it polls inputs that cannot signal new records (see InputConnector::WaitFd).
constexpr auto kIdleWait = std::chrono::milliseconds(10);
constexpr auto kPollInterval = std::chrono::microseconds(500);

std::string StateDir(const PipelineSpec& s) {
  return s.storage_path + "/state";
}
std::string WalDir(const PipelineSpec& s) {
  return s.storage_path + "/wal";
}
// Scratch files: materialized changes spilled until the next checkpoint (wal/spill.h).
std::string SpillDir(const PipelineSpec& s) {
  return s.storage_path + "/spill";
}

std::string NowUtc() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
}

void RemoveStored(const PipelineSpec& spec) {
  std::error_code ec;
  fs::remove_all(StateDir(spec), ec);
  if (ec) Fail(ErrorKind::kIo, "{}: cannot delete: {}", StateDir(spec), ec.message());
  fs::remove_all(WalDir(spec), ec);
  if (ec) Fail(ErrorKind::kIo, "{}: cannot delete: {}", WalDir(spec), ec.message());
  if (fs::exists(spec.storage_path)) wal::SyncDir(spec.storage_path);
}

// Names of relations whose CREATE statement differs between two programs.
std::string DescribeProgramChange(const std::string& old_sql, const std::string& new_sql) {
  auto texts = [](const std::string& sql) {
    std::map<std::string, std::string> out;
    try {
      for (const auto& st : sql::ParseProgram(sql)) {
        std::string name = st.create_table ? st.create_table->name : st.create_view ? st.create_view->name : "";
        if (!name.empty()) out[ToLower(name)] = sql.substr(st.begin, st.end - st.begin);
      }
    } catch (const Error&) {
    }
    return out;
  };
  auto a = texts(old_sql), b = texts(new_sql);
  std::vector<std::string> parts;
  for (const auto& [n, t] : b) {
    auto it = a.find(n);
    if (it == a.end())
      parts.push_back(n + " was added");
    else if (it->second != t)
      parts.push_back(n + " changed");
  }
  for (const auto& [n, t] : a)
    if (!b.count(n)) parts.push_back(n + " was removed");
  if (parts.empty()) return "the SQL program changed";
  std::string s = "the SQL program changed (";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s + ")";
}

// Names the relations whose connectors (from the spec's `connectors:`) differ between two
// fingerprints (Pipeline::fingerprint: {"sql": ..., "connectors": {relation: [config, ...]}}).
std::string DescribeConnectorChange(const std::string& old_fp, const std::string& new_fp) {
  std::vector<std::string> parts;
  try {
    auto a = nlohmann::json::parse(old_fp).value("connectors", nlohmann::json::object());
    auto b = nlohmann::json::parse(new_fp).value("connectors", nlohmann::json::object());
    for (auto it = b.begin(); it != b.end(); ++it) {
      if (!a.contains(it.key()))
        parts.push_back("connectors of " + it.key() + " were added");
      else if (a[it.key()] != it.value())
        parts.push_back("connectors of " + it.key() + " changed");
    }
    for (auto it = a.begin(); it != a.end(); ++it)
      if (!b.contains(it.key())) parts.push_back("connectors of " + it.key() + " were removed");
  } catch (const nlohmann::json::exception&) {
  }
  if (parts.empty()) return "the connector configuration changed";
  std::string s = "the connector configuration changed (";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s + ")";
}

void RemoveFile(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
  if (ec) Fail(ErrorKind::kIo, "{}: cannot delete: {}", path, ec.message());
}

// Cuts a torn log tail and makes the cut durable before anything is written after it (else a
// power loss could bring the torn bytes back behind newer segments, where they are corruption).
void CutTornTail(const wal::TornTail& t) {
  int fd = ::open(t.path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) Fail(ErrorKind::kIo, "{}: cannot open to cut the torn end: {}", t.path, std::strerror(errno));
  if (::ftruncate(fd, static_cast<off_t>(t.offset)) != 0 || ::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    Fail(ErrorKind::kIo, "{}: cannot cut the torn end of the log: {}", t.path, std::strerror(err));
  }
  ::close(fd);
}

// FLD_CLOCK=START[:STEP] (microseconds since the epoch; STEP defaults to one second): step n of
// the pipeline's life reads NOW() = START + n * STEP instead of the system clock (for tests).
std::optional<std::pair<int64_t, int64_t>> TestClock() {
  const char* v = std::getenv("FLD_CLOCK");
  if (!v || !*v) return std::nullopt;
  std::string s(v);
  size_t colon = s.find(':');
  try {
    size_t used = 0;
    int64_t start = std::stoll(s.substr(0, colon), &used);
    if (used != (colon == std::string::npos ? s.size() : colon)) throw std::invalid_argument(s);
    int64_t step = 1'000'000;
    if (colon != std::string::npos) {
      step = std::stoll(s.substr(colon + 1), &used);
      if (used != s.size() - colon - 1 || step < 0) throw std::invalid_argument(s);
    }
    return std::make_pair(start, step);
  } catch (const std::exception&) {
    Fail(ErrorKind::kUsage, "FLD_CLOCK='{}': expected START[:STEP], microseconds since the epoch", s);
  }
}

}  // namespace

class Controller::Impl {
 public:
  Impl(Pipeline* p, ControllerOptions o) : p_(p), opts_(o) {}
  ~Impl();
  RunSummary Run(const std::atomic<bool>* stop);
  void SetCheckpointFlag(std::atomic<bool>* flag) { checkpoint_flag_ = flag; }

 private:
  bool Resume();  // false when there is nothing to resume
  // A completed pipeline's re-run: reads what its inputs have now into prefetched_; false when
  // every input has ended with nothing new.
  bool Prefetch();
  void NoNewInput(uint64_t step);  // says so; the run changes nothing
  void Replay(const wal::LogContents& log);
  // `now`: the step's time when replaying (from the journal); otherwise NextNow() gives it.
  void StepOnce(std::vector<JournalInput> journal, bool replaying, std::optional<int64_t> now = std::nullopt);
  // The time of the next step for a program reading NOW(): the system clock, or with FLD_CLOCK
  // set, its start plus the step number times its increment.
  int64_t NextNow() const;
  // Syncs the log and releases the outputs of the steps since the last release: at once with
  // `force` or when the loop is `idle` (nothing read: a trickle of input gets its output after
  // one fsync), else at most every kGroupCommit (busy: one fsync covers many steps).
  void ReleaseOutputs(bool force, bool idle = false);
  // Moves the changes output buffers hold (output_buffer.h) to their transports: those due now,
  // or all with `all`.
  void DrainOutputs(bool all);
  bool ReleaseDue() const;  // steps wait for ReleaseOutputs (without `force`)
  // Sleeps until an input may have records (its WaitFd polls readable) or `until`.
  void WaitForInput(Clock::time_point until);
  // Writes a checkpoint of the state after the last step. With `background` the step thread only
  // gathers what changed (proportional to the changes) and a writer thread stores it while steps
  // go on; otherwise it is stored before returning. At most one checkpoint is being written.
  void Checkpoint(const char* state, bool complete, bool background = false);
  // Waits for the checkpoint being written, if any, and finishes it (stats, log clean-up); a
  // failed write is rethrown here. With `only_if_done`, returns at once while it still runs.
  void FinishCheckpoint(bool only_if_done = false);
  struct Written;                    // a checkpoint being written
  void WriteCheckpoint(Written* w);  // on the writer thread: one LMDB write transaction
  void AccumulateMaterialized();
  // True when the operators' state in memory has outgrown storage.cache_mib: a checkpoint then
  // lets FinishCheckpoint evict what it stored.
  bool OverCache();
  void Publish(const char* state, bool force);
  std::vector<std::vector<PhysType>> InputTypes() const;

  Pipeline* p_;
  ControllerOptions opts_;
  const PipelineSpec& spec() const { return p_->spec(); }
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<wal::LogWriter> log_;
  // A materialized relation's changes since the checkpoint. Once they hold more rows than after
  // their last consolidation (and at least kConsolidateRows), they are consolidated into one
  // batch: rows changed again and again then take one entry, not one per change.
  // Once all relations' changes in memory exceed SpillBytes(), the largest relation's are moved
  // to a spill job, which consolidates them and writes them to a sorted run on disk (wal/spill.h)
  // on a thread of its own while steps go on; the checkpoint merges the runs. A relation has at
  // most one job at a time: the next spill of it waits for the last. The spill that would give a
  // relation kMaxRuns runs merges its changes with the runs it has into one, on its thread too.
  struct SpillJob {
    std::vector<Batch> parts;                          // the changes, dropped once written
    std::vector<std::unique_ptr<SpilledRun>> merging;  // the relation's runs, merged in (read-only meanwhile)
    size_t rows = 0, bytes = 0;
    std::string path;
    std::unique_ptr<SpilledRun> run;  // written
    std::exception_ptr error;         // or why not
    double ms = 0;
    std::atomic<bool> done{false};
    std::thread thread;
    ~SpillJob() {
      if (thread.joinable()) thread.join();
    }
  };
  struct PendingChanges {
    // The relation is written whole from the operator that produces it (Operator::
    // IntegralContents) at the next checkpoint: its changes are not kept (TakeWhole).
    bool whole = false;
    std::vector<Batch> parts;
    size_t rows = 0;       // rows in parts
    size_t bytes = 0;      // their memory (MemoryBytes)
    size_t threshold = 0;  // consolidate when rows exceed it
    std::vector<std::unique_ptr<SpilledRun>> runs;
    std::unique_ptr<SpillJob> spilling;  // being written
  };
  static constexpr size_t kConsolidateRows = size_t{1} << 20;
  // The memory materialized changes may take before a spill: 32 MiB, or a sixteenth of
  // storage.cache_mib. As much again may be in a spill being written: an eighth in all.
  size_t SpillBytes() const { return std::min(size_t{32} << 20, cache_bytes_ / 16); }
  // At most this many runs per relation: the spill that would reach it merges them into one.
  static constexpr size_t kMaxRuns = 16;
  void Spill(const std::string& name, PendingChanges* p);
  // When the relation's producer lists the relation's rows (Operator::IntegralRows: a table with
  // a PRIMARY KEY) and they are at most twice the changes waiting (in memory and spilled), drops
  // the changes and marks the relation `whole`: the checkpoint writes it from those rows, which
  // costs less than sorting and merging the changes (10M upserts to 5M keys: 14M changes) and
  // keeps nothing meanwhile (unless the rows would take more than a quarter of the cache budget
  // while written). Returns whether it did.
  bool TakeWhole(int relation, PendingChanges* p);
  // Waits for the relation's spill job, if any (`only_if_done`: unless it still runs), and adds
  // its run; a failed write is rethrown here.
  void FinishSpill(const std::string& name, PendingChanges* p, bool only_if_done = false);
  void FinishSpills(bool only_if_done = false);  // FinishSpill of every relation
  uint64_t spills_ = 0;                          // runs written by this process (their file names)
  std::string NextRunPath() { return fmt::format("{}/{}.run", SpillDir(spec()), spills_++); }
  uint64_t runs_done_ = 0;       // runs finished (spills written, merging or not)
  uint64_t runs_published_ = 0;  // runs_done_ as of the last live status (a new run is shown at once)
  size_t spilling_bytes_ = 0;    // memory of the changes spill jobs are writing
  std::map<int, PendingChanges> pending_rel_;
  size_t pending_bytes_ = 0;  // the sum of their bytes: memory the cache budget counts too
  // What the cache budget (storage.cache_mib) counts: the operators' state in memory and the
  // materialized changes waiting for the next checkpoint (also those being spilled).
  size_t MemoryBytes() const { return p_->circuit().StateMemoryBytes() + pending_bytes_ + spilling_bytes_; }
  std::map<std::string, uint64_t> rel_hash_;  // materialized relation -> content hash (StateStore)
  uint64_t state_hash_ = 0;                   // content hash of the operators' stored keyed state
  bool state_stored_ = false;                 // the store holds the keyed state as of the last checkpoint
  std::unique_ptr<Written> writing_;
  size_t cache_bytes_ = 0;  // storage.cache_mib, or half the memory
  size_t after_evict_ = 0;  // state bytes the last eviction kept
  bool spill_ = false;      // under none: the state outgrew the cache and is saved from now on
  Clock::time_point last_sync_ = Clock::now(), last_checkpoint_ = Clock::now();
  bool unreleased_ = false;
  bool logged_unsynced_ = false;            // a step holds rows that exist only in the log: sync it soon
  bool rerun_ = false;                      // resumed a completed pipeline to read what is new
  uint64_t holding_ = 0;                    // records read and held for the next step
  std::vector<Batch> prefetched_;           // per input: records Prefetch read (the first step's)
  bool warned_late_ = false;                // logged once per run that a late record was dropped
  bool in_step_ = false;                    // an error inside a step leaves the circuit half-updated: no checkpoint
  std::unique_ptr<LiveStatusWriter> live_;  // counters for `fld status` while running
  std::atomic<bool>* checkpoint_flag_ = nullptr;  // set by `fld checkpoint` (SIGUSR1)
  Clock::time_point last_publish_{}, sample_start_ = Clock::now();
  uint64_t sample_records_ = 0;  // records processed when the current one-second sample began
  double last_checkpoint_ms_ = 0;
  size_t last_state_bytes_ = 0;
  uint64_t last_checkpoint_step_ = 0;
  uint64_t base_records_ = 0;  // records before this process (from the checkpoint)
  RunSummary s_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_step_ = Clock::now();  // for a program reading NOW(): idle steps
  std::optional<std::pair<int64_t, int64_t>> test_clock_ = TestClock();
};

std::vector<std::vector<PhysType>> Controller::Impl::InputTypes() const {
  std::vector<std::vector<PhysType>> t;
  for (const auto& in : p_->inputs()) t.push_back(p_->circuit().relations()[in.relation].schema.PhysTypes());
  return t;
}

void Controller::Impl::AccumulateMaterialized() {
  FinishSpills(/*only_if_done=*/true);
  const Circuit& c = p_->circuit();
  for (size_t r = 0; r < c.relations().size(); ++r) {
    const Relation& rel = c.relations()[r];
    if (!rel.materialized) continue;
    const Batch& d = c.Delta(static_cast<int>(r));
    if (d.empty()) continue;
    PendingChanges& p = pending_rel_[static_cast<int>(r)];
    if (p.whole) continue;
    p.parts.push_back(d);
    p.rows += d.size();
    const size_t bytes = fld::MemoryBytes(d);
    p.bytes += bytes;
    pending_bytes_ += bytes;
    if (p.rows > std::max(p.threshold, kConsolidateRows)) {
      if (TakeWhole(static_cast<int>(r), &p)) continue;
      Batch merged = Consolidate(p.parts, &p_->pool());
      // Doubling: each row is consolidated O(1) times amortized. Changes that hardly cancel
      // (append-only input) wait for four times as many rows: consolidating them gains nothing.
      const bool cancelled = merged.size() * 4 < p.rows * 3;
      p.rows = merged.size();
      p.threshold = (cancelled ? 2 : 4) * p.rows;
      p.parts.clear();
      pending_bytes_ -= p.bytes;
      p.bytes = fld::MemoryBytes(merged);
      pending_bytes_ += p.bytes;
      p.parts.push_back(std::move(merged));
    }
  }
  while (pending_bytes_ > SpillBytes()) {
    auto largest = pending_rel_.begin();
    for (auto it = pending_rel_.begin(); it != pending_rel_.end(); ++it)
      if (it->second.bytes > largest->second.bytes) largest = it;
    if (TakeWhole(largest->first, &largest->second)) continue;
    Spill(c.relations()[static_cast<size_t>(largest->first)].name, &largest->second);
  }
}

bool Controller::Impl::TakeWhole(int relation, PendingChanges* p) {
  Circuit& c = p_->circuit();
  const Relation& rel = c.relations()[static_cast<size_t>(relation)];
  Operator& op = c.op(rel.node);
  const std::optional<size_t> rows = op.IntegralRows();
  if (!rows) return false;
  size_t changes = p->rows + (p->spilling ? p->spilling->rows : 0);
  for (const auto& run : p->runs) changes += run->rows();
  if (*rows > 2 * changes) return false;
  // The checkpoint holds the rows decoded and sorted while it writes them (their batch, and about
  // 64 bytes each of the sort's arrays: ConsolidateRows over a pool): at most a quarter of the
  // cache budget, else the changes spill as usual.
  const size_t row_bytes = (p->rows > 0 ? p->bytes / p->rows : 64) + 64;
  if (*rows * row_bytes > cache_bytes_ / 4) return false;
  FinishSpill(rel.name, p);
  pending_bytes_ -= p->bytes;
  p->parts.clear();
  p->runs.clear();  // (their files go with them)
  p->rows = p->bytes = 0;
  p->whole = true;
  op.PinIntegral(true);
  spdlog::debug("{}: {} will be written whole from its {} rows at the next checkpoint, not from its {} changes",
                spec().name, rel.name, *rows, changes);
  return true;
}

void Controller::Impl::Spill(const std::string& name, PendingChanges* p) {
  FinishSpill(name, p);
  if (spills_ == 0) {
    std::error_code ec;
    fs::create_directories(SpillDir(spec()), ec);
    if (ec) Fail(ErrorKind::kIo, "{}: cannot create the folder: {}", SpillDir(spec()), ec.message());
  }
  auto job = std::make_unique<SpillJob>();
  job->parts = std::move(p->parts);
  job->rows = p->rows;
  job->bytes = p->bytes;
  job->path = NextRunPath();
  p->parts.clear();
  pending_bytes_ -= p->bytes;
  spilling_bytes_ += p->bytes;
  // The threshold stays: changes that did not cancel when last consolidated (append-only input)
  // go on to the next spill unconsolidated in memory, where sorting them twice would gain nothing.
  p->rows = p->bytes = 0;
  // The checkpoint's merge reads every run at once (a file each): a long interval between
  // checkpoints must not make that thousands.
  if (p->runs.size() + 1 >= kMaxRuns) {
    job->merging = std::move(p->runs);
    p->runs.clear();
  }
  // One thread, not the pool: the steps go on using the pool meanwhile.
  job->thread = std::thread([j = job.get()] {
    const auto t0 = Clock::now();
    try {
      const ConsolidatedRows rows = ConsolidateRows(j->parts);
      if (j->merging.empty()) {
        j->run = SpilledRun::Write(j->path, ConsolidatedPull(j->parts, rows));
      } else {
        std::vector<RowPull> sources;
        for (const auto& run : j->merging) sources.push_back(run->Read());
        sources.push_back(ConsolidatedPull(j->parts, rows));
        j->run = SpilledRun::Write(j->path, MergeSorted(std::move(sources)));
      }
    } catch (...) {
      j->error = std::current_exception();
    }
    j->parts.clear();
    j->ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    j->done = true;
  });
  p->spilling = std::move(job);
}

void Controller::Impl::FinishSpill(const std::string& name, PendingChanges* p, bool only_if_done) {
  if (!p->spilling || (only_if_done && !p->spilling->done)) return;
  std::unique_ptr<SpillJob> job = std::move(p->spilling);
  job->thread.join();
  spilling_bytes_ -= job->bytes;
  if (job->error) {
    // The runs it was merging stay the relation's (the failed run's file is not one of them).
    p->runs = std::move(job->merging);
    std::rethrow_exception(job->error);
  }
  const size_t merged = job->merging.size();
  job->merging.clear();  // their files go: the new run holds their rows
  p->runs.push_back(std::move(job->run));
  ++runs_done_;
  spdlog::debug("{}: spilled {} changes of {}{} ({} rows, {} bytes) to {} in {:.1f} ms", spec().name, job->rows, name,
                merged ? fmt::format(" merged with {} runs", merged) : "", p->runs.back()->rows(),
                p->runs.back()->bytes(), job->path, job->ms);
}

void Controller::Impl::FinishSpills(bool only_if_done) {
  const Circuit& c = p_->circuit();
  for (auto& [r, p] : pending_rel_) FinishSpill(c.relations()[static_cast<size_t>(r)].name, &p, only_if_done);
}

int64_t Controller::Impl::NextNow() const {
  const int64_t step = static_cast<int64_t>(p_->circuit().steps()) + 1;
  if (test_clock_) return test_clock_->first + step * test_clock_->second;
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void Controller::Impl::StepOnce(std::vector<JournalInput> journal, bool replaying, std::optional<int64_t> now) {
  Circuit& c = p_->circuit();
  in_step_ = true;
  const uint64_t step = c.steps() + 1;
  if (c.UsesNow()) {
    if (!replaying) now = NextNow();
    if (now) c.SetNow(*now);
  } else {
    now.reset();
  }
  last_step_ = Clock::now();
  if (log_ && !replaying) {
    log_->Append(step, EncodeJournal(journal, now));
    for (const auto& j : journal) logged_unsynced_ |= j.logged;
  }
  for (auto& j : journal) c.Push(p_->inputs()[j.index].relation, std::move(*j.rows));
  c.Step();
  if (!warned_late_ && c.LateRecords() > 0) {
    warned_late_ = true;
    spdlog::warn("{}: records behind a LATENESS waterline were dropped (counted as late_records in `fld status`)",
                 spec().name);
  }
  AccumulateMaterialized();
  for (auto& out : p_->outputs()) out.connector->Write(c.Delta(out.relation), step);
  unreleased_ = true;
  ++s_.steps;
  in_step_ = false;
}

bool Controller::Impl::ReleaseDue() const {
  // With no output connector nothing leaves the process between checkpoints, so the log is
  // synced only by checkpoints (a crash re-reads the unsynced steps from their inputs, which
  // reproduce them exactly).
  return unreleased_ && (!p_->outputs().empty() || logged_unsynced_);
}

void Controller::Impl::WaitForInput(Clock::time_point until) {
  std::vector<pollfd> fds;
  for (auto& in : p_->inputs()) {
    if (in.connector->AtEnd()) continue;
    const int fd = in.connector->WaitFd();
    if (fd < 0) {
      // An input without a signal to wait on (a rate-limited generator): look again soon.
      until = std::min(until, Clock::now() + kPollInterval);
      fds.clear();
      break;
    }
    fds.push_back({fd, POLLIN, 0});
  }
  const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(until - Clock::now()).count();
  if (left <= 0) return;
  const timespec ts{static_cast<time_t>(left / 1000000000), static_cast<long>(left % 1000000000)};
  // An error or a signal ends the wait early, which costs nothing: the loop reads again.
  ::ppoll(fds.data(), fds.size(), &ts, nullptr);
}

void Controller::Impl::DrainOutputs(bool all) {
  const auto now = OutputClock::now();
  for (auto& out : p_->outputs()) unreleased_ |= out.connector->Drain(now, all);
}

void Controller::Impl::ReleaseOutputs(bool force, bool idle) {
  if (!unreleased_) return;
  if (!force && !ReleaseDue()) return;
  if (!force && !idle && Clock::now() - last_sync_ < kGroupCommit) return;
  if (log_) log_->Sync();  // the steps are durable before their output leaves the process
  for (auto& out : p_->outputs()) out.connector->Flush(false);
  last_sync_ = Clock::now();
  unreleased_ = false;
  logged_unsynced_ = false;
}

struct Controller::Impl::Written {
  // Gathered on the step thread.
  const char* state = "";
  uint64_t step = 0;
  std::string blob;                                // circuit state: headers and unkeyed operators
  std::vector<std::pair<int, StateDelta>> deltas;  // keyed entries changed since the last one
  bool drop_state = false;                         // the stored keyed state is stale: start it over
  bool saved_state = false;                        // the operators' changes are in it
  struct RelChanges {
    std::string name;    // a materialized relation
    bool whole = false;  // parts hold its whole contents (PendingChanges::whole), not its changes
    std::vector<Batch> parts;
    std::vector<std::unique_ptr<SpilledRun>> runs;  // changes spilled to disk (deleted with them)
  };
  std::vector<RelChanges> rel;
  std::map<std::string, std::string> meta;  // all but the hashes and the checksum
  bool has_log = false;
  std::string keep_segment;  // the log segment steps after this checkpoint go to
  Clock::time_point t0;
  double gather_ms = 0;        // on the step thread, processing waiting: outputs flushed, changes gathered
  ThreadPool* pool = nullptr;  // written on the step thread (no steps run meanwhile): the workers help
  // Written by the writer.
  std::thread thread;
  std::atomic<bool> done{false};
  std::exception_ptr error;
  size_t entries = 0, bytes = 0;
};

Controller::Impl::~Impl() {
  if (writing_ && writing_->thread.joinable()) writing_->thread.join();
}

void Controller::Impl::Checkpoint(const char* state, bool complete, bool background) {
  FinishCheckpoint();
  auto w = std::make_unique<Written>();
  w->t0 = Clock::now();
  w->state = state;
  DrainOutputs(true);  // the checkpoint records the outputs' positions: nothing may stay held
  ReleaseOutputs(true);
  for (auto& out : p_->outputs()) out.connector->Flush(true);
  Circuit& c = p_->circuit();
  const uint64_t step = c.steps();
  w->step = step;
  // Under fault_tolerance none a run never resumes (it starts afresh), so the operators' state
  // would never be read back: it is not saved (a quarter of a join-heavy run's time).
  // Under none, the state is saved only to make room in memory (OverCache).
  if (spec().ft_model != FtModel::kNone || (spill_ && background)) {
    c.SaveChanges(&w->blob, &w->deltas);
    w->gather_ms = std::chrono::duration<double, std::milli>(Clock::now() - w->t0).count();
    w->drop_state = !state_stored_;
    w->saved_state = true;
    state_stored_ = true;
  }
  nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
  for (const auto& in : p_->inputs()) inputs.push_back(in.connector->CheckpointState());
  for (const auto& out : p_->outputs()) outputs.push_back(out.connector->Position());
  FinishSpills();
  for (size_t r = 0; r < c.relations().size(); ++r) {
    const Relation& rel = c.relations()[r];
    if (!rel.materialized) continue;
    auto it = pending_rel_.find(static_cast<int>(r));
    auto& changes = w->rel.emplace_back();
    changes.name = rel.name;
    if (it != pending_rel_.end() && it->second.whole) {
      Operator& op = c.op(rel.node);
      changes.whole = true;
      changes.parts = op.IntegralContents(&p_->pool());
      op.PinIntegral(false);
    } else if (it != pending_rel_.end()) {
      changes.parts = std::move(it->second.parts);
      changes.runs = std::move(it->second.runs);
    }
  }
  pending_rel_.clear();
  pending_bytes_ = 0;
  const uint64_t total = base_records_ + s_.records;
  auto& meta = w->meta;
  meta["name"] = spec().name;
  meta["fingerprint"] = p_->fingerprint();
  meta["sql"] = spec().sql;
  meta["ft_model"] = FtModelName(spec().ft_model);
  meta["state_format"] = "keyed";
  meta["circuit_state"] = w->blob;
  meta["checkpoint_step"] = std::to_string(step);
  meta["step"] = std::to_string(step);
  meta["checkpoint_time"] = NowUtc();
  meta["inputs"] = inputs.dump();
  meta["outputs"] = outputs.dump();
  meta["total_processed_records"] = std::to_string(total);
  meta["pipeline_complete"] = complete ? "true" : "false";
  meta["state"] = state;
  if (log_) {
    // Steps after this checkpoint go to a new segment: once it is stored, the older ones can go.
    log_->Rotate(step + 1);
    w->keep_segment = log_->segment_path();
  }
  w->has_log = log_ != nullptr;
  last_checkpoint_ = Clock::now();
  if (!background) w->pool = &p_->pool();
  writing_ = std::move(w);
  Written* job = writing_.get();
  auto write = [this, job] {
    try {
      WriteCheckpoint(job);
    } catch (...) {
      job->error = std::current_exception();
    }
    job->done = true;
  };
  if (background)
    job->thread = std::thread(write);
  else
    write();
  if (!background) FinishCheckpoint();
}

void Controller::Impl::WriteCheckpoint(Written* w) {
  // A relation whose change is large against what it holds is merged into its unused slot first,
  // over write transactions of bounded size (LMDB holds a transaction's dirty pages in memory
  // until it commits: a 3M-row view's first checkpoint held 160 MB of them), and the checkpoint's
  // transaction below switches to it.
  // Changes spilled to disk are always merged this way (they are large by construction).
  constexpr size_t kStageMinRows = size_t{1} << 16;
  // A relation written whole (PendingChanges::whole) replaces what is stored, also staged.
  std::set<std::string> staged;
  for (auto& [name, whole, parts, runs] : w->rel) {
    size_t rows = 0;
    for (const Batch& p : parts) rows += p.size();
    for (const auto& run : runs) rows += run->rows();
    const size_t stored = store_->RelationRows(name);
    if (whole) {
      const auto t0 = Clock::now();
      const ConsolidatedRows sorted = ConsolidateRows(parts, w->pool);
      const auto t1 = Clock::now();
      rel_hash_[name] = store_->StageRelation(name, PullAhead(ConsolidatedPull(parts, sorted)),
                                              StateStore::kStageTxnBytes, /*replace=*/true);
      spdlog::debug(
          "{}: checkpoint at step {} stages relation {} whole: {} rows from its operator, replacing {} stored rows "
          "({:.1f} ms to sort, {:.1f} ms to write)",
          spec().name, w->step, name, rows, stored, std::chrono::duration<double, std::milli>(t1 - t0).count(),
          std::chrono::duration<double, std::milli>(Clock::now() - t1).count());
      parts.clear();
      staged.insert(name);
      continue;
    }
    if (runs.empty() && (rows < kStageMinRows || rows < stored / 2)) continue;
    const auto t0 = Clock::now();
    const ConsolidatedRows delta = ConsolidateRows(parts, w->pool);
    const auto t1 = Clock::now();
    std::vector<RowPull> sources;
    for (const auto& run : runs) sources.push_back(run->Read());
    sources.push_back(ConsolidatedPull(parts, delta));
    // The merge runs on a thread of its own, ahead of the write transaction.
    rel_hash_[name] += store_->StageRelation(name, PullAhead(MergeSorted(std::move(sources))));
    spdlog::debug(
        "{}: checkpoint at step {} stages relation {}: {} changes ({} runs) on {} stored rows ({:.1f} ms to "
        "consolidate, {:.1f} ms to write)",
        spec().name, w->step, name, rows, runs.size(), stored,
        std::chrono::duration<double, std::milli>(t1 - t0).count(),
        std::chrono::duration<double, std::milli>(Clock::now() - t1).count());
    parts.clear();
    runs.clear();
    staged.insert(name);
  }
  // The operators' state likewise: a large change (every run's first checkpoint with entries)
  // is merged into the state's unused slot, and the transaction below switches to it.
  for (const auto& [node, d] : w->deltas) {
    w->entries += d.puts() + d.erases();
    w->bytes += d.bytes();
  }
  const bool stage_state = w->entries >= kStageMinRows && (w->drop_state || w->entries >= store_->StateEntries() / 2);
  if (stage_state) {
    const auto t0 = Clock::now();
    state_hash_ = store_->StageState(&w->deltas, w->drop_state);
    spdlog::debug("{}: checkpoint at step {} stages the operator state: {} changes ({:.1f} ms)", spec().name, w->step,
                  w->entries, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  auto txn = store_->Begin();
  if (stage_state) {
    txn->PublishState();
  } else {
    if (w->drop_state) {
      txn->DropState();
      state_hash_ = 0;
    }
    for (auto& [node, d] : w->deltas) {
      state_hash_ += txn->ApplyState(static_cast<uint32_t>(node), d);
      // Written into the transaction's pages: its copy goes now, not at the end of the
      // checkpoint (the transaction holds every page it dirtied until it commits).
      d = StateDelta();
    }
  }
  for (auto& [name, whole, parts, runs] : w->rel) {
    if (staged.count(name)) {
      txn->PublishRelation(name);
      continue;
    }
    // Consolidated in place: the rows go from the changes to the store, never gathered into one
    // more batch of the relation's size.
    const ConsolidatedRows delta = ConsolidateRows(parts, w->pool);
    rel_hash_[name] += txn->ApplyDelta(name, ConsolidatedPull(parts, delta));  // creates it even when unchanged
    parts.clear();
  }
  auto& meta = w->meta;
  for (const auto& [name, h] : rel_hash_) meta["rel_hash:" + name] = std::to_string(h);
  meta["state_hash"] = std::to_string(state_hash_);
  meta["meta_crc"] = std::to_string(MetaChecksum(meta));
  for (const auto& [k, v] : meta) txn->PutMeta(k, v);
  txn->Commit();
  // The checkpoint is durable: the log it covers can go. Without a log (this model keeps none),
  // one left by an earlier exactly_once run on this storage is superseded by the checkpoint
  // (kept, it would leave a gap before the next exactly_once run's segments, which reads as
  // corruption).
  auto segments = wal::ListSegments(WalDir(spec()));
  bool removed = false;
  for (const auto& [first, path] : segments)
    if (first <= w->step && path != w->keep_segment) {
      RemoveFile(path);
      removed = true;
    }
  if (w->has_log || removed) wal::SyncDir(WalDir(spec()));
}

void Controller::Impl::FinishCheckpoint(bool only_if_done) {
  if (!writing_ || (only_if_done && !writing_->done)) return;
  if (writing_->thread.joinable()) writing_->thread.join();
  std::unique_ptr<Written> w = std::move(writing_);
  if (w->error) std::rethrow_exception(w->error);
  last_checkpoint_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - w->t0).count();
  spdlog::debug(
      "{}: checkpoint at step {} ({} bytes of circuit state, {} changed entries in {} bytes, {:.1f} ms, of which "
      "{:.1f} ms on the step thread flushing the outputs and gathering the changes)",
      spec().name, w->step, w->blob.size(), w->entries, w->bytes, last_checkpoint_ms_, w->gather_ms);
  ++s_.checkpoints;
  last_state_bytes_ = w->blob.size() + w->bytes;
  last_checkpoint_step_ = w->step;
  if (w->saved_state) {
    // The store now holds every entry the operators saved: their lookups move to it and, over
    // the budget, what is unchanged since leaves memory.
    Circuit& c = p_->circuit();
    const size_t before = c.StateMemoryBytes();
    const bool evict = before > cache_bytes_ / 2;
    c.StateCommitted(evict);
    if (evict) {
      after_evict_ = c.StateMemoryBytes();
      malloc_trim(0);
      ++s_.evictions;
      spdlog::log(s_.evictions == 1 ? spdlog::level::info : spdlog::level::debug,
                  "{}: operator state {:.0f} MiB is over storage.cache_mib ({:.0f} MiB): kept {:.0f} MiB in memory, "
                  "the rest is read from the store when needed",
                  spec().name, before / 1048576.0, cache_bytes_ / 1048576.0, after_evict_ / 1048576.0);
    }
  }
  Publish(w->state, true);
}

bool Controller::Impl::OverCache() {
  // A checkpoint copies the entries changed since the last one while it is written, so the state
  // itself gets half the cache: a memory-triggered checkpoint runs when the state (with the
  // materialized changes waiting for a checkpoint, which it moves to the store) has grown past
  // that, and past what the last eviction kept by an eighth of the cache (what changed since the
  // last checkpoint cannot be evicted: checkpointing again at once would not help).
  const size_t bytes = MemoryBytes();
  if (bytes <= cache_bytes_ / 2 || bytes <= after_evict_ + cache_bytes_ / 8) return false;
  if (spec().ft_model == FtModel::kNone && !spill_) {
    // Under none nothing was saved so far: from now on the changes are tracked and saved.
    spill_ = true;
    p_->circuit().TrackChanges();
  }
  return true;
}

void Controller::Impl::Replay(const wal::LogContents& log) {
  auto types = InputTypes();
  for (auto& in : p_->inputs()) in.connector->SetThrottle(false);
  for (const auto& rec : log.records) {
    std::optional<int64_t> now;
    std::vector<JournalInput> journal = DecodeJournal(rec.payload, types, &now);
    for (auto& j : journal) {
      if (j.index >= p_->inputs().size())
        Fail(ErrorKind::kCorruption, "journal of step {} names input {} but the pipeline has {}", rec.seq, j.index,
             p_->inputs().size());
      InputConnector& in = *p_->inputs()[j.index].connector;
      if (j.logged) {
        if (!j.position.is_null()) in.Seek(j.position);  // its counters go on from the step
      } else {
        // Exactly the records the step took (a rate-limited input may hand them out slowly).
        in.ReplayTarget(j.position);
        std::vector<Batch> parts;
        uint64_t got = 0;
        while (got < j.count && !in.AtEnd()) {
          Batch part = in.Read(j.count - got);
          got += part.size();
          if (part.empty())
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          else
            parts.push_back(std::move(part));
        }
        Batch b = parts.empty() ? EmptyBatch(types[j.index]) : parts.size() == 1 ? std::move(parts[0]) : Concat(parts);
        in.ReplayedTo(j.position);
        uint64_t h = JournalHash(b, in.Generated(), &p_->pool());
        if (b.size() != j.count || h != j.hash || in.Position() != j.position)
          Fail(ErrorKind::kCorruption,
               "replaying step {}: input {} ({}) gave {} records (hash {:016x}, position {}) but the journal recorded "
               "{} (hash {:016x}, position {}); the input changed since it was read. `fld run --reset` starts over",
               rec.seq, j.index, in.Describe(), b.size(), h, in.Position().dump(), j.count, j.hash, j.position.dump());
        j.rows = std::move(b);
      }
      s_.records += j.count;
    }
    StepOnce(std::move(journal), true, now);
    ++s_.replayed;
  }
  for (auto& in : p_->inputs()) {
    in.connector->SetThrottle(true);
    in.connector->ReplayTarget(nullptr);
  }
}

void Controller::Impl::NoNewInput(uint64_t step) {
  spdlog::info("{}: no new input since step {}; nothing to do (`fld run --reset` starts over)", spec().name, step);
  s_.no_new_input = true;
}

bool Controller::Impl::Prefetch() {
  bool any = false;
  prefetched_.assign(p_->inputs().size(), Batch{});
  for (size_t i = 0; i < p_->inputs().size(); ++i) {
    InputConnector& in = *p_->inputs()[i].connector;
    if (in.AtEnd()) continue;
    try {
      prefetched_[i] = in.Read();
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kRuntime && e.kind() != ErrorKind::kCorruption) throw;
      any = true;  // the step loop meets the same error at the same record and reports it
    }
    // Records, or an input that has not ended (a pipe, a followed file): run.
    any = any || !prefetched_[i].empty() || !in.AtEnd();
  }
  return any;
}

bool Controller::Impl::Resume() {
  auto meta = store_->AllMeta();
  if (!meta.count("checkpoint_step")) return false;
  const std::string state_dir = StateDir(spec());
  if (!meta.count("meta_crc") || std::to_string(MetaChecksum(meta)) != meta["meta_crc"])
    Fail(ErrorKind::kCorruption,
         "{}: the checkpoint is corrupted (its checksum does not match); refusing to resume (nothing was deleted; "
         "`fld run --reset` starts over)",
         state_dir);
  const uint64_t ckpt = std::stoull(meta["checkpoint_step"]);
  if (meta["fingerprint"] != p_->fingerprint()) {
    std::string what = meta["sql"] != spec().sql ? DescribeProgramChange(meta["sql"], spec().sql)
                                                 : DescribeConnectorChange(meta["fingerprint"], p_->fingerprint());
    Fail(ErrorKind::kUsage,
         "{}: {} since the checkpoint at step {}; refusing to resume. To start over, run `fld run --reset {}` "
         "(or `fld clear {}`, which deletes the storage)",
         spec().name, what, ckpt, spec().spec_path, spec().spec_path);
  }
  base_records_ = std::stoull(meta["total_processed_records"]);
  // A completed pipeline runs again over what its inputs gained since (appended lines, new
  // files, a new standard input): the views are updated incrementally, the outputs appended to.
  rerun_ = meta["pipeline_complete"] == "true";
  // Check every log record before anything on disk is changed: a corrupted log refuses with the
  // output files and the log as they were.
  wal::LogContents log;
  if (spec().ft_model == FtModel::kExactlyOnce) log = wal::ReadLog(WalDir(spec()), ckpt);
  p_->BuildConnectors(true);
  auto inputs = nlohmann::json::parse(meta["inputs"]);
  auto outputs = nlohmann::json::parse(meta["outputs"]);
  if (inputs.size() != p_->inputs().size() || outputs.size() != p_->outputs().size())
    Fail(ErrorKind::kCorruption, "checkpoint lists {} inputs and {} outputs but the pipeline has {} and {}",
         inputs.size(), outputs.size(), p_->inputs().size(), p_->outputs().size());
  for (size_t i = 0; i < inputs.size(); ++i) p_->inputs()[i].connector->Seek(inputs[i]);
  if (rerun_ && !Prefetch()) {
    // Every input has ended with nothing new: no need to load the state.
    NoNewInput(ckpt);
    s_.completed = true;
    s_.total_records = base_records_;
    return true;
  }
  Circuit& c = p_->circuit();
  if (meta["state_format"] == "keyed") {
    uint64_t got = 0;
    // Lazily: the operators that can read their entries from the store load none of them now
    // (they are still read through once, for the checksum).
    c.RestoreKeyed(
        meta["circuit_state"],
        [&](int node, const Circuit::EntrySink& put) {
          got += store_->ForEachStateEntry(static_cast<uint32_t>(node), put);
        },
        store_.get());
    const uint64_t want = meta.count("state_hash") ? std::stoull(meta["state_hash"]) : 0;
    if (got != want)
      Fail(ErrorKind::kCorruption,
           "{}: the stored operator state does not match the checkpoint's checksum; refusing to resume (nothing was "
           "deleted; `fld run --reset` starts over)",
           state_dir);
    state_hash_ = want;
    state_stored_ = true;
  } else {
    // A checkpoint of an earlier version holds the whole state in one value; the next checkpoint
    // stores it entry by entry.
    c.RestoreState(meta["circuit_state"]);
  }
  for (size_t r = 0; r < c.relations().size(); ++r) {
    const Relation& rel = c.relations()[r];
    if (!rel.materialized) continue;
    // Checked, not loaded: the store holds the contents (the circuit keeps none, see Run).
    uint64_t got = store_->CheckRelation(rel.name, rel.schema.PhysTypes()).value_or(0);
    uint64_t want = meta.count("rel_hash:" + rel.name) ? std::stoull(meta["rel_hash:" + rel.name]) : 0;
    if (got != want)
      Fail(ErrorKind::kCorruption,
           "{}: stored contents of {} do not match the checkpoint's checksum; refusing to resume (nothing was "
           "deleted; `fld run --reset` starts over)",
           state_dir, rel.name);
    rel_hash_[rel.name] = want;
  }
  if (spec().ft_model == FtModel::kExactlyOnce)
    for (size_t i = 0; i < outputs.size(); ++i) p_->outputs()[i].connector->TruncateTo(outputs[i].get<uint64_t>());

  if (log.torn_tail) {
    spdlog::warn("{}: {} at offset {}: cutting the torn end of the log (a crash interrupted its last write)",
                 log.torn_tail->path, log.torn_tail->what, log.torn_tail->offset);
    CutTornTail(*log.torn_tail);
  }
  if (rerun_)
    spdlog::info("{}: completed at step {} ({} records); reading what is new in its inputs", spec().name, ckpt,
                 base_records_);
  else
    spdlog::info("resuming {} from checkpoint at step {}, replaying {} steps", spec().name, ckpt, log.records.size());
  Replay(log);
  spdlog::info("{}: recovered to step {} in {:.0f} ms", spec().name, c.steps(),
               std::chrono::duration<double, std::milli>(Clock::now() - start_).count());
  return true;
}

// Publishes the live counters (at most ~4 times a second unless forced) and closes one-second
// throughput samples.
void Controller::Impl::Publish(const char* state, bool force) {
  auto now = Clock::now();
  if (!live_ || (!force && now - last_publish_ < std::chrono::milliseconds(250))) return;
  last_publish_ = now;
  const uint64_t processed = s_.records;
  const int64_t unix_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  live_->Update([&](LiveStatus& ls) {
    while (now - sample_start_ >= std::chrono::seconds(1)) {
      ls.samples[ls.sample_head % LiveStatus::kSamples] = processed - sample_records_;
      ls.sample_head = (ls.sample_head + 1) % LiveStatus::kSamples;
      sample_records_ = processed;
      sample_start_ += std::chrono::seconds(1);
    }
    std::snprintf(ls.state, sizeof ls.state, "%s", state);
    ls.updated_unix_ms = unix_ms;
    ls.step = p_->circuit().steps();
    ls.total_input_records = base_records_ + s_.records + holding_;
    ls.total_processed_records = base_records_ + s_.records;
    ls.buffered_records = holding_;  // read, waiting for a step (min_batch_size_records, the delay)
    ls.late_records = p_->circuit().LateRecords();
    ls.spills = spills_;
    runs_published_ = runs_done_;
    ls.spill_files = ls.spill_bytes = 0;
    auto count_runs = [&](const std::vector<std::unique_ptr<SpilledRun>>& runs) {
      ls.spill_files += runs.size();
      for (const auto& run : runs) ls.spill_bytes += run->bytes();
    };
    for (const auto& [rel, p] : pending_rel_) {
      count_runs(p.runs);
      if (p.spilling) count_runs(p.spilling->merging);  // still on disk while merged
    }
    if (writing_)  // runs a checkpoint is merging (deleted once it has committed)
      for (const auto& r : writing_->rel) count_runs(r.runs);
    ls.rss_bytes = CurrentRssBytes();
    ls.checkpoints = s_.checkpoints;
    ls.last_checkpoint_step = last_checkpoint_step_;
    ls.last_checkpoint_ms = static_cast<uint64_t>(last_checkpoint_ms_);
    ls.last_checkpoint_bytes = last_state_bytes_;
    ls.checkpoint_in_progress = writing_ != nullptr;
    size_t n = 0;
    for (const auto& in : p_->inputs()) {
      if (n == LiveStatus::kMaxConnectors) break;
      LiveConnector& c = ls.connectors[n++];
      std::snprintf(c.name, sizeof c.name, "%s: %s", p_->circuit().relations()[in.relation].name.c_str(),
                    in.connector->Describe().c_str());
      c.records = in.connector->records();
      c.end_of_input = in.connector->AtEnd();
      c.is_output = 0;
    }
    for (const auto& out : p_->outputs()) {
      if (n == LiveStatus::kMaxConnectors) break;
      LiveConnector& c = ls.connectors[n++];
      std::snprintf(c.name, sizeof c.name, "%s: %s", p_->circuit().relations()[out.relation].name.c_str(),
                    out.connector->Describe().c_str());
      c.records = out.connector->records();
      c.buffered = out.connector->buffered_records();
      c.is_output = 1;
    }
    ls.num_connectors = n;
  });
  if (opts_.progress) {
    // records, rate, percent and ETA when every input has a known size, step, last checkpoint
    const double secs = std::chrono::duration<double>(now - start_).count();
    const double rate = secs > 0 ? static_cast<double>(s_.records) / secs : 0;
    uint64_t total = 0;
    bool known = true;
    for (const auto& in : p_->inputs()) {
      auto t = in.connector->total_records();
      known = known && t.has_value();
      if (t) total += *t;
    }
    std::string pct;
    const uint64_t done = base_records_ + s_.records;
    if (known && total > 0) {
      double left = rate > 0 ? static_cast<double>(total - std::min(total, done)) / rate : 0;
      pct = fmt::format(" {:5.1f}% ETA {:.0f}s", 100.0 * static_cast<double>(done) / static_cast<double>(total), left);
    }
    std::fprintf(stderr, "\r\033[K%s: %llu records, %.0f/s%s, step %llu, checkpoint at step %llu", spec().name.c_str(),
                 static_cast<unsigned long long>(done), rate, pct.c_str(),
                 static_cast<unsigned long long>(p_->circuit().steps()),
                 static_cast<unsigned long long>(last_checkpoint_step_));
    if (std::strcmp(state, "RUNNING") != 0) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }
}

RunSummary Controller::Impl::Run(const std::atomic<bool>* stop) {
  auto t0 = Clock::now();
  const bool journal = spec().ft_model == FtModel::kExactlyOnce;
  if (opts_.reset || spec().ft_model == FtModel::kNone) RemoveStored(spec());
  {
    std::error_code ec;
    fs::remove_all(SpillDir(spec()), ec);  // a run spilled by a process that ended is nobody's
    if (ec) Fail(ErrorKind::kIo, "{}: cannot delete: {}", SpillDir(spec()), ec.message());
  }
  store_ = StateStore::Open(StateDir(spec()), false, true);
  live_ = std::make_unique<LiveStatusWriter>(spec().storage_path);
  // Materialized relations live in the store (their changes are applied at each checkpoint and
  // `fld query` reads them there), so the circuit keeps no copy of them.
  p_->circuit().ContentsKeptOutside();
  if (spec().ft_model != FtModel::kNone) p_->circuit().TrackChanges();
  cache_bytes_ = spec().cache_bytes ? spec().cache_bytes : DefaultCacheBytes();
  bool resumed = Resume();
  p_->circuit().BackState(store_.get());
  if (s_.no_new_input) return s_;  // the last published status stays as it was
  if (!resumed) {
    std::error_code ec;
    fs::remove_all(WalDir(spec()), ec);  // a log without a checkpoint belongs to no run
    if (ec) Fail(ErrorKind::kIo, "{}: cannot delete: {}", WalDir(spec()), ec.message());
    p_->BuildConnectors(false);
    Checkpoint("RUNNING", false);  // step 0: records the program, the seeds and the start positions
    // The state store's files and folders are new: make their names durable too (a file is
    // durable only after fsync of the file and of its folder; LMDB syncs only the file).
    wal::SyncDir(StateDir(spec()));
    wal::SyncDir(spec().storage_path);
    wal::SyncDir(fs::path(spec().storage_path).parent_path().string());
  }
  if (journal) log_ = std::make_unique<wal::LogWriter>(WalDir(spec()), p_->circuit().steps() + 1);
  Circuit& c = p_->circuit();
  auto& inputs = p_->inputs();

  // Records read but not yet stepped, per input (at most its max_batch_size). A step runs when
  // the inputs hold min_batch_size_records, or the oldest has waited max_buffering_delay_usecs,
  // or an input's share is full, or before a checkpoint, a stop or an input's error.
  std::vector<std::vector<Batch>> held(inputs.size());
  std::vector<uint64_t> held_count(inputs.size(), 0);
  uint64_t& holding = holding_;
  Clock::time_point oldest = Clock::now();
  for (size_t i = 0; i < prefetched_.size(); ++i) {
    if (prefetched_[i].empty()) continue;
    held_count[i] = prefetched_[i].size();
    holding += held_count[i];
    held[i].push_back(std::move(prefetched_[i]));
  }
  prefetched_.clear();
  std::optional<Error> input_error;  // a bad record: the records before it are stepped first
  const auto delay = std::chrono::microseconds(spec().max_buffering_delay_usecs);
  const auto clock_resolution = std::chrono::microseconds(spec().clock_resolution_usecs);

  // Polls every input once; true when every input has ended.
  auto poll = [&]() {
    bool all_ended = true;
    for (size_t i = 0; i < inputs.size(); ++i) {
      InputConnector& in = *inputs[i].connector;
      if (in.AtEnd()) continue;
      if (held_count[i] < in.max_batch_size()) {
        Batch b;
        try {
          b = in.Read(in.max_batch_size() - held_count[i]);
        } catch (const Error& e) {
          if (e.kind() != ErrorKind::kRuntime && e.kind() != ErrorKind::kCorruption) throw;
          input_error = e;
          return false;
        }
        if (!b.empty()) {
          if (holding == 0) oldest = Clock::now();
          holding += b.size();
          held_count[i] += b.size();
          held[i].push_back(std::move(b));
        }
      }
      if (!in.AtEnd()) all_ended = false;
    }
    return all_ended;
  };
  auto step = [&]() {
    std::vector<JournalInput> step_inputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (held_count[i] == 0) continue;
      InputConnector& in = *inputs[i].connector;
      JournalInput j;
      j.index = static_cast<uint32_t>(i);
      j.rows = held[i].size() == 1 ? std::move(held[i][0]) : Concat(held[i]);
      j.count = held_count[i];
      if (journal) {
        j.hash = JournalHash(*j.rows, in.Generated(), &p_->pool());
        j.position = in.Position();
        j.logged = !in.Replayable();
      }
      s_.records += j.count;
      step_inputs.push_back(std::move(j));
      held[i].clear();
      held_count[i] = 0;
    }
    holding = 0;
    StepOnce(std::move(step_inputs), false);
  };
  auto full = [&]() {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (held_count[i] >= inputs[i].connector->max_batch_size()) return true;
    return false;
  };

  bool first = !resumed;
  try {
    for (;;) {
      const bool stopping = stop && stop->load();
      const bool all_ended = poll();
      const bool ready = holding > 0 && (stopping || input_error || all_ended || full() ||
                                         holding >= spec().min_batch_size_records || Clock::now() - oldest >= delay);
      if (ready)
        step();
      else if (first)
        StepOnce({}, false);  // a fresh pipeline's first step: views of constants appear at once
      else if (c.UsesNow() && !all_ended && Clock::now() - last_step_ >= clock_resolution)
        StepOnce({}, false);  // time passes: temporal filters move without input
      first = false;
      if (input_error) {
        // Everything before the bad record is stepped; store it, then report.
        Checkpoint("FAILED", false);
        throw *input_error;
      }
      if (stopping) {
        Checkpoint("SUSPENDED", false);
        spdlog::info("{}: stopped at step {}; the next `fld run` resumes from here", spec().name, c.steps());
        break;
      }
      if (all_ended && holding == 0) {
        s_.completed = true;
        if (rerun_ && s_.steps == 0) {
          NoNewInput(c.steps());
          Publish("COMPLETED", true);
        } else {
          Checkpoint("COMPLETED", true);
        }
        break;
      }
      DrainOutputs(false);
      ReleaseOutputs(false, !ready && holding == 0);
      Publish("RUNNING", runs_done_ != runs_published_);
      FinishCheckpoint(true);  // one written in the background has finished: account for it
      // Back-pressure: while a checkpoint is written the state keeps growing; once it fills the
      // cache the steps wait for it, so that what it stored can leave memory.
      if (writing_ && MemoryBytes() > cache_bytes_) FinishCheckpoint();
      const bool requested = !writing_ && checkpoint_flag_ && checkpoint_flag_->exchange(false);
      const bool due =
          !writing_ && spec().ft_model != FtModel::kNone && spec().checkpoint_interval_secs > 0 &&
          Clock::now() - last_checkpoint_ >= std::chrono::duration<double>(spec().checkpoint_interval_secs);
      if (requested || due || (!writing_ && OverCache())) {
        if (holding > 0) step();
        Checkpoint("RUNNING", false, true);
        if (requested) spdlog::info("{}: checkpoint at step {} (requested)", spec().name, c.steps());
      }
      if (!ready) {
        // Nothing to step yet: wait for input, but not past the held records' delay, the
        // outputs' group commit or the next NOW() step, and look at stops, requests and
        // rotations at least every kIdleWait.
        Clock::time_point until = Clock::now() + kIdleWait;
        if (holding > 0) until = std::min(until, oldest + delay);
        if (ReleaseDue()) until = std::min(until, last_sync_ + kGroupCommit);
        if (c.UsesNow()) until = std::min(until, last_step_ + clock_resolution);
        for (const auto& out : p_->outputs())
          if (auto due = out.connector->DrainDeadline()) until = std::min(until, *due);
        WaitForInput(until);
      }
    }
  } catch (const Error& e) {
    // A bad record stops the run; everything accepted before it is computed, written and stored.
    if (e.kind() == ErrorKind::kRuntime && !in_step_ && !input_error) Checkpoint("FAILED", false);
    throw;
  }
  s_.total_records = base_records_ + s_.records;
  s_.log_bytes = log_ ? log_->bytes_written() : 0;
  s_.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return s_;
}

Controller::Controller(PipelineSpec spec, ControllerOptions options) {
  // Compile first (a bad spec fails before touching storage), then take the lock.
  pipeline_ = std::make_unique<Pipeline>(std::move(spec), false);
  impl_ = std::make_unique<Impl>(pipeline_.get(), options);
}

Controller::~Controller() = default;

void Controller::CloseForExit() {
  impl_.reset();
  pipeline_->inputs().clear();
  pipeline_->outputs().clear();
}

void Controller::SetCheckpointFlag(std::atomic<bool>* flag) {
  impl_->SetCheckpointFlag(flag);
}

RunSummary Controller::Run(const std::atomic<bool>* stop_requested) {
  const PipelineSpec& spec = pipeline_->spec();
  StorageLock lock = StorageLock::Acquire(spec.storage_path);
  return impl_->Run(stop_requested);
}

void ClearStorage(const PipelineSpec& spec) {
  StorageLock lock = StorageLock::Acquire(spec.storage_path);
  RemoveStored(spec);
}

}  // namespace fld
