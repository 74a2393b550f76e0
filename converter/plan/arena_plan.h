// SPDX-License-Identifier: Apache-2.0
// The arena plan of a lowered model: each non-constant value's lifetime from
// the op order (written by the first op that outputs it, or live from the
// start for graph inputs; read until its last use, or the end for graph
// outputs), placed by plan_memory() and proven by check_plan().
//
// Zero-copy reshapes: the output of a SAME_BYTES op (schemas/contract/ops.def: its
// output is its input's bytes under a new shape) shares its input's bytes when
// the input dies at that op (no later reader, not a graph output). Such values
// form one alias group, planned as one buffer over the union of their
// lifetimes; each keeps its own lifetime in the model, and the runtime's plan
// check (runtime/core/verify_plan.h) accepts exactly these overlaps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter/ir/lowered.h"
#include "converter/plan/memory_planner.h"

namespace floe::conv {

// Memory regions (floe-convert --memory-regions NAME=SIZE,...), fastest
// first. The last region holds what the faster ones do not, plus `reserve`
// bytes after its activations (XNNPACK's region and the prepared ops'
// persistent region; they are read once per op, activations per element).
struct MemoryRegion {
  std::string name;
  uint64_t capacity = 0;  // bytes
};
struct RegionRequest {
  std::vector<MemoryRegion> regions;  // empty: one arena, no capacity
  uint64_t reserve = 0;
  // Bytes every region but the last keeps after its activations, counted in
  // its size (XNNPACK reads up to 16 bytes past an operand).
  uint64_t tail = 0;
};

struct ArenaPlan {
  uint64_t arena_size = 0;           // planned activation bytes (of every region together)
  uint64_t naive_bytes = 0;          // without reuse (each value its own aligned slot), for reports
  // Largest sum of the bytes of the values live at one op of the model's order
  // (each value counted, aliased or not, sizes unrounded): no plan without
  // aliases can go under it.
  uint64_t lower_bound = 0;
  int aliased_values = 0;            // outputs sharing their input's bytes
  bool optimal = false;              // at the (aligned, alias-aware) bound, or proven by exhaustive search
  std::vector<uint64_t> offsets;     // per value; 0 for constants
  std::vector<int32_t> live_first;   // per value: first/last op it must survive; -1 for constants and variables
  std::vector<int32_t> live_last;
  // With memory regions: each region's planned activation bytes, each value's
  // region (its offset counts from that region's start; 0 for constants), and
  // the bytes of the hottest values the faster regions hold.
  std::vector<uint64_t> region_sizes;
  std::vector<uint8_t> region;
};

// With regions, values are ranked by accesses per byte: every op that reads
// or writes a value adds the bytes of all its operands (its work, weights
// included) to that value's heat, divided by the value's own size. Each
// region but the last takes, hottest first, every value that still fits at
// its lowest free offset ("first fit"), then is re-planned by plan_memory()
// if that is tighter; the last region takes the rest, planned by
// plan_memory(). Each region's plan is proven by check_plan().
// Throws ConvertError naming the region, its size, the bytes it needs and the
// shortfall when the last region (or a single given one) cannot hold its part
// plus the reserve, and ConvertError("internal error: ...") if a plan fails
// its check.
//
// element_slots (one region only): values of 1- and 2-byte dtypes that only
// reference kernels without a Cortex-M variant read or write (they index them
// as arrays of their element type) are placed at multiples of their element
// size instead of `alignment`, and the arena ends at the last real byte; the
// rest keeps `alignment`. Model::Load accepts exactly these offsets.
ArenaPlan plan_arena(const LoweredModel& model, uint64_t alignment, const RegionRequest& regions = {},
                     bool element_slots = false, PlanEffort effort = PlanEffort::kFull);

// The plan the converter writes: `alignment`-byte slots; with one region,
// when that is above the floor, finer slots too — `finer_alignment`, then
// element slots — taken when one meets the floor, or when the first plan is
// over 2 % above it and the finer one is smaller (on a graph of a few
// scalars, 16-byte slots are several times its live bytes).
ArenaPlan plan_model_arena(const LoweredModel& model, uint64_t alignment, uint64_t finer_alignment,
                           const RegionRequest& regions = {}, PlanEffort effort = PlanEffort::kFull);


}  // namespace floe::conv
