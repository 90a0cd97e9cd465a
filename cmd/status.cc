#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmd/commands.h"
#include "pipelines/spec.h"
#include "wal/lock.h"
#include "wal/log_reader.h"
#include "wal/store.h"

namespace fld::cmd {

int Status(const StatusOptions& o) {
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
  if (holder) state = "RUNNING";
  else if (meta.empty() && segments.empty()) state = "NEW";
  else if (meta["pipeline_complete"] == "true") state = "COMPLETED";
  else if (meta["state"] == "SUSPENDED") state = "SUSPENDED";
  else if (meta["state"] == "FAILED") state = "FAILED";
  else state = "UNAVAILABLE";
  auto num = [&](const char* k) -> uint64_t { return meta.count(k) ? std::stoull(meta[k]) : 0; };
  j["state"] = state;
  j["step"] = num("step");
  j["total_processed_records"] = num("total_processed_records");
  j["pipeline_complete"] = meta["pipeline_complete"] == "true";
  if (meta.count("checkpoint_step"))
    j["last_checkpoint"] = {{"step", num("checkpoint_step")}, {"time", meta["checkpoint_time"]},
                            {"state_bytes", meta["circuit_state"].size()}};
  else
    j["last_checkpoint"] = nullptr;
  j["fault_tolerance"] = meta.count("ft_model") ? meta["ft_model"] : FtModelName(spec.ft_model);
  j["storage_bytes"] = storage_bytes;
  j["log_segments"] = segments.size();
  if (holder) j["holder"] = {{"pid", holder->pid}, {"host", holder->host}, {"started", holder->started}};
  else if (auto last = StorageLock::LastHolder(spec.storage_path))
    j["last_holder"] = {{"pid", last->pid}, {"host", last->host}, {"started", last->started}};

  if (o.json) {
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << fmt::format("pipeline    {}\nstate       {}\n", spec.name, state);
  if (holder) std::cout << fmt::format("process     pid {} on {}, started {}\n", holder->pid, holder->host, holder->started);
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

}  // namespace fld::cmd
