// MakeInputConnector / MakeOutputConnector: parse Feldera's connector object and build the
// transport's connector. Keys: transport {name, config}, format {name, config}, and optionally
// name, max_batch_size, paused, labels, start_after (the last three are accepted and ignored).
#include <fmt/format.h>

#include "core/common/error.h"
#include "pipelines/connectors/connector.h"
#include "pipelines/connectors/datagen.h"
#include "pipelines/connectors/file_input.h"
#include "pipelines/connectors/file_output.h"
#include "pipelines/connectors/nexmark.h"

namespace fld {

namespace {

using Json = nlohmann::json;

struct ConnectorObject {
  std::string transport;
  Json transport_config = Json::object();
  const Json* format = nullptr;  // the {name, config} object, when given
  std::optional<size_t> max_batch_size;
};

ConnectorObject ParseObject(const Json& config, const ConnectorContext& ctx, const char* direction) {
  auto fail = [&](const std::string& msg) {
    throw Error(ErrorKind::kUsage, ctx.where.empty() ? fmt::format("{} connector: {}", direction, msg)
                                                     : fmt::format("{}: {} connector: {}", ctx.where, direction, msg));
  };
  ConnectorObject o;
  if (!config.is_object()) fail(fmt::format("expected an object with a 'transport', not {}", config.dump()));
  for (auto it = config.begin(); it != config.end(); ++it) {
    const std::string& k = it.key();
    if (k == "transport" || k == "format" || k == "name" || k == "max_batch_size" || k == "paused" || k == "labels" ||
        k == "start_after")
      continue;
    fail(fmt::format("unknown key '{}' (expected transport, format, name, max_batch_size, paused, labels, start_after)",
                     k));
  }
  if (!config.contains("transport") || !config["transport"].is_object())
    fail("needs a 'transport' object {name, config}");
  const Json& t = config["transport"];
  for (auto it = t.begin(); it != t.end(); ++it)
    if (it.key() != "name" && it.key() != "config")
      fail(fmt::format("unknown key '{}' in 'transport' (expected name, config)", it.key()));
  if (!t.contains("name") || !t["name"].is_string()) fail("'transport' needs a 'name' (a string)");
  o.transport = t["name"].get<std::string>();
  if (t.contains("config") && !t["config"].is_null()) o.transport_config = t["config"];
  if (config.contains("format") && !config["format"].is_null()) {
    const Json& f = config["format"];
    if (!f.is_object()) fail("'format' must be an object {name, config}");
    for (auto it = f.begin(); it != f.end(); ++it)
      if (it.key() != "name" && it.key() != "config")
        fail(fmt::format("unknown key '{}' in 'format' (expected name, config)", it.key()));
    o.format = &f;
  }
  if (config.contains("name") && !config["name"].is_string()) fail("'name' must be a string");
  if (config.contains("max_batch_size") && !config["max_batch_size"].is_null()) {
    const Json& m = config["max_batch_size"];
    if (!m.is_number_integer() || (m.is_number_integer() && !m.is_number_unsigned() && m.get<int64_t>() <= 0) ||
        m.get<uint64_t>() == 0)
      fail(fmt::format("'max_batch_size' must be a positive integer, not {}", m.dump()));
    o.max_batch_size = static_cast<size_t>(std::min<uint64_t>(m.get<uint64_t>(), uint64_t{1} << 32));
  }
  return o;
}

}  // namespace

std::unique_ptr<InputConnector> MakeInputConnector(const Json& config, const Schema& schema,
                                                   const ConnectorContext& ctx) {
  ConnectorObject o = ParseObject(config, ctx, "input");
  const std::string at = ctx.where.empty() ? "" : ctx.where + ": ";
  if (o.transport == "datagen") {
    if (o.format != nullptr) throw Error(ErrorKind::kUsage, at + "datagen: takes no 'format' (it generates rows)");
    auto c = std::make_unique<DatagenConnector>(o.transport_config, schema, ctx,
                                                o.max_batch_size.value_or(DatagenConnector::kDefaultMaxBatchSize));
    if (ctx.validate_only) return nullptr;
    return c;
  }
  if (o.transport == "nexmark") return MakeNexmarkInput(o.transport_config, o.format, schema, ctx);
  if (o.transport == "file_input") {
    if (o.format == nullptr) throw Error(ErrorKind::kUsage, at + "file_input: needs a 'format' (csv or json)");
    return MakeFileInput(o.transport_config, *o.format, schema, ctx, o.max_batch_size);
  }
  throw Error(ErrorKind::kUsage,
              fmt::format("{}unknown input transport '{}' (supported: datagen, nexmark, file_input)", at, o.transport));
}

std::unique_ptr<OutputConnector> MakeOutputConnector(const Json& config, const Schema& schema,
                                                     const ConnectorContext& ctx) {
  ConnectorObject o = ParseObject(config, ctx, "output");
  const std::string at = ctx.where.empty() ? "" : ctx.where + ": ";
  if (o.transport == "file_output") {
    if (o.format == nullptr) throw Error(ErrorKind::kUsage, at + "file_output: needs a 'format' (csv or json)");
    return MakeFileOutput(o.transport_config, *o.format, schema, ctx, !ctx.resume);
  }
  throw Error(ErrorKind::kUsage,
              fmt::format("{}unknown output transport '{}' (supported: file_output)", at, o.transport));
}

}  // namespace fld
