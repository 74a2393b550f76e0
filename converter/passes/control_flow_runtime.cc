// SPDX-License-Identifier: Apache-2.0
// Run-time loops (see control_flow_internal.h, make_runtime_loop). A loop whose
// condition depends on a graph input cannot be unrolled; it becomes
//
//   _FloeWhileLoop(initial values..., ^every tensor the loop reads from outside)
//       -> the loop variables (what the loop's Merges gave)
//   _FloeWhileEnd(condition, next values..., loop variables...)
//       -> the loop variables after the loop
//
// with Enter, Merge, Switch, LoopCond and NextIteration removed (their readers
// read what they forwarded) and each Exit an Identity of _FloeWhileEnd's
// output (a data edge: pruning follows those only). The graph then has no cycle; lowering makes the
// first node a WHILE op and the second fills in its condition and next values
// (ops/loop_ops.cc), and each op lowered from a node of the loop carries the
// node's tag, so the ops can be grouped after their WHILE (condition first).
#include <algorithm>
#include <set>

#include "converter/ir/attrs.h"
#include "converter/ir/error.h"
#include "converter/ir/lowered.h"
#include "converter/passes/control_flow_internal.h"

namespace floe::conv::cf {
namespace {

// The constant a node holds (a Const, or a frozen variable); null otherwise.
std::shared_ptr<const HostTensor> constant_of(const Node& node) {
  if (node.frozen_value) return node.frozen_value;
  if (node.op() != "Const") return nullptr;
  return std::make_shared<const HostTensor>(attr_tensor(node.def, "value"));
}

bool scalar_equals(const HostTensor* t, int64_t value) {
  if (t == nullptr || t->num_elements() != 1) return false;
  if (t->dtype == DType::kInt32) return *t->as<int32_t>() == value;
  if (t->dtype == DType::kInt64) return *t->as<int64_t>() == value;
  return false;
}

// The node a tensor comes from through Identity-like nodes and Enters.
int through_forwarding(const Graph& graph, int n) {
  for (;;) {
    const std::string& op = graph.node(n).op();
    if ((op != "Identity" && !is_enter_op(op)) || graph.node(n).inputs.empty()) return n;
    n = graph.node(n).inputs[0].node;
  }
}

// TF1's while_loop(maximum_iterations=N) adds a counter: a variable that
// starts at 0 and grows by 1, and Less(counter, N) ANDed into the condition.
// Returns N when the loop has such a counter, else -1.
int64_t maximum_iterations(const Graph& graph, const Frame& f,
                           const std::vector<std::pair<TensorRef, TensorRef>>& init_next) {
  const int cond = graph.node(f.loop_cond).inputs.at(0).node;
  std::vector<int> terms{cond};
  for (size_t i = 0; i < terms.size(); ++i) {
    const Node& node = graph.node(terms[i]);
    if (node.op() == "LogicalAnd") {
      for (const TensorRef& in : node.inputs) terms.push_back(in.node);
      continue;
    }
    if (node.op() != "Less" || node.inputs.size() != 2) continue;
    const int merge = node.inputs[0].node;
    const auto var = std::find(f.loop_merges.begin(), f.loop_merges.end(), merge);
    if (var == f.loop_merges.end()) continue;
    const auto& [init, next] = init_next[static_cast<size_t>(var - f.loop_merges.begin())];
    const auto limit = constant_of(graph.node(through_forwarding(graph, node.inputs[1].node)));
    const auto start = constant_of(graph.node(through_forwarding(graph, init.node)));
    if (!limit || limit->num_elements() != 1 || !scalar_equals(start.get(), 0)) continue;
    // next = Add(the variable, 1)
    const Node& add = graph.node(next.node);
    if ((add.op() != "Add" && add.op() != "AddV2") || add.inputs.size() != 2) continue;
    bool counts = false;
    for (int k = 0; k < 2; ++k) {
      const int step = through_forwarding(graph, add.inputs[static_cast<size_t>(1 - k)].node);
      int from = add.inputs[static_cast<size_t>(k)].node;
      while (graph.node(from).op() == "Identity" || is_switch_op(graph.node(from).op())) {
        from = graph.node(from).inputs.at(0).node;
      }
      const auto one = constant_of(graph.node(step));
      counts = counts || (from == merge && scalar_equals(one.get(), 1));
    }
    if (!counts) continue;
    const int64_t n = limit->dtype == DType::kInt64 ? *limit->as<int64_t>() : *limit->as<int32_t>();
    return std::max<int64_t>(n, 0);
  }
  return -1;
}

// The run-time loop whose body computes what a loop reads from outside (the
// innermost when there are several), or -1. An outer loop whose own condition
// depends on a graph input is made a WHILE first; a loop inside it found later
// must then be a WHILE in its body.
int enclosing_runtime_loop(const Graph& graph, const std::set<int>& outside_reads) {
  auto loop_of = [&](int n) -> int64_t {  // the run-time loop node n is in, or that its WHILE runs
    const Node& node = graph.node(n);
    if (node.def.attr().count("_floe_loop")) return attr_int(node.def, "_floe_loop");
    if (node.op() == "_FloeWhileLoop") return attr_int(node.def, "_floe_runs_loop");
    return -1;
  };
  auto depth = [&](int64_t id) {  // how many run-time loops enclose loop `id`'s WHILE
    int d = 0;
    for (int64_t at = id; at >= 0 && d < 64; ++d) {
      int64_t up = -1;
      for (size_t n = 0; n < graph.size(); ++n) {
        const Node& node = graph.node(static_cast<int>(n));
        if (node.op() == "_FloeWhileLoop" && attr_int(node.def, "_floe_runs_loop") == at && node.def.attr().count("_floe_loop")) {
          up = attr_int(node.def, "_floe_loop");
        }
      }
      at = up;
    }
    return d;
  };
  int64_t best = -1;
  for (int n : outside_reads) {
    const int64_t id = loop_of(n);
    if (id >= 0 && (best < 0 || depth(id) > depth(best))) best = id;
  }
  return static_cast<int>(best);
}

}  // namespace

std::string make_runtime_loop(const Unroller& unroller, Graph& graph, std::vector<bool>& keep, int frame_index,
                              int id, uint32_t max_loop_iterations,
                              const std::map<std::string, TensorInfo>& array_elements, uint32_t trip_count,
                              const std::string& why) {
  const Frame& f = unroller.frame(frame_index);
  const int anchor = f.loop_cond;
  // The loop's name scope: "while" for "while/LoopCond".
  const std::string& cond_name = graph.node(anchor).name();
  const size_t slash = cond_name.rfind('/');
  const std::string name = slash == std::string::npos ? cond_name : cond_name.substr(0, slash);
  // Loop variables: (initial value, next value) per Merge.
  std::vector<std::pair<TensorRef, TensorRef>> init_next;
  auto find_variables = [&] {
    init_next.clear();
    for (int m : f.loop_merges) {
      TensorRef init, next;
      for (const TensorRef& in : graph.node(m).inputs) {
        if (is_enter_op(graph.node(in.node).op())) init = graph.node(in.node).inputs.at(0);
        if (is_next_iteration_op(graph.node(in.node).op())) next = graph.node(in.node).inputs.at(0);
      }
      if (init.node < 0 || next.node < 0) unroller.fail(m, "is a loop Merge without an Enter and a NextIteration input");
      init_next.emplace_back(init, next);
    }
  };
  find_variables();

  uint32_t bound = trip_count > 0 ? trip_count : max_loop_iterations;
  std::string source = "--max-loop-iterations";
  if (trip_count > 0) {
    source = "";
  } else if (bound == 0) {
    const int64_t counter = maximum_iterations(graph, f, init_next);
    const bool has_tensor_arrays = std::any_of(f.members.begin(), f.members.end(),
                                               [&](int m) { return is_tensor_array_op(graph.node(m).op()); });
    if (counter >= 0) {
      if (counter > UINT32_MAX) unroller.fail(anchor, "maximum_iterations over 2^32 - 1");
      bound = static_cast<uint32_t>(counter);
      source = "maximum_iterations";
    } else if (!has_tensor_arrays) {
      // Fixed-shape variables: memory does not grow with the trip count, so
      // the loop runs as TF runs it, until its condition is false.
      bound = kUnboundedLoopIterations;
      source = "no bound: its variables have fixed shapes";
    } else {
      throw unroller.error_at(anchor,
                              "while loop '" + name +
                                  "' runs at run time (its condition depends on a graph input), has no "
                                  "maximum_iterations and writes TensorArrays, whose buffers grow with its trip "
                                  "count: pass --max-loop-iterations N to size them",
                              ErrorCategory::kInvalidInput)
          .with_loop_bound();
    }
  }

  // TensorArrays become dense buffers carried as loop variables.
  std::set<int> members(f.members.begin(), f.members.end());
  int buffers = 0;
  if (std::any_of(f.members.begin(), f.members.end(), [&](int m) { return is_tensor_array_op(graph.node(m).op()); })) {
    const std::vector<int> added =
        rewrite_tensor_arrays(unroller, graph, keep, members, name, bound, array_elements, buffers);
    members.insert(added.begin(), added.end());
    find_variables();
  }

  // What each removed loop node stands for.
  std::map<int, int> merge_var;  // Merge -> variable index
  for (size_t k = 0; k < f.loop_merges.size(); ++k) merge_var[f.loop_merges[k]] = static_cast<int>(k);
  std::set<int> removed;
  for (int m : f.members) {
    const std::string& op = graph.node(m).op();
    // A tf.cond's Switches and Merges in the body stay: passes/cond_to_select
    // rewrites them once the loop is acyclic (a Select or an IF in the body).
    const bool loop_switch = is_switch_op(op) && graph.node(m).inputs.size() == 2 &&
                             graph.node(graph.node(m).inputs[1].node).op() == "LoopCond";
    const bool loop_merge = is_merge_op(op) && merge_var.count(m) > 0;
    if (is_enter_op(op) || loop_merge || loop_switch || op == "LoopCond" || is_next_iteration_op(op)) removed.insert(m);
  }
  // Nodes in the condition: what LoopCond reads, back to the variables.
  std::set<int> cond_nodes;
  std::vector<int> stack{graph.node(anchor).inputs.at(0).node};
  while (!stack.empty()) {
    const int n = stack.back();
    stack.pop_back();
    if (!members.count(n) || removed.count(n) || !cond_nodes.insert(n).second) continue;
    for (const TensorRef& in : graph.node(n).inputs) stack.push_back(in.node);
    for (int c : graph.node(n).control_inputs) stack.push_back(c);
  }

  // The two new nodes.
  std::set<int> outside_reads;
  for (int e : f.enters) outside_reads.insert(graph.node(e).inputs.at(0).node);
  const int enclosing = enclosing_runtime_loop(graph, outside_reads);
  Node loop;
  loop.def.set_name(name + "/floe_while");
  loop.def.set_op("_FloeWhileLoop");
  (*loop.def.mutable_attr())["_floe_runs_loop"].set_i(id);
  (*loop.def.mutable_attr())["max_iterations"].set_i(bound);
  (*loop.def.mutable_attr())["loop_name"].set_s(name);
  if (enclosing >= 0) {  // a WHILE in the body of the run-time loop made before it
    (*loop.def.mutable_attr())["_floe_loop"].set_i(enclosing);
    (*loop.def.mutable_attr())["_floe_loop_cond"].set_b(false);
  }
  for (const auto& [init, next] : init_next) loop.inputs.push_back(init);
  loop.control_inputs.assign(outside_reads.begin(), outside_reads.end());
  const int loop_node = graph.add_node(std::move(loop));
  Node end;
  end.def.set_name(name + "/floe_while_end");
  end.def.set_op("_FloeWhileEnd");
  (*end.def.mutable_attr())["_floe_loop"].set_i(id);
  end.inputs.push_back(graph.node(anchor).inputs.at(0));
  for (const auto& [init, next] : init_next) end.inputs.push_back(next);
  for (size_t k = 0; k < init_next.size(); ++k) end.inputs.push_back(TensorRef{loop_node, static_cast<int>(k)});
  const int end_node = graph.add_node(std::move(end));
  keep.resize(graph.size(), false);
  keep[static_cast<size_t>(loop_node)] = keep[static_cast<size_t>(end_node)] = true;

  // Where a read of a removed node's output now goes.
  auto replacement = [&](TensorRef ref) -> TensorRef {
    for (int hops = 0; removed.count(ref.node) && hops < 64; ++hops) {
      const Node& node = graph.node(ref.node);
      if (is_merge_op(node.op())) return TensorRef{loop_node, merge_var.at(ref.node)};
      ref = node.inputs.at(0);  // Enter, Switch (either side), LoopCond, NextIteration
    }
    return ref;
  };
  for (size_t n = 0; n < graph.size(); ++n) {
    const int ni = static_cast<int>(n);
    if (!keep[n] || removed.count(ni) || ni == loop_node) continue;
    Node& node = graph.node(ni);
    for (TensorRef& in : node.inputs) in = replacement(in);
    for (int& c : node.control_inputs) {
      if (removed.count(c)) c = loop_node;
    }
    if (is_exit_op(node.op()) && members.count(ni)) {  // this loop's Exits (another loop's stay)
      // Reads the variable as _FloeWhileEnd passes it on: after the loop.
      node.def.set_op("Identity");
      node.def.mutable_attr()->erase("frame_name");
      if (node.inputs.size() == 1 && node.inputs[0].node == loop_node) node.inputs[0].node = end_node;
      if (enclosing >= 0) {
        (*node.def.mutable_attr())["_floe_loop"].set_i(enclosing);
        (*node.def.mutable_attr())["_floe_loop_cond"].set_b(false);
      }
    } else if (members.count(ni) && node.def.attr().count("_floe_loop") == 0) {
      // (a nested run-time loop's nodes keep their own loop; its WHILE node is ours)
      (*node.def.mutable_attr())["_floe_loop"].set_i(id);
      (*node.def.mutable_attr())["_floe_loop_cond"].set_b(cond_nodes.count(ni) > 0);
    }
    sync_def_inputs(graph, node);
  }
  for (int r : removed) {
    keep[static_cast<size_t>(r)] = false;
    graph.node(r).removed = true;
  }
  const std::string arrays =
      buffers > 0 ? ", " + std::to_string(buffers) + " TensorArray(s) as dense buffers" : std::string();
  if (trip_count > 0) {
    return "loop '" + name + "': run-time WHILE, " + std::to_string(trip_count) + " iterations (" + why + ")" + arrays;
  }
  if (bound == kUnboundedLoopIterations && trip_count == 0 && max_loop_iterations == 0) {
    return "loop '" + name + "': run-time WHILE, " + source + arrays;
  }
  return "loop '" + name + "': run-time WHILE, bound " + std::to_string(bound) + " (" + source + ")" + arrays;
}

}  // namespace floe::conv::cf
