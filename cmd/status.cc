// fld status: what a pipeline is doing or what happened to it, read from its storage folder
// without blocking a running pipeline (the lock file, the checkpoint's metadata, the log's segment
// names, the live status area).
//
// The exit code tells the state, for scripts and probes (LSB-like; man/fld-status.1):
// 0 RUNNING or COMPLETED, 1 FAILED, 3 NEW, 6 UNAVAILABLE (crashed), 7 SUSPENDED; 2 bad command
// line or spec, 4 the storage is corrupt (no valid checkpoint), 5 an I/O error reading it.
// --json prints the same state (CORRUPTED or IO_ERROR with an "error" for 4 and 5) and exits with
// the same code.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>
#include <vector>

#include "cmd/commands.h"
#include "core/common/error.h"
#include "pipelines/live_status.h"
#include "pipelines/spec.h"
#include "wal/lock.h"
#include "wal/log_reader.h"
#include "wal/store.h"

namespace fld::cmd {

namespace {

std::string Sparkline(const LiveStatus& ls) {
  static const char* kBars[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  uint64_t mx = 1;
  for (uint64_t v : ls.samples) mx = std::max(mx, v);
  std::string out;
  for (size_t i = 0; i < LiveStatus::kSamples; ++i) {
    uint64_t v = ls.samples[(ls.sample_head + i) % LiveStatus::kSamples];
    out += kBars[v == 0 ? 0 : 1 + (v * 7) / mx];
  }
  return out;
}

std::string Ago(int64_t unix_ms) {
  int64_t now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  double s = static_cast<double>(std::max<int64_t>(0, now - unix_ms)) / 1000.0;
  return s < 120 ? fmt::format("{:.1f} s ago", s) : fmt::format("{:.0f} min ago", s / 60);
}

int StatusOnce(const StatusOptions& o);

}  // namespace

int Status(const StatusOptions& o) {
  if (!o.watch) return StatusOnce(o);
  for (;;) {
    std::cout << "\033[H\033[J";
    StatusOnce(o);
    std::cout.flush();
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

namespace {

// The exit code of each state (man/fld-status.1): 0 RUNNING or COMPLETED, 1 FAILED, 3 NEW,
// 6 UNAVAILABLE, 7 SUSPENDED; errors keep fld's codes (2 usage, 4 corruption, 5 I/O).
int ExitCodeOf(const std::string& state) {
  if (state == "RUNNING" || state == "COMPLETED") return 0;
  if (state == "FAILED") return 1;
  if (state == "NEW") return 3;
  if (state == "UNAVAILABLE") return 6;
  if (state == "SUSPENDED") return 7;
  return 5;
}

// What the storage holds, read without blocking a running pipeline.
struct Stored {
  std::optional<LockHolder> holder;
  std::map<std::string, std::string> meta;
  uint64_t storage_bytes = 0;
  std::vector<std::pair<uint64_t, std::string>> segments;
};

// Reads the storage. Throws fld::Error(kCorruption) when the state store or its checkpoint fails
// its checks and fld::Error(kIo) for any other failure to read it, so the exit code never
// collides with a state's.
Stored ReadStored(const PipelineSpec& spec) {
  const std::string dir = spec.storage_path + "/state";
  Stored st;
  try {
    st.holder = StorageLock::Holder(spec.storage_path);
    if (StateStore::Exists(dir)) {
      auto store = StateStore::Open(dir, true, false);
      st.meta = store->AllMeta();
      st.storage_bytes = store->SizeBytes();
    }
    st.segments = wal::ListSegments(spec.storage_path + "/wal");
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kCorruption || e.kind() == ErrorKind::kIo) throw;
    throw Error(ErrorKind::kIo, e.what());
  } catch (const std::exception& e) {
    Fail(ErrorKind::kIo, "{}: cannot read the storage: {}", spec.storage_path, e.what());
  }
  if (!st.meta.empty()) {
    auto it = st.meta.find("meta_crc");
    if (it == st.meta.end() || it->second != std::to_string(MetaChecksum(st.meta)))
      Fail(ErrorKind::kCorruption,
           "{}: the checkpoint is corrupted (its checksum does not match); `fld run` would refuse to resume "
           "(`fld run --reset` starts over)",
           dir);
  }
  return st;
}

int StatusOnce(const StatusOptions& o) {
  PipelineSpec spec = LoadSpec(o.spec);
  nlohmann::ordered_json j;
  j["name"] = spec.name;
  j["storage"] = spec.storage_path;
  Stored stored;
  try {
    stored = ReadStored(spec);
  } catch (const Error& e) {
    // Scripts reading --json still get an object naming the state; the message goes to stderr.
    if (o.json) {
      j["state"] = e.kind() == ErrorKind::kCorruption ? "CORRUPTED" : "IO_ERROR";
      j["error"] = e.what();
      std::cout << j.dump() << "\n";
    }
    throw;
  }
  const std::optional<LockHolder>& holder = stored.holder;
  std::map<std::string, std::string>& meta = stored.meta;
  const uint64_t storage_bytes = stored.storage_bytes;
  const auto& segments = stored.segments;
  std::optional<LiveStatus> live = ReadLiveStatus(spec.storage_path);
  std::optional<LockHolder> last_holder;
  if (!holder) last_holder = StorageLock::LastHolder(spec.storage_path);
  // Nobody holds the lock and the last word published was RUNNING: that process died without
  // ending cleanly (a clean end checkpoints and then publishes SUSPENDED, COMPLETED or FAILED; a
  // start refused before publishing leaves the figures alone), even when the checkpoint it
  // resumed from says SUSPENDED.
  const bool died_running =
      !holder && live && std::string(live->state, strnlen(live->state, sizeof live->state)) == "RUNNING";
  std::string state;
  if (holder)
    state = "RUNNING";
  else if (meta.empty() && segments.empty())
    state = "NEW";
  else if (meta["pipeline_complete"] == "true")
    state = "COMPLETED";
  else if (died_running)
    state = "UNAVAILABLE";
  else if (meta["state"] == "SUSPENDED")
    state = "SUSPENDED";
  else if (meta["state"] == "FAILED")
    state = "FAILED";
  else
    state = "UNAVAILABLE";
  const int code = ExitCodeOf(state);
  auto num = [&](const char* k) -> uint64_t { return meta.count(k) ? std::stoull(meta[k]) : 0; };
  j["state"] = state;
  j["step"] = num("step");
  j["total_processed_records"] = num("total_processed_records");
  j["pipeline_complete"] = meta["pipeline_complete"] == "true";
  if (meta.count("checkpoint_step"))
    j["last_checkpoint"] = {{"step", num("checkpoint_step")},
                            {"time", meta["checkpoint_time"]},
                            {"state_bytes", meta["circuit_state"].size()}};
  else
    j["last_checkpoint"] = nullptr;
  j["fault_tolerance"] = meta.count("ft_model") ? meta["ft_model"] : FtModelName(spec.ft_model);
  j["storage_bytes"] = storage_bytes;
  j["log_segments"] = segments.size();
  if (holder)
    j["holder"] = {{"pid", holder->pid}, {"host", holder->host}, {"started", holder->started}};
  else if (last_holder)
    j["last_holder"] = {{"pid", last_holder->pid}, {"host", last_holder->host}, {"started", last_holder->started}};

  // The figures are live when the lock holder published them; a process that is still starting
  // (resuming, replaying) has published nothing yet, and the file holds the previous run's.
  const bool live_now = live && holder && live->pid == holder->pid;
  const char* live_key = live_now ? "live" : "last_seen";
  if (live) {
    const LiveStatus& ls = *live;
    // Never negative, whatever the clocks did.
    const int64_t uptime_ms = std::max<int64_t>(0, ls.updated_unix_ms - ls.started_unix_ms);
    double up = static_cast<double>(uptime_ms) / 1000.0;
    uint64_t now_rate = ls.samples[(ls.sample_head + LiveStatus::kSamples - 1) % LiveStatus::kSamples];
    nlohmann::ordered_json lj;
    lj["pid"] = ls.pid;
    lj["state"] = std::string(ls.state, strnlen(ls.state, sizeof ls.state));
    lj["uptime_msecs"] = uptime_ms;
    lj["updated_unix_ms"] = ls.updated_unix_ms;
    lj["step"] = ls.step;
    lj["total_input_records"] = ls.total_input_records;
    lj["total_processed_records"] = ls.total_processed_records;
    lj["buffered_input_records"] = ls.buffered_records;
    lj["late_records"] = ls.late_records;
    lj["spills"] = ls.spills;
    lj["spill_files"] = ls.spill_files;
    lj["spill_bytes"] = ls.spill_bytes;
    lj["throughput_now"] = now_rate;
    lj["throughput_avg"] = up > 0 ? static_cast<double>(ls.total_processed_records) / up : 0.0;
    nlohmann::json samples = nlohmann::json::array();
    for (size_t i = 0; i < LiveStatus::kSamples; ++i)
      samples.push_back(ls.samples[(ls.sample_head + i) % LiveStatus::kSamples]);
    lj["throughput_samples"] = samples;
    lj["rss_bytes"] = ls.rss_bytes;
    lj["checkpoints"] = ls.checkpoints;
    lj["checkpoint_in_progress"] = ls.checkpoint_in_progress != 0;
    lj["last_checkpoint_ms"] = ls.last_checkpoint_ms;
    lj["last_checkpoint_step"] = ls.last_checkpoint_step;
    lj["last_checkpoint_bytes"] = ls.last_checkpoint_bytes;
    nlohmann::json conns = nlohmann::json::array();
    for (size_t i = 0; i < ls.num_connectors && i < LiveStatus::kMaxConnectors; ++i) {
      const LiveConnector& c = ls.connectors[i];
      conns.push_back({{"name", std::string(c.name, strnlen(c.name, sizeof c.name))},
                       {"direction", c.is_output ? "output" : "input"},
                       {c.is_output ? "transmitted_records" : "total_records", c.records},
                       {"end_of_input", c.end_of_input != 0},
                       {"errors", c.errors}});
      if (c.is_output) conns.back()["buffered_records"] = c.buffered;
    }
    lj["connectors"] = conns;
    j[live_key] = lj;
    if (live_now) {
      j["step"] = ls.step;
      j["total_processed_records"] = ls.total_processed_records;
    }
  }
  if (o.json) {
    std::cout << j.dump() << "\n";
    return code;
  }
  if (live) {
    const LiveStatus& ls = *live;
    const auto& lj = j[live_key];
    if (live_now) {
      std::cout << fmt::format("pipeline    {}\nstate       {} (pid {}, up {:.1f} s)\n", spec.name,
                               lj["state"].get<std::string>(), ls.pid, lj["uptime_msecs"].get<int64_t>() / 1000.0);
    } else if (holder) {
      std::cout << fmt::format(
          "pipeline    {}\nstate       {} (pid {} starting; below: the previous run, last seen {}, "
          "pid {})\n",
          spec.name, state, holder->pid, Ago(ls.updated_unix_ms), ls.pid);
    } else {
      std::cout << fmt::format("pipeline    {}\nstate       {} (last seen {}, pid {})\n", spec.name, state,
                               Ago(ls.updated_unix_ms), ls.pid);
    }
    std::cout << fmt::format("step        {}\nrecords     {} in, {} processed, {} buffered\n", ls.step,
                             ls.total_input_records, ls.total_processed_records, ls.buffered_records);
    if (ls.late_records > 0)
      std::cout << fmt::format("late        {} dropped behind a LATENESS waterline\n", ls.late_records);
    std::cout << fmt::format("throughput  {} records/s now, {:.0f} average\n            |{}| last 60 s\n",
                             lj["throughput_now"].get<uint64_t>(), lj["throughput_avg"].get<double>(), Sparkline(ls));
    std::cout << fmt::format("memory      {:.1f} MiB resident\n", static_cast<double>(ls.rss_bytes) / (1 << 20));
    if (ls.spills > 0)
      std::cout << fmt::format(
          "spilled     {} runs written; {} on disk now ({:.1f} MiB of materialized changes waiting for the next "
          "checkpoint)\n",
          ls.spills, ls.spill_files, static_cast<double>(ls.spill_bytes) / (1 << 20));
    std::cout << fmt::format("checkpoints {}{}, last at step {} took {} ms ({} bytes written)\n", ls.checkpoints,
                             ls.checkpoint_in_progress ? " (one in progress)" : "", ls.last_checkpoint_step,
                             ls.last_checkpoint_ms, ls.last_checkpoint_bytes);
    for (const auto& c : lj["connectors"])
      std::cout << fmt::format(
          "  {:<6} {:<40} {:>12} records{}{}{}\n", c["direction"].get<std::string>(), c["name"].get<std::string>(),
          c.contains("total_records") ? c["total_records"].get<uint64_t>() : c["transmitted_records"].get<uint64_t>(),
          c["end_of_input"].get<bool>() && c["direction"] == "input" ? ", ended" : "",
          c.value("buffered_records", uint64_t{0}) ? fmt::format(", {} buffered", c["buffered_records"].get<uint64_t>())
                                                   : "",
          c["errors"].get<uint64_t>() ? fmt::format(", {} errors", c["errors"].get<uint64_t>()) : "");
    if (meta.count("checkpoint_step"))
      std::cout << fmt::format("stored      checkpoint at step {} ({})\n", meta["checkpoint_step"],
                               meta["checkpoint_time"]);
    if (state == "UNAVAILABLE")
      std::cout << "note        no process holds the pipeline and it did not complete (it crashed or its machine is\n"
                   "            gone); `fld run` resumes it from the last checkpoint and replays the log\n";
    return code;
  }
  std::cout << fmt::format("pipeline    {}\nstate       {}\n", spec.name, state);
  if (holder)
    std::cout << fmt::format("process     pid {} on {}, started {}\n", holder->pid, holder->host, holder->started);
  std::cout << fmt::format("step        {}\nrecords     {}\n", j["step"].dump(), j["total_processed_records"].dump());
  if (meta.count("checkpoint_step"))
    std::cout << fmt::format("checkpoint  step {} at {}\n", meta["checkpoint_step"], meta["checkpoint_time"]);
  std::cout << fmt::format("storage     {} ({} bytes, {} log segments)\n", spec.storage_path, storage_bytes,
                           segments.size());
  if (state == "UNAVAILABLE")
    std::cout << "note        no process holds the pipeline and it did not complete (it crashed or its machine is\n"
                 "            gone); `fld run` resumes it from the last checkpoint and replays the log\n";
  return code;
}

}  // namespace

}  // namespace fld::cmd
