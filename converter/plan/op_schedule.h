// SPDX-License-Identifier: Apache-2.0
// Memory-aware op order: among the topological orders of a lowered model's
// ops, the one whose largest sum of live activation bytes at one op (the
// arena's lower bound, see arena_plan.h) is smallest. A value is live from the
// op that writes it (graph inputs: from the start) to its last reader (graph
// outputs: to the end); at an op, its inputs and its outputs are live.
//
// Search: a dynamic program over the sets of ops already run (each state is a
// downward-closed set; its live bytes depend only on the set), one layer per
// op count, each state keeping the smallest peak that reaches it. Chains have
// one state per layer; a residual block or a concat of k branches multiplies
// the states by the branches' lengths. When a layer would exceed
// kScheduleStates (fewer for graphs over kScheduleWork / kScheduleStates ops),
// only the states with the smallest (peak, live bytes) are
// kept (a beam search) and the result is no longer proven minimal; then the
// order that runs every op as late as its consumers allow (depth first from
// the outputs) is tried too, and the smaller peak wins. The file's
// order is kept unless the chosen one has a strictly smaller peak.
// A value written by several ops leaves the file's order as it is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "converter/ir/lowered.h"

namespace floe::conv {

inline constexpr size_t kScheduleStates = 4096;
inline constexpr size_t kScheduleWork = size_t{1} << 16;  // ops x states kept per layer

struct OpSchedule {
  std::vector<int> order;        // indices into model.ops, in the order to run them
  uint64_t file_peak = 0;        // largest live bytes at one op, the model's own order
  uint64_t chosen_peak = 0;      // the same for `order`
  // The same two peaks with each value rounded up to the alignment (what the
  // order is chosen by: the chosen one is never larger).
  uint64_t file_aligned_peak = 0;
  uint64_t chosen_aligned_peak = 0;
  bool exact = false;            // no smaller (aligned) peak exists over all topological orders
  bool reordered = false;        // order differs from the file's
};

// Live-byte peak of running the model's ops in `order` (a permutation of
// their indices that respects data dependencies).
uint64_t order_peak_bytes(const LoweredModel& model, const std::vector<int>& order);
// The same with each value's bytes rounded up to `alignment`.
uint64_t order_aligned_peak_bytes(const LoweredModel& model, const std::vector<int>& order, uint64_t alignment);

// Minimizes the peak with each value's bytes rounded up to `alignment` (the
// slots the planner places them in, so many small values weigh what they
// cost); the peaks reported are of the real sizes, as the arena's lower bound.
OpSchedule schedule_ops(const LoweredModel& model, uint64_t alignment = 16);

// Puts model->ops in `order`.
void apply_op_order(LoweredModel* model, const std::vector<int>& order);

}  // namespace floe::conv
