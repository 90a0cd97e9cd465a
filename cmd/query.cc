#include <iostream>

#include "cmd/commands.h"
#include "formats/result_format.h"
#include "pipelines/query.h"

namespace fld::cmd {

int Query(const QueryOptions& o) {
  ResultFormat format;
  if (!ParseResultFormat(o.format, &format)) return 2;
  Pipeline pipeline(LoadSpec(o.spec), false);
  QueryResult r = RunAdHocQuery(pipeline, o.sql);
  PrintResult(std::cout, r.schema, r.rows, format);
  return 0;
}

}  // namespace fld::cmd
