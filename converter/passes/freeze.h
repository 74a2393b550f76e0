// SPDX-License-Identifier: Apache-2.0
// Freezing: every variable the fetches need (VariableV2, Variable, VarHandleOp)
// gets its value from the checkpoint and then acts as a Const. The checkpoint
// key of each variable is found the way the Saver wrote it (tf-formats.md
// §12.4): by following the live Saver's RestoreV2 -> Assign edges when the graph
// has them, else by the variable's node name (then shared_name).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/ir/graph.h"

namespace floe::conv {

struct FreezeReport {
  std::vector<std::pair<std::string, std::string>> frozen;  // (variable node, checkpoint key)
};

bool is_variable_op(const std::string& op);

// `saver_scope`: the live Saver's name scope ("save_6/"), "" for any. Throws one
// ConvertError listing every variable that cannot be frozen.
FreezeReport freeze_variables(Graph& graph, const std::vector<bool>& keep,
                              const CheckpointReader* checkpoint, const std::string& saver_scope);

}  // namespace floe::conv
