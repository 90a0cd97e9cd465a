// fld_slt: runs sqllogictest files through fld's incremental engine.
//
//   fld_slt [--verbose] [--no-failures] [--engine-name fld] [--min-pass-rate FILE_SUBSTRING=PERCENT]...
//           [--line N] [--slowest N] [--past-halt] [--self-test] FILE_OR_DIR...
//
// A directory runs every *.test file under it (recursively, sorted). For each file it prints
// `<file>: pass P, fail F, skip S` (query records) with the top skip and failure reasons, and
// when a `halt` stopped the file for this engine, where (--past-halt runs on past it); the
// last line is `N passed, N failed, N skipped`. A path that does not exist is reported as
// `sqllogictest: skipped: <path> not found` (clones without the corpus), not as an error.
// Exit status: 0 unless a file matched by --min-pass-rate passed fewer than PERCENT of its query
// records (pass / (pass + fail + skip)), with --no-failures any query record failed (a skip is
// not a failure), or the self-test failed.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/common/md5.h"
#include "tests/slt/record.h"
#include "tests/slt/runner.h"

namespace fs = std::filesystem;
using namespace fld::slt;

namespace {

void Usage() {
  std::fprintf(
      stderr,
      "usage: fld_slt [--verbose] [--no-failures] [--engine-name NAME] [--min-pass-rate FILE_SUBSTRING=PERCENT]... "
      "[--line N] [--slowest N] [--past-halt] [--self-test] FILE_OR_DIR...\n");
}

std::vector<std::pair<std::string, int>> TopReasons(const std::map<std::string, int>& m, size_t n) {
  std::vector<std::pair<std::string, int>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (v.size() > n) v.resize(n);
  return v;
}

bool SelfTest() {
  std::string err;
  if (!fld::Md5SelfTest(&err)) {
    std::fprintf(stderr, "self-test failed: %s\n", err.c_str());
    return false;
  }
  using fld::SqlType;
  using fld::TypeId;
  using fld::Value;
  struct Case {
    Value v;
    SqlType t;
    char letter;
    const char* want;
  };
  const Case cases[] = {
      {Value::Null(), SqlType::Of(TypeId::kInteger), 'I', "NULL"},
      {Value::Int(-42), SqlType::Of(TypeId::kInteger), 'I', "-42"},
      {Value::Double(-2.7), SqlType::Of(TypeId::kDouble), 'I', "-2"},
      {Value::Int(1250), SqlType::Decimal(10, 2), 'I', "12"},
      {Value::Int(3), SqlType::Of(TypeId::kInteger), 'R', "3.000"},
      {Value::Double(2.0 / 3), SqlType::Of(TypeId::kDouble), 'R', "0.667"},
      {Value::String(""), SqlType::Of(TypeId::kVarchar), 'T', "(empty)"},
      {Value::String("a\tb\x7f"), SqlType::Of(TypeId::kVarchar), 'T', "a@b@"},
      {Value::Int(7), SqlType::Of(TypeId::kInteger), 'T', "7"},
      {Value::Double(1.0), SqlType::Of(TypeId::kDouble), 'T', "1.0"},
      {Value::String("12abc"), SqlType::Of(TypeId::kVarchar), 'I', "12"},
  };
  for (const auto& c : cases) {
    std::string got = FormatSltValue(c.v, c.t, c.letter);
    if (got != c.want) {
      std::fprintf(stderr, "self-test failed: formatting gave '%s', want '%s'\n", got.c_str(), c.want);
      return false;
    }
  }
  auto recs = ParseRecords(
      "# comment\r\nskipif mysql # why\r\nquery IT rowsort lbl\r\nSELECT 1,\r\n 'x'\r\n----\r\n1\r\nx\r\n\r\n"
      "onlyif sqlite\nstatement ok\nSELECT 1\n\nhalt\n");
  if (recs.size() != 3 || recs[0].types != "IT" || recs[0].sort_mode != "rowsort" || recs[0].label != "lbl" ||
      recs[0].sql != "SELECT 1,\n 'x'" || recs[0].expected != std::vector<std::string>{"1", "x"} ||
      !RunsOn(recs[0], "fld") || RunsOn(recs[1], "fld") || recs[2].kind != Record::Kind::kHalt) {
    std::fprintf(stderr, "self-test failed: record parsing\n");
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options opts;
  std::vector<std::pair<std::string, double>> min_rates;
  std::vector<std::string> paths;
  bool self_test = false;
  int slowest = 0;           // print the N slowest records
  bool no_failures = false;  // exit 1 when any query record fails
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        Usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--verbose" || a == "-v") {
      opts.verbose = true;
    } else if (a == "--past-halt") {
      opts.past_halt = true;
    } else if (a == "--no-failures") {
      no_failures = true;
    } else if (a == "--engine-name") {
      opts.engine = value();
    } else if (a == "--min-pass-rate") {
      std::string v = value();
      size_t eq = v.rfind('=');
      char* end = nullptr;
      double pct = eq == std::string::npos ? -1 : std::strtod(v.c_str() + eq + 1, &end);
      if (eq == std::string::npos || eq == 0 || !end || *end || pct < 0 || pct > 100) {
        std::fprintf(stderr, "fld_slt: --min-pass-rate needs FILE_SUBSTRING=PERCENT, got '%s'\n", v.c_str());
        return 2;
      }
      min_rates.emplace_back(v.substr(0, eq), pct);
    } else if (a == "--line") {
      opts.only_line = std::atoi(value().c_str());
    } else if (a == "--slowest") {
      slowest = std::atoi(value().c_str());
      opts.timing = slowest > 0;
    } else if (a == "--self-test") {
      self_test = true;
    } else if (a == "--help" || a == "-h") {
      Usage();
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "fld_slt: unknown option '%s'\n", a.c_str());
      Usage();
      return 2;
    } else {
      paths.push_back(a);
    }
  }
  // The MD5 and formatting checks are cheap: always run them, so a broken hash can never make
  // every hashed result fail (or pass) silently.
  if (!SelfTest()) return 1;
  if (self_test) {
    std::printf("self-test passed\n");
    if (paths.empty()) return 0;
  }
  if (paths.empty()) {
    Usage();
    return 2;
  }

  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (!fs::exists(p, ec)) {
      std::printf("sqllogictest: skipped: %s not found\n", p.c_str());
      continue;
    }
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::recursive_directory_iterator(p, fs::directory_options::follow_directory_symlink, ec))
        if (e.is_regular_file() && e.path().extension() == ".test") found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(p);
    }
  }

  int total_pass = 0, total_fail = 0, total_skip = 0;
  std::map<std::string, int> all_skips;
  std::vector<FileResult> results;
  bool file_error = false;
  for (const auto& f : files) {
    FileResult r = RunFile(f, opts);
    if (!r.error.empty()) {
      std::printf("%s: error: %s\n", f.c_str(), r.error.c_str());
      file_error = true;
    }
    std::printf("%s: pass %d, fail %d, skip %d\n", f.c_str(), r.pass, r.fail, r.skip);
    if (!r.halted.empty()) std::printf("  %s\n", r.halted.c_str());
    std::printf("  %.2fs; statements: ok %d, fail %d, skip %d\n", r.seconds, r.stmt_ok, r.stmt_fail, r.stmt_skip);
    for (const auto& [reason, n] : TopReasons(r.skip_reasons, 5)) std::printf("  skip %5d  %s\n", n, reason.c_str());
    for (const auto& [reason, n] : TopReasons(r.fail_reasons, 5)) std::printf("  fail %5d  %s\n", n, reason.c_str());
    std::fflush(stdout);
    total_pass += r.pass;
    total_fail += r.fail;
    total_skip += r.skip;
    for (const auto& [reason, n] : r.skip_reasons) all_skips[reason] += n;
    results.push_back(std::move(r));
  }

  int exit_code = file_error ? 1 : 0;
  for (const auto& [substr, pct] : min_rates) {
    bool matched = false;
    for (const auto& r : results) {
      if (r.path.find(substr) == std::string::npos) continue;
      matched = true;
      int total = r.pass + r.fail + r.skip;
      double rate = total ? 100.0 * r.pass / total : 0.0;
      if (rate < pct) {
        std::printf("min-pass-rate: %s passed %.2f%% of %d queries, below the required %.2f%%\n", r.path.c_str(), rate,
                    total, pct);
        exit_code = 1;
      } else {
        std::printf("min-pass-rate: %s passed %.2f%% of %d queries (required %.2f%%)\n", r.path.c_str(), rate, total,
                    pct);
      }
    }
    if (!matched && !files.empty()) std::printf("min-pass-rate: note: no file matched '%s'\n", substr.c_str());
  }
  if (slowest > 0) {
    std::vector<std::tuple<double, std::string, int>> all;
    for (const auto& r : results)
      for (const auto& [sec, line] : r.timings) all.emplace_back(sec, r.path, line);
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
    std::printf("slowest records:\n");
    for (size_t i = 0; i < all.size() && i < static_cast<size_t>(slowest); ++i)
      std::printf("  %8.3fs  %s:%d\n", std::get<0>(all[i]), std::get<1>(all[i]).c_str(), std::get<2>(all[i]));
  }
  if (!all_skips.empty()) {
    std::printf("top skip reasons:\n");
    for (const auto& [reason, n] : TopReasons(all_skips, 10)) std::printf("  %5d  %s\n", n, reason.c_str());
  }
  std::printf("%d passed, %d failed, %d skipped\n", total_pass, total_fail, total_skip);
  if (no_failures && total_fail > 0) {
    std::printf("--no-failures: %d quer%s gave a wrong result or an unexpected error\n", total_fail,
                total_fail == 1 ? "y" : "ies");
    return 1;
  }
  return exit_code;
}
