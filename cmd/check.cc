#include <fmt/format.h>

#include <iostream>

#include "cmd/commands.h"
#include "pipelines/pipeline.h"

namespace fld::cmd {

int Check(const CheckOptions& o) {
  Pipeline pipeline(LoadSpec(o.spec), false);
  const Circuit& c = pipeline.circuit();
  for (size_t r = 0; r < c.relations().size(); ++r) {
    const Relation& rel = c.relations()[r];
    std::cout << fmt::format("{} {}{} (", rel.kind == Relation::Kind::kTable ? "table" : "view", rel.name,
                             rel.materialized ? " [materialized]" : "");
    for (size_t i = 0; i < rel.schema.size(); ++i)
      std::cout << (i ? ", " : "") << rel.schema.fields[i].name << " " << rel.schema.fields[i].type.ToString();
    std::cout << ")\n";
    if (rel.kind == Relation::Kind::kView) {
      std::string plan = c.Explain(static_cast<int>(r));
      std::string indented;
      for (size_t p = 0; p < plan.size();) {
        size_t e = plan.find('\n', p);
        indented += "    " + plan.substr(p, e - p + 1);
        p = e == std::string::npos ? plan.size() : e + 1;
      }
      std::cout << indented;
    }
  }
  std::cout << fmt::format("{}: ok\n", o.spec);
  return 0;
}

}  // namespace fld::cmd
