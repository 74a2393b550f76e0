// SPDX-License-Identifier: Apache-2.0
// Arena lifetimes and placement (see arena_plan.h).
#include "converter/plan/arena_plan.h"

#include <algorithm>

#include "converter/ir/error.h"
#include "converter/plan/memory_planner.h"

namespace floe::conv {
namespace {

// Arena lifetimes: a value is live from the op that writes it (or the start,
// for graph inputs) to the last op that reads it (or the end, for outputs).
std::vector<BufferRequest> buffer_requests(const LoweredModel& model,
                                           const std::vector<int>& arena_values) {
  const int32_t end = static_cast<int32_t>(model.ops.size());
  std::vector<int32_t> first(model.values.size(), -1), last(model.values.size(), -1);
  for (int v : model.inputs) first[static_cast<size_t>(v)] = 0;
  for (int32_t i = 0; i < end; ++i) {
    const LoweredOp& op = model.ops[static_cast<size_t>(i)];
    for (int v : op.outputs) {
      if (first[static_cast<size_t>(v)] < 0) first[static_cast<size_t>(v)] = i;
      last[static_cast<size_t>(v)] = std::max(last[static_cast<size_t>(v)], i);
    }
    for (int v : op.inputs) {
      if (v >= 0) last[static_cast<size_t>(v)] = std::max(last[static_cast<size_t>(v)], i);
    }
  }
  for (int v : model.outputs) last[static_cast<size_t>(v)] = end;
  std::vector<BufferRequest> requests;
  for (int v : arena_values) {
    BufferRequest r;
    r.size = model.values[static_cast<size_t>(v)].byte_size();
    r.first_op = std::max(first[static_cast<size_t>(v)], 0);
    r.last_op = std::max(last[static_cast<size_t>(v)], r.first_op);
    requests.push_back(r);
  }
  return requests;
}

}  // namespace

ArenaPlan plan_arena(const LoweredModel& model, uint64_t alignment) {
  std::vector<int> arena_values;  // every non-constant value
  for (size_t v = 0; v < model.values.size(); ++v) {
    if (!model.values[v].is_constant()) arena_values.push_back(static_cast<int>(v));
  }
  const std::vector<BufferRequest> requests = buffer_requests(model, arena_values);
  const MemoryPlan placed = plan_memory(requests, alignment);
  const std::string problem = check_plan(requests, placed, alignment);
  if (!problem.empty()) throw ConvertError("internal error: invalid memory plan: " + problem);

  ArenaPlan plan;
  plan.arena_size = placed.arena_size;
  plan.offsets.assign(model.values.size(), 0);
  plan.live_first.assign(model.values.size(), -1);
  plan.live_last.assign(model.values.size(), -1);
  for (size_t i = 0; i < arena_values.size(); ++i) {
    const size_t v = static_cast<size_t>(arena_values[i]);
    plan.offsets[v] = placed.offsets[i];
    plan.live_first[v] = requests[i].first_op;
    plan.live_last[v] = requests[i].last_op;
    plan.naive_bytes += (requests[i].size + alignment - 1) / alignment * alignment;
  }
  return plan;
}

}  // namespace floe::conv
