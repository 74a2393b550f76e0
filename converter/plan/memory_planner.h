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
};                        // live over the closed interval [first_op, last_op]

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // one per request, each a multiple of `alignment`
  uint64_t arena_size = 0;        // max(offset + size) rounded up to `alignment`; 0 if nothing occupies bytes
};

// Greedy-by-size placement (the same idea as TFLite Micro's greedy planner):
//   1. Order buffers by size, largest first; ties by earlier first_op, then by
//      request index, so the plan is a pure function of the input.
//   2. Place each buffer at the lowest offset that is a multiple of `alignment`
//      and does not overlap any already-placed buffer whose lifetime intersects
//      its own. Buffers occupy their size rounded up to `alignment`, so every
//      gap start, and therefore every offset, stays aligned.
// Zero-size buffers get offset 0 and occupy nothing.
//
// This is a heuristic, not an optimum: minimal arena placement is NP-hard (it is
// dynamic storage allocation), and greedy can exceed both the optimum and the
// lower bound max_t(sum of sizes live at t). Example, the chain
// a(112) -> b(16) -> c(64) -> d(112): greedy puts a and d at 0, c above d, b
// above c: 192 bytes, where c at 0, d at 64, b at 112 needs only 176.
// Cost: O(n^2) time (each placement scans the placed buffers once, kept sorted
// by offset), O(n) memory.
//
// Throws ConvertError when alignment is 0, a request has last_op < first_op, or
// the arena would not fit in 64 bits.
MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, uint64_t alignment = 16);

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
