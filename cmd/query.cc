#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "cmd/commands.h"
#include "core/common/error.h"
#include "formats/result_format.h"
#include "pipelines/query.h"

namespace fld::cmd {

int Query(const QueryOptions& o) {
  ResultFormat format;
  if (!ParseResultFormat(o.format, &format)) return 2;
  std::string sql = o.sql;
  if (!o.file.empty()) {
    if (!sql.empty()) Fail(ErrorKind::kUsage, "give the query either as an argument or with -f, not both");
    std::ifstream in(o.file);
    if (!in) Fail(ErrorKind::kUsage, "{}: cannot read the query file", o.file);
    std::stringstream ss;
    ss << in.rdbuf();
    sql = ss.str();
  } else if (sql.empty()) {
    if (isatty(STDIN_FILENO))
      Fail(ErrorKind::kUsage, "no query: give it as an argument, with -f FILE, or on standard input");
    std::stringstream ss;
    ss << std::cin.rdbuf();
    sql = ss.str();
  }
  Pipeline pipeline(LoadSpec(o.spec), false);
  QueryResult r = RunAdHocQuery(pipeline, sql);
  PrintResult(std::cout, r.schema, r.rows, format);
  return 0;
}

}  // namespace fld::cmd
