// SPDX-License-Identifier: Apache-2.0
// Run-time ifs in the op order: each IF op followed by its then branch's ops,
// then its else branch's (LoweredOp::if_id / if_then / runs_if, grouped by
// lower/lower_graph.cc; a nested IF and its branches sit inside the branch its
// IF op belongs to).
//
// The memory plan needs nothing more: Invoke runs a subsequence of the op
// order (one branch skipped), and a lifetime in the full order covers every op
// that runs between a value's write and its last read, so no value is
// overwritten while it is needed. A branch's values die before the other
// branch's ops start, so the two branches share arena bytes for free. The
// cond's results are written by a copy at the end of each branch; their
// lifetime starts at the then branch's copy and spans the else ops.
#pragma once

#include <vector>

#include "converter/ir/lowered.h"

namespace floe::conv {

bool has_runtime_ifs(const LoweredModel& model);

// Writes each IF op's IfOptions (op ranges) from the tags, after the last pass
// that adds, removes or moves ops. Throws an internal ConvertError naming the
// if when its ops are not where the tags say.
void assign_if_ranges(LoweredModel& model);

}  // namespace floe::conv
