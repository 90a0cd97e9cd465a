// What a join's consumers read, pushed into the join (a pass over a compiled circuit, run once
// after the whole program is planned; see JoinOp's setters in core/operators/join.h):
//   - the output columns that no consumer reads are not stored in the join's traces (a NULL
//     takes their place), so a join whose view keeps few of its inputs' columns holds and copies
//     only those (Nexmark q4 keeps 7 of 17);
//   - an inner join whose rows all go through filters (WHERE after `a JOIN b ON ...`) before
//     anything else reads them: the conjuncts over one side's columns alone drop that side's
//     failing rows on entry, before they are stored or matched (Nexmark q20's
//     A.category = 10). The filters still apply afterwards.
//   - an inner join side whose input is an aggregate grouped by exactly that side's join key
//     columns reads the aggregate's groups instead of keeping a trace of its own (JoinOp::
//     ReadSideFrom): the bank's balances join credits and debits per account, so each account's
//     sums are held once instead of once per operator.
// A join that is a relation's own node, or is read by anything but a filter/map, keeps every
// column. None of these changes alters any row a consumer reads.
#pragma once

#include "core/circuit/circuit.h"

namespace fld::plan {

void PushIntoJoins(Circuit* c);

}  // namespace fld::plan
