// SPDX-License-Identifier: Apache-2.0
// The arena memory planner: given each buffer's size and lifetime (in op
// indices), assigns byte offsets in one arena so that buffers alive at the same
// time never share bytes. Relies on lifetimes being closed intervals
// [first_op, last_op] and on the runtime placing the arena at an address that is
// itself a multiple of `alignment` (so aligned offsets give aligned pointers).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace floe::conv {

struct BufferRequest {
  uint64_t size = 0;     // bytes (0 allowed: gets offset 0, occupies nothing)
  int32_t first_op = 0;  // op that writes it; graph inputs use 0 or -1 ("before op 0")
  int32_t last_op = 0;   // last op that reads it; graph outputs use the op count
                          // live over the closed interval [first_op, last_op]
  // What its offset must be a multiple of; 0: the plan's alignment. A value
  // whose kernels read it element by element needs only its element size.
  uint64_t alignment = 0;
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // one per request, each a multiple of its alignment
  uint64_t arena_size = 0;        // max(offset + size) rounded up to `alignment`; 0 if nothing occupies bytes
};

// The floor no plan can go under: the largest sum, over the ops, of the bytes
// of the buffers live at that op, each size rounded up to `alignment` (every
// buffer occupies an aligned slot). alignment 1 gives the raw byte bound.
uint64_t live_bytes_lower_bound(const std::vector<BufferRequest>& requests, uint64_t alignment = 16);

// How plan_memory() got its plan, for reports and tests.
struct PlanSearch {
  uint64_t lower_bound = 0;   // the live-bytes bound, sizes rounded up to the finest alignment
  bool at_lower_bound = false;
  bool exhaustive = false;    // every placement order was tried: the plan is optimal
  int orders_tried = 0;       // placements evaluated
};

// Placement is dynamic storage allocation (NP-hard in general), so the planner
// aims at the lower bound and stops as soon as it reaches it:
//   1. A portfolio of orders — largest first (TFLite Micro's greedy),
//      largest peak-step first (the tensors of the busiest op packed together),
//      longest-lived first, earliest first, largest size x lifetime first,
//      largest neighbourhood first — each with first fit, best fit (the
//      smallest hole that holds it) and two-sided fit (under the bound, at the
//      bottom or the top, opposite to the latest-starting buffer it meets: on a
//      chain the buffers alternate between the ends, which always meets the
//      bound), and the best is kept.
//   2. If that is above the bound and there are at most kExactSearchMaxBuffers
//      buffers: every order of the buffers, placed one by one each at the
//      lowest offset (a multiple of its alignment) free of the already placed
//      buffers it is live with ("first fit"), can be tried: some order gives an
//      optimal plan (place in the order of an optimal plan's offsets: by
//      induction each buffer lands at or below its optimal offset). A branch
//      and bound searches them depth first, pruned at the best arena found,
//      each set of orders that differ only by swapping neighbours never live
//      together searched once; if it finishes within kExactSearchWork, the
//      plan is optimal.
//   3. Otherwise, if still above the bound, a seeded local search perturbs the best
//      order (moves a buffer that sets the high-water mark earlier, or swaps
//      two) and keeps changes that do not grow the arena (early on, up to 1 %
//      growth, decaying to none, to leave local minima), until the bound, a
//      long run without gain, or a work budget.
// Each buffer's offset is a multiple of its own alignment (the request's, or
// `alignment`); sizes are rounded up to the greatest common divisor of those
// alignments (which loses nothing: every offset is a multiple of it), and the
// arena is the real bytes' high-water mark rounded up to `alignment`.
// Zero-size buffers get offset 0 and occupy nothing. The result is a
// pure function of the input (fixed seed, stable tie breaks).
// Cost: O(n * conflicts) per placement; a budget of placements bounds the search.
//
// Throws ConvertError when alignment is 0, a request has last_op < first_op, or
// the arena would not fit in 64 bits.
//
// PlanEffort::kPortfolio stops after stage 1: a quick plan for comparing many
// op orders (the full search only ever makes its arena smaller).
enum class PlanEffort { kFull, kPortfolio };
MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, uint64_t alignment = 16,
                       PlanSearch* search = nullptr, PlanEffort effort = PlanEffort::kFull);

// The exact search: graphs of up to kExactSearchMaxBuffers buffers, stopped
// after kExactSearchWork conflict visits (some tens of milliseconds).
inline constexpr size_t kExactSearchMaxBuffers = 24;
inline constexpr uint64_t kExactSearchWork = uint64_t{4} << 20;

// Independent checker, used by tests and by the converter as a final assertion.
// It shares no placement, overlap or rounding code with the planner. Returns ""
// when the plan is valid, else a description of the first violation, checked in
// this order: bad alignment argument, offset count, per-buffer problems
// (lifetime, misaligned offset, offset + size overflow) in request order,
// overlapping bytes of two simultaneously live buffers (pairs (i, j), i < j, in
// lexicographic order), and finally arena_size != max(offset + size) rounded up
// to `alignment`. Overlap is judged on the real sizes, not the rounded ones.
std::string check_plan(const std::vector<BufferRequest>& requests, const MemoryPlan& plan,
                       uint64_t alignment = 16);

}  // namespace floe::conv
