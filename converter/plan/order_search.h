// SPDX-License-Identifier: Apache-2.0
// Op order and arena placement searched together. schedule_ops() picks the
// order with the smallest live-bytes peak, but placing that order's buffers
// may be stuck above its floor (fragmentation: on unrolled RNN cells of a
// hundred 12-80 byte buffers, no placement of that order reaches it). Another
// order, even one with a higher floor, may place at its floor and give a
// smaller arena. So, for graphs of up to kOrderSearchMaxOps ops whose planned
// arena is above its floor, a seeded walk over the topological orders moves
// one op at a time to another place its producers and consumers allow, plans
// each order quickly (PlanEffort::kPortfolio) and keeps moves that give no
// larger arena (and, at equal arena, no larger arena/floor ratio). The best
// order is then planned in full and taken only when its arena is smaller than
// the starting order's, or equal with a higher floor (a smaller ratio).
// The result is a pure function of the model: a fixed seed and a fixed number
// of orders tried, no clock.
#pragma once

#include <cstdint>
#include <vector>

#include "converter/ir/lowered.h"

namespace floe::conv {

inline constexpr size_t kOrderSearchMaxOps = 400;
inline constexpr int kOrderSearchOrders = 1000;  // quick plans per model

struct OrderSearch {
  std::vector<int> order;      // indices into model.ops (the identity when nothing better was found)
  bool reordered = false;      // order differs from the model's
  uint64_t start_arena = 0;    // the model's order, planned in full (0: not searched)
  uint64_t start_floor = 0;
  uint64_t arena = 0;          // the chosen order, planned in full
  uint64_t floor = 0;
  int orders_tried = 0;
};

// `alignment` and `finer_alignment` as plan_model_arena() (one region).
OrderSearch search_order_for_arena(const LoweredModel& model, uint64_t alignment, uint64_t finer_alignment);

}  // namespace floe::conv
