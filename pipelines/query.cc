#include "pipelines/query.h"

#include <fmt/format.h>

#include "core/common/error.h"
#include "core/plan/planner.h"
#include "core/sql/parser.h"
#include "wal/store.h"

namespace fld {

QueryResult RunAdHocQuery(const Pipeline& pipeline, const std::string& sql) {
  const std::string dir = pipeline.spec().storage_path + "/state";
  if (!StateStore::Exists(dir))
    Fail(ErrorKind::kUsage, "pipeline '{}' has stored nothing yet at {}; run `fld run {}` first", pipeline.spec().name,
         pipeline.spec().storage_path, pipeline.spec().spec_path);
  auto store = StateStore::Open(dir, true, false);

  sql::SourceInfo src;
  src.name = "query";
  std::unique_ptr<sql::Query> q = sql::ParseQuery(sql, src);

  Circuit adhoc;
  plan::Planner planner(&adhoc, sql, src);
  std::vector<std::pair<int, int>> loads;  // (ad-hoc table, program relation)
  const auto& rels = pipeline.circuit().relations();
  for (size_t r = 0; r < rels.size(); ++r) {
    const Relation& rel = rels[r];
    if (rel.materialized) {
      loads.emplace_back(planner.AddStoredTable(rel.name, rel.schema), static_cast<int>(r));
    } else if (rel.kind == Relation::Kind::kTable) {
      planner.AddUnavailable(rel.name, fmt::format("table '{}' is not materialized, so ad-hoc queries cannot read it; "
                                                   "add WITH ('materialized' = 'true') to its CREATE TABLE",
                                                   rel.name));
    } else {
      planner.AddUnavailable(rel.name, fmt::format("view '{}' is not materialized, so ad-hoc queries cannot read it; "
                                                   "declare it with CREATE MATERIALIZED VIEW {} AS ...",
                                                   rel.name, rel.name));
    }
  }
  QueryResult result;
  int node = planner.PlanQuery(*q, &result.schema);
  for (const auto& [table, r] : loads) {
    std::optional<Batch> contents = store->ReadRelation(rels[r].name, rels[r].schema.PhysTypes());
    if (contents) adhoc.Push(table, std::move(*contents));
  }
  adhoc.Step();
  Batch out = Consolidate(adhoc.NodeOutput(node));
  result.rows = plan::OrderAndLimit(out, result.schema, *q, sql, src);
  return result;
}

}  // namespace fld
