// fld: run a streaming SQL pipeline (a YAML spec with embedded SQL) as one process.
//
// Exit codes: 0 success; 1 run-time failure (bad data record, arithmetic error); 2 bad command
// line, spec or SQL; 3 storage locked by another process; 4 corruption found in the log or a
// checkpoint; 5 I/O failure (disk full, EIO).
#include <malloc.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cmd/commands.h"
#include "core/common/error.h"
#include "core/common/large_memory.h"

#ifndef FLD_VERSION
#define FLD_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
  CLI::App app{
      "fld: a streaming SQL engine that evaluates views incrementally, as one process.\n"
      "Exit codes: 0 ok, 1 run-time failure, 2 bad command line/spec/SQL, 3 storage locked,\n"
      "4 corruption found, 5 I/O failure."};
  app.set_version_flag("--version", std::string("fld ") + FLD_VERSION);
  app.require_subcommand(1);
  std::string log_level = "info", log_format = "text";
  app.add_option("--log-level", log_level, "Log level: trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_option("--log-format", log_format, "Log format: text or json (timestamps in UTC)")
      ->check(CLI::IsMember({"text", "json"}));

  fld::cmd::RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "Run a pipeline until every input has ended");
  run_cmd->add_option("spec", run.spec, "Pipeline spec (YAML)")->required();
  run_cmd->add_flag("-q,--quiet", run.quiet, "Print no summary");
  run_cmd->add_flag("--reset", run.reset, "Delete the stored state and log first, then start over");

  fld::cmd::StopOptions stop;
  auto* stop_cmd = app.add_subcommand("stop", "Stop a running pipeline gracefully (checkpoint, then exit)");
  stop_cmd->add_option("spec", stop.spec, "Pipeline spec (YAML)")->required();
  stop_cmd->add_option("--timeout", stop.timeout_secs, "Seconds to wait for it to stop");
  fld::cmd::StopOptions ckpt;
  auto* ckpt_cmd = app.add_subcommand("checkpoint", "Make a running pipeline checkpoint now");
  ckpt_cmd->add_option("spec", ckpt.spec, "Pipeline spec (YAML)")->required();

  fld::cmd::ClearOptions clear;
  auto* clear_cmd = app.add_subcommand("clear", "Delete a pipeline's stored state and log (asks first)");
  clear_cmd->add_option("spec", clear.spec, "Pipeline spec (YAML)")->required();
  clear_cmd->add_flag("-y,--yes", clear.yes, "Do not ask");

  fld::cmd::QueryOptions query;
  auto* query_cmd = app.add_subcommand("query", "Run an ad-hoc SELECT over the materialized tables and views");
  query_cmd->add_option("spec", query.spec, "Pipeline spec (YAML)")->required();
  query_cmd->add_option("sql", query.sql, "The SELECT statement (or -f FILE, or standard input)");
  query_cmd->add_option("-f,--file", query.file, "Read the SELECT statement from FILE");
  query_cmd->add_option("--format", query.format, "Output format: table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));

  fld::cmd::StatusOptions status;
  auto* status_cmd = app.add_subcommand("status", "Show what a pipeline is doing or what happened to it");
  status_cmd->add_option("spec", status.spec, "Pipeline spec (YAML)")->required();
  status_cmd->add_flag("--json", status.json, "Print one JSON object");
  status_cmd->add_flag("-w,--watch", status.watch, "Refresh every second in place");

  fld::cmd::CheckOptions check;
  auto* check_cmd = app.add_subcommand("check", "Validate the spec and SQL and print each view's plan");
  check_cmd->add_option("spec", check.spec, "Pipeline spec (YAML)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  // A pipeline runs long and its heap is large: glibc's malloc on huge pages (large_memory.h).
  if (*run_cmd) fld::ReexecWithHugePageHeap(argv);
  // Batches are allocated and freed every step: keep freed memory in the process instead of
  // returning it to the kernel each time (which costs page faults on the next step).
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  spdlog::set_default_logger(spdlog::stderr_color_mt("fld"));
  spdlog::set_level(spdlog::level::from_str(log_level));
  if (log_format == "json")
    spdlog::set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","message":"%v"})",
                        spdlog::pattern_time_type::utc);
  else
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v", spdlog::pattern_time_type::utc);
  try {
    if (*run_cmd) return fld::cmd::Run(run);
    if (*query_cmd) return fld::cmd::Query(query);
    if (*status_cmd) return fld::cmd::Status(status);
    if (*check_cmd) return fld::cmd::Check(check);
    if (*clear_cmd) return fld::cmd::Clear(clear);
    if (*stop_cmd) return fld::cmd::Stop(stop);
    if (*ckpt_cmd) return fld::cmd::CheckpointNow(ckpt);
  } catch (const fld::Error& e) {
    std::cerr << "fld: " << e.what() << "\n";
    return fld::ExitCodeFor(e.kind());
  } catch (const std::exception& e) {
    std::cerr << "fld: internal error: " << e.what() << "\n";
    return 1;
  }
  return 2;
}
