#include "pipelines/pipeline.h"

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/plan/planner.h"
#include "core/sql/parser.h"
#include "pipelines/udf.h"

namespace fld {

Pipeline::Pipeline(PipelineSpec spec, bool with_connectors) : spec_(std::move(spec)) {
  pool_ = std::make_unique<ThreadPool>(static_cast<size_t>(spec_.workers));
  std::vector<sql::Statement> program = sql::ParseProgram(spec_.sql, spec_.sql_source);
  circuit_ = plan::CompileProgram(program, spec_.sql, spec_.sql_source, pool_.get());
  // Connectors keyed by a name that is no relation are a mistake worth reporting.
  for (const auto& [name, list] : spec_.connectors) {
    if (circuit_->FindRelation(name) < 0)
      Fail(ErrorKind::kUsage, "{}:{}: connectors for '{}', but the program has no table or view of that name",
           spec_.spec_path, spec_.connector_lines[name], name);
  }
  nlohmann::json fp = {{"sql", spec_.sql}};
  for (const auto& [name, list] : spec_.connectors)
    for (const auto& c : list) fp["connectors"][name].push_back(c.config);
  fingerprint_ = fp.dump();
  connectors_json_ = fp.contains("connectors") ? fp["connectors"].dump() : "{}";
  if (with_connectors) BuildConnectors(false);
}

std::vector<ConnectorSpec> Pipeline::ConnectorSpecs(size_t r) const {
  const Relation& rel = circuit_->relations()[r];
  std::vector<ConnectorSpec> specs;
  for (const auto& p : rel.properties) {
    if (p.key != "connectors") continue;
    int line = spec_.sql_source.first_line + p.value_pos.line - 1;
    nlohmann::json arr;
    try {
      arr = nlohmann::json::parse(p.value);
    } catch (const nlohmann::json::parse_error& e) {
      Fail(ErrorKind::kUsage, "{}:{}: 'connectors' of {} is not valid JSON: {}", spec_.spec_path, line, rel.name,
           e.what());
    }
    if (!arr.is_array())
      Fail(ErrorKind::kUsage, "{}:{}: 'connectors' of {} must be a JSON array of connector objects", spec_.spec_path,
           line, rel.name);
    for (auto& c : arr)
      specs.push_back({c, fmt::format("{}:{} ({} {}, WITH 'connectors')", spec_.spec_path, line,
                                      rel.kind == Relation::Kind::kTable ? "table" : "view", rel.name)});
  }
  for (const auto& [name, list] : spec_.connectors)
    if (EqualsIgnoreCase(name, rel.name)) specs.insert(specs.end(), list.begin(), list.end());
  return specs;
}

void Pipeline::Attach(size_t r, const ConnectorSpec& cs, bool resume, bool validate_only, ConnectorGroups* groups) {
  const Relation& rel = circuit_->relations()[r];
  ConnectorContext ctx{rel.name, cs.where, spec_.base_dir, pool_.get(), resume, validate_only, groups};
  ctx.append_only = rel.append_only;
  std::string transport;  // the factories report a missing or malformed one
  if (cs.config.is_object() && cs.config.contains("transport") && cs.config["transport"].is_object() &&
      cs.config["transport"].contains("name") && cs.config["transport"]["name"].is_string())
    transport = cs.config["transport"]["name"].get<std::string>();
  const bool is_output = transport == "file_output";
  if (rel.kind == Relation::Kind::kView && !is_output)
    Fail(ErrorKind::kUsage, "{}: view {} can only have output connectors (file_output){}", cs.where, rel.name,
         transport.empty() ? "" : fmt::format(", not '{}'", transport));
  if (is_output) {
    auto c = MakeOutputConnector(cs.config, rel.schema, ctx);
    if (!validate_only) outputs_.push_back({static_cast<int>(r), std::move(c)});
  } else {
    auto c = MakeInputConnector(cs.config, rel.schema, ctx);
    if (!validate_only) inputs_.push_back({static_cast<int>(r), std::move(c)});
  }
}

void Pipeline::BuildConnectors(bool resume) {
  ConnectorGroups groups;
  LoadUdfs(spec_.udf_library, spec_.spec_path, circuit_.get());
  for (size_t r = 0; r < circuit_->relations().size(); ++r)
    for (const auto& cs : ConnectorSpecs(r)) Attach(r, cs, resume, false, &groups);
  for (auto& [name, group] : groups) group->Complete();
}

std::vector<std::string> Pipeline::ValidateConnectors() {
  std::vector<std::string> errors;
  ConnectorGroups groups;
  for (size_t r = 0; r < circuit_->relations().size(); ++r) {
    std::vector<ConnectorSpec> specs;
    try {
      specs = ConnectorSpecs(r);
    } catch (const Error& e) {
      errors.push_back(e.what());
      continue;
    }
    for (const auto& cs : specs) {
      try {
        Attach(r, cs, false, true, &groups);  // keeps nothing
      } catch (const Error& e) {
        errors.push_back(e.what());
      }
    }
  }
  for (auto& [name, group] : groups) {
    try {
      group->Complete();
    } catch (const Error& e) {
      errors.push_back(e.what());
    }
  }
  return errors;
}

}  // namespace fld
