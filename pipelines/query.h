// Ad-hoc queries: a SELECT (with ORDER BY / LIMIT) over the materialized tables and views a
// pipeline has stored. One engine serves both: the stored relations become the input tables of
// a fresh circuit, the query is planned into it, and one step computes the answer.
#pragma once

#include <string>
#include <vector>

#include "core/types/schema.h"
#include "pipelines/pipeline.h"

namespace fld {

struct QueryResult {
  Schema schema;
  std::vector<std::vector<Value>> rows;
};

// Throws fld::Error(kUsage) for bad SQL, a relation that is not materialized (saying how to
// materialize it), or a pipeline that has stored nothing yet.
QueryResult RunAdHocQuery(const Pipeline& pipeline, const std::string& sql);

}  // namespace fld
