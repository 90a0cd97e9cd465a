// An example user-defined function library for fld (see fld_udf.h): re_extract(s, pattern,
// group), as Nexmark q21 declares it: the text of capture group `group` of the first match of
// `pattern` in `s`, NULL when there is no match (or the group did not take part in it).
// Patterns are POSIX extended regular expressions (regcomp with REG_EXTENDED; the C library's
// matcher, several times faster than std::regex on Nexmark's URLs): where alternatives could
// match at the same place, the longest match is taken.
#include <regex.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fld_udf.h"

namespace {

struct Compiled {
  regex_t re;
  bool ok = false;
  std::string error;
  ~Compiled() {
    if (ok) regfree(&re);
  }
};

const Compiled& Compile(const std::string& pattern) {
  thread_local std::map<std::string, std::unique_ptr<Compiled>> cache;
  auto it = cache.find(pattern);
  if (it != cache.end()) return *it->second;
  auto c = std::make_unique<Compiled>();
  int rc = regcomp(&c->re, pattern.c_str(), REG_EXTENDED);
  if (rc == 0) {
    c->ok = true;
  } else {
    char buf[256];
    regerror(rc, &c->re, buf, sizeof buf);
    c->error = "re_extract: invalid pattern '" + pattern + "': " + buf;
  }
  return *cache.emplace(pattern, std::move(c)).first->second;
}

}  // namespace

extern "C" int fld_udf_re_extract(const fld_value* args, int nargs, fld_value* result) {
  thread_local std::string out, subject;
  thread_local std::vector<regmatch_t> groups;
  result->is_null = 1;
  if (nargs != 3) {
    out = "re_extract takes 3 arguments";
    result->s = out.data();
    result->len = out.size();
    return 1;
  }
  if (args[0].is_null || args[1].is_null || args[2].is_null) return 0;
  const Compiled& re = Compile(std::string(args[1].s, args[1].len));
  if (!re.ok) {
    out = re.error;
    result->s = out.data();
    result->len = out.size();
    return 1;
  }
  const int64_t g = args[2].i;
  if (g < 0 || static_cast<size_t>(g) > re.re.re_nsub) return 0;
  subject.assign(args[0].s, args[0].len);  // regexec reads a NUL-terminated string
  groups.resize(static_cast<size_t>(g) + 1);
  if (subject.find('\0') != std::string::npos) return 0;
  if (regexec(&re.re, subject.c_str(), groups.size(), groups.data(), 0) != 0) return 0;
  const regmatch_t& m = groups[static_cast<size_t>(g)];
  if (m.rm_so < 0) return 0;
  out.assign(subject, static_cast<size_t>(m.rm_so), static_cast<size_t>(m.rm_eo - m.rm_so));
  result->is_null = 0;
  result->s = out.data();
  result->len = out.size();
  return 0;
}
