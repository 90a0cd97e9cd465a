// The pipeline spec: a YAML file naming the pipeline, holding its SQL program, optional
// connectors keyed by table or view name, the storage folder and the number of workers.
//
//   name: bank
//   sql: |
//     CREATE TABLE ...;
//   connectors:                 # optional; Feldera's connector objects
//     balance:
//       - transport: {name: file_output, config: {path: balance.json}}
//         format: {name: json}
//   storage: {path: bank.fld}   # relative to the spec's folder; default <name>.fld beside it
//   storage: {path: bank.fld, cache_mib: 4096}   # memory for operator state (see Controller)
//   workers: 2
//   min_batch_size_records: 0        # Feldera's step triggers (see Controller)
//   max_buffering_delay_usecs: 0
//   clock_resolution_usecs: 1000000  # a program reading NOW() steps at least this often
//
// Unknown keys anywhere are errors naming the key and its line. Connector objects are turned
// into JSON (nlohmann) so they are parsed by the same code as the SQL WITH ('connectors' = ...)
// property.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/sql/parser.h"

namespace fld {

struct ConnectorSpec {
  nlohmann::json config;
  std::string where;  // "bank.yaml:12" or "bank.yaml:5 (table transactions, WITH connectors)"
};

// fault_tolerance.model: what survives a crash (see fld-pipeline(5)).
enum class FtModel : uint8_t {
  kNone,         // no log, no resume: a rerun starts over
  kAtLeastOnce,  // periodic checkpoints; output after the last one may be written again
  kExactlyOnce,  // checkpoints + a journal of every step; resume is exact (the default)
};

struct PipelineSpec {
  std::string spec_path;  // as given on the command line
  std::string base_dir;   // the spec's folder (absolute)
  std::string name;
  std::string sql;
  sql::SourceInfo sql_source;                                    // maps SQL positions to lines of the YAML file
  std::map<std::string, std::vector<ConnectorSpec>> connectors;  // relation name -> connectors
  std::map<std::string, int> connector_lines;                    // relation name -> line (for errors)
  std::string storage_path;                                      // absolute
  // storage.cache_mib, in bytes: the operator state kept in memory beyond which the entries
  // already in the store are evicted (0: not given, the controller picks half the memory).
  uint64_t cache_bytes = 0;
  int workers = 1;
  FtModel ft_model = FtModel::kExactlyOnce;
  // Seconds between periodic checkpoints (clamped to 1..3600); 0 disables them.
  double checkpoint_interval_secs = 60;
  // A step waits until the inputs hold this many records, or until the oldest waiting record has
  // waited max_buffering_delay_usecs, whichever comes first (Feldera's runtime settings).
  uint64_t min_batch_size_records = 0;
  uint64_t max_buffering_delay_usecs = 0;
  // A program reading NOW() steps at least this often while its inputs are idle, so that its
  // temporal filters follow the time (Feldera's setting; 1 s by default).
  uint64_t clock_resolution_usecs = 1'000'000;
  // udf: {library: PATH}: the shared library implementing the functions the program declares
  // without a body (absolute; empty when not given). See pipelines/udf.h.
  std::string udf_library;
};

const char* FtModelName(FtModel m);

// Reads and validates a spec file. Throws fld::Error(kUsage) with "<file>:<line>: ..." messages.
PipelineSpec LoadSpec(const std::string& path);

}  // namespace fld
