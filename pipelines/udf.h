// User-defined functions implemented outside SQL: a shared library named by the spec's
// `udf: {library: PATH}` (dlopen'd), exporting `fld_udf_<name>` for each function the program
// declares without a body, with the C ABI of pipelines/examples/udf/fld_udf.h. The library
// stays loaded for the life of the process.
#pragma once

#include <string>

#include "core/circuit/circuit.h"

namespace fld {

// Gives every external function of `circuit` its implementation from `library` (a path; empty:
// none named). Throws fld::Error(kUsage) naming the function when there is no library, the
// library does not load, or it lacks the function's symbol.
void LoadUdfs(const std::string& library, const std::string& spec_path, Circuit* circuit);

}  // namespace fld
