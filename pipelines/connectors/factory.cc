// MakeInputConnector / MakeOutputConnector: parse Feldera's connector object and build the
// transport's connector. Keys: transport {name, config}, format {name, config}, and optionally
// name, max_batch_size, max_worker_batch_size, max_queued_records, paused, labels, start_after (the
// last three are accepted and ignored); on outputs, the output buffer's keys
// (pipelines/connectors/output_buffer.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string_view>

#include "core/common/error.h"
#include "pipelines/connectors/connector.h"
#include "pipelines/connectors/datagen.h"
#include "pipelines/connectors/file_input.h"
#include "pipelines/connectors/file_output.h"
#include "pipelines/connectors/nexmark.h"
#include "pipelines/connectors/output_buffer.h"

namespace fld {

namespace {

using Json = nlohmann::json;

struct ConnectorObject {
  std::string transport;
  Json transport_config = Json::object();
  const Json* format = nullptr;  // the {name, config} object, when given
  std::optional<uint64_t> max_batch_size;
  std::optional<uint64_t> max_worker_batch_size;
  std::optional<uint64_t> max_queued_records;
  OutputBufferOptions buffer;
  // The records an input takes per step: max_batch_size; else max_worker_batch_size times the
  // pipeline's workers, when given (Feldera's rule); else the transport's default, which does not
  // depend on the workers, so that neither do the steps nor the output files. At most
  // max_queued_records: an input holds no more than one step's records between steps (reading
  // never runs ahead of the steps), so Feldera's back-pressure threshold bounds what it holds
  // when it is the smaller.
  size_t BatchSize(size_t transport_default, const ConnectorContext& ctx) const {
    constexpr uint64_t kMax = uint64_t{1} << 32;
    uint64_t n = transport_default;
    if (max_batch_size)
      n = *max_batch_size;
    else if (max_worker_batch_size)
      n = std::min(*max_worker_batch_size, kMax) * (ctx.pool != nullptr ? ctx.pool->workers() : 1);
    return static_cast<size_t>(std::min<uint64_t>({n, max_queued_records.value_or(kMax), kMax}));
  }
};

ConnectorObject ParseObject(const Json& config, const ConnectorContext& ctx, const char* direction) {
  auto fail = [&](const std::string& msg) {
    throw Error(ErrorKind::kUsage, ctx.where.empty() ? fmt::format("{} connector: {}", direction, msg)
                                                     : fmt::format("{}: {} connector: {}", ctx.where, direction, msg));
  };
  ConnectorObject o;
  if (!config.is_object()) fail(fmt::format("expected an object with a 'transport', not {}", config.dump()));
  const bool output = std::string_view(direction) == "output";
  // The keys a connector object may hold; the last three only on outputs.
  static constexpr std::string_view kKeys[] = {"transport",
                                               "format",
                                               "name",
                                               "max_batch_size",
                                               "max_worker_batch_size",
                                               "max_queued_records",
                                               "paused",
                                               "labels",
                                               "start_after",
                                               "enable_output_buffer",
                                               "max_output_buffer_time_millis",
                                               "max_output_buffer_size_records"};
  const size_t known = output ? std::size(kKeys) : std::size(kKeys) - 3;
  for (auto it = config.begin(); it != config.end(); ++it) {
    const std::string& k = it.key();
    const auto at = std::find(std::begin(kKeys), std::end(kKeys), k) - std::begin(kKeys);
    if (static_cast<size_t>(at) < known) continue;
    if (static_cast<size_t>(at) < std::size(kKeys)) fail(fmt::format("'{}' applies to output connectors only", k));
    fail(fmt::format("unknown key '{}' (expected {})", k, fmt::join(kKeys, kKeys + known, ", ")));
  }
  // An integer key at least `min` (a YAML spec gives signed integers, JSON unsigned ones).
  auto integer = [&](const char* key, uint64_t min, const char* what) -> std::optional<uint64_t> {
    if (!config.contains(key) || config[key].is_null()) return std::nullopt;
    const Json& m = config[key];
    const bool ok = m.is_number_unsigned() ? m.get<uint64_t>() >= min
                                           : m.is_number_integer() && m.get<int64_t>() >= static_cast<int64_t>(min);
    if (!ok) fail(fmt::format("'{}' must be a {} integer, not {}", key, what, m.dump()));
    return m.get<uint64_t>();
  };
  auto positive = [&](const char* key) { return integer(key, 1, "positive"); };
  if (config.contains("enable_output_buffer") && !config["enable_output_buffer"].is_null()) {
    if (!config["enable_output_buffer"].is_boolean())
      fail(fmt::format("'enable_output_buffer' must be true or false, not {}", config["enable_output_buffer"].dump()));
    o.buffer.enabled = config["enable_output_buffer"].get<bool>();
  }
  if (auto ms = integer("max_output_buffer_time_millis", 0, "non-negative")) {
    // Feldera's default is the largest integer: no limit. Anything beyond a century is that too.
    if (*ms < uint64_t{100} * 365 * 24 * 3600 * 1000) o.buffer.max_time = std::chrono::milliseconds(*ms);
  }
  if (auto n = positive("max_output_buffer_size_records")) o.buffer.max_records = *n;
  if (!o.buffer.enabled &&
      (config.contains("max_output_buffer_time_millis") || config.contains("max_output_buffer_size_records")))
    fail("'max_output_buffer_time_millis' and 'max_output_buffer_size_records' need 'enable_output_buffer': true");
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
  o.max_batch_size = positive("max_batch_size");
  o.max_worker_batch_size = positive("max_worker_batch_size");
  o.max_queued_records = positive("max_queued_records");
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
                                                o.BatchSize(DatagenConnector::kDefaultMaxBatchSize, ctx));
    if (ctx.validate_only) return nullptr;
    return c;
  }
  if (o.transport == "nexmark") return MakeNexmarkInput(o.transport_config, o.format, schema, ctx);
  if (o.transport == "file_input") {
    if (o.format == nullptr) throw Error(ErrorKind::kUsage, at + "file_input: needs a 'format' (csv or json)");
    return MakeFileInput(o.transport_config, *o.format, schema, ctx,
                         o.BatchSize(FileInputConnector::kDefaultMaxBatchSize, ctx));
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
    auto c = MakeFileOutput(o.transport_config, *o.format, schema, ctx, !ctx.resume);
    if (c == nullptr || !o.buffer.enabled) return c;
    return std::make_unique<BufferedOutputConnector>(std::move(c), o.buffer, ctx.pool);
  }
  throw Error(ErrorKind::kUsage,
              fmt::format("{}unknown output transport '{}' (supported: file_output)", at, o.transport));
}

}  // namespace fld
