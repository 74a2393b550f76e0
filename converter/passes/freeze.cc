// SPDX-License-Identifier: Apache-2.0
// Variable freezing (see freeze.h).
#include "converter/passes/freeze.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "converter/ir/tf_dtype.h"
#include "converter/ir/attrs.h"
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
    // V1 savers restore one tensor per op: Restore(file, name), RestoreSlice(file, name, slice).
    const bool v2 = restore.op() == "RestoreV2" && restore.inputs.size() >= 3;
    const bool v1 = (restore.op() == "Restore" && restore.inputs.size() >= 2) ||
                    (restore.op() == "RestoreSlice" && restore.inputs.size() >= 3);
    if (!v2 && !v1) continue;
    if (!scope.empty() && restore.name().rfind(scope, 0) != 0) continue;
    const std::vector<std::string> names = const_strings(graph.node(restore.inputs[1].node));
    const std::vector<std::string> slices =
        restore.inputs.size() >= 3 ? const_strings(graph.node(restore.inputs[2].node)) : std::vector<std::string>{};
    if (v1 && names.size() != 1) continue;
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

// "10 20 0,5:-" -> per-dimension (start, length) of the box; full dims give (0, dim).
std::vector<std::pair<int64_t, int64_t>> parse_slice_spec(const std::string& spec,
                                                          const std::vector<int64_t>& full_shape,
                                                          const std::string& where) {
  std::vector<std::string> tokens;
  size_t start = 0;
  while (start < spec.size()) {
    size_t end = spec.find(' ', start);
    if (end == std::string::npos) end = spec.size();
    if (end > start) tokens.push_back(spec.substr(start, end - start));
    start = end + 1;
  }
  const size_t rank = full_shape.size();
  auto bad = [&](const std::string& why) {
    throw ConvertError(where + ": bad shape-and-slice '" + spec + "': " + why);
  };
  if (tokens.size() != rank + 1) bad("expected " + std::to_string(rank) + " dims and a slice");
  for (size_t d = 0; d < rank; ++d) {
    char* end = nullptr;
    const long long v = std::strtoll(tokens[d].c_str(), &end, 10);
    if (*end != '\0' || v != full_shape[d]) {
      bad("dim " + std::to_string(d) + " is " + tokens[d] + " but the checkpoint tensor has shape " +
          shape_to_string(full_shape));
    }
  }
  std::vector<std::pair<int64_t, int64_t>> box;
  size_t pos = 0;
  const std::string& slice = tokens[rank];
  for (size_t d = 0; d < rank; ++d) {
    size_t end = slice.find(':', pos);
    if (end == std::string::npos) end = slice.size();
    const std::string part = slice.substr(pos, end - pos);
    pos = end + 1;
    if (part == "-") {
      box.emplace_back(0, full_shape[d]);
      continue;
    }
    const size_t comma = part.find(',');
    if (comma == std::string::npos) bad("extent '" + part + "' is not start,length or -");
    char* e1 = nullptr;
    char* e2 = nullptr;
    const long long s0 = std::strtoll(part.c_str(), &e1, 10);
    const long long len = std::strtoll(part.c_str() + comma + 1, &e2, 10);
    if (e1 != part.c_str() + comma || *e2 != '\0' || s0 < 0 || len < 0 || s0 + len > full_shape[d]) {
      bad("extent '" + part + "' lies outside dim " + std::to_string(d));
    }
    box.emplace_back(s0, len);
  }
  if (pos <= slice.size()) bad("more extents than dims");
  return box;
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

HostTensor extract_slice(const HostTensor& full, const std::string& slice_spec, const std::string& where) {
  const auto box = parse_slice_spec(slice_spec, full.shape, where);
  const size_t rank = full.shape.size();
  const size_t element = dtype_size(full.dtype);
  HostTensor part;
  part.dtype = full.dtype;
  for (const auto& extent : box) part.shape.push_back(extent.second);
  part.data.resize(static_cast<size_t>(part.num_elements()) * element);
  if (part.num_elements() == 0) return part;
  std::vector<int64_t> stride(rank, 1);
  for (size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * full.shape[d];
  const int64_t run = part.shape[rank - 1];
  std::vector<int64_t> index(rank, 0);
  for (int64_t done = 0; done < part.num_elements(); done += run) {
    int64_t source = 0;
    for (size_t d = 0; d < rank; ++d) source += (box[d].first + index[d]) * stride[d];
    std::copy_n(full.data.data() + source * static_cast<int64_t>(element), run * static_cast<int64_t>(element),
                part.data.data() + done * static_cast<int64_t>(element));
    for (size_t d = rank - 1; d-- > 0;) {  // odometer over the outer dims
      if (++index[d] < part.shape[d]) break;
      index[d] = 0;
    }
  }
  return part;
}

std::map<std::string, VariableKeyHint> variable_hints_from_collections(const tfproto::MetaGraphDef& meta) {
  std::map<std::string, VariableKeyHint> hints;
  for (const char* collection : {"variables", "trainable_variables", "model_variables", "local_variables"}) {
    const auto it = meta.collection_def().find(collection);
    if (it == meta.collection_def().end() || !it->second.has_bytes_list()) continue;
    for (const std::string& bytes : it->second.bytes_list().value()) {
      tfproto::VariableDef def;
      if (!def.ParseFromString(bytes)) continue;
      std::string node = def.variable_name();
      const size_t colon = node.rfind(':');
      if (colon != std::string::npos) node.resize(colon);
      if (node.empty() || hints.count(node) || !def.has_save_slice_info_def()) continue;
      const auto& info = def.save_slice_info_def();
      if (info.full_shape_size() != info.var_offset_size() || info.full_shape_size() != info.var_shape_size()) {
        continue;
      }
      VariableKeyHint hint;
      hint.key = info.full_name();
      std::string dims, slice;
      for (int d = 0; d < info.full_shape_size(); ++d) {
        dims += std::to_string(info.full_shape(d)) + " ";
        slice += (d ? ":" : "") + std::to_string(info.var_offset(d)) + "," + std::to_string(info.var_shape(d));
      }
      hint.slice_spec = dims + slice;
      hints[node] = hint;
    }
  }
  return hints;
}

FreezeReport freeze_variables(Graph& graph, const std::vector<bool>& keep,
                              const CheckpointReader* checkpoint, const std::string& saver_scope,
                              const std::map<std::string, VariableKeyHint>& hints) {
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
  std::map<std::string, HostTensor> full_tensors;  // partitioned keys, read once
  std::string problems;
  for (int n : needed) {
    Node& node = graph.node(n);
    std::string key = node.name();
    std::string slice_spec;
    const auto it = saver_keys.find(n);
    const auto hint = hints.find(node.name());
    if (it != saver_keys.end()) {
      key = it->second.first;
      slice_spec = it->second.second;
    } else if (hint != hints.end() && checkpoint->contains(hint->second.key)) {
      key = hint->second.key;
      slice_spec = hint->second.slice_spec;
    } else if (!checkpoint->contains(key)) {
      const std::string shared = attr_string(node.def, "shared_name", "");
      if (!shared.empty() && checkpoint->contains(shared)) key = shared;
    }
    if (!checkpoint->contains(key)) {
      problems += "\n  variable '" + node.name() + "' (" + node.op() + "): no tensor '" + key +
                  "' in the checkpoint";
      continue;
    }
    HostTensor value;
    if (slice_spec.empty()) {
      value = checkpoint->read(key);
    } else {
      // A part of a partitioned variable: reassemble the full tensor once, cut the box.
      auto full = full_tensors.find(key);
      if (full == full_tensors.end()) full = full_tensors.emplace(key, checkpoint->read(key)).first;
      value = extract_slice(full->second, slice_spec,
                            graph.source() + ": variable '" + node.name() + "' (slice of '" + key + "')");
    }
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
