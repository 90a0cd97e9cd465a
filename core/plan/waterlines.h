// The waterlines of a compiled circuit (the rules are in core/circuit/waterline.h): derived for
// every node's columns from the lateness operators, then handed to the operators that discard
// state below them. Run once, after the whole program is planned.
#pragma once

#include <vector>

#include "core/circuit/circuit.h"
#include "core/circuit/waterline.h"

namespace fld::plan {

// Per output column of `node`: its waterline, or an invalid ref.
std::vector<WaterlineRef> NodeWaterlines(const Circuit& c, int node);

// Gives aggregates (a GROUP BY key with a waterline), DISTINCT (a column with one), joins (a key
// column with one on both sides), as-of joins (both match columns with one) and SESSION windows
// (their timestamp column with one) the waterlines below which they discard state.
void AttachWaterlines(Circuit* c);

}  // namespace fld::plan
