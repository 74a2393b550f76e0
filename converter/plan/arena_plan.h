// SPDX-License-Identifier: Apache-2.0
// The arena plan of a lowered model: each non-constant value's lifetime from
// the op order (written by the first op that outputs it, or live from the
// start for graph inputs; read until its last use, or the end for graph
// outputs), placed by plan_memory() and proven by check_plan().
//
// Zero-copy reshapes: the output of a SAME_BYTES op (runtime/ops.def: its
// output is its input's bytes under a new shape) shares its input's bytes when
// the input dies at that op (no later reader, not a graph output). Such values
// form one alias group, planned as one buffer over the union of their
// lifetimes; each keeps its own lifetime in the model, and the runtime's plan
// check (runtime/core/verify_plan.h) accepts exactly these overlaps.
#pragma once

#include <cstdint>
#include <vector>

#include "converter/ir/lowered.h"

namespace floe::conv {

struct ArenaPlan {
  uint64_t arena_size = 0;           // planned activation bytes
  uint64_t naive_bytes = 0;          // without reuse (each value its own aligned slot), for reports
  // Largest sum of the bytes of the values live at one op of the model's order
  // (each value counted, aliased or not, sizes unrounded): no plan without
  // aliases can go under it.
  uint64_t lower_bound = 0;
  int aliased_values = 0;            // outputs sharing their input's bytes
  bool optimal = false;              // at the (aligned, alias-aware) bound, or proven by exhaustive search
  std::vector<uint64_t> offsets;     // per value; 0 for constants
  std::vector<int32_t> live_first;   // per value: first/last op it must survive; -1 for constants
  std::vector<int32_t> live_last;
};

// Throws ConvertError("internal error: ...") if the plan fails its check.
ArenaPlan plan_arena(const LoweredModel& model, uint64_t alignment);


}  // namespace floe::conv
