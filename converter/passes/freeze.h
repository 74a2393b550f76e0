// SPDX-License-Identifier: Apache-2.0
// Freezing: every variable the fetches need (VariableV2, Variable, VarHandleOp)
// gets its value from the checkpoint and then acts as a Const. The checkpoint
// key of each variable is found the way the Saver wrote it (tf-formats.md
// §12.4): by following the live Saver's RestoreV2 -> Assign edges when the graph
// has them, else by the MetaGraphDef's VariableDef (save_slice_info), else by the
// variable's node name (then shared_name). A `part_N` of a partitioned variable
// is cut out of the full tensor the checkpoint reader reassembles from slices.
#pragma once

#include <map>
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

// Where a variable's value is in the checkpoint when the Saver graph does not say:
// key plus TF's shape-and-slice string ("4 3 2,2:-"; "" = the whole tensor).
struct VariableKeyHint {
  std::string key;
  std::string slice_spec;
};
// From a MetaGraphDef's `variables` / `trainable_variables` collections
// (VariableDef.save_slice_info_def), keyed by variable node name.
std::map<std::string, VariableKeyHint> variable_hints_from_collections(const tfproto::MetaGraphDef& meta);

// Parses a shape-and-slice string against the full tensor shape it must name and
// returns the sub-box [start, start+length) per dimension; throws naming `where`.
HostTensor extract_slice(const HostTensor& full, const std::string& slice_spec, const std::string& where);

// `saver_scope`: the live Saver's name scope ("save_6/"), "" for any. Throws one
// ConvertError listing every variable that cannot be frozen.
FreezeReport freeze_variables(Graph& graph, const std::vector<bool>& keep,
                              const CheckpointReader* checkpoint, const std::string& saver_scope,
                              const std::map<std::string, VariableKeyHint>& hints = {});

}  // namespace floe::conv
