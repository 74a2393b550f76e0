// SPDX-License-Identifier: Apache-2.0
// TF1 while loops and TensorArrays resolved at conversion time. A loop
// (Enter/Merge/Switch/LoopCond/NextIteration/Exit frame) whose condition folds to
// a constant in every iteration is unrolled into plain nodes, iteration by
// iteration; TensorArrayV3 ops whose sizes and indices are conversion-time
// constants become ordinary tensors (reads forward the written tensor, gathers
// stack, scatters unstack). Anything else is refused with the reason. Runs on
// the frozen graph, before the graph is lowered; conds with a constant predicate
// outside loops are training_structure's (resolve_static_control_flow).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "converter/ir/graph.h"
#include "converter/lower/lower_graph.h"

namespace floe::conv {

struct UnrollReport {
  int loops = 0;          // loop instances unrolled (an inner loop counts once per outer iteration)
  int iterations = 0;     // loop bodies emitted, over all instances
  int tensor_arrays = 0;  // TensorArrays resolved into ordinary tensors
  int nodes_added = 0;
  std::vector<std::string> details;  // one line per top-level loop
  // "loop 'while': unrolled 5x" per top-level loop unrolled, and
  // "loop 'while': run-time WHILE, bound 100 (...)" per loop left to the runtime.
  std::vector<std::string> unrolled_loops;
  std::vector<std::string> runtime_loops;
  // Loops with a conversion-time trip count that LoopMode::kAuto chose to run
  // at run time (a later failure of their WHILE can fall back to unrolling).
  std::vector<std::string> runtime_by_choice;

  bool changed() const { return loops > 0 || tensor_arrays > 0 || nodes_added > 0 || !runtime_loops.empty(); }
  std::string summary() const;  // indented lines for floe-convert's summary ("" when nothing changed)
};

// How a loop whose trip count is known at conversion is converted (--loops).
// kAuto unrolls it when that stays small (see LoopPolicy) and otherwise runs
// it as a WHILE op; kUnroll unrolls every such loop (floe before --loops);
// kRuntime runs every top-level loop as a WHILE op and refuses, with the
// reason, one that cannot run at run time. A loop whose condition depends on a
// graph input always runs at run time.
enum class LoopMode { kAuto, kUnroll, kRuntime };

struct LoopPolicy {
  LoopMode mode = LoopMode::kAuto;
  // False when the rest of the conversion cannot take a WHILE op (int8
  // quantization): kAuto then unrolls.
  bool runtime_allowed = true;
  // Loops (by name) kAuto must unroll, with the reason: a run-time WHILE of
  // them failed later in the conversion.
  std::map<std::string, std::string> unroll;
  // Told as each top-level loop starts ("loop 'rnn/while'"): progress for a
  // conversion that unrolls long loops (floe-convert on a terminal).
  std::function<void(const std::string&)> progress;
};

// The cost rule of LoopMode::kAuto. An unrolled loop costs its ops that do not
// fold away (each an op in the model and one dispatch per inference); a WHILE
// costs its body and condition once, plus per iteration the condition's ops and
// copying the loop variables. Unrolling is kept when it adds at most
// kUnrollSmallOps ops, or at most kUnrollGrowth times the ops the WHILE would
// have (so short loops and loops that fold away stay unrolled).
constexpr int kUnrollSmallOps = 64;
constexpr int kUnrollGrowth = 4;

// The TensorArray ops unroll_control_flow resolves into ordinary tensors.
const std::vector<const char*>& resolved_tensor_array_ops();

// True when the kept graph has TF1 loop nodes or TensorArray*V3 ops.
bool has_loops_or_tensor_arrays(const Graph& graph, const std::vector<bool>& keep);

// `keep` without the nodes unroll_control_flow resolves (every node inside a while
// frame, the frames' Enter/Exit, TensorArray ops): what can be checked for
// inference-graph problems before the loops are unrolled.
std::vector<bool> outside_loops(const Graph& graph, const std::vector<bool>& keep);

// Unrolls every loop and resolves every TensorArray among the kept nodes. New
// nodes are appended (existing node indices stay valid; an Exit becomes an
// Identity of the last iteration's value and keeps its name, so fetches still
// resolve); nodes that become unreachable stay in the graph, so re-prune from the
// fetches afterwards. Throws ConvertError naming the loop/node and why when a
// loop or TensorArray cannot be resolved statically.
// A top-level loop whose condition depends on a graph input is not unrolled:
// it becomes a run-time loop (a WHILE op), bounded by the graph's
// maximum_iterations or by `max_loop_iterations` (0 = not given; then such a
// loop without maximum_iterations is refused, naming it).
// A top-level loop whose trip count is known at conversion is unrolled or run
// at run time as `policy` decides; the summary says which and why.
UnrollReport unroll_control_flow(Graph& graph, const std::vector<bool>& keep, const std::vector<Feed>& feeds,
                                 uint32_t max_loop_iterations = 0, const LoopPolicy& policy = LoopPolicy());

}  // namespace floe::conv
