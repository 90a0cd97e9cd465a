// Live status: the running controller publishes its counters in a small memory-mapped file,
// <storage>/status, so `fld status` can show them while the pipeline runs without slowing it
// (no network port, no lock: a sequence counter lets readers retry a torn read).
//
// The file is written only by the process holding the storage lock. After a crash it keeps the
// last values published, which `fld status` shows as "last seen". Creating a writer changes
// nothing in the file: the previous run's figures stay until this process publishes its first
// update, so a run refused at start (a changed program, a corrupt checkpoint) leaves them as
// they were.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace boost::interprocess {
class file_mapping;
class mapped_region;
}  // namespace boost::interprocess

namespace fld {

namespace bip = boost::interprocess;

struct LiveConnector {
  char name[64] = {};    // "table transactions: datagen"
  uint64_t records = 0;  // input: records taken; output: records written
  uint64_t end_of_input = 0;
  uint64_t errors = 0;
  uint64_t is_output = 0;
  uint64_t buffered = 0;  // output: records held in its output buffer (output_buffer.h)
};

// The mapped layout (fixed size; version bumps when it changes).
struct LiveStatus {
  static constexpr uint64_t kMagic = 0x33535654534C4446ull;  // "FLDSTVS3"
  static constexpr size_t kMaxConnectors = 16;
  static constexpr size_t kSamples = 60;
  uint64_t magic = kMagic;
  alignas(8) uint64_t seq = 0;  // odd while being written (accessed through std::atomic_ref)
  int64_t pid = 0;
  int64_t started_unix_ms = 0;
  int64_t updated_unix_ms = 0;
  char state[16] = {};  // RUNNING, REPLAYING, SUSPENDED, COMPLETED, FAILED
  uint64_t step = 0;
  uint64_t total_input_records = 0;
  uint64_t total_processed_records = 0;
  uint64_t buffered_records = 0;
  uint64_t rss_bytes = 0;
  uint64_t storage_bytes = 0;
  uint64_t checkpoints = 0;
  uint64_t checkpoint_in_progress = 0;
  uint64_t last_checkpoint_step = 0;
  int64_t last_checkpoint_unix_ms = 0;
  uint64_t last_checkpoint_ms = 0;           // how long it took
  uint64_t last_checkpoint_bytes = 0;        // operator state size
  uint64_t sample_head = 0;                  // index of the next sample to write
  std::array<uint64_t, kSamples> samples{};  // records processed in each of the last 60 seconds
  uint64_t num_connectors = 0;
  std::array<LiveConnector, kMaxConnectors> connectors{};
  uint64_t late_records = 0;  // dropped behind a LATENESS waterline (since the pipeline started)
  // Materialized changes spilled to sorted runs on disk until the next checkpoint (wal/spill.h).
  uint64_t spills = 0;       // runs written by this run (merges of runs included)
  uint64_t spill_files = 0;  // runs on disk now
  uint64_t spill_bytes = 0;  // their bytes
};

// Writer side (the controller). Creates <storage>/status when absent and maps it
// (Boost.Interprocess), leaving its content alone until the first Update.
class LiveStatusWriter {
 public:
  explicit LiveStatusWriter(const std::string& storage_dir);
  ~LiveStatusWriter();
  // Runs f on the mapped struct between sequence bumps. The first call first resets the struct
  // to this process's (pid, start time, zero counters), inside the same bumps, so a reader sees
  // either the previous run's figures or this one's, never a mix.
  template <typename F>
  void Update(F&& f) {
    if (!s_) return;
    std::atomic_ref<uint64_t> seq(s_->seq);
    uint64_t v = seq.load(std::memory_order_relaxed);
    v += v & 1;  // a writer that died mid-update left it odd
    seq.store(v + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    if (!claimed_) Claim();
    f(*s_);
    seq.store(v + 2, std::memory_order_release);
  }

 private:
  void Claim();  // resets the struct for this process (keeps seq)

  std::unique_ptr<bip::file_mapping> mapping_;
  std::unique_ptr<bip::mapped_region> region_;
  LiveStatus* s_ = nullptr;
  bool claimed_ = false;
  int64_t started_unix_ms_ = 0;
};

// Reader side: a consistent copy of the published struct, or nullopt when there is none.
std::optional<LiveStatus> ReadLiveStatus(const std::string& storage_dir);

// Resident set size of this process in bytes.
uint64_t CurrentRssBytes();

}  // namespace fld
