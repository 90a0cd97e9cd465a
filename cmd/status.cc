#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmd/commands.h"
#include "pipelines/spec.h"
#include "wal/store.h"

namespace fld::cmd {

int Status(const StatusOptions& o) {
  PipelineSpec spec = LoadSpec(o.spec);
  const std::string dir = spec.storage_path + "/state";
  nlohmann::ordered_json j;
  j["name"] = spec.name;
  j["storage"] = spec.storage_path;
  if (!StateStore::Exists(dir)) {
    j["state"] = "NEW";
    j["step"] = 0;
    j["total_processed_records"] = 0;
    j["pipeline_complete"] = false;
    j["last_checkpoint"] = nullptr;
  } else {
    auto store = StateStore::Open(dir, true, false);
    auto meta = store->AllMeta();
    j["state"] = meta.count("state") ? meta["state"] : "UNKNOWN";
    j["step"] = meta.count("step") ? std::stoull(meta["step"]) : 0;
    j["total_processed_records"] = meta.count("total_processed_records") ? std::stoull(meta["total_processed_records"]) : 0;
    j["pipeline_complete"] = meta["pipeline_complete"] == "true";
    j["last_checkpoint"] = nullptr;
    j["storage_bytes"] = store->SizeBytes();
  }
  if (o.json) {
    std::cout << j.dump() << "\n";
  } else {
    std::cout << fmt::format("pipeline  {}\nstate     {}\nstep      {}\nrecords   {}\nstorage   {}\n",
                             spec.name, j["state"].get<std::string>(), j["step"].dump(),
                             j["total_processed_records"].dump(), spec.storage_path);
  }
  return 0;
}

}  // namespace fld::cmd
