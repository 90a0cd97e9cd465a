#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cmd/commands.h"
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
  double s = static_cast<double>(now - unix_ms) / 1000.0;
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

int StatusOnce(const StatusOptions& o) {
  PipelineSpec spec = LoadSpec(o.spec);
  const std::string dir = spec.storage_path + "/state";
  nlohmann::ordered_json j;
  j["name"] = spec.name;
  j["storage"] = spec.storage_path;
  std::optional<LockHolder> holder = StorageLock::Holder(spec.storage_path);
  std::map<std::string, std::string> meta;
  uint64_t storage_bytes = 0;
  if (StateStore::Exists(dir)) {
    auto store = StateStore::Open(dir, true, false);
    meta = store->AllMeta();
    storage_bytes = store->SizeBytes();
  }
  auto segments = wal::ListSegments(spec.storage_path + "/wal");
  std::string state;
  if (holder)
    state = "RUNNING";
  else if (meta.empty() && segments.empty())
    state = "NEW";
  else if (meta["pipeline_complete"] == "true")
    state = "COMPLETED";
  else if (meta["state"] == "SUSPENDED")
    state = "SUSPENDED";
  else if (meta["state"] == "FAILED")
    state = "FAILED";
  else
    state = "UNAVAILABLE";
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
  else if (auto last = StorageLock::LastHolder(spec.storage_path))
    j["last_holder"] = {{"pid", last->pid}, {"host", last->host}, {"started", last->started}};

  std::optional<LiveStatus> live = ReadLiveStatus(spec.storage_path);
  if (live) {
    const LiveStatus& ls = *live;
    double up = static_cast<double>(ls.updated_unix_ms - ls.started_unix_ms) / 1000.0;
    uint64_t now_rate = ls.samples[(ls.sample_head + LiveStatus::kSamples - 1) % LiveStatus::kSamples];
    nlohmann::ordered_json lj;
    lj["pid"] = ls.pid;
    lj["state"] = std::string(ls.state, strnlen(ls.state, sizeof ls.state));
    lj["uptime_msecs"] = ls.updated_unix_ms - ls.started_unix_ms;
    lj["updated_unix_ms"] = ls.updated_unix_ms;
    lj["step"] = ls.step;
    lj["total_input_records"] = ls.total_input_records;
    lj["total_processed_records"] = ls.total_processed_records;
    lj["buffered_input_records"] = ls.buffered_records;
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
    nlohmann::json conns = nlohmann::json::array();
    for (size_t i = 0; i < ls.num_connectors && i < LiveStatus::kMaxConnectors; ++i) {
      const LiveConnector& c = ls.connectors[i];
      conns.push_back({{"name", std::string(c.name, strnlen(c.name, sizeof c.name))},
                       {"direction", c.is_output ? "output" : "input"},
                       {c.is_output ? "transmitted_records" : "total_records", c.records},
                       {"end_of_input", c.end_of_input != 0},
                       {"errors", c.errors}});
    }
    lj["connectors"] = conns;
    j[holder ? "live" : "last_seen"] = lj;
    if (holder) {
      j["step"] = ls.step;
      j["total_processed_records"] = ls.total_processed_records;
    }
  }
  if (o.json) {
    std::cout << j.dump() << "\n";
    return 0;
  }
  if (live) {
    const LiveStatus& ls = *live;
    const auto& lj = j[holder ? "live" : "last_seen"];
    if (holder) {
      std::cout << fmt::format("pipeline    {}\nstate       {} (pid {}, up {:.1f} s)\n", spec.name,
                               lj["state"].get<std::string>(), ls.pid, lj["uptime_msecs"].get<int64_t>() / 1000.0);
    } else {
      std::cout << fmt::format("pipeline    {}\nstate       {} (last seen {}, pid {})\n", spec.name, state,
                               Ago(ls.updated_unix_ms), ls.pid);
    }
    std::cout << fmt::format("step        {}\nrecords     {} in, {} processed, {} buffered\n", ls.step,
                             ls.total_input_records, ls.total_processed_records, ls.buffered_records);
    std::cout << fmt::format("throughput  {} records/s now, {:.0f} average\n            |{}| last 60 s\n",
                             lj["throughput_now"].get<uint64_t>(), lj["throughput_avg"].get<double>(), Sparkline(ls));
    std::cout << fmt::format("memory      {:.1f} MiB resident\n", static_cast<double>(ls.rss_bytes) / (1 << 20));
    std::cout << fmt::format("checkpoints {}{}, last at step {} took {} ms ({} bytes of state)\n", ls.checkpoints,
                             ls.checkpoint_in_progress ? " (one in progress)" : "", ls.last_checkpoint_step,
                             ls.last_checkpoint_ms, ls.last_checkpoint_bytes);
    for (const auto& c : lj["connectors"])
      std::cout << fmt::format(
          "  {:<6} {:<40} {:>12} records{}{}\n", c["direction"].get<std::string>(), c["name"].get<std::string>(),
          c.contains("total_records") ? c["total_records"].get<uint64_t>() : c["transmitted_records"].get<uint64_t>(),
          c["end_of_input"].get<bool>() && c["direction"] == "input" ? ", ended" : "",
          c["errors"].get<uint64_t>() ? fmt::format(", {} errors", c["errors"].get<uint64_t>()) : "");
    if (meta.count("checkpoint_step"))
      std::cout << fmt::format("stored      checkpoint at step {} ({})\n", meta["checkpoint_step"],
                               meta["checkpoint_time"]);
    if (state == "UNAVAILABLE")
      std::cout << "note        no process holds the pipeline and it did not complete (it crashed or its machine is\n"
                   "            gone); `fld run` resumes it from the last checkpoint and replays the log\n";
    return 0;
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
  return 0;
}

}  // namespace

}  // namespace fld::cmd
