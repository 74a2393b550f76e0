// SPDX-License-Identifier: Apache-2.0
// Arena lifetimes, alias groups and placement (see arena_plan.h).
#include "converter/plan/arena_plan.h"

#include <algorithm>
#include <numeric>

#include "converter/ir/error.h"
#include "converter/plan/loops.h"
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
  extend_over_loops(model, &t.first, &t.last);
  for (int v : model.outputs) t.last[static_cast<size_t>(v)] = end;
  // A variable's state outlives every Invoke(): no other value may take its bytes.
  for (size_t v = 0; v < model.values.size(); ++v) {
    if (model.values[v].variable) {
      t.first[v] = 0;
      t.last[v] = end;
    }
  }
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
    if (in == out || input.is_constant() || output.is_constant() || input.variable || output.variable ||
        graph_output[in] || graph_input[out] ||
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


uint64_t align_to(uint64_t bytes, uint64_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }

bool lifetimes_meet(const BufferRequest& a, const BufferRequest& b) {
  return a.first_op <= b.last_op && b.first_op <= a.last_op;
}

// The lowest aligned offset at which `request` meets none of `placed` (each
// with its offset) that it is live with.
uint64_t lowest_free_offset(const BufferRequest& request, const std::vector<BufferRequest>& placed,
                            const std::vector<uint64_t>& offsets, uint64_t alignment) {
  std::vector<std::pair<uint64_t, uint64_t>> taken;  // [begin, end) of live neighbours
  for (size_t k = 0; k < placed.size(); ++k) {
    if (placed[k].size > 0 && lifetimes_meet(request, placed[k])) {
      taken.emplace_back(offsets[k], offsets[k] + align_to(placed[k].size, alignment));
    }
  }
  std::sort(taken.begin(), taken.end());
  uint64_t at = 0;
  const uint64_t need = align_to(request.size, alignment);
  for (const auto& [begin, end] : taken) {
    if (at + need <= begin) break;
    at = std::max(at, end);
  }
  return at;
}

// Region per request (see plan_arena in arena_plan.h): heat = the operand
// bytes of every op touching the value, per byte of the value; the faster
// regions are filled hottest first by first fit within their capacity.
// `fit_offsets` gets each request's offset in its faster region as filled.
std::vector<uint8_t> assign_regions(const LoweredModel& model, const std::vector<int>& request_of,
                                    const std::vector<BufferRequest>& requests, uint64_t alignment,
                                    const RegionRequest& regions, std::vector<uint64_t>* fit_offsets) {
  const size_t region_count = regions.regions.size();
  std::vector<uint8_t> region_of(requests.size(), 0);
  fit_offsets->assign(requests.size(), 0);
  if (region_count <= 1) return region_of;
  std::vector<double> heat(requests.size(), 0.0);
  for (const LoweredOp& op : model.ops) {
    uint64_t work = 0;
    for (const std::vector<int>* list : {&op.inputs, &op.outputs}) {
      for (int v : *list) {
        if (v >= 0) work += model.values[static_cast<size_t>(v)].byte_size();
      }
    }
    for (const std::vector<int>* list : {&op.inputs, &op.outputs}) {
      for (int v : *list) {
        if (v >= 0 && request_of[static_cast<size_t>(v)] >= 0) {
          heat[static_cast<size_t>(request_of[static_cast<size_t>(v)])] += static_cast<double>(work);
        }
      }
    }
  }
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto density = [&](size_t q) { return heat[q] / static_cast<double>(std::max<uint64_t>(1, requests[q].size)); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return density(a) > density(b); });
  std::vector<bool> assigned(requests.size(), false);
  for (size_t r = 0; r + 1 < region_count; ++r) {
    std::vector<BufferRequest> placed;
    std::vector<uint64_t> offsets;
    for (size_t q : order) {
      if (assigned[q] || requests[q].size == 0) continue;
      const uint64_t offset = lowest_free_offset(requests[q], placed, offsets, alignment);
      const uint64_t capacity = regions.regions[r].capacity;
      if (offset + align_to(requests[q].size, alignment) + regions.tail > capacity) continue;
      placed.push_back(requests[q]);
      offsets.push_back(offset);
      assigned[q] = true;
      region_of[q] = static_cast<uint8_t>(r);
      (*fit_offsets)[q] = offset;
    }
  }
  for (size_t q = 0; q < requests.size(); ++q) {
    if (!assigned[q]) region_of[q] = static_cast<uint8_t>(region_count - 1);
  }
  return region_of;
}

// The last region (or a single given one) holds its activations plus the
// reserve; a faster region is never filled past its capacity.
void check_capacities(const std::vector<uint64_t>& sizes, const RegionRequest& regions,
                      const std::vector<BufferRequest>& requests, const std::vector<uint8_t>& region_of) {
  if (regions.regions.empty()) return;
  const size_t last = regions.regions.size() - 1;
  for (size_t r = 0; r < last; ++r) {
    if (sizes[r] > regions.regions[r].capacity) {
      throw ConvertError("internal error: memory region '" + regions.regions[r].name + "' planned past its size");
    }
  }
  const uint64_t need = sizes[last] + regions.reserve, capacity = regions.regions[last].capacity;
  if (need <= capacity) return;
  uint64_t largest = 0;
  for (size_t q = 0; q < requests.size(); ++q) {
    if (region_of[q] == last) largest = std::max(largest, requests[q].size);
  }
  std::string message = "--memory-regions: the model does not fit: region '" + regions.regions[last].name + "' is " +
                        std::to_string(capacity) + " bytes but needs " + std::to_string(need) + " (" +
                        std::to_string(sizes[last]) + " of activations";
  if (regions.reserve > 0) message += " + " + std::to_string(regions.reserve) + " for the prepared ops";
  message += "; its largest tensor " + std::to_string(largest) + " bytes), " + std::to_string(need - capacity) +
             " bytes short";
  for (size_t r = 0; r < last; ++r) {
    message += "; region '" + regions.regions[r].name + "' is " + std::to_string(regions.regions[r].capacity) +
               " bytes and holds " + std::to_string(sizes[r]) + " of the most-accessed tensors";
  }
  throw ConvertError(message);
}

// Per value: what its offset must be a multiple of. Every value gets
// `alignment`, except, with element slots, a 1- or 2-byte value that only
// reference kernels without a Cortex-M variant touch: they index it as an
// array of its element type, so its element size is enough (the rule
// Model::Load checks).
std::vector<uint64_t> value_alignments(const LoweredModel& model, uint64_t alignment, bool element_slots) {
  std::vector<uint64_t> out(model.values.size(), alignment);
  if (!element_slots) return out;
  std::vector<bool> word(model.values.size(), false);
  for (const LoweredOp& op : model.ops) {
    if (op.backend == schema::Backend::REFERENCE && op.cortexm_kernel == schema::CortexMKernel::NONE) continue;
    for (const std::vector<int>* list : {&op.inputs, &op.outputs}) {
      for (int v : *list) {
        if (v >= 0) word[static_cast<size_t>(v)] = true;
      }
    }
  }
  for (size_t v = 0; v < model.values.size(); ++v) {
    const uint64_t element = dtype_size(model.values[v].dtype);
    if (!word[v] && element > 0 && element < alignment) out[v] = element;
  }
  return out;
}

}  // namespace

ArenaPlan plan_arena(const LoweredModel& model, uint64_t alignment, const RegionRequest& regions,
                     bool element_slots, PlanEffort effort) {
  // Regions are filled by first fit in uniform slots (assign_regions).
  element_slots = element_slots && regions.regions.size() <= 1;
  const std::vector<uint64_t> value_alignment = value_alignments(model, alignment, element_slots);
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
      requests.push_back({model.values[v].byte_size(), t.first[v], t.last[v], value_alignment[v]});
    }
    BufferRequest& r = requests[static_cast<size_t>(request_of[group])];
    r.size = std::max(r.size, model.values[v].byte_size());
    r.alignment = std::max(r.alignment, value_alignment[v]);  // the group's bytes serve every member
    r.first_op = std::min(r.first_op, t.first[v]);
    r.last_op = std::max(r.last_op, t.last[v]);
    request_of[v] = request_of[group];
  }
  std::vector<uint64_t> fit_offsets;
  const std::vector<uint8_t> region_of = assign_regions(model, request_of, requests, alignment, regions, &fit_offsets);
  const size_t region_count = std::max<size_t>(1, regions.regions.size());
  std::vector<uint64_t> request_offsets(requests.size(), 0);
  bool optimal = true;
  plan.region_sizes.assign(region_count, 0);
  for (size_t r = 0; r < region_count; ++r) {
    std::vector<size_t> members;
    std::vector<BufferRequest> subset;
    for (size_t q = 0; q < requests.size(); ++q) {
      if (region_of[q] == r) {
        members.push_back(q);
        subset.push_back(requests[q]);
      }
    }
    PlanSearch search;
    // With element slots the arena ends at the last real byte.
    const uint64_t granularity = element_slots ? 1 : alignment;
    MemoryPlan placed = plan_memory(subset, granularity, &search, effort);
    // A faster region keeps its first-fit placement when the planner's is larger.
    if (r + 1 < region_count) {
      MemoryPlan first;
      for (size_t k = 0; k < members.size(); ++k) {
        first.offsets.push_back(fit_offsets[members[k]]);
        if (subset[k].size > 0) {
          first.arena_size = std::max(first.arena_size, align_to(first.offsets[k] + subset[k].size, alignment));
        }
      }
      if (first.arena_size < placed.arena_size) {
        placed = first;
        search.exhaustive = false;
      }
    }
    const std::string problem = check_plan(subset, placed, granularity);
    if (!problem.empty()) throw ConvertError("internal error: invalid memory plan: " + problem);
    for (size_t k = 0; k < members.size(); ++k) request_offsets[members[k]] = placed.offsets[k];
    plan.region_sizes[r] = placed.arena_size + (r + 1 < region_count ? regions.tail : 0);
    plan.arena_size += placed.arena_size;
    optimal = optimal && search.exhaustive;
  }
  check_capacities(plan.region_sizes, regions, requests, region_of);

  plan.lower_bound = order_lower_bound(model, t);
  plan.optimal = optimal;
  plan.offsets.assign(model.values.size(), 0);
  plan.region.assign(model.values.size(), 0);
  plan.live_first.assign(model.values.size(), -1);
  plan.live_last.assign(model.values.size(), -1);
  for (size_t v = 0; v < model.values.size(); ++v) {
    if (model.values[v].is_constant()) continue;
    const size_t q = static_cast<size_t>(request_of[v]);
    plan.offsets[v] = request_offsets[q];
    plan.region[v] = region_of[q];
    // A variable is recorded without a lifetime: the runtime's plan check
    // then holds it live throughout, and its kernel asks for exactly that.
    if (!model.values[v].variable) {
      plan.live_first[v] = t.first[v];
      plan.live_last[v] = t.last[v];
    }
    plan.naive_bytes += (model.values[v].byte_size() + alignment - 1) / alignment * alignment;
  }
  if (region_count == 1) plan.region_sizes.clear();
  return plan;
}

ArenaPlan plan_model_arena(const LoweredModel& model, uint64_t alignment, uint64_t finer_alignment,
                           const RegionRequest& regions, PlanEffort effort) {
  ArenaPlan plan = plan_arena(model, alignment, regions, false, effort);
  if (regions.regions.empty() && plan.arena_size > plan.lower_bound) {
    const bool far_over = plan.arena_size * 50 > plan.lower_bound * 51;
    for (bool element_slots : {false, true}) {
      ArenaPlan finer = plan_arena(model, finer_alignment, regions, element_slots, effort);
      const bool at_floor = finer.arena_size <= finer.lower_bound;
      if (at_floor || (far_over && finer.arena_size < plan.arena_size)) plan = std::move(finer);
      if (at_floor) break;
    }
  }
  return plan;
}

}  // namespace floe::conv
