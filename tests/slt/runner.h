// Runs one sqllogictest file through fld and tallies the results.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/types/types.h"

namespace fld::slt {

struct Options {
  std::string engine = "fld";  // the name `skipif` / `onlyif` compare against
  bool verbose = false;        // print SQL, expected and actual of every failure
  int only_line = 0;           // run only the query/statement at this line (debugging); 0 = all
  bool timing = false;         // record each record's run time in FileResult::timings
  // Run on past a `halt` the file applies to this engine (such files are meant for other
  // engines only, e.g. `skipif sqlite` + `halt` before SQLite-only records).
  bool past_halt = false;
};

struct FileResult {
  std::string path;
  // query records
  int pass = 0, fail = 0, skip = 0;
  // statement records
  int stmt_ok = 0, stmt_fail = 0, stmt_skip = 0;
  std::map<std::string, int> skip_reasons;
  std::map<std::string, int> fail_reasons;
  double seconds = 0;
  std::vector<std::pair<double, int>> timings;  // (seconds, line) per record, when Options::timing
  std::string error;                            // the file itself could not be read or parsed
  // A `halt` stopped the file for this engine (not with Options::past_halt): what it said, e.g.
  // "halted by the file for engines other than sqlite at line 25 (86 query records not run)".
  std::string halted;
};

// Runs every record of the file; failures are printed as they happen when opts.verbose.
FileResult RunFile(const std::string& path, const Options& opts);

// A result value as the reference sqllogictest runner prints it for a column of type letter
// `letter` (I, R or T). Exposed for the self-test.
std::string FormatSltValue(const Value& v, const SqlType& type, char letter);

}  // namespace fld::slt
