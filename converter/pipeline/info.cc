// SPDX-License-Identifier: Apache-2.0
// --info / --list-ops (see info.h). Candidate outputs: nodes every consumer of
// which is training structure. "State" nodes (assigns, savers, summaries,
// initializers) propagate backwards: a node whose only consumers are state nodes
// is state too (initializer chains), so only real results remain as candidates.
#include "converter/pipeline/info.h"

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/ir/tf_dtype.h"
#include "converter/ir/attrs.h"
#include "converter/ir/error.h"
#include "converter/lower/lower_graph.h"
#include "converter/ops/op_registry.h"
#include "converter/passes/control_flow.h"
#include "converter/passes/freeze.h"
#include "converter/ops/op_registry.h"
#include "converter/passes/training_structure.h"
#include "converter/pipeline/signature.h"

namespace floe::conv {
namespace fs = std::filesystem;

namespace {

bool numbered(const std::string& c, const std::string& base) {
  if (c == base) return true;
  if (c.size() <= base.size() + 1 || c.compare(0, base.size() + 1, base + "_") != 0) return false;
  for (size_t i = base.size() + 1; i < c.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(c[i]))) return false;
  }
  return true;
}

// Name scopes TF's training helpers create.
bool training_scope(const std::string& name) {
  size_t start = 0;
  bool first = true;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    const std::string c = name.substr(start, end - start);
    if (numbered(c, "gradients") || c == "training" || c == "Adam" || c == "optimizer") return true;
    if (first && (numbered(c, "train") || numbered(c, "loss") || c == "losses" || c == "metrics" ||
                  c == "summaries" || c == "global_step")) {
      return true;
    }
    first = false;
    if (end == name.size()) break;
    start = end + 1;
  }
  return false;
}

bool state_scope(const std::string& name) {
  const std::string first = name.substr(0, name.find('/'));
  return numbered(first, "save") || numbered(first, "init") || first == "report_uninitialized_variables";
}

bool is_state_op(const std::string& op) {
  return is_training_only_op(op) && op.find("Grad") == std::string::npos && op != "BroadcastGradientArgs";
}

bool is_loss_op(const std::string& op) {
  return op.find("Grad") != std::string::npos || op == "BroadcastGradientArgs" || op == "L2Loss" ||
         op.find("CrossEntropyWithLogits") != std::string::npos;
}

bool never_candidate(const std::string& op) {
  return op == "Const" || op == "Placeholder" || op == "PlaceholderV2" || op == "PlaceholderWithDefault" ||
         op == "NoOp" || is_variable_op(op);
}

// Never throws: --info must describe even graphs whose attrs are malformed.
std::string node_dtype_shape(const NodeDef& def) {
  const AttrValue* dtype = find_attr(def, "dtype");
  std::string text = dtype != nullptr && dtype->value_case() == AttrValue::kType ? tf_dtype_name(dtype->type())
                                                                                 : std::string("(dtype unset)");
  bool unknown_rank = false;
  const AttrValue* shape = find_attr(def, "shape");
  if (shape == nullptr || shape->value_case() != AttrValue::kShape) return text + " ?";
  const std::vector<int64_t> dims = attr_shape(def, "shape", &unknown_rank);
  return text + " " + (unknown_rank ? std::string("?") : shape_to_string(dims));
}

std::string kind_text(const LoadedGraph& loaded) {
  std::string text = graph_file_kind_name(loaded.kind);
  text += loaded.encoding == GraphEncoding::kText ? ", text" : ", binary";
  if (loaded.meta) {
    const auto& info = loaded.meta->meta_info_def();
    if (loaded.kind == GraphFileKind::kSavedModel) text += ", tags " + format_tag_set(*loaded.meta);
    if (!info.tensorflow_version().empty()) text += ", TF " + info.tensorflow_version();
  }
  if (loaded.graph.has_versions()) text += ", producer " + std::to_string(loaded.graph.versions().producer());
  return text;
}

std::string saver_line(const LoadedGraph& loaded) {
  if (!loaded.meta || !loaded.meta->has_saver_def()) return "";
  const auto& saver = loaded.meta->saver_def();
  static const char* const kVersions[] = {"LEGACY", "V1", "V2"};
  const int version = static_cast<int>(saver.version());
  return "  saver: restore op " + saver.restore_op_name() + ", checkpoint format " +
         (version >= 0 && version <= 2 ? kVersions[version] : "?") + "\n";
}

}  // namespace

namespace {

// Per node: training structure (losses, gradients, state and whatever is computed
// only from them) and state (assigns, savers, initializer chains feeding only them).
struct Roles {
  std::vector<bool> training, state;
  std::vector<std::vector<int>> producers;  // data + control
};

Roles graph_roles(const Graph& graph) {
  const size_t n = graph.size();
  Roles r;
  r.training.assign(n, false);
  r.state.assign(n, false);
  r.producers.resize(n);
  std::vector<int> users(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = graph.node(static_cast<int>(i));
    if (node.removed) continue;
    for (const TensorRef& in : node.inputs) r.producers[i].push_back(in.node);
    for (int c : node.control_inputs) r.producers[i].push_back(c);
    for (int p : r.producers[i]) ++users[static_cast<size_t>(p)];
    r.state[i] = is_state_op(node.op()) || state_scope(node.name());
    r.training[i] = r.state[i] || is_loss_op(node.op()) || training_scope(node.name());
  }
  // Forward: computed only from training nodes and variables -> training (Keras'
  // ReadVariableOp_N, LogicalNot(VarIsInitializedOp), regularizer terms).
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (size_t i = 0; i < n; ++i) {
    for (int p : r.producers[i]) {
      ++pending[i];
      consumers[static_cast<size_t>(p)].push_back(static_cast<int>(i));
    }
  }
  std::vector<int> order;
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) order.push_back(static_cast<int>(i));
  }
  // Also forward: whether a node computes from a placeholder (a real input);
  // initializer chains never do, so only those are traced back from assigns.
  std::vector<bool> from_input(n, false);
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t i = static_cast<size_t>(order[k]);
    const Node& node = graph.node(order[k]);
    for (const TensorRef& in : node.inputs) {
      const std::string& op = graph.node(in.node).op();
      from_input[i] = from_input[i] || from_input[static_cast<size_t>(in.node)] || op == "Placeholder" ||
                      op == "PlaceholderV2";
    }
    if (!r.training[i] && !node.removed) {
      bool any = false, all = true;
      for (const TensorRef& in : node.inputs) {
        const Node& p = graph.node(in.node);
        if (p.op() == "Const") continue;
        any = true;
        all = all && (r.training[static_cast<size_t>(in.node)] || is_variable_op(p.op()));
      }
      r.training[i] = any && all;
    }
    for (int c : consumers[i]) {
      if (--pending[static_cast<size_t>(c)] == 0) order.push_back(c);
    }
  }
  // Backward: feeding only state -> state (initializer chains).
  std::vector<int> non_state_users = users;
  std::vector<int> work;
  for (size_t i = 0; i < n; ++i) {
    if (r.state[i]) work.push_back(static_cast<int>(i));
  }
  while (!work.empty()) {
    const int s = work.back();
    work.pop_back();
    for (int p : r.producers[static_cast<size_t>(s)]) {
      if (--non_state_users[static_cast<size_t>(p)] == 0 && !r.state[static_cast<size_t>(p)] &&
          !from_input[static_cast<size_t>(p)]) {
        r.state[static_cast<size_t>(p)] = true;
        r.training[static_cast<size_t>(p)] = true;
        work.push_back(p);
      }
    }
  }
  return r;
}

}  // namespace

std::vector<std::string> candidate_outputs(const Graph& graph) {
  const Roles roles = graph_roles(graph);
  const size_t n = graph.size();
  std::vector<int> inference_users(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (graph.node(static_cast<int>(i)).removed || roles.training[i]) continue;
    for (int p : roles.producers[i]) ++inference_users[static_cast<size_t>(p)];
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    const Node& node = graph.node(static_cast<int>(i));
    if (node.removed || roles.training[i] || inference_users[i] > 0 || never_candidate(node.op())) continue;
    out.push_back(node.name());
  }
  return out;
}

std::string default_checkpoint_for(const LoadedGraph& loaded) {
  std::error_code ec;
  if (!loaded.saved_model_dir.empty()) {
    const std::string prefix = loaded.saved_model_dir + "/variables/variables";
    return fs::exists(prefix + ".index", ec) ? prefix : std::string();
  }
  if (loaded.kind != GraphFileKind::kMetaGraphDef) return "";
  const fs::path path(loaded.path);
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  if (fs::is_regular_file(dir / "checkpoint", ec)) return dir.string();
  const std::string file = path.filename().string();
  if (file.size() <= 5 || file.compare(file.size() - 5, 5, ".meta") != 0) return "";
  const std::string stem = file.substr(0, file.size() - 5);
  if (fs::exists(dir / (stem + ".index"), ec) || fs::is_regular_file(dir / stem, ec)) return (dir / stem).string();
  for (const auto& entry : fs::directory_iterator(dir, ec)) {  // V1 shards: "<stem>-00000-of-00001"
    const std::string name = entry.path().filename().string();
    if (name.rfind(stem + "-", 0) == 0 && name.find("-of-") != std::string::npos) return (dir / stem).string();
  }
  return "";
}

std::string describe_checkpoint(const std::string& path) {
  const CheckpointReader reader = CheckpointReader::open(path);
  std::ostringstream s;
  const std::vector<std::string> keys = reader.keys();
  const bool v1 = reader.format() == CheckpointFormat::kV1Table;
  s << "checkpoint: " << reader.prefix() << (v1 ? " (V1, " : " (V2, ") << reader.num_shards()
    << (v1 ? " file(s), " : " shard(s), ") << keys.size() << " tensors)\n";
  const size_t verified = reader.verify_all();
  for (const std::string& key : keys) {
    const CheckpointEntry& e = reader.entry(key);
    s << "  " << key << "  " << tf_dtype_name(e.tf_dtype) << " " << shape_to_string(e.shape)
      << (e.partitioned ? "  (partitioned, " + std::to_string(e.slices.size()) + " slices)" : std::string())
      << "\n";
  }
  if (v1) {
    s << "  block CRC32C verified; values of " << verified << " stored slice(s) decoded\n";
  } else {
    s << "  CRC32C verified for " << verified << " stored tensor(s)\n";
  }
  return s.str();
}

std::string describe_graph(const InfoOptions& options) {
  if (options.graph_path.empty()) return describe_checkpoint(options.checkpoint_path);
  LoadOptions load;
  load.tags = options.tags;
  const LoadedGraph loaded = load_graph(options.graph_path, load);
  const Graph graph(loaded.graph, loaded.path);
  std::ostringstream s;
  std::map<std::string, int> ops;
  for (size_t i = 0; i < graph.size(); ++i) ops[graph.node(static_cast<int>(i)).op()]++;
  s << "graph: " << loaded.path << " (" << kind_text(loaded) << ")\n";
  s << "  nodes: " << graph.size() << ", distinct ops: " << ops.size();
  if (loaded.graph.library().function_size() > 0) {
    s << ", library functions: " << loaded.graph.library().function_size() << " (TF2-style graph)";
  }
  s << "\n";
  if (loaded.default_attrs_added > 0) {
    s << "  default attrs filled from stripped_op_list: " << loaded.default_attrs_added << "\n";
  }
  if (loaded.meta) {
    const std::vector<Signature> signatures = list_signatures(*loaded.meta);
    s << "  signatures (" << signatures.size() << "):\n";
    for (const Signature& sig : signatures) {
      s << "    " << format_signature(sig) << (sig.name == "serving_default" ? "  [default]" : "") << "\n";
    }
  }
  // Placeholders feeding only assign/saver structure (Keras' set_weights, the
  // Saver's filename) are counted, not listed.
  const Roles roles = graph_roles(graph);
  std::vector<int> placeholders;
  size_t state_placeholders = 0;
  for (size_t i = 0; i < graph.size(); ++i) {
    const Node& node = graph.node(static_cast<int>(i));
    if (node.op() == "Placeholder" || node.op() == "PlaceholderV2" || node.op() == "PlaceholderWithDefault") {
      const AttrValue* dtype = find_attr(node.def, "dtype");
      if (roles.state[i] || (dtype != nullptr && dtype->value_case() == AttrValue::kType &&
                             static_cast<int>(dtype->type()) == kTfResource)) {
        ++state_placeholders;
      } else {
        placeholders.push_back(static_cast<int>(i));
      }
    }
  }
  s << "  placeholders (" << placeholders.size() << "):\n";
  for (size_t k = 0; k < placeholders.size() && k < 50; ++k) {
    const Node& node = graph.node(placeholders[k]);
    s << "    " << node.name() << "  " << node_dtype_shape(node.def)
      << (node.op() == "PlaceholderWithDefault" ? "  (has a default: used unless fed)" : "") << "\n";
  }
  if (placeholders.size() > 50) s << "    ... " << (placeholders.size() - 50) << " more\n";
  if (state_placeholders > 0) {
    s << "    (+" << state_placeholders << " resource handles or feeding only assign/saver ops, not listed)\n";
  }
  const std::vector<std::string> candidates = candidate_outputs(graph);
  s << "  candidate outputs (" << candidates.size() << "):";
  for (size_t i = 0; i < candidates.size() && i < 40; ++i) s << (i ? ", " : " ") << candidates[i];
  if (candidates.size() > 40) s << ", ... (" << (candidates.size() - 40) << " more)";
  s << "\n";

  // Variables and whether the checkpoint holds them (by name or collection slice info).
  std::vector<int> variables;
  for (size_t i = 0; i < graph.size(); ++i) {
    if (is_variable_op(graph.node(static_cast<int>(i)).op())) variables.push_back(static_cast<int>(i));
  }
  std::string checkpoint_path = options.checkpoint_path.empty() ? default_checkpoint_for(loaded) : options.checkpoint_path;
  std::unique_ptr<CheckpointReader> checkpoint;
  if (!checkpoint_path.empty()) {
    try {
      checkpoint = std::make_unique<CheckpointReader>(CheckpointReader::open(checkpoint_path));
      s << "  checkpoint: " << checkpoint->prefix() << " (" << checkpoint->keys().size() << " tensors)\n";
    } catch (const ConvertError& e) {
      s << "  checkpoint: unusable: " << e.what() << "\n";
    }
  } else if (!variables.empty()) {
    s << "  checkpoint: none found (pass --checkpoint)\n";
  }
  const auto hints = loaded.meta ? variable_hints_from_collections(*loaded.meta) : std::map<std::string, VariableKeyHint>{};
  s << "  variables (" << variables.size() << "):\n";
  size_t shown = 0, missing = 0;
  for (int v : variables) {
    const Node& node = graph.node(v);
    std::string key = node.name();
    const auto hint = hints.find(key);
    if (hint != hints.end()) key = hint->second.key;
    const bool present = checkpoint && checkpoint->contains(key);
    missing += checkpoint && !present;
    if (++shown > 200) continue;
    s << "    " << node.name() << "  " << node.op() << " " << node_dtype_shape(node.def);
    if (checkpoint) s << (present ? "  in checkpoint" : "  NOT in checkpoint");
    if (hint != hints.end()) s << " (slice " << hint->second.slice_spec << " of '" << hint->second.key << "')";
    s << "\n";
  }
  if (shown > 200) s << "    ... " << (shown - 200) << " more\n";
  if (checkpoint && missing > 0) s << "  " << missing << " variable(s) are not in the checkpoint by name\n";
  s << saver_line(loaded);
  if (loaded.meta && loaded.meta->collection_def_size() > 0) {
    std::map<std::string, int> collections;
    for (const auto& [name, def] : loaded.meta->collection_def()) {
      collections[name] = def.node_list().value_size() + def.bytes_list().value_size() +
                          def.int64_list().value_size() + def.float_list().value_size() +
                          def.any_list().value_size();
    }
    s << "  collections:";
    for (const auto& [name, count] : collections) s << " " << name << "(" << count << ")";
    s << "\n";
  }
  for (const std::string& warning : loaded.warnings) s << "  warning: " << warning << "\n";
  return s.str();
}

namespace {

const OpClassRule* matching_rule(const std::string& op) {
  for (const OpClassRule& rule : op_class_rules()) {
    if (rule.names.matches(op)) return &rule;
  }
  return nullptr;
}

OpTreatment rule_treatment(const OpClassRule& rule) {
  if (rule.handled != nullptr) {
    return {OpTreatment::Kind::kHandled,
            std::string(rule.handled) + "; refused otherwise: " + op_class_description(rule.op_class)};
  }
  return {OpTreatment::Kind::kRefused, op_class_description(rule.op_class)};
}

}  // namespace

const char* op_treatment_kind_name(OpTreatment::Kind kind) {
  switch (kind) {
    case OpTreatment::Kind::kLowered: return "lowered";
    case OpTreatment::Kind::kHandled: return "handled";
    case OpTreatment::Kind::kRefused: return "refused";
    case OpTreatment::Kind::kUnknown: return "unknown";
  }
  return "";
}

OpTreatment op_treatment(const std::string& op) {
  // unroll_control_flow runs before the inference check and leaves none of these.
  for (const char* array_op : resolved_tensor_array_ops()) {
    if (op == array_op) {
      return {OpTreatment::Kind::kHandled,
              "TensorArray resolved into ordinary tensors at conversion time when its size and indices fold to "
              "constants (passes/control_flow)"};
    }
  }
  if (is_fetchable_variable_update(op)) {
    return {OpTreatment::Kind::kLowered,
            "a fetched variable update: computed as Session.run returns it (the variable's value with the update "
            "applied, nothing written back); dropped when no output needs it"};
  }
  if (const OpClassRule* rule = matching_rule(op)) return rule_treatment(*rule);
  const OpHandler* handler = find_handler(op);
  if (handler == nullptr && refusal_reason(op) != nullptr) return {OpTreatment::Kind::kRefused, refusal_reason(op)};
  if (handler == nullptr) return {OpTreatment::Kind::kUnknown, "floe has no handler for it"};
  if (is_model_input_op(op)) {
    return {OpTreatment::Kind::kLowered, "a model input (or a constant when --freeze-input fixes it)"};
  }
  if (handler->refuses_every_use) return {OpTreatment::Kind::kRefused, handler->refusal};
  if (handler->refusal != nullptr) return {OpTreatment::Kind::kLowered, handler->refusal};
  if (handler->lower == nullptr) {
    return {OpTreatment::Kind::kLowered,
            "folded: its output is computed at conversion time (refused, naming the tensor, when that needs "
            "a graph input's values)"};
  }
  return {OpTreatment::Kind::kLowered, ""};
}

std::string describe_ops(const InfoOptions& options) {
  LoadOptions load;
  load.tags = options.tags;
  const LoadedGraph loaded = load_graph(options.graph_path, load);
  std::map<std::string, int> ops;
  for (const auto& node : loaded.graph.node()) ops[node.op()]++;
  std::ostringstream s;
  s << loaded.path << ": " << loaded.graph.node_size() << " nodes, " << ops.size() << " distinct ops\n";
  size_t width = 0;
  for (const auto& entry : ops) width = std::max(width, entry.first.size());
  for (const auto& [op, count] : ops) {
    const OpTreatment t = op_treatment(op);
    std::string how;
    switch (t.kind) {
      case OpTreatment::Kind::kLowered: how = "supported"; break;
      case OpTreatment::Kind::kHandled: how = t.detail.substr(0, t.detail.find("; refused otherwise")); break;
      case OpTreatment::Kind::kRefused:
      case OpTreatment::Kind::kUnknown: {
        const std::string d = op_class_description(classify_op(op));
        how = refusal_reason(op) ? std::string("refused: ") + refusal_reason(op)
                                 : "refused on the inference path: " + d.substr(0, d.find(" ("));
      }
    }
    s << "  " << op << std::string(width - op.size() + 2, ' ') << "x" << count << "  " << how << "\n";
  }
  return s.str();
}

std::string describe_all_ops() {
  std::set<std::string> names;
  for (const OpHandler* handler : registered_handlers()) names.insert(handler->tf_op);
  for (const char* op : resolved_tensor_array_ops()) names.insert(op);
  for (const char* op : data_dependent_shape_ops()) names.insert(op);
  std::vector<std::pair<std::string, OpTreatment>> patterns;
  for (const OpClassRule& rule : op_class_rules()) {
    const OpNamePattern& p = rule.names;
    for (const char* op : p.exact) names.insert(op);
    for (const char* op : p.except) names.insert(op);
    for (const char* f : p.prefixes) patterns.emplace_back(std::string(f) + "*", rule_treatment(rule));
    for (const char* f : p.suffixes) patterns.emplace_back("*" + std::string(f), rule_treatment(rule));
    for (const char* f : p.substrings) patterns.emplace_back("*" + std::string(f) + "*", rule_treatment(rule));
  }
  std::map<OpTreatment::Kind, int> counts;
  std::vector<std::pair<std::string, OpTreatment>> rows;
  for (const std::string& name : names) {
    rows.emplace_back(name, op_treatment(name));
    counts[rows.back().second.kind]++;
  }
  size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.first.size());
  for (const auto& row : patterns) width = std::max(width, row.first.size());
  auto line = [&](const std::string& name, const OpTreatment& t) {
    return "  " + name + std::string(width - name.size() + 2, ' ') + op_treatment_kind_name(t.kind) +
           (t.detail.empty() ? "" : ": " + t.detail) + "\n";
  };
  std::ostringstream s;
  s << "floe knows " << rows.size() << " TensorFlow op names: " << counts[OpTreatment::Kind::kLowered]
    << " lowered, " << counts[OpTreatment::Kind::kHandled] << " handled by a pass, "
    << counts[OpTreatment::Kind::kRefused] << " refused with a reason\n";
  for (const auto& [name, t] : rows) s << line(name, t);
  s << "name patterns (" << patterns.size() << ", in the order they are tried; for ops no row above names):\n";
  for (const auto& [name, t] : patterns) s << line(name, t);
  return s.str();
}

}  // namespace floe::conv
