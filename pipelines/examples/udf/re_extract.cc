// An example user-defined function library for fld (see fld_udf.h): re_extract(s, pattern,
// group), as Nexmark q21 declares it: the text of capture group `group` of the first match of
// `pattern` in `s`, NULL when there is no match (or the group did not take part in it).
#include <map>
#include <memory>
#include <regex>
#include <string>

#include "fld_udf.h"

namespace {

const std::regex* Compiled(const std::string& pattern, std::string* error) {
  thread_local std::map<std::string, std::unique_ptr<std::regex>> cache;
  auto it = cache.find(pattern);
  if (it != cache.end()) return it->second.get();
  try {
    return cache.emplace(pattern, std::make_unique<std::regex>(pattern)).first->second.get();
  } catch (const std::regex_error& e) {
    *error = "re_extract: invalid pattern '" + pattern + "': " + e.what();
    return nullptr;
  }
}

}  // namespace

extern "C" int fld_udf_re_extract(const fld_value* args, int nargs, fld_value* result) {
  thread_local std::string out;
  result->is_null = 1;
  if (nargs != 3) {
    out = "re_extract takes 3 arguments";
    result->s = out.data();
    result->len = out.size();
    return 1;
  }
  if (args[0].is_null || args[1].is_null || args[2].is_null) return 0;
  std::string error;
  const std::regex* re = Compiled(std::string(args[1].s, args[1].len), &error);
  if (!re) {
    out = error;
    result->s = out.data();
    result->len = out.size();
    return 1;
  }
  std::match_results<const char*> m;
  if (!std::regex_search(args[0].s, args[0].s + args[0].len, m, *re)) return 0;
  const int64_t g = args[2].i;
  if (g < 0 || static_cast<size_t>(g) >= m.size() || !m[g].matched) return 0;
  out = m[g].str();
  result->is_null = 0;
  result->s = out.data();
  result->len = out.size();
  return 0;
}
