// fld's subcommands. Each Run* function receives parsed options and returns the exit code;
// errors are thrown as fld::Error and mapped to exit codes in main.cc.
#pragma once

#include <string>

namespace fld::cmd {

struct RunOptions {
  std::string spec;
  bool quiet = false;
  bool reset = false;
};
// On success it ends the process itself (exit code 0) without freeing the operators' state.
int Run(const RunOptions& o);

struct StopOptions {
  std::string spec;
  int timeout_secs = 60;
};
int Stop(const StopOptions& o);  // graceful: checkpoint and exit
int CheckpointNow(const StopOptions& o);

struct ClearOptions {
  std::string spec;
  bool yes = false;
};
int Clear(const ClearOptions& o);

struct QueryOptions {
  std::string spec;
  std::string sql;
  std::string file;
  std::string format = "table";
};
int Query(const QueryOptions& o);

struct StatusOptions {
  std::string spec;
  bool json = false;
  bool watch = false;
};
// Returns the state's exit code: 0 RUNNING/COMPLETED, 1 FAILED, 3 NEW, 6 UNAVAILABLE, 7 SUSPENDED
// (4 corrupt and 5 I/O come as fld::Error).
int Status(const StatusOptions& o);

struct CheckOptions {
  std::string spec;
};
int Check(const CheckOptions& o);

}  // namespace fld::cmd
