// SPDX-License-Identifier: Apache-2.0
// TF1 conds whose predicate depends on a model input (it is only known at run
// time): when both branches are pure and cannot fail, both are computed and a
// Select on the predicate picks the taken one - what TFLite's converter does with
// small conds. When a branch can fail on data the untaken branch would see
// (Gather, CheckNumerics, integer division, a run-time cond nested in it), the
// cond runs at run time instead: _FloeIf / _FloeIfEnd nodes (ops/if_ops.cc), an
// IF op over the two branches' ops. Runs after resolve_static_control_flow, and
// again inside run-time loops' bodies once they are acyclic; what it cannot
// rewrite is left as Switch/Merge for check_inference_graph to refuse with the
// reason recorded in ControlFlowReport::unresolved.
#pragma once

#include <set>
#include <vector>

#include "converter/ir/graph.h"
#include "converter/passes/training_structure.h"

namespace floe::conv {

// Rewrites every eligible cond on the path to `fetches` (outside while loops,
// given by `outside_loops`): its Switches become Identities of their data input
// and each of its Merges a Select(predicate, true branch, false branch), or,
// when a branch node can fail on data, an Identity of the cond's _FloeIfEnd.
// Eligible: every Merge input leads back to Switches on one predicate tensor
// (one side each); every branch node is a supported, stateless op; branch nodes feed only their
// own branch or the cond's Merges; nobody reads a Merge's value_index. Nested
// conds are rewritten inside out. Counts go to report.conds_selected (Selects)
// and report.runtime_ifs (one summary line per IF); reasons
// for conds left alone to report.unresolved (keyed by their Switches).
void select_input_dependent_conds(Graph& graph, const std::vector<TensorRef>& fetches,
                                  const std::set<TensorRef>& feeds, ControlFlowReport& report);

}  // namespace floe::conv
