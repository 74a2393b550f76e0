// SPDX-License-Identifier: Apache-2.0
// Greedy-by-size arena planner and its independent checker (see the header for
// the algorithm). Invariant the planner relies on: every placed buffer occupies
// [offset, offset + round_up(size)), with offset aligned, so every candidate
// offset the gap scan produces is aligned too.
#include "converter/plan/memory_planner.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <sstream>

#include "converter/ir/error.h"

namespace floe::conv {
namespace {

constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();

// Rounds `value` up to a multiple of `alignment` (> 0). Returns false instead
// of wrapping around when the result does not fit in 64 bits.
bool round_up_checked(uint64_t value, uint64_t alignment, uint64_t* rounded) {
  const uint64_t remainder = value % alignment;
  if (remainder == 0) {
    *rounded = value;
    return true;
  }
  const uint64_t padding = alignment - remainder;
  if (value > kMaxU64 - padding) return false;
  *rounded = value + padding;
  return true;
}

bool lifetimes_intersect(const BufferRequest& a, const BufferRequest& b) {
  return a.first_op <= b.last_op && b.first_op <= a.last_op;
}

std::string describe(size_t index, const BufferRequest& r) {
  std::ostringstream out;
  out << "buffer " << index << " (size " << r.size << ", ops [" << r.first_op << ", " << r.last_op
      << "])";
  return out.str();
}

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, uint64_t alignment) {
  if (alignment == 0) throw ConvertError("memory planner: alignment must be > 0");

  const size_t count = requests.size();
  std::vector<uint64_t> occupied_size(count);  // size rounded up to alignment
  for (size_t i = 0; i < count; ++i) {
    const BufferRequest& r = requests[i];
    if (r.last_op < r.first_op)
      throw ConvertError("memory planner: " + describe(i, r) + " ends before it starts");
    if (!round_up_checked(r.size, alignment, &occupied_size[i]))
      throw ConvertError("memory planner: " + describe(i, r) + " overflows 64 bits when aligned");
  }

  // Largest first: big buffers are the hardest to fit, so they get first pick
  // of low offsets; smaller ones then fill the holes between them.
  std::vector<size_t> placement_order;
  placement_order.reserve(count);
  for (size_t i = 0; i < count; ++i)
    if (requests[i].size > 0) placement_order.push_back(i);
  std::sort(placement_order.begin(), placement_order.end(), [&](size_t a, size_t b) {
    if (requests[a].size != requests[b].size) return requests[a].size > requests[b].size;
    if (requests[a].first_op != requests[b].first_op)
      return requests[a].first_op < requests[b].first_op;
    return a < b;
  });

  MemoryPlan plan;
  plan.offsets.assign(count, 0);  // zero-size buffers keep offset 0
  // Placed buffers sorted by offset, so one forward scan finds the lowest gap.
  std::vector<size_t> placed_by_offset;
  placed_by_offset.reserve(placement_order.size());

  for (size_t index : placement_order) {
    const BufferRequest& request = requests[index];
    const uint64_t need = occupied_size[index];
    uint64_t candidate = 0;
    for (size_t other : placed_by_offset) {
      if (!lifetimes_intersect(request, requests[other])) continue;
      const uint64_t other_begin = plan.offsets[other];
      // other_end cannot overflow: it was checked when `other` was placed.
      const uint64_t other_end = other_begin + occupied_size[other];
      // Everything before `candidate` is taken; the scan is in offset order, so
      // if [candidate, candidate + need) ends before `other` starts, it is free.
      if (candidate <= kMaxU64 - need && candidate + need <= other_begin) break;
      candidate = std::max(candidate, other_end);
    }
    if (candidate > kMaxU64 - need)
      throw ConvertError("memory planner: arena exceeds 64 bits placing " + describe(index, request));
    plan.offsets[index] = candidate;
    plan.arena_size = std::max(plan.arena_size, candidate + need);

    const auto insert_at = std::upper_bound(
        placed_by_offset.begin(), placed_by_offset.end(), candidate,
        [&](uint64_t offset, size_t placed) { return offset < plan.offsets[placed]; });
    placed_by_offset.insert(insert_at, index);
  }
  return plan;
}

std::string check_plan(const std::vector<BufferRequest>& requests, const MemoryPlan& plan,
                       uint64_t alignment) {
  std::ostringstream why;
  if (alignment == 0) return "alignment must be > 0";
  if (plan.offsets.size() != requests.size()) {
    why << "plan has " << plan.offsets.size() << " offsets for " << requests.size() << " buffers";
    return why.str();
  }

  uint64_t high_water = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    const BufferRequest& r = requests[i];
    const uint64_t offset = plan.offsets[i];
    if (r.last_op < r.first_op) return describe(i, r) + " ends before it starts";
    if (offset % alignment != 0) {
      why << describe(i, r) << " at offset " << offset << " is not a multiple of " << alignment;
      return why.str();
    }
    if (offset > kMaxU64 - r.size) {
      why << describe(i, r) << " at offset " << offset << " overflows 64 bits";
      return why.str();
    }
    if (r.size > 0) high_water = std::max(high_water, offset + r.size);
  }

  // Plain pairwise check: slow (O(n^2)) but obviously right, which is the point
  // of a checker.
  for (size_t i = 0; i < requests.size(); ++i) {
    const BufferRequest& a = requests[i];
    if (a.size == 0) continue;
    for (size_t j = i + 1; j < requests.size(); ++j) {
      const BufferRequest& b = requests[j];
      // Closed intervals [first_op, last_op] share an op unless one ends
      // before the other starts (written out here, not shared with the planner).
      const bool live_together = !(a.last_op < b.first_op || b.last_op < a.first_op);
      if (b.size == 0 || !live_together) continue;
      const uint64_t a_begin = plan.offsets[i], a_end = a_begin + a.size;
      const uint64_t b_begin = plan.offsets[j], b_end = b_begin + b.size;
      if (a_begin < b_end && b_begin < a_end) {
        why << describe(i, a) << " at [" << a_begin << ", " << a_end << ") overlaps "
            << describe(j, b) << " at [" << b_begin << ", " << b_end
            << ") while both are live";
        return why.str();
      }
    }
  }

  // Round up by quotient rather than by padding, again independently of the
  // planner: ceil(high_water / alignment) * alignment, checking the product.
  const uint64_t blocks = high_water / alignment + (high_water % alignment != 0 ? 1 : 0);
  if (blocks > kMaxU64 / alignment) {
    why << "high-water mark " << high_water << " overflows 64 bits when aligned";
    return why.str();
  }
  const uint64_t expected_arena = blocks * alignment;
  if (plan.arena_size != expected_arena) {
    why << "arena_size is " << plan.arena_size << " but the high-water mark " << high_water
        << " rounded up to " << alignment << " is " << expected_arena;
    return why.str();
  }
  return "";
}

}  // namespace floe::conv
