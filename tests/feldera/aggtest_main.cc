// fld_aggtest: runs Feldera's aggregate and order-by tests (runtime_aggtest_extracted.jsonl)
// through fld's incremental engine (see aggtest.h for what one case does).
//
//   fld_aggtest [--verbose] [--filter CLASS_SUBSTRING] [--min-pass-rate PERCENT] CORPORA_DIR_OR_FILE
//
// A directory means <dir>/feldera/runtime_aggtest_extracted.jsonl. Prints `pass P of N (P%),
// skipped S`, then the failures grouped by their first error, largest group first, with one
// example each (--verbose: every failure in full). A corpus that does not exist prints
// `feldera aggtest: skipped: <path> not found` and succeeds (clones without the corpus).
// Exit status: 1 when the pass rate (passed / not skipped) is below --min-pass-rate, else 0.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "tests/feldera/aggtest.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  bool verbose = false;
  std::string filter, path;
  double min_rate = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--verbose") {
      verbose = true;
    } else if (a == "--filter" && i + 1 < argc) {
      filter = argv[++i];
    } else if (a == "--min-pass-rate" && i + 1 < argc) {
      min_rate = std::atof(argv[++i]);
    } else if (!a.empty() && a[0] != '-' && path.empty()) {
      path = a;
    } else {
      std::fprintf(stderr,
                   "usage: fld_aggtest [--verbose] [--filter CLASS_SUBSTRING] [--min-pass-rate PERCENT] "
                   "CORPORA_DIR_OR_FILE\n");
      return 2;
    }
  }
  if (path.empty()) path = ".";
  if (fs::is_directory(path)) path = (fs::path(path) / "feldera" / "runtime_aggtest_extracted.jsonl").string();
  if (!fs::exists(path)) {
    std::printf("feldera aggtest: skipped: %s not found\n", path.c_str());
    return 0;
  }
  std::vector<fld::feldera::CaseResult> results;
  try {
    results = fld::feldera::RunCorpus(path, filter);
  } catch (const fld::Error& e) {
    std::fprintf(stderr, "fld_aggtest: %s\n", e.what());
    return 2;
  }
  size_t passed = 0, skipped = 0;
  std::map<std::string, std::vector<const fld::feldera::CaseResult*>> groups;
  for (const auto& r : results) {
    if (r.skipped) {
      ++skipped;
    } else if (r.passed) {
      ++passed;
    } else {
      groups[r.reason.substr(0, r.reason.find('\n'))].push_back(&r);
      if (verbose) std::printf("FAIL %s: %s\n", r.name.c_str(), r.reason.c_str());
    }
  }
  const size_t ran = results.size() - skipped;
  const double rate = ran == 0 ? 100.0 : 100.0 * static_cast<double>(passed) / static_cast<double>(ran);
  std::vector<std::pair<std::string, std::vector<const fld::feldera::CaseResult*>>> sorted(groups.begin(),
                                                                                           groups.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  if (!sorted.empty()) std::printf("failures by first error:\n");
  for (const auto& [reason, cases] : sorted)
    std::printf("  %4zu  %s   (e.g. %s)\n", cases.size(), reason.c_str(), cases[0]->name.c_str());
  if (skipped > 0) std::printf("skipped %zu: expected rows are empty (not captured by the extraction)\n", skipped);
  std::printf("feldera aggtest: pass %zu of %zu (%.1f%%), skipped %zu\n", passed, ran, rate, skipped);
  if (rate + 1e-9 < min_rate) {
    std::printf("FAILED: pass rate %.1f%% is below the floor of %.1f%%\n", rate, min_rate);
    return 1;
  }
  return 0;
}
