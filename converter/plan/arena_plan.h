// SPDX-License-Identifier: Apache-2.0
// The arena plan of a lowered model: each non-constant value's lifetime from
// the op order (written by the first op that outputs it, or live from the
// start for graph inputs; read until its last use, or the end for graph
// outputs), placed by plan_memory() and proven by check_plan().
#pragma once

#include <cstdint>
#include <vector>

#include "converter/ir/lowered.h"

namespace floe::conv {

struct ArenaPlan {
  uint64_t arena_size = 0;           // planned activation bytes
  uint64_t naive_bytes = 0;          // without reuse (each value its own aligned slot), for reports
  std::vector<uint64_t> offsets;     // per value; 0 for constants
  std::vector<int32_t> live_first;   // per value: first/last op it must survive; -1 for constants
  std::vector<int32_t> live_last;
};

// Throws ConvertError("internal error: ...") if the plan fails its check.
ArenaPlan plan_arena(const LoweredModel& model, uint64_t alignment);

}  // namespace floe::conv
