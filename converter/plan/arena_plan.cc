// SPDX-License-Identifier: Apache-2.0
// Arena lifetimes, alias groups and placement (see arena_plan.h).
#include "converter/plan/arena_plan.h"

#include <algorithm>
#include <numeric>

#include "converter/ir/error.h"
#include "converter/plan/memory_planner.h"

namespace floe::conv {
namespace {

// Arena lifetimes: a value is live from the op that writes it (or the start,
// for graph inputs) to the last op that reads it (or the end, for outputs).
struct Lifetimes {
  std::vector<int32_t> first, last;  // per value; -1 when never written or read
};

Lifetimes lifetimes(const LoweredModel& model) {
  const int32_t end = static_cast<int32_t>(model.ops.size());
  Lifetimes t;
  t.first.assign(model.values.size(), -1);
  t.last.assign(model.values.size(), -1);
  for (int v : model.inputs) t.first[static_cast<size_t>(v)] = 0;
  for (int32_t i = 0; i < end; ++i) {
    const LoweredOp& op = model.ops[static_cast<size_t>(i)];
    for (int v : op.outputs) {
      if (t.first[static_cast<size_t>(v)] < 0) t.first[static_cast<size_t>(v)] = i;
      t.last[static_cast<size_t>(v)] = std::max(t.last[static_cast<size_t>(v)], i);
    }
    for (int v : op.inputs) {
      if (v >= 0) t.last[static_cast<size_t>(v)] = std::max(t.last[static_cast<size_t>(v)], i);
    }
  }
  for (int v : model.outputs) t.last[static_cast<size_t>(v)] = end;
  for (size_t v = 0; v < model.values.size(); ++v) {
    t.first[v] = std::max(t.first[v], 0);
    t.last[v] = std::max(t.last[v], t.first[v]);
  }
  return t;
}

// Union-find root with path halving.
int root_of(std::vector<int>& parent, int v) {
  while (parent[static_cast<size_t>(v)] != v) {
    parent[static_cast<size_t>(v)] = parent[static_cast<size_t>(parent[static_cast<size_t>(v)])];
    v = parent[static_cast<size_t>(v)];
  }
  return v;
}

// Joins each SAME_BYTES op's output to its input when the input's last use is
// that op (the rule runtime/core/verify_plan.cc accepts); returns how many.
int join_aliases(const LoweredModel& model, const Lifetimes& t, std::vector<int>* parent) {
  std::vector<bool> graph_input(model.values.size(), false), graph_output(model.values.size(), false);
  for (int v : model.inputs) graph_input[static_cast<size_t>(v)] = true;
  for (int v : model.outputs) graph_output[static_cast<size_t>(v)] = true;
  int joined = 0;
  for (size_t i = 0; i < model.ops.size(); ++i) {
    const LoweredOp& op = model.ops[i];
    if (op_traits(op.opcode).shape != OpShape::SAME_BYTES) continue;
    if (op.inputs.size() != 1 || op.outputs.size() != 1 || op.inputs[0] < 0) continue;
    const size_t in = static_cast<size_t>(op.inputs[0]), out = static_cast<size_t>(op.outputs[0]);
    const Value& input = model.values[in];
    const Value& output = model.values[out];
    const int32_t at = static_cast<int32_t>(i);
    if (in == out || input.is_constant() || output.is_constant() || graph_output[in] || graph_input[out] ||
        input.byte_size() != output.byte_size() || t.last[in] != at || t.first[out] != at) {
      continue;
    }
    (*parent)[out] = root_of(*parent, static_cast<int>(in));
    ++joined;
  }
  return joined;
}

// The raw bound of the op order: every arena value counted at its own size.
uint64_t order_lower_bound(const LoweredModel& model, const Lifetimes& t) {
  std::vector<BufferRequest> requests;
  for (size_t v = 0; v < model.values.size(); ++v) {
    if (!model.values[v].is_constant())
      requests.push_back({model.values[v].byte_size(), t.first[v], t.last[v]});
  }
  return live_bytes_lower_bound(requests, 1);
}

}  // namespace

ArenaPlan plan_arena(const LoweredModel& model, uint64_t alignment) {
  const Lifetimes t = lifetimes(model);
  std::vector<int> parent(model.values.size());
  std::iota(parent.begin(), parent.end(), 0);
  ArenaPlan plan;
  plan.aliased_values = join_aliases(model, t, &parent);

  // One request per alias group (a value alone is its own group), live over
  // the union of its members' lifetimes.
  std::vector<int> request_of(model.values.size(), -1);
  std::vector<BufferRequest> requests;
  for (size_t v = 0; v < model.values.size(); ++v) {
    if (model.values[v].is_constant()) continue;
    const size_t group = static_cast<size_t>(root_of(parent, static_cast<int>(v)));
    if (request_of[group] < 0) {
      request_of[group] = static_cast<int>(requests.size());
      requests.push_back({model.values[v].byte_size(), t.first[v], t.last[v]});
    }
    BufferRequest& r = requests[static_cast<size_t>(request_of[group])];
    r.size = std::max(r.size, model.values[v].byte_size());
    r.first_op = std::min(r.first_op, t.first[v]);
    r.last_op = std::max(r.last_op, t.last[v]);
    request_of[v] = request_of[group];
  }
  PlanSearch search;
  const MemoryPlan placed = plan_memory(requests, alignment, &search);
  const std::string problem = check_plan(requests, placed, alignment);
  if (!problem.empty()) throw ConvertError("internal error: invalid memory plan: " + problem);

  plan.arena_size = placed.arena_size;
  plan.lower_bound = order_lower_bound(model, t);
  plan.optimal = search.exhaustive;
  plan.offsets.assign(model.values.size(), 0);
  plan.live_first.assign(model.values.size(), -1);
  plan.live_last.assign(model.values.size(), -1);
  for (size_t v = 0; v < model.values.size(); ++v) {
    if (model.values[v].is_constant()) continue;
    plan.offsets[v] = placed.offsets[static_cast<size_t>(request_of[v])];
    plan.live_first[v] = t.first[v];
    plan.live_last[v] = t.last[v];
    plan.naive_bytes += (model.values[v].byte_size() + alignment - 1) / alignment * alignment;
  }
  return plan;
}

}  // namespace floe::conv
