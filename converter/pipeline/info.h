// SPDX-License-Identifier: Apache-2.0
// What a graph contains, for users choosing --inputs/--outputs without
// TensorBoard: `floe-convert --info` (placeholders with dtype/shape, candidate
// outputs, variables and whether the checkpoint holds them, signatures, saver)
// and `--list-ops` (op histogram with how floe treats each op). Reading never
// converts: an artifact floe cannot convert still gets a full description.
#pragma once

#include <string>
#include <vector>

#include "converter/frontend/graphdef/graph_loader.h"
#include "converter/ir/graph.h"

namespace floe::conv {

struct InfoOptions {
  std::string graph_path;       // "" = describe only the checkpoint
  std::string checkpoint_path;  // "" = the one the graph comes with, if any
  std::vector<std::string> tags = {"serve"};
};

// Nodes that look like inference outputs: not consumed by any inference node
// (only by losses, metrics, gradients, summaries, savers, initializers, or by
// nothing), and not themselves Const / placeholders / variables / training ops.
std::vector<std::string> candidate_outputs(const Graph& graph);

// The checkpoint a graph file comes with when the user names none: a SavedModel's
// variables/variables, or for a .meta its sibling "<prefix>.index" or a `checkpoint`
// state file in its directory. "" when there is none.
std::string default_checkpoint_for(const LoadedGraph& loaded);

// How floe treats one TF op, from the code that does it: the op registry
// (lowered; "folded" when the handler only computes conversion-time constants),
// the passes that resolve an op before the inference check (handled), or the
// inference check's refusal (refused, with the reason a user can act on).
struct OpTreatment {
  enum class Kind { kLowered, kHandled, kRefused, kUnknown };
  Kind kind = Kind::kUnknown;
  std::string detail;
};
OpTreatment op_treatment(const std::string& op);
const char* op_treatment_kind_name(OpTreatment::Kind kind);  // "lowered", "handled", "refused", "unknown"

std::string describe_graph(const InfoOptions& options);       // --info
std::string describe_ops(const InfoOptions& options);         // --list-ops
// --list-ops --all: every op name floe knows, one line each ("  Name  kind: detail"),
// then the name patterns of the refusal and training rules ("String*", "*Grad").
std::string describe_all_ops();
std::string describe_checkpoint(const std::string& path);     // --info --checkpoint C (no graph)

}  // namespace floe::conv
