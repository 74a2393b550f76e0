// SPDX-License-Identifier: Apache-2.0
// Run-time loops in the op order: each WHILE op followed by its condition's
// ops, then its body's (LoweredOp::loop / loop_cond / runs_loop), and what
// that means for the memory plan.
#pragma once

#include <cstdint>
#include <vector>

#include "converter/ir/lowered.h"

namespace floe::conv {

bool has_runtime_loops(const LoweredModel& model);

// Writes each WHILE op's WhileOptions (op ranges, bound) from the tags, after
// the last pass that adds, removes or moves ops. Throws an internal
// ConvertError naming the loop when its ops are not where the tags say.
void assign_loop_ranges(LoweredModel& model);

// Lifetimes (first/last op per value, as arena_plan.cc computes them) grown so
// a loop's ranges can rerun: every operand of a WHILE op, and every value a
// loop's ops touch that exists when the loop starts, stays live from the WHILE
// op to the loop's last op (runtime/core/verify_plan.cc checks the same).
void extend_over_loops(const LoweredModel& model, std::vector<int32_t>* first, std::vector<int32_t>* last);

}  // namespace floe::conv
