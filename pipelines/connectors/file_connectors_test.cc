#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/common/error.h"
#include "core/common/temp_dir.h"
#include "core/common/thread_pool.h"
#include "pipelines/connectors/connector.h"
#include "pipelines/connectors/file_input.h"
#include "pipelines/connectors/file_output.h"

namespace fld {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary);
  f << content;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Schema BankSchema() {
  Schema s;
  s.fields = {{"from_account", SqlType::Of(TypeId::kInteger)},
              {"to_account", SqlType::Of(TypeId::kInteger)},
              {"amount", SqlType::Of(TypeId::kInteger)},
              {"ts", SqlType::Of(TypeId::kTimestamp)}};
  return s;
}

ConnectorContext Ctx(const std::string& base_dir) {
  ConnectorContext ctx;
  ctx.relation = "transactions";
  ctx.where = "bank.yaml:7";
  ctx.base_dir = base_dir;
  return ctx;
}

Json InputConfig(const std::string& path, const std::string& format, Json format_config = Json::object(),
                 std::optional<size_t> max_batch = std::nullopt) {
  Json cfg = {{"transport", {{"name", "file_input"}, {"config", {{"path", path}}}}},
              {"format", {{"name", format}, {"config", format_config}}}};
  if (max_batch) cfg["max_batch_size"] = *max_batch;
  return cfg;
}

Json OutputConfig(const std::string& path, const std::string& format, Json format_config = Json::object()) {
  return {{"transport", {{"name", "file_output"}, {"config", {{"path", path}}}}},
          {"format", {{"name", format}, {"config", format_config}}}};
}

std::string BankCsv(int rows) {
  std::string s;
  for (int i = 0; i < rows; ++i)
    s += fmt::format("{},{},{},2024-01-01 00:00:{:02}\n", i % 9 + 1, i % 7 + 1, i * 10, i % 60);
  return s;
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

TEST_CASE("file_input reads CSV with headers, CRLF, blank lines and no final newline", "[file]") {
  TempDir dir;
  WriteFile(dir.File("in.csv"),
            "from_account,to_account,amount,ts\r\n1,2,30,2024-01-01 00:00:01\r\n\r\n4,5,\"60\",2024-01-01 00:00:02\n"
            "   \n7,8,,2024-01-01 00:00:03");
  auto in = MakeInputConnector(InputConfig("in.csv", "csv", {{"headers", true}}), BankSchema(), Ctx(dir.path()));
  CHECK(in->Describe() == "file_input(in.csv, csv)");
  CHECK(in->max_batch_size() == 10000);
  Batch b = in->Read();
  REQUIRE(b.size() == 3);
  CHECK(in->AtEnd());
  CHECK(in->records() == 3);
  CHECK(b.cols[0]->i64 == std::vector<int64_t>{1, 4, 7});
  CHECK(b.cols[1]->i64 == std::vector<int64_t>{2, 5, 8});
  CHECK(b.Get(2, 0) == Value::Int(30));
  CHECK(b.Get(2, 1) == Value::Int(60));
  CHECK(b.Get(2, 2).IsNull());
  int64_t t0 = DaysFromCivil(2024, 1, 1) * kMicrosPerDay;
  CHECK(b.cols[3]->i64 == std::vector<int64_t>{t0 + 1000000, t0 + 2000000, t0 + 3000000});
  CHECK(in->Position()["offset"].get<uint64_t>() == fs::file_size(dir.File("in.csv")));
  CHECK(in->Position()["line"].get<uint64_t>() == 6);
  CHECK(in->Read().empty());
}

TEST_CASE("file_input honours max_batch_size and resumes exactly from Position", "[file]") {
  TempDir dir;
  WriteFile(dir.File("in.csv"), BankCsv(25));
  auto in = MakeInputConnector(InputConfig(dir.File("in.csv"), "csv", Json::object(), 10), BankSchema(), Ctx(""));
  CHECK(in->max_batch_size() == 10);
  Batch first = in->Read();
  CHECK(first.size() == 10);
  Json pos = in->Position();
  // The offset is the length of the first ten lines.
  std::string text = BankCsv(25);
  size_t tenth = 0;
  for (int k = 0; k < 10; ++k) tenth = text.find('\n', tenth) + 1;
  CHECK(pos == Json{{"offset", tenth}, {"line", 10}});
  Batch second = in->Read();
  Batch third = in->Read();
  CHECK(second.size() == 10);
  CHECK(third.size() == 5);
  CHECK(in->AtEnd());
  CHECK(in->records() == 25);

  auto resumed = MakeInputConnector(InputConfig(dir.File("in.csv"), "csv", Json::object(), 100), BankSchema(), Ctx(""));
  resumed->Seek(pos);
  Batch rest = resumed->Read();
  std::vector<Batch> parts = {second, third};
  Batch expected = Concat(parts);
  REQUIRE(rest.size() == 15);
  for (size_t c = 0; c < 4; ++c) CHECK(rest.cols[c]->i64 == expected.cols[c]->i64);
  CHECK(resumed->Position() == in->Position());

  // Seeking back to the start re-reads everything.
  resumed->Seek(Json{{"offset", 0}, {"line", 0}});
  CHECK(resumed->Read().size() == 25);
}

TEST_CASE("file_input reports file:line:col and keeps earlier records", "[file]") {
  TempDir dir;
  std::string bad_line = "3,4,12x,2024-01-01 00:00:00";
  WriteFile(dir.File("bad.csv"), BankCsv(4) + bad_line + "\n" + BankCsv(2));
  auto in = MakeInputConnector(InputConfig("bad.csv", "csv", Json::object(), 3), BankSchema(), Ctx(dir.path()));
  Batch first = in->Read();
  CHECK(first.size() == 3);
  // The batch ends before the bad record; the next Read stops at it and takes nothing.
  Batch second = in->Read();
  CHECK(second.size() == 1);
  CHECK(in->records() == 4);
  Json pos = in->Position();
  CHECK(pos == Json{{"offset", BankCsv(4).size()}, {"line", 4}});
  std::string e = ErrorOf([&] { in->Read(); });
  CHECK(e ==
        fmt::format("bad.csv:5:{}: expected INTEGER but found '12x' in field 3 (amount)", bad_line.find("12x") + 1));
  CHECK(in->Position() == pos);
  CHECK(in->records() == 4);
  // Reading again fails at the same record: nothing was skipped.
  std::string again = ErrorOf([&] { in->Read(); });
  CHECK(again == e);
  try {
    in->Read();
  } catch (const Error& err) {
    CHECK(err.kind() == ErrorKind::kRuntime);
  }
}

TEST_CASE("file_input reads JSON insert/delete and raw lines", "[file]") {
  TempDir dir;
  WriteFile(dir.File("in.json"),
            "{\"insert\": {\"from_account\": 1, \"to_account\": 2, \"amount\": 3, \"ts\": \"2024-01-01 00:00:00\"}}\n"
            "\n"
            "{\"delete\": {\"from_account\": 1, \"to_account\": 2, \"amount\": 3, \"ts\": \"2024-01-01 00:00:00\"}}\n"
            "{\"insert\": {\"FROM_ACCOUNT\": 5}}\n");
  auto in = MakeInputConnector(InputConfig("in.json", "json", {{"update_format", "insert_delete"}}), BankSchema(),
                               Ctx(dir.path()));
  Batch b = in->Read();
  REQUIRE(b.size() == 3);
  CHECK(b.weights == std::vector<int64_t>{1, -1, 1});
  CHECK(b.Get(0, 2) == Value::Int(5));
  CHECK(b.Get(3, 2).IsNull());

  WriteFile(dir.File("raw.json"), "{\"from_account\": 9}\n{\"from_account\": 8, \"amount\": \"x\"}\n");
  auto raw =
      MakeInputConnector(InputConfig("raw.json", "json", {{"update_format", "raw"}}), BankSchema(), Ctx(dir.path()));
  CHECK(raw->Read().size() == 1);  // the good record before the bad one
  std::string e = ErrorOf([&] { raw->Read(); });
  CHECK(e.rfind("raw.json:2:", 0) == 0);
  CHECK(e.find("'amount'") != std::string::npos);
}

TEST_CASE("file_input reads CSV records whose quoted fields span lines", "[file]") {
  TempDir dir;
  Schema s;
  s.fields = {{"id", SqlType::Of(TypeId::kInteger)}, {"note", SqlType::Of(TypeId::kVarchar)}};
  WriteFile(dir.File("m.csv"), "1,\"two\nlines\"\n2,plain\n");
  auto in = MakeInputConnector(InputConfig("m.csv", "csv"), s, Ctx(dir.path()));
  Batch b = in->Read();
  REQUIRE(b.size() == 2);
  CHECK(b.Get(1, 0) == Value::String("two\nlines"));
  CHECK(b.Get(1, 1) == Value::String("plain"));
  CHECK(in->Position()["line"] == 3);
}

namespace {
// A batch's rows (encodings and weights), for comparing batches byte for byte.
std::string RowsOf(const Batch& b) {
  std::string s;
  for (size_t r = 0; r < b.size(); ++r) {
    EncodeRow(&s, b, r);
    s += fmt::format("|{}\n", b.weights[r]);
  }
  return s;
}

// The serial reader (no pool) and the pooled one (two workers) over the same input.
struct SerialAndPooled {
  ThreadPool pool{2};
  std::unique_ptr<InputConnector> serial, pooled;
  SerialAndPooled(const TempDir& dir, const Json& config, const Schema& s) {
    ConnectorContext ctx = Ctx(dir.path());
    serial = MakeInputConnector(config, s, ctx);
    ctx.pool = &pool;
    pooled = MakeInputConnector(config, s, ctx);
  }
  const FileInputConnector& pooled_file() const { return dynamic_cast<const FileInputConnector&>(*pooled); }
};

// Reads both until one Read fails, requiring every Read to give the same rows, Position and
// error from both. Returns the rows read (their sum of weights in *weights) and the error.
size_t ReadAlike(SerialAndPooled* in, std::string* error, int64_t* weights = nullptr) {
  size_t rows = 0;
  for (int reads = 0;; ++reads) {
    INFO("read " << reads);
    Batch bs, bp;
    const std::string err_s = ErrorOf([&] { bs = in->serial->Read(); });
    const std::string err_p = ErrorOf([&] { bp = in->pooled->Read(); });
    REQUIRE(err_s == err_p);
    REQUIRE(RowsOf(bs) == RowsOf(bp));
    REQUIRE(in->serial->Position() == in->pooled->Position());
    rows += bs.size();
    if (weights)
      for (int64_t w : bs.weights) *weights += w;
    if (!err_s.empty()) {
      *error = err_s;
      return rows;
    }
    REQUIRE(reads < 100);
  }
}
}  // namespace

TEST_CASE("file_input with a pool parses CSV in parallel slices into the serial reader's batches", "[file]") {
  // Headers, a byte order mark, blank lines, quoted fields spanning lines and a malformed record
  // late in the file: with two workers every Read returns the same rows and Position as without
  // a pool, and the same error at the same record.
  TempDir dir;
  Schema s;
  s.fields = {{"id", SqlType::Of(TypeId::kInteger)}, {"note", SqlType::Of(TypeId::kVarchar)}};
  std::string text = "\xEF\xBB\xBFid,note\n";
  for (int i = 0; i < 47000; ++i) {
    if (i % 777 == 5) text += "\n";
    if (i == 41234)
      text += "x41234,bad\n";
    else if (i % 9001 == 7)
      text += fmt::format("{},\"two\nlines {}\"\n", i, i);
    else
      text += fmt::format("{},\"note, {}\"\n", i, i);
  }
  WriteFile(dir.File("p.csv"), text);
  SerialAndPooled in(dir, InputConfig("p.csv", "csv", {{"headers", true}}), s);
  std::string error;
  CHECK(ReadAlike(&in, &error) == 41234);
  CHECK(error.find("p.csv:") == 0);
  CHECK(in.pooled->records() == 41234);
  // Batches of one-line records went through the slices; only the read meeting the malformed
  // record was handed back to the serial loop.
  const FileInputConnector& file = in.pooled_file();
  CHECK(file.parallel_reads() >= 3);
  CHECK(file.parallel_rejects() == 1);
}

TEST_CASE("file_input with a pool reads unquoted CSV with CRLF, blank lines and rare quotes as serially", "[file]") {
  // Mostly unquoted records, with CRLF endings, blank and whitespace-only lines, now and then a
  // quoted field (on one line or spanning two), enough records to cross many buffer refills,
  // and a malformed record late in the file.
  TempDir dir;
  Schema s;
  s.fields = {{"id", SqlType::Of(TypeId::kInteger)}, {"note", SqlType::Of(TypeId::kVarchar)}};
  std::string text;
  for (int i = 0; i < 160000; ++i) {
    if (i % 1013 == 3) text += "\n";
    if (i % 2221 == 9) text += "  \t\r\n";
    if (i == 151001)
      text += "x151001,bad\n";
    else if (i % 25013 == 11)
      text += fmt::format("{},\"two\nlines {}\"\n", i, i);
    else if (i % 997 == 13)
      text += fmt::format("{},\"quoted, {}\"\r\n", i, i);
    else
      text += fmt::format("{},plain {}{}", i, i, i % 5 == 0 ? "\r\n" : "\n");
  }
  WriteFile(dir.File("u.csv"), text);
  SerialAndPooled in(dir, InputConfig("u.csv", "csv"), s);
  std::string error;
  CHECK(ReadAlike(&in, &error) == 151001);
  CHECK(error.find("u.csv:") == 0);
  CHECK(in.pooled->records() == 151001);
  CHECK(in.pooled_file().parallel_reads() >= 10);
}

TEST_CASE("file_input with a pool parses JSON lines in parallel slices into the serial reader's batches", "[file]") {
  // A byte order mark, blank lines, inserts and deletes, strings with escapes and a malformed
  // record late in the file: with two workers every Read returns the same rows and Position as
  // without a pool, and the same error at the same record.
  TempDir dir;
  Schema s;
  s.fields.resize(2);
  s.fields[0].name = "id";
  s.fields[0].type = SqlType::Of(TypeId::kInteger);
  s.fields[1].name = "note";
  s.fields[1].type = SqlType::Of(TypeId::kVarchar);
  std::string text = "\xEF\xBB\xBF";
  for (int i = 0; i < 47000; ++i) {
    if (i % 777 == 5) text += "\n";
    if (i == 41234)
      text += "{\"insert\": {\"id\": \"x\", \"note\": \"bad\"}}\n";
    else
      text +=
          fmt::format("{{\"{}\": {{\"id\": {}, \"note\": \"n\\\"{}\"}}}}\n", i % 5 == 0 ? "delete" : "insert", i, i);
  }
  WriteFile(dir.File("p.json"), text);
  SerialAndPooled in(dir, InputConfig("p.json", "json"), s);
  std::string error;
  int64_t weights = 0;
  CHECK(ReadAlike(&in, &error, &weights) == 41234);
  CHECK(error.find("p.json:") == 0);
  CHECK(weights == 41234 - 2 * 8247);  // ids 0, 5, ..., 41230 are deletes
  CHECK(in.pooled->records() == 41234);
  // Only the malformed record sent reads back to the serial loop: the read that met it (whose
  // records before it the serial loop took) and the one starting at it (which it reports).
  const FileInputConnector& file = in.pooled_file();
  CHECK(file.parallel_reads() >= 4);
  CHECK(file.parallel_rejects() == 2);
}

TEST_CASE("file_input with a pool drops a byte order mark before a first record that is data", "[file]") {
  TempDir dir;
  Schema s;
  s.fields = {{"id", SqlType::Of(TypeId::kInteger)}, {"note", SqlType::Of(TypeId::kVarchar)}};
  std::string text = "\xEF\xBB\xBF";
  for (int i = 0; i < 9000; ++i) text += fmt::format("{},n{}\r\n", i, i);
  WriteFile(dir.File("b.csv"), text);
  SerialAndPooled in(dir, InputConfig("b.csv", "csv"), s);
  const Batch bs = in.serial->Read(), bp = in.pooled->Read();
  REQUIRE(bp.size() == 9000);
  CHECK(RowsOf(bs) == RowsOf(bp));
  CHECK(bp.cols[0]->i64[0] == 0);
  CHECK(bp.cols[1]->str[8999] == "n8999");  // CRLF: the CR is not part of the field
  CHECK(in.serial->Position() == in.pooled->Position());
  // Read by the slices, not parsed again by the serial loop after a slice failed.
  const FileInputConnector& file = in.pooled_file();
  CHECK(file.parallel_reads() == 1);
  CHECK(file.parallel_rejects() == 0);
}

TEST_CASE("file_output with a pool formats large batches in parallel into the same text", "[file]") {
  TempDir dir;
  Schema s = BankSchema();
  ThreadPool pool(2);
  ConnectorContext pooled = Ctx(dir.path());
  pooled.pool = &pool;
  for (const char* format : {"csv", "json"}) {
    auto serial = MakeOutputConnector(OutputConfig(std::string("s.") + format, format), s, Ctx(dir.path()));
    auto parallel = MakeOutputConnector(OutputConfig(std::string("p.") + format, format), s, pooled);
    long lines = 0;  // CSV: a line per row (its weight a field); JSON: a record per copy
    for (int rows : {3, 5000, 20001}) {
      BatchBuilder bb(s.PhysTypes());
      for (int i = 0; i < rows; ++i)
        bb.AppendRow(std::vector<Value>{Value::Int(i), i % 5 ? Value::Int(i * 7) : Value::Null(), Value::Int(-i),
                                        Value::Int(int64_t{1700000000000000} + i)},
                     i % 3 ? 1 : -2);
      for (int i = 0; i < rows; ++i) lines += std::string(format) == "csv" || i % 3 ? 1 : 2;
      Batch b = bb.Finish();
      serial->Write(b, 1);
      parallel->Write(b, 1);
      CHECK(serial->Position() == parallel->Position());
    }
    serial->Flush(false);
    parallel->Flush(false);
    const std::string want = ReadFile(dir.File(std::string("s.") + format));
    CHECK(std::count(want.begin(), want.end(), '\n') == lines);
    CHECK(ReadFile(dir.File(std::string("p.") + format)) == want);
  }
}

TEST_CASE("file_input configuration errors", "[file]") {
  TempDir dir;
  WriteFile(dir.File("in.csv"), "");
  Schema s = BankSchema();
  ConnectorContext ctx = Ctx(dir.path());
  std::string e = ErrorOf([&] { MakeInputConnector(InputConfig("missing.csv", "csv"), s, ctx); });
  CHECK(e.find("missing.csv") != std::string::npos);
  e = ErrorOf([&] { MakeInputConnector(InputConfig("in.csv", "csv", {{"header", true}}), s, ctx); });
  CHECK(e.find("'header'") != std::string::npos);
  CHECK(e.rfind("bank.yaml:7", 0) == 0);
  e = ErrorOf([&] { MakeInputConnector(InputConfig("in.csv", "avro"), s, ctx); });
  CHECK(e.find("avro") != std::string::npos);
  e = ErrorOf([&] { MakeInputConnector(InputConfig("in.csv", "json", {{"array", true}}), s, ctx); });
  CHECK(e.find("array") != std::string::npos);
  Json cfg = InputConfig("in.csv", "csv");
  cfg["transport"]["config"]["paht"] = "x";
  e = ErrorOf([&] { MakeInputConnector(cfg, s, ctx); });
  CHECK(e.find("'paht'") != std::string::npos);
  cfg = InputConfig("in.csv", "csv");
  cfg["max_batch_sise"] = 5;
  e = ErrorOf([&] { MakeInputConnector(cfg, s, ctx); });
  CHECK(e.find("'max_batch_sise'") != std::string::npos);
  CHECK(e.rfind("bank.yaml:7", 0) == 0);
  cfg = InputConfig("in.csv", "csv");
  cfg["transport"]["name"] = "kafka_input";
  e = ErrorOf([&] { MakeInputConnector(cfg, s, ctx); });
  CHECK(e.find("kafka_input") != std::string::npos);
  CHECK(e.find("datagen, nexmark, file_input") != std::string::npos);
  // datagen takes no format.
  Json dg = {{"transport", {{"name", "datagen"}, {"config", Json::object()}}}, {"format", {{"name", "csv"}}}};
  e = ErrorOf([&] { MakeInputConnector(dg, s, ctx); });
  CHECK(e.find("format") != std::string::npos);
  // Ignored keys are accepted; datagen through the factory works.
  dg = {{"transport", {{"name", "datagen"}, {"config", {{"seed", 1}, {"plan", {{{"limit", 3}}}}}}}},
        {"name", "gen"},
        {"paused", false},
        {"labels", {"a"}},
        {"start_after", {"b"}},
        {"max_batch_size", 2}};
  auto gen = MakeInputConnector(dg, s, ctx);
  CHECK(gen->max_batch_size() == 2);
  CHECK(gen->Read().size() == 2);
  CHECK(gen->Read().size() == 1);
  CHECK(gen->AtEnd());
}

TEST_CASE("file_input from standard input continues a stored position and its pending bytes", "[file]") {
  auto in = MakeInputConnector(InputConfig("-", "csv"), BankSchema(), Ctx(""));
  CHECK(in->Position() == Json{{"offset", 0}, {"line", 0}});
  CHECK_FALSE(in->Replayable());
  // A new stream continues the counters; bytes of an unfinished line come first.
  in->Seek(Json{{"offset", 10}, {"line", 1}, {"pending", "312c32"}});
  CHECK(in->Position() == Json{{"offset", 10}, {"line", 1}});
  CHECK(in->CheckpointState() == Json{{"offset", 10}, {"line", 1}, {"pending", "312c32"}});
  // A journaled step's position has no pending bytes: they were taken by that step.
  in->Seek(Json{{"offset", 13}, {"line", 2}});
  CHECK(in->CheckpointState() == Json{{"offset", 13}, {"line", 2}});
  CHECK_THROWS_AS(in->Seek(Json{{"offset", -1}, {"line", 1}}), Error);
}

void AppendFile(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary | std::ios::app);
  f << content;
}

Json FollowConfig(const std::string& path) {
  Json cfg = InputConfig(path, "csv");
  cfg["transport"]["config"]["follow"] = true;
  return cfg;
}

// Reads until `n` records arrived (a followed input may need a few polls to notice a rotation).
std::vector<int64_t> ReadAmounts(InputConnector& in, size_t n) {
  std::vector<int64_t> out;
  for (int tries = 0; out.size() < n && tries < 2000; ++tries) {
    Batch b = in.Read();
    for (size_t r = 0; r < b.size(); ++r) out.push_back(b.Get(2, r).i);
    if (b.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return out;
}

TEST_CASE("file_input follow: appended lines arrive, an unfinished line waits, never ends", "[file]") {
  TempDir dir;
  WriteFile(dir.File("live.csv"), BankCsv(2));
  auto in = MakeInputConnector(FollowConfig("live.csv"), BankSchema(), Ctx(dir.path()));
  CHECK(in->Read().size() == 2);
  CHECK(in->Read().empty());
  CHECK_FALSE(in->AtEnd());
  AppendFile(dir.File("live.csv"), "1,2,77,2024-01-01 00:00:00\n1,2,");
  CHECK(ReadAmounts(*in, 1) == std::vector<int64_t>{77});
  Json pos = in->Position();
  CHECK(in->Read().empty());  // "1,2," has no terminator yet
  CHECK(in->Position() == pos);
  AppendFile(dir.File("live.csv"), "78,2024-01-01 00:00:00\n");
  CHECK(ReadAmounts(*in, 1) == std::vector<int64_t>{78});
  CHECK_FALSE(in->AtEnd());
}

TEST_CASE("file_input follow survives rotation by rename, also across a resume", "[file]") {
  TempDir dir;
  WriteFile(dir.File("live.csv"), "1,2,1,2024-01-01 00:00:00\n");
  auto in = MakeInputConnector(FollowConfig("live.csv"), BankSchema(), Ctx(dir.path()));
  CHECK(ReadAmounts(*in, 1) == std::vector<int64_t>{1});
  Json before = in->CheckpointState();
  // The writer adds a line, the file is renamed away, its last line is written to the old file,
  // and a new file starts at the path.
  AppendFile(dir.File("live.csv"), "1,2,2,2024-01-01 00:00:00\n");
  fs::rename(dir.File("live.csv"), dir.File("live.csv.1"));
  AppendFile(dir.File("live.csv.1"), "1,2,3,2024-01-01 00:00:00\n");
  WriteFile(dir.File("live.csv"), "1,2,4,2024-01-01 00:00:00\n");
  CHECK(ReadAmounts(*in, 3) == std::vector<int64_t>{2, 3, 4});
  // A new process resuming from before the rotation finds the old file by its inode.
  auto resumed = MakeInputConnector(FollowConfig("live.csv"), BankSchema(), Ctx(dir.path()));
  resumed->Seek(before);
  CHECK(ReadAmounts(*resumed, 3) == std::vector<int64_t>{2, 3, 4});
  CHECK(resumed->Position() == in->Position());
}

TEST_CASE("file_input follow: truncation is an error", "[file]") {
  TempDir dir;
  WriteFile(dir.File("live.csv"), BankCsv(3));
  auto in = MakeInputConnector(FollowConfig("live.csv"), BankSchema(), Ctx(dir.path()));
  CHECK(in->Read().size() == 3);
  WriteFile(dir.File("live.csv"), BankCsv(1));
  std::string e;
  for (int i = 0; i < 200 && e.empty(); ++i) {
    e = ErrorOf([&] { in->Read(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(e.find("live.csv: the file was truncated") != std::string::npos);
}

TEST_CASE("file_input folder and glob: name order, each file once, new files, changed files refused", "[file]") {
  TempDir dir;
  fs::create_directory(dir.File("in"));
  WriteFile(dir.File("in/b.csv"), "1,2,2,2024-01-01 00:00:00\n");
  WriteFile(dir.File("in/a.csv"), "1,2,1,2024-01-01 00:00:00\n");
  WriteFile(dir.File("in/c.txt"), "1,2,9,2024-01-01 00:00:00\n");
  WriteFile(dir.File("in/.hidden.csv"), "garbage\n");
  auto glob = MakeInputConnector(InputConfig("in/*.csv", "csv"), BankSchema(), Ctx(dir.path()));
  CHECK(ReadAmounts(*glob, 2) == std::vector<int64_t>{1, 2});
  CHECK(glob->Read().empty());
  CHECK(glob->AtEnd());
  CHECK(glob->Position() == Json{{"file", ""}, {"offset", 0}, {"line", 0}, {"files", 2}});

  auto folder = MakeInputConnector(InputConfig("in", "csv", Json::object(), 1), BankSchema(), Ctx(dir.path()));
  CHECK(ReadAmounts(*folder, 1) == std::vector<int64_t>{1});
  Json mid = folder->CheckpointState();
  CHECK(ReadAmounts(*folder, 2) == std::vector<int64_t>{2, 9});
  CHECK(folder->Read().empty());
  CHECK(folder->AtEnd());
  // A later run picks up new files only.
  Json done = folder->CheckpointState();
  WriteFile(dir.File("in/d.csv"), "1,2,4,2024-01-01 00:00:00\n");
  auto again = MakeInputConnector(InputConfig("in", "csv"), BankSchema(), Ctx(dir.path()));
  again->Seek(done);
  CHECK(ReadAmounts(*again, 1) == std::vector<int64_t>{4});
  CHECK(again->AtEnd());
  // Resuming in the middle continues exactly.
  auto resumed = MakeInputConnector(InputConfig("in", "csv", Json::object(), 1), BankSchema(), Ctx(dir.path()));
  resumed->Seek(mid);
  CHECK(ReadAmounts(*resumed, 3) == std::vector<int64_t>{2, 9, 4});
  // A file that changes after it was read is an error naming it.
  AppendFile(dir.File("in/a.csv"), "1,2,5,2024-01-01 00:00:00\n");
  auto changed = MakeInputConnector(InputConfig("in", "csv"), BankSchema(), Ctx(dir.path()));
  std::string e = ErrorOf([&] { changed->Seek(done); });
  CHECK(e.find("in/a.csv: the file changed after it was read") != std::string::npos);
}

TEST_CASE("file_input follow on a folder waits for new files", "[file]") {
  TempDir dir;
  fs::create_directory(dir.File("in"));
  Json cfg = InputConfig("in", "csv");
  cfg["transport"]["config"]["follow"] = true;
  auto in = MakeInputConnector(cfg, BankSchema(), Ctx(dir.path()));
  CHECK(in->Read().empty());
  CHECK_FALSE(in->AtEnd());
  WriteFile(dir.File("in/1.csv"), "1,2,1,2024-01-01 00:00:00\n");
  CHECK(ReadAmounts(*in, 1) == std::vector<int64_t>{1});
  WriteFile(dir.File("in/2.csv"), "1,2,2,2024-01-01 00:00:00\n");
  CHECK(ReadAmounts(*in, 1) == std::vector<int64_t>{2});
  CHECK_FALSE(in->AtEnd());
}

TEST_CASE("file_input rejects follow on standard input and a wildcard folder", "[file]") {
  TempDir dir;
  Json cfg = InputConfig("-", "csv");
  cfg["transport"]["config"]["follow"] = true;
  CHECK(ErrorOf([&] { MakeInputConnector(cfg, BankSchema(), Ctx(dir.path())); }).find("'follow' does not apply") !=
        std::string::npos);
  CHECK(ErrorOf([&] {
          MakeInputConnector(InputConfig("x*/a.csv", "csv"), BankSchema(), Ctx(dir.path()));
        }).find("wildcards are allowed only in the file name") != std::string::npos);
  Json bad = InputConfig("a.csv", "csv");
  bad["transport"]["config"]["follow"] = "yes";
  CHECK(ErrorOf([&] {
          MakeInputConnector(bad, BankSchema(), Ctx(dir.path()));
        }).find("'follow' must be true or false") != std::string::npos);
}

TEST_CASE("file_output writes CSV and JSON, truncates on open and cuts back with TruncateTo", "[file]") {
  TempDir dir;
  Schema s = BankSchema();
  WriteFile(dir.File("out.csv"), "old content that must go\n");
  auto out = MakeOutputConnector(OutputConfig("out.csv", "csv"), s, Ctx(dir.path()));
  CHECK(ReadFile(dir.File("out.csv")).empty());
  CHECK(out->Describe() == "file_output(out.csv, csv)");

  BatchBuilder bb(s.PhysTypes());
  int64_t t0 = DaysFromCivil(2024, 1, 1) * kMicrosPerDay;
  bb.AppendRow(std::vector<Value>{Value::Int(1), Value::Int(2), Value::Int(30), Value::Int(t0)}, 1);
  bb.AppendRow(std::vector<Value>{Value::Int(3), Value::Null(), Value::Int(-4), Value::Int(t0 + 1500000)}, -2);
  Batch b = bb.Finish();
  out->Write(b, 1);
  const std::string step1 = "1,2,30,2024-01-01 00:00:00,1\n3,,-4,2024-01-01 00:00:01.5,-2\n";
  CHECK(out->Position() == step1.size());
  CHECK(out->records() == 2);
  out->Flush(true);
  CHECK(ReadFile(dir.File("out.csv")) == step1);

  out->Write(b, 2);
  CHECK(out->Position() == 2 * step1.size());
  out->TruncateTo(step1.size());
  CHECK(ReadFile(dir.File("out.csv")) == step1);
  CHECK(out->Position() == step1.size());
  out->Write(b, 2);
  out->Flush(false);
  CHECK(ReadFile(dir.File("out.csv")) == step1 + step1);

  // JSON lines, headers for CSV.
  auto js = MakeOutputConnector(OutputConfig("out.json", "json"), s, Ctx(dir.path()));
  js->Write(b, 1);
  js->Flush(true);
  CHECK(ReadFile(dir.File("out.json")) ==
        "{\"insert\":{\"from_account\":1,\"to_account\":2,\"amount\":30,\"ts\":\"2024-01-01 00:00:00\"}}\n"
        "{\"delete\":{\"from_account\":3,\"to_account\":null,\"amount\":-4,\"ts\":\"2024-01-01 00:00:01.5\"}}\n"
        "{\"delete\":{\"from_account\":3,\"to_account\":null,\"amount\":-4,\"ts\":\"2024-01-01 00:00:01.5\"}}\n");
  auto hd = MakeOutputConnector(OutputConfig("h.csv", "csv", {{"headers", true}}), s, Ctx(dir.path()));
  hd->Flush(false);
  CHECK(ReadFile(dir.File("h.csv")) == "from_account,to_account,amount,ts,weight\n");

  // Resume mode keeps the content and continues at its end.
  auto resumed = MakeFileOutput(OutputConfig("out.csv", "csv")["transport"]["config"],
                                OutputConfig("out.csv", "csv")["format"], s, Ctx(dir.path()), /*truncate=*/false);
  CHECK(resumed->Position() == 2 * step1.size());
  resumed->TruncateTo(step1.size());
  resumed->Write(b, 2);
  resumed->Flush(true);
  CHECK(ReadFile(dir.File("out.csv")) == step1 + step1);

  std::string e = ErrorOf([&] { MakeOutputConnector(OutputConfig("out.csv", "xml"), s, Ctx(dir.path())); });
  CHECK(e.find("xml") != std::string::npos);
  Json bad = OutputConfig("out.csv", "csv");
  bad["transport"]["name"] = "kafka_output";
  e = ErrorOf([&] { MakeOutputConnector(bad, s, Ctx(dir.path())); });
  CHECK(e.find("file_output") != std::string::npos);
}

TEST_CASE("file_output creates its missing folders like mkdir -p, and says which one it cannot create", "[file]") {
  TempDir dir;
  Schema s = BankSchema();
  auto out = MakeOutputConnector(OutputConfig("new/deeper/out.csv", "csv"), s, Ctx(dir.path()));
  CHECK(fs::is_directory(dir.File("new/deeper")));
  BatchBuilder bb(s.PhysTypes());
  bb.AppendRow(std::vector<Value>{Value::Int(1), Value::Int(2), Value::Int(3), Value::Null()}, 1);
  out->Write(bb.Finish(), 1);
  out->Flush(true);
  CHECK(ReadFile(dir.File("new/deeper/out.csv")) == "1,2,3,,1\n");
  // An existing folder is used as it is.
  auto again = MakeOutputConnector(OutputConfig("new/other.csv", "csv"), s, Ctx(dir.path()));
  CHECK(fs::exists(dir.File("new/other.csv")));

  // A path component that is a file: an I/O error naming it, nothing created.
  WriteFile(dir.File("plain"), "x");
  std::string e;
  try {
    MakeOutputConnector(OutputConfig("plain/sub/out.csv", "csv"), s, Ctx(dir.path()));
  } catch (const Error& err) {
    e = err.what();
    CHECK(err.kind() == ErrorKind::kIo);
  }
  CHECK(e.find("bank.yaml:7") != std::string::npos);
  CHECK(e.find("cannot create the folder") != std::string::npos);
  CHECK(e.find("'" + dir.File("plain") + "' is a file, not a folder") != std::string::npos);
  CHECK(ReadFile(dir.File("plain")) == "x");
}

TEST_CASE("validate_only checks connectors but opens, creates, truncates and reads nothing", "[file]") {
  TempDir dir;
  Schema s = BankSchema();
  ConnectorContext ctx = Ctx(dir.path());
  ctx.validate_only = true;

  // Outputs: an existing file is not truncated, a missing folder is not created.
  WriteFile(dir.File("kept.csv"), "old content\n");
  CHECK(MakeOutputConnector(OutputConfig("kept.csv", "csv"), s, ctx) == nullptr);
  CHECK(ReadFile(dir.File("kept.csv")) == "old content\n");
  CHECK(MakeOutputConnector(OutputConfig("later/out.json", "json"), s, ctx) == nullptr);
  CHECK_FALSE(fs::exists(dir.File("later")));
  CHECK(MakeOutputConnector(OutputConfig("-", "csv"), s, ctx) == nullptr);
  // ... but a folder that cannot be created, or a path that is a folder, is an error.
  WriteFile(dir.File("plain"), "x");
  std::string e = ErrorOf([&] { MakeOutputConnector(OutputConfig("plain/out.csv", "csv"), s, ctx); });
  CHECK(e.find("bank.yaml:7: file_output: cannot create the folder") != std::string::npos);
  CHECK(e.find("is a file, not a folder") != std::string::npos);
  fs::create_directory(dir.File("adir"));
  e = ErrorOf([&] { MakeOutputConnector(OutputConfig("adir", "csv"), s, ctx); });
  CHECK(e.find("is a folder, not a file") != std::string::npos);
  // Bad keys and values are found as in a real build.
  e = ErrorOf([&] { MakeOutputConnector(OutputConfig("x.csv", "csv", {{"headers", "yes"}}), s, ctx); });
  CHECK(e.find("bank.yaml:7") != std::string::npos);
  CHECK(e.find("'headers' must be true or false") != std::string::npos);

  // Inputs: a missing file is an error naming it; standard input and an existing file are fine,
  // and nothing is read (a FIFO with no writer would block an open).
  e = ErrorOf([&] { MakeInputConnector(InputConfig("missing.csv", "csv"), s, ctx); });
  CHECK(e.find("bank.yaml:7: file_input: cannot open '" + dir.File("missing.csv") + "'") != std::string::npos);
  CHECK(e.find("No such file") != std::string::npos);
  CHECK(MakeInputConnector(InputConfig("-", "csv"), s, ctx) == nullptr);
  // A folder or a glob over an existing folder is fine; a glob over a missing folder is not.
  fs::create_directory(dir.File("incoming"));
  CHECK(MakeInputConnector(InputConfig("incoming", "csv"), s, ctx) == nullptr);
  CHECK(MakeInputConnector(InputConfig("incoming/*.csv", "csv"), s, ctx) == nullptr);
  e = ErrorOf([&] { MakeInputConnector(InputConfig("nowhere/*.csv", "csv"), s, ctx); });
  CHECK(e.find("bank.yaml:7") != std::string::npos);
  CHECK(e.find("nowhere") != std::string::npos);
  REQUIRE(::mkfifo(dir.File("fifo").c_str(), 0644) == 0);
  CHECK(MakeInputConnector(InputConfig("fifo", "csv"), s, ctx) == nullptr);
  e = ErrorOf([&] { MakeInputConnector(InputConfig("kept.csv", "csv", {{"delimiter", ";;"}}), s, ctx); });
  CHECK(e.find("'delimiter' must be one character") != std::string::npos);
}

TEST_CASE("file_output then file_input round-trips rows through CSV", "[file]") {
  TempDir dir;
  Schema s;
  s.fields = {{"id", SqlType::Of(TypeId::kBigInt)}, {"note", SqlType::Of(TypeId::kVarchar)}};
  BatchBuilder bb(s.PhysTypes());
  std::vector<std::string> notes = {"plain", "with, comma", "with \"quotes\"", " spaced ", "", "multi\nline"};
  for (size_t i = 0; i < notes.size(); ++i) bb.AppendRow(std::vector<Value>{Value::Int(i), Value::String(notes[i])}, 1);
  bb.AppendRow(std::vector<Value>{Value::Int(99), Value::Null()}, 1);
  auto out = MakeOutputConnector(OutputConfig("rt.csv", "csv"), s, Ctx(dir.path()));
  out->Write(bb.Finish(), 1);
  out->Flush(false);

  // The output carries a weight column: read it back with one more column.
  Schema with_weight = s;
  with_weight.fields.push_back({"weight", SqlType::Of(TypeId::kBigInt)});
  auto in = MakeInputConnector(InputConfig("rt.csv", "csv"), with_weight, Ctx(dir.path()));
  Batch b = in->Read();
  REQUIRE(b.size() == notes.size() + 1);
  for (size_t i = 0; i < notes.size(); ++i) {
    CHECK(b.Get(0, i) == Value::Int(i));
    CHECK(b.Get(1, i) == Value::String(notes[i]));
    CHECK(b.Get(2, i) == Value::Int(1));
  }
  CHECK(b.Get(1, notes.size()).IsNull());
}

}  // namespace fld
