#include "pipelines/connectors/output_buffer.h"

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "core/common/error.h"
#include "core/common/temp_dir.h"
#include "core/common/thread_pool.h"
#include "pipelines/connectors/connector.h"

namespace fld {
namespace {

using Json = nlohmann::json;
using Row = std::pair<int64_t, int64_t>;

Schema KvSchema() {
  Schema s;
  for (const char* name : {"k", "v"}) s.fields.emplace_back(name, SqlType::Of(TypeId::kBigInt));
  return s;
}

Json BufferedConfig(const std::string& path, Json keys) {
  Json cfg = {{"transport", {{"name", "file_output"}, {"config", {{"path", path}}}}}, {"format", {{"name", "csv"}}}};
  for (auto it = keys.begin(); it != keys.end(); ++it) cfg[it.key()] = it.value();
  return cfg;
}

ConnectorContext Ctx() {
  ConnectorContext ctx;
  ctx.relation = "v";
  ctx.where = "p.yaml:3";
  return ctx;
}

Batch KvBatch(const std::vector<std::pair<Row, int64_t>>& rows) {
  BatchBuilder b(std::vector<PhysType>{PhysType::kI64, PhysType::kI64});
  for (const auto& [r, w] : rows) {
    const Value vals[] = {Value::Int(r.first), Value::Int(r.second)};
    b.AppendRow(vals, w);
  }
  return b.Finish();
}

// The CSV lines of the file from byte `from` on, as (row, weight) in file order.
std::vector<std::pair<Row, int64_t>> LinesFrom(const std::string& path, size_t from) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  std::istringstream in(ss.str().substr(from));
  std::vector<std::pair<Row, int64_t>> out;
  std::string line;
  while (std::getline(in, line)) {
    int64_t k, v, w;
    REQUIRE(std::sscanf(line.c_str(), "%ld,%ld,%ld", &k, &v, &w) == 3);
    out.push_back({{k, v}, w});
  }
  return out;
}

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("output buffer: writes the held changes consolidated, at the size limit, the deadline and on drain",
          "[output_buffer]") {
  TempDir dir;
  const std::string path = dir.File("out.csv");
  const uint64_t limit = GENERATE(1, 7, 25, 1000);
  auto out = MakeOutputConnector(BufferedConfig(path, {{"enable_output_buffer", true},
                                                       {"max_output_buffer_size_records", limit},
                                                       {"max_output_buffer_time_millis", 60000}}),
                                 KvSchema(), Ctx());
  REQUIRE(out->Describe() == fmt::format("file_output({}, csv) buffered", path));
  std::mt19937_64 rng(limit);
  // The oracle: the net weight per row of the changes given since the file last grew.
  std::map<Row, int64_t> pending;
  auto nonzero = [&] {
    std::vector<std::pair<Row, int64_t>> v;
    for (const auto& [r, w] : pending)
      if (w != 0) v.push_back({r, w});
    return v;
  };
  size_t seen = 0;  // bytes of the file already checked
  // Whatever the file gained must be the pending changes, consolidated, in row order.
  auto check_written = [&](bool expect_write) {
    out->Flush(false);
    auto lines = LinesFrom(path, seen);
    if (expect_write) {
      CHECK(lines == nonzero());
      pending.clear();
      CHECK(out->buffered_records() == 0);
      CHECK(!out->DrainDeadline().has_value());
    } else {
      CHECK(lines.empty());
    }
    seen = out->Position();
  };
  for (uint64_t step = 1; step <= 300; ++step) {
    std::vector<std::pair<Row, int64_t>> rows;
    const int n = static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      Row r{static_cast<int64_t>(rng() % 6), static_cast<int64_t>(rng() % 4)};
      // Mostly updates that cancel what came before: a row is inserted, then deleted later.
      const int64_t w = pending[r] > 0 && rng() % 3 != 0 ? -1 : 1;
      rows.push_back({r, w});
      pending[r] += w;
    }
    out->Write(KvBatch(rows), step);
    // The buffer writes once what it holds, consolidated, reaches the limit.
    check_written(nonzero().size() >= limit);
    if (step % 50 == 0) {
      // The time limit: nothing is due before the deadline, everything at it.
      auto due = out->DrainDeadline();
      REQUIRE(due.has_value() == (out->buffered_records() > 0));
      if (due) {
        CHECK(!out->Drain(*due - std::chrono::milliseconds(1), false));
        check_written(false);
        const bool any = !nonzero().empty();
        CHECK(out->Drain(*due, false) == any);
        check_written(true);
      }
    }
    if (step % 70 == 0) {
      out->Drain(OutputClock::now(), true);
      check_written(true);
    }
  }
  out->Drain(OutputClock::now(), true);
  check_written(true);
  CHECK(!out->Drain(OutputClock::now(), true));  // nothing held: nothing to write
}

TEST_CASE("output buffer: changes that cancel out never leave; truncation drops what is held", "[output_buffer]") {
  TempDir dir;
  const std::string path = dir.File("out.csv");
  auto out = MakeOutputConnector(BufferedConfig(path, {{"enable_output_buffer", true}}), KvSchema(), Ctx());
  out->Write(KvBatch({{{1, 1}, 1}, {{2, 2}, 1}}), 1);
  out->Write(KvBatch({{{1, 1}, -1}, {{2, 2}, -1}}), 2);
  CHECK(out->buffered_records() == 4);
  CHECK(!out->DrainDeadline().has_value());  // no time limit
  CHECK(!out->Drain(OutputClock::now() + std::chrono::hours(24 * 365), false));
  CHECK(!out->Drain(OutputClock::now(), true));
  out->Flush(false);
  CHECK(out->Position() == 0);
  CHECK(out->records() == 0);

  out->Write(KvBatch({{{3, 3}, 1}}), 3);
  out->Drain(OutputClock::now(), true);
  out->Flush(false);
  const uint64_t at = out->Position();
  CHECK(LinesFrom(path, 0) == std::vector<std::pair<Row, int64_t>>{{{3, 3}, 1}});
  out->Write(KvBatch({{{4, 4}, 1}}), 4);
  out->TruncateTo(at);
  CHECK(out->buffered_records() == 0);
  CHECK(!out->Drain(OutputClock::now(), true));
  out->Write(KvBatch({{{5, 5}, 2}}), 5);
  out->Drain(OutputClock::now(), true);
  out->Flush(false);
  CHECK(LinesFrom(path, 0) == std::vector<std::pair<Row, int64_t>>{{{3, 3}, 1}, {{5, 5}, 2}});
}

TEST_CASE("output buffer and back-pressure keys: checked, named in errors, max_queued_records bounds a step",
          "[output_buffer]") {
  TempDir dir;
  const std::string path = dir.File("out.csv");
  auto error = [&](Json keys) {
    return ErrorOf([&] { MakeOutputConnector(BufferedConfig(path, keys), KvSchema(), Ctx()); });
  };
  CHECK(error({{"enable_output_buffer", "yes"}}) ==
        "p.yaml:3: output connector: 'enable_output_buffer' must be true or false, not \"yes\"");
  CHECK(error({{"enable_output_buffer", true}, {"max_output_buffer_size_records", 0}}) ==
        "p.yaml:3: output connector: 'max_output_buffer_size_records' must be a positive integer, not 0");
  CHECK(error({{"enable_output_buffer", true}, {"max_output_buffer_time_millis", -1}}) ==
        "p.yaml:3: output connector: 'max_output_buffer_time_millis' must be a non-negative integer, not -1");
  CHECK(error({{"max_output_buffer_time_millis", 10}}) ==
        "p.yaml:3: output connector: 'max_output_buffer_time_millis' and 'max_output_buffer_size_records' need "
        "'enable_output_buffer': true");
  CHECK(error({{"max_queued_records", 0}}) ==
        "p.yaml:3: output connector: 'max_queued_records' must be a positive integer, not 0");
  // Without the flag (or with it false) the transport's connector is used as is.
  auto plain = MakeOutputConnector(BufferedConfig(path, {{"enable_output_buffer", false}}), KvSchema(), Ctx());
  CHECK(plain->Describe() == fmt::format("file_output({}, csv)", path));
  plain->Write(KvBatch({{{1, 2}, 1}}), 1);
  CHECK(plain->buffered_records() == 0);
  // Feldera's largest integer (its default) means no time limit.
  auto unlimited = MakeOutputConnector(
      BufferedConfig(path, {{"enable_output_buffer", true}, {"max_output_buffer_time_millis", UINT64_MAX}}), KvSchema(),
      Ctx());
  unlimited->Write(KvBatch({{{1, 2}, 1}}), 1);
  CHECK(!unlimited->DrainDeadline().has_value());

  // Inputs: the buffer keys do not apply; max_queued_records bounds the records a step takes.
  std::ofstream(dir.File("in.csv")) << "1,1\n2,2\n3,3\n4,4\n5,5\n";
  auto input = [&](Json keys) {
    Json cfg = {{"transport", {{"name", "file_input"}, {"config", {{"path", dir.File("in.csv")}}}}},
                {"format", {{"name", "csv"}}}};
    for (auto it = keys.begin(); it != keys.end(); ++it) cfg[it.key()] = it.value();
    return MakeInputConnector(cfg, KvSchema(), Ctx());
  };
  CHECK(ErrorOf([&] {
          input({{"enable_output_buffer", true}});
        }) == "p.yaml:3: input connector: 'enable_output_buffer' applies to output connectors only");
  CHECK(input({{"max_queued_records", 2}})->max_batch_size() == 2);
  CHECK(input({{"max_queued_records", 2}})->Read().size() == 2);
  CHECK(input({{"max_batch_size", 4}, {"max_queued_records", 100}})->max_batch_size() == 4);
  CHECK(input({{"max_batch_size", 4}, {"max_queued_records", 3}})->max_batch_size() == 3);
  CHECK(input({{"max_queued_records", 1000000}})->max_batch_size() == 10000);  // the file default
  // max_worker_batch_size: times the pipeline's workers, unless max_batch_size is given.
  ThreadPool pool(3);
  auto input_with = [&](Json keys, ThreadPool* p) {
    Json cfg = {{"transport", {{"name", "file_input"}, {"config", {{"path", dir.File("in.csv")}}}}},
                {"format", {{"name", "csv"}}}};
    for (auto it = keys.begin(); it != keys.end(); ++it) cfg[it.key()] = it.value();
    ConnectorContext ctx = Ctx();
    ctx.pool = p;
    return MakeInputConnector(cfg, KvSchema(), ctx);
  };
  CHECK(input_with({{"max_worker_batch_size", 4}}, &pool)->max_batch_size() == 12);
  CHECK(input_with({{"max_worker_batch_size", 4}}, nullptr)->max_batch_size() == 4);
  CHECK(input_with({{"max_worker_batch_size", 4}, {"max_batch_size", 5}}, &pool)->max_batch_size() == 5);
  CHECK(input_with({{"max_worker_batch_size", 4}, {"max_queued_records", 10}}, &pool)->max_batch_size() == 10);
  CHECK(input_with(Json::object(), &pool)->max_batch_size() == 10000);  // the default ignores the workers
  CHECK(ErrorOf([&] {
          input({{"max_worker_batch_size", -3}});
        }) == "p.yaml:3: input connector: 'max_worker_batch_size' must be a positive integer, not -3");
}

}  // namespace fld
