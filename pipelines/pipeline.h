// A compiled pipeline: the spec, its SQL program compiled into a circuit, and the connectors
// attached to its tables and views (from WITH ('connectors' = ...) and the spec's `connectors:`).
// Building one validates everything a run needs, so `fld check` and `fld run` share it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/circuit/circuit.h"
#include "core/common/thread_pool.h"
#include "pipelines/connectors/connector.h"
#include "pipelines/spec.h"

namespace fld {

struct AttachedInput {
  int relation;
  std::unique_ptr<InputConnector> connector;
};

struct AttachedOutput {
  int relation;
  std::unique_ptr<OutputConnector> connector;
};

class Pipeline {
 public:
  // Parses and compiles the spec's SQL. With `with_connectors`, also builds every connector
  // (opening output files, which truncates them).
  Pipeline(PipelineSpec spec, bool with_connectors);
  // Builds every connector; with `resume`, output files keep their content.
  void BuildConnectors(bool resume);
  // Checks every connector's configuration as BuildConnectors would, but opens, creates, truncates
  // and reads nothing (ConnectorContext::validate_only). Returns every error message (each says
  // where the connector was written); empty when all are valid.
  std::vector<std::string> ValidateConnectors();
  // The program's SQL and connector configuration, as stored with checkpoints.
  const std::string& connectors_json() const { return connectors_json_; }

  const PipelineSpec& spec() const { return spec_; }
  Circuit& circuit() { return *circuit_; }
  const Circuit& circuit() const { return *circuit_; }
  ThreadPool& pool() { return *pool_; }
  std::vector<AttachedInput>& inputs() { return inputs_; }
  std::vector<AttachedOutput>& outputs() { return outputs_; }
  // A fingerprint of the program and the connector configuration (changes refuse a resume).
  const std::string& fingerprint() const { return fingerprint_; }

 private:
  // The connector objects of relation r, from its WITH ('connectors' = ...) and the spec.
  std::vector<ConnectorSpec> ConnectorSpecs(size_t r) const;
  // Makes relation r's connector from cs (validate_only: checks it and keeps nothing).
  void Attach(size_t r, const ConnectorSpec& cs, bool resume, bool validate_only, ConnectorGroups* groups);

  PipelineSpec spec_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Circuit> circuit_;
  std::vector<AttachedInput> inputs_;
  std::vector<AttachedOutput> outputs_;
  std::string fingerprint_;
  std::string connectors_json_;
};

}  // namespace fld
