// fld check: validates a spec without running it: the YAML, the SQL (each view's plan is printed)
// and every connector's configuration (keys, transports, formats, values, input files that must
// exist, output folders that must exist or be creatable). It opens, creates, truncates and reads
// no data file. Every connector error is reported, each with where it was written; then exit 2.
#include <fmt/format.h>

#include <iostream>

#include "cmd/commands.h"
#include "core/common/error.h"
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
  std::vector<std::string> errors = pipeline.ValidateConnectors();
  if (!errors.empty()) {
    for (size_t i = 0; i + 1 < errors.size(); ++i) std::cerr << "fld: " << errors[i] << "\n";
    // The last one is thrown: main prints it and exits 2.
    Fail(ErrorKind::kUsage, "{}{}", errors.back(),
         errors.size() > 1 ? fmt::format("\n{}: {} connector errors", o.spec, errors.size()) : "");
  }
  std::cout << fmt::format("{}: ok\n", o.spec);
  return 0;
}

}  // namespace fld::cmd
