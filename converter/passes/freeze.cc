// SPDX-License-Identifier: Apache-2.0
// Variable freezing (see freeze.h).
#include "converter/passes/freeze.h"

#include <map>

#include "converter/frontend/checkpoint/tf_dtype.h"
#include "converter/frontend/graphdef/attrs.h"
#include "converter/ir/error.h"

namespace floe::conv {
namespace {

bool is_identity(const std::string& op) { return op == "Identity" || op == "Snapshot"; }

// Follows Identity chains backwards from `ref` to the node that produces it.
int skip_identities_back(const Graph& graph, int node) {
  for (int guard = 0; guard < 64 && is_identity(graph.node(node).op()) &&
                      !graph.node(node).inputs.empty();
       ++guard) {
    node = graph.node(node).inputs[0].node;
  }
  return node;
}

// String values of a Const node (RestoreV2's tensor_names / shape_and_slices).
std::vector<std::string> const_strings(const Node& node) {
  std::vector<std::string> out;
  if (node.op() != "Const") return out;
  const tfproto::AttrValue* value = find_attr(node.def, "value");
  if (value == nullptr || !value->has_tensor()) return out;
  for (const std::string& s : value->tensor().string_val()) out.push_back(s);
  return out;
}

// variable node -> (checkpoint key, slice spec), from RestoreV2 -> Assign edges.
std::map<int, std::pair<std::string, std::string>> keys_from_saver(const Graph& graph,
                                                                   const std::string& scope) {
  std::map<TensorRef, std::vector<int>> consumers;
  for (size_t n = 0; n < graph.size(); ++n) {
    for (const TensorRef& in : graph.node(static_cast<int>(n)).inputs) {
      consumers[in].push_back(static_cast<int>(n));
    }
  }
  std::map<int, std::pair<std::string, std::string>> keys;
  for (size_t n = 0; n < graph.size(); ++n) {
    const Node& restore = graph.node(static_cast<int>(n));
    if (restore.op() != "RestoreV2" || restore.inputs.size() < 3) continue;
    if (!scope.empty() && restore.name().rfind(scope, 0) != 0) continue;
    const std::vector<std::string> names = const_strings(graph.node(restore.inputs[1].node));
    const std::vector<std::string> slices = const_strings(graph.node(restore.inputs[2].node));
    for (size_t i = 0; i < names.size(); ++i) {
      // Consumers of output i, looking through Identity (resource variables).
      std::vector<int> frontier = consumers[TensorRef{static_cast<int>(n), static_cast<int>(i)}];
      for (size_t k = 0; k < frontier.size() && k < 256; ++k) {
        const Node& c = graph.node(frontier[k]);
        if (is_identity(c.op())) {
          for (int next : consumers[TensorRef{frontier[k], 0}]) frontier.push_back(next);
        } else if ((c.op() == "Assign" || c.op() == "AssignVariableOp") && !c.inputs.empty()) {
          const int variable = skip_identities_back(graph, c.inputs[0].node);
          keys[variable] = {names[i], i < slices.size() ? slices[i] : std::string()};
        }
      }
    }
  }
  return keys;
}

std::string key_list(const CheckpointReader& checkpoint) {
  std::string list;
  int shown = 0;
  for (const std::string& k : checkpoint.keys()) {
    if (shown++ == 12) return list + ", ...";
    list += (list.empty() ? "" : ", ") + k;
  }
  return list;
}

}  // namespace

bool is_variable_op(const std::string& op) {
  return op == "VariableV2" || op == "Variable" || op == "VarHandleOp";
}

FreezeReport freeze_variables(Graph& graph, const std::vector<bool>& keep,
                              const CheckpointReader* checkpoint, const std::string& saver_scope) {
  std::vector<int> needed;
  for (size_t n = 0; n < graph.size(); ++n) {
    if (keep[n] && is_variable_op(graph.node(static_cast<int>(n)).op())) {
      needed.push_back(static_cast<int>(n));
    }
  }
  FreezeReport report;
  if (needed.empty()) return report;
  if (checkpoint == nullptr) {
    std::string names;
    for (size_t i = 0; i < needed.size() && i < 8; ++i) {
      names += (i ? ", " : "") + graph.node(needed[i]).name();
    }
    throw ConvertError(graph.source() + ": the outputs need " + std::to_string(needed.size()) +
                       " variable(s) (" + names + (needed.size() > 8 ? ", ..." : "") +
                       "): pass --checkpoint to freeze them");
  }

  const auto saver_keys = keys_from_saver(graph, saver_scope);
  std::string problems;
  for (int n : needed) {
    Node& node = graph.node(n);
    std::string key = node.name();
    const auto it = saver_keys.find(n);
    if (it != saver_keys.end()) {
      key = it->second.first;
      if (!it->second.second.empty()) {
        problems += "\n  variable '" + node.name() + "' is a slice ('" + it->second.second +
                    "') of partitioned variable '" + key + "': not supported yet";
        continue;
      }
    } else if (!checkpoint->contains(key)) {
      const std::string shared = attr_string(node.def, "shared_name", "");
      if (!shared.empty() && checkpoint->contains(shared)) key = shared;
    }
    if (!checkpoint->contains(key)) {
      problems += "\n  variable '" + node.name() + "' (" + node.op() + "): no tensor '" + key +
                  "' in the checkpoint";
      continue;
    }
    HostTensor value = checkpoint->read(key);
    const DType declared = tf_dtype_to_floe(attr_type(node.def, "dtype", 0));
    if (declared != DType::kInvalid && declared != value.dtype) {
      problems += "\n  variable '" + node.name() + "' is " + dtype_name(declared) +
                  " but checkpoint tensor '" + key + "' is " + dtype_name(value.dtype);
      continue;
    }
    bool unknown_rank = false;
    const std::vector<int64_t> shape = attr_shape(node.def, "shape", &unknown_rank);
    bool shape_known = !unknown_rank && find_attr(node.def, "shape") != nullptr;
    for (int64_t d : shape) shape_known = shape_known && d >= 0;
    if (shape_known && shape != value.shape) {
      problems += "\n  variable '" + node.name() + "' has shape " + shape_to_string(shape) +
                  " but checkpoint tensor '" + key + "' has " + shape_to_string(value.shape);
      continue;
    }
    node.frozen_value = std::make_shared<const HostTensor>(std::move(value));
    report.frozen.emplace_back(node.name(), key);
  }
  if (!problems.empty()) {
    throw ConvertError(graph.source() + ": cannot freeze variables from checkpoint '" +
                       checkpoint->prefix() + "':" + problems +
                       "\n  (checkpoint keys: " + key_list(*checkpoint) + ")");
  }
  return report;
}

}  // namespace floe::conv
