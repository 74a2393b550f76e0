// SPDX-License-Identifier: Apache-2.0
// Training-only structure (see training_structure.h). Predicates are evaluated
// from the predicate's ancestors (ops/evaluate.h), so conversion-time evaluation
// uses the same handlers and reference kernels as every other fold (no second definition
// of Less, LogicalNot, ...). Deadness follows TF's executor: a node with a dead
// data or control input is dead, except Merge, which is dead only when every data
// input is.
#include "converter/passes/training_structure.h"

#include <algorithm>
#include <cstdlib>

#include "converter/ir/tf_dtype.h"
#include "converter/ir/attrs.h"
#include "converter/ir/error.h"
#include "converter/ops/evaluate.h"
#include "converter/ops/op_registry.h"
#include "converter/passes/freeze.h"
#include "converter/passes/prune.h"

namespace floe::conv {
namespace {

bool is_placeholder(const std::string& op) { return op == "Placeholder" || op == "PlaceholderV2"; }

bool in_set(const std::string& op, std::initializer_list<const char*> ops) {
  for (const char* o : ops) {
    if (op == o) return true;
  }
  return false;
}

std::vector<std::string> split_values(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    out.push_back(item);
    start = end + 1;
  }
  return out;
}

// One textual value stored at element `i` of `t`.
void store_value(HostTensor& t, int64_t i, const std::string& text, const std::string& where) {
  auto bad = [&] { throw ConvertError(where + ": '" + text + "' is not a " + dtype_name(t.dtype) + " value"); };
  if (t.dtype == DType::kBool) {
    std::string lower = text;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower == "true" || lower == "1") {
      t.as<uint8_t>()[i] = 1;
    } else if (lower == "false" || lower == "0") {
      t.as<uint8_t>()[i] = 0;
    } else {
      bad();
    }
    return;
  }
  char* end = nullptr;
  if (t.dtype == DType::kFloat32 || t.dtype == DType::kFloat64) {
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') bad();
    if (t.dtype == DType::kFloat32) {
      t.as<float>()[i] = static_cast<float>(v);
    } else {
      t.as<double>()[i] = v;
    }
    return;
  }
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') bad();
  switch (t.dtype) {
    case DType::kInt32: t.as<int32_t>()[i] = static_cast<int32_t>(v); break;
    case DType::kInt64: t.as<int64_t>()[i] = v; break;
    case DType::kInt16: t.as<int16_t>()[i] = static_cast<int16_t>(v); break;
    case DType::kInt8: t.as<int8_t>()[i] = static_cast<int8_t>(v); break;
    case DType::kUInt8: t.as<uint8_t>()[i] = static_cast<uint8_t>(v); break;
    case DType::kUInt16: t.as<uint16_t>()[i] = static_cast<uint16_t>(v); break;
    default: throw ConvertError(where + ": dtype " + dtype_name(t.dtype) + " cannot be fixed from text");
  }
}

struct Predicate {
  bool known = false;
  bool value = false;
  std::string why;  // when not known
};

// Folds the predicate tensor from its data ancestors (ops/evaluate.h).
Predicate evaluate_predicate(const Graph& graph, TensorRef pred, const std::set<TensorRef>& feeds) {
  Predicate result;
  const std::string pred_name = graph.tensor_name(pred);
  if (feeds.count(pred)) {
    result.why = "predicate '" + pred_name + "' is fed";
    return result;
  }
  std::vector<bool> keep(graph.size(), false);
  std::vector<int> stack{pred.node};
  keep[static_cast<size_t>(pred.node)] = true;
  size_t visited = 0;
  while (!stack.empty()) {
    const int n = stack.back();
    stack.pop_back();
    const Node& node = graph.node(n);
    if (++visited > 20000) {
      result.why = "predicate '" + pred_name + "' has too many ancestors to fold";
      return result;
    }
    const std::string& op = node.op();
    const std::string named = "'" + node.name() + "'";
    if (is_placeholder(op)) {
      result.why = "predicate '" + pred_name + "' depends on placeholder " + named +
                   " (fix it at conversion time with --freeze-input " + node.name() + "=...)";
      return result;
    }
    if (is_variable_op(op) && !node.frozen_value) {
      result.why = "predicate '" + pred_name + "' depends on variable " + named;
      return result;
    }
    if (is_switch_op(op) || is_merge_op(op) || in_set(op, {"Enter", "Exit", "NextIteration", "LoopCond"})) {
      result.why = "predicate '" + pred_name + "' depends on control flow node " + named + " (" + op + ")";
      return result;
    }
    if (find_handler(op) == nullptr) {
      result.why = "predicate '" + pred_name + "' depends on " + named + " (op " + op +
                   "), which floe cannot evaluate at conversion time";
      return result;
    }
    for (const TensorRef& in : node.inputs) {
      if (feeds.count(in)) {
        result.why = "predicate '" + pred_name + "' depends on fed tensor '" + graph.tensor_name(in) + "'";
        return result;
      }
      if (!keep[static_cast<size_t>(in.node)]) {
        keep[static_cast<size_t>(in.node)] = true;
        stack.push_back(in.node);
      }
    }
  }
  try {
    const std::shared_ptr<const HostTensor> t = evaluate_constant(graph, keep, pred);
    if (!t || t->num_elements() != 1) {
      result.why = "predicate '" + pred_name + "' is not a constant scalar";
      return result;
    }
    bool value = false;
    for (uint8_t byte : t->data) value = value || byte != 0;  // nonzero in any dtype
    result.known = true;
    result.value = value;
  } catch (const ConvertError& e) {
    result.why = "predicate '" + pred_name + "' cannot be folded: " + e.what();
  }
  return result;
}

class Deadness {
 public:
  explicit Deadness(Graph& graph) : graph_(graph), dead_(graph.size(), false),
                                    data_users_(graph.size()), control_users_(graph.size()) {
    for (size_t n = 0; n < graph.size(); ++n) {
      const Node& node = graph.node(static_cast<int>(n));
      if (node.removed) continue;
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        data_users_[static_cast<size_t>(node.inputs[i].node)].push_back({static_cast<int>(n), static_cast<int>(i)});
      }
      for (int c : node.control_inputs) control_users_[static_cast<size_t>(c)].push_back(static_cast<int>(n));
    }
  }

  bool dead(int n) const { return dead_[static_cast<size_t>(n)]; }
  bool tensor_dead(TensorRef t) const {
    if (dead(t.node)) return true;
    const auto it = dead_port_.find(t.node);
    return it != dead_port_.end() && it->second == t.port;
  }
  const std::vector<std::pair<int, int>>& data_users(int n) const { return data_users_[static_cast<size_t>(n)]; }

  // Switch `s` takes `taken`; the other output dies.
  void resolve_switch(int s, bool taken) {
    const int dead_port = taken ? 0 : 1;
    dead_port_[s] = dead_port;
    for (const auto& [user, index] : data_users(s)) {
      if (graph_.node(user).inputs[static_cast<size_t>(index)].port == dead_port) reach(user);
    }
    drain();
  }

  int dead_port(int s) const { return dead_port_.at(s); }

 private:
  void reach(int user) {
    if (dead(user)) return;
    const Node& node = graph_.node(user);
    if (is_merge_op(node.op())) {
      for (const TensorRef& in : node.inputs) {
        if (!tensor_dead(in)) return;
      }
    }
    dead_[static_cast<size_t>(user)] = true;
    queue_.push_back(user);
  }
  void drain() {
    while (!queue_.empty()) {
      const int n = queue_.back();
      queue_.pop_back();
      for (const auto& user_index : data_users(n)) reach(user_index.first);
      for (int user : control_users_[static_cast<size_t>(n)]) {
        if (!is_merge_op(graph_.node(user).op())) reach(user);
      }
    }
  }

  Graph& graph_;
  std::vector<bool> dead_;
  std::vector<std::vector<std::pair<int, int>>> data_users_;  // (user, input index)
  std::vector<std::vector<int>> control_users_;
  std::map<int, int> dead_port_;
  std::vector<int> queue_;
};

// Applies one round of resolutions to the graph's edges. Returns resolved merges.
int rewrite(Graph& graph, Deadness& deadness, const std::vector<int>& switches,
            std::vector<TensorRef>& fetches, ControlFlowReport& report) {
  for (size_t n = 0; n < graph.size(); ++n) {
    Node& node = graph.node(static_cast<int>(n));
    if (deadness.dead(static_cast<int>(n)) && !node.removed) {
      node.removed = true;
      ++report.dead_nodes;
    }
  }
  for (const TensorRef& f : fetches) {
    if (deadness.tensor_dead(f)) {
      throw ConvertError(graph.source() + ": output '" + graph.tensor_name(f) +
                         "' is on a branch of a cond that is never taken with the predicates fixed at "
                         "conversion time");
    }
  }
  for (int s : switches) {
    Node& node = graph.node(s);
    if (node.removed) continue;
    const int live = 1 - deadness.dead_port(s);
    for (const auto& [user, index] : deadness.data_users(s)) {
      TensorRef& in = graph.node(user).inputs[static_cast<size_t>(index)];
      if (in.port == live) in.port = 0;
    }
    for (TensorRef& f : fetches) {
      if (f.node == s) f.port = 0;
    }
    node.inputs.resize(1);
    node.def.set_op("Identity");
    sync_def_inputs(graph, node);
    for (const auto& [user, index] : deadness.data_users(s)) {
      if (!deadness.dead(user)) sync_def_inputs(graph, graph.node(user));
    }
  }
  int merges = 0;
  for (size_t n = 0; n < graph.size(); ++n) {
    Node& node = graph.node(static_cast<int>(n));
    if (node.removed || !is_merge_op(node.op())) continue;
    std::vector<TensorRef> live;
    for (const TensorRef& in : node.inputs) {
      if (!deadness.tensor_dead(in)) live.push_back(in);
    }
    if (live.size() != 1 || node.inputs.size() == 1) continue;
    for (const auto& [user, index] : deadness.data_users(static_cast<int>(n))) {
      if (!deadness.dead(user) && graph.node(user).inputs[static_cast<size_t>(index)].port == 1) {
        throw ConvertError(graph.source() + ": node '" + graph.node(user).name() + "' reads value_index of '" +
                           node.name() + "' (Merge), which floe cannot resolve statically");
      }
    }
    for (const TensorRef& f : fetches) {
      if (f.node == static_cast<int>(n) && f.port != 0) {
        throw ConvertError(graph.source() + ": output '" + graph.tensor_name(f) +
                           "' is a Merge's value_index, which floe cannot resolve statically");
      }
    }
    node.inputs = live;
    node.def.set_op("Identity");
    sync_def_inputs(graph, node);
    ++merges;
  }
  return merges;
}

}  // namespace

namespace {

// "name" or "name:k" -> (name, k); "name:0" and "name" are the same tensor.
std::pair<std::string, int> split_tensor_name(const std::string& spec) {
  const size_t colon = spec.rfind(':');
  if (colon == std::string::npos || colon + 1 == spec.size()) return {spec, 0};
  for (size_t i = colon + 1; i < spec.size(); ++i) {
    if (spec[i] < '0' || spec[i] > '9') return {spec, 0};
  }
  return {spec.substr(0, colon), std::atoi(spec.c_str() + colon + 1)};
}

std::string values_text(const std::vector<std::string>& items) {
  std::string text;
  for (size_t i = 0; i < items.size() && i < 8; ++i) text += (i ? "," : "") + items[i];
  if (items.size() > 8) text += ",... (" + std::to_string(items.size()) + " values)";
  return text;
}

}  // namespace

std::vector<std::string> freeze_placeholders(Graph& graph, const std::map<std::string, std::string>& values) {
  std::vector<std::string> fixed;
  for (const auto& [spec_name, text] : values) {
    const auto [name, port] = split_tensor_name(spec_name);
    const std::string where = "--freeze-input " + spec_name;
    const int n = graph.find(name);
    if (n < 0) throw ConvertError(where + ": the graph has no node named '" + name + "'");
    const bool placeholder = port == 0 && (is_placeholder(graph.node(n).op()) || graph.node(n).op() == "PlaceholderWithDefault");
    const std::string tensor = name + ":" + std::to_string(port);
    int tf_type = 0;
    bool unknown_rank = true;
    std::vector<int64_t> shape;
    if (placeholder) {
      const Node& node = graph.node(n);
      tf_type = attr_type(node.def, "dtype", 0);
      if (find_attr(node.def, "shape") != nullptr) shape = attr_shape(node.def, "shape", &unknown_rank);
    } else if (!output_signature(graph.node(n).def, port, &tf_type, &shape, &unknown_rank)) {
      throw ConvertError(where + ": cannot tell the dtype of '" + tensor + "' (output " + std::to_string(port) +
                         " of a " + graph.node(n).op() + "); feed it with --inputs instead");
    }
    HostTensor value;
    value.dtype = tf_dtype_to_floe(tf_type);
    if (value.dtype == DType::kInvalid || value.dtype == DType::kFloat16 || value.dtype == DType::kBFloat16) {
      throw ConvertError(where + ": '" + tensor + "' has dtype " + tf_dtype_name(tf_type) +
                         ", which cannot be fixed from the command line");
    }
    const std::vector<std::string> items = split_values(text);
    bool known = !unknown_rank;
    for (int64_t d : shape) known = known && d >= 0;
    if (!known) {
      // Unknown dims: a single value is a scalar, several a vector (rank <= 1 only).
      if (!unknown_rank && shape.size() > 1) {
        throw ConvertError(where + ": '" + tensor + "' has shape " + shape_to_string(shape) +
                           " with unknown dims; cannot place " + std::to_string(items.size()) + " value(s)");
      }
      shape = (items.size() == 1 && (unknown_rank || shape.empty())) ? std::vector<int64_t>{}
                                                                      : std::vector<int64_t>{static_cast<int64_t>(items.size())};
    }
    value.shape = shape;
    const int64_t count = value.num_elements();
    if (items.size() != 1 && static_cast<int64_t>(items.size()) != count) {
      throw ConvertError(where + ": '" + tensor + "' of shape " + shape_to_string(shape) + " needs " +
                         std::to_string(count) + " value(s), got " + std::to_string(items.size()));
    }
    value.data.assign(static_cast<size_t>(count) * dtype_size(value.dtype), 0);
    for (int64_t i = 0; i < count; ++i) {
      store_value(value, i, items[items.size() == 1 ? 0 : static_cast<size_t>(i)], where);
    }
    fixed.push_back(tensor + " = " + values_text(items) + " (" + dtype_name(value.dtype) + " " +
                    shape_to_string(value.shape) + (placeholder ? ", placeholder" : ", output of " + graph.node(n).op()) +
                    ")");
    auto frozen = std::make_shared<const HostTensor>(std::move(value));
    if (placeholder) {
      Node& node = graph.node(n);
      node.frozen_value = std::move(frozen);
      node.def.set_op("Const");
      node.inputs.clear();
      sync_def_inputs(graph, node);
      continue;
    }
    // Any other tensor: its readers read a new Const instead, as Session.run
    // substitutes a fed value for exactly that tensor.
    Node constant;
    constant.def.set_name(name + "/fixed_output_" + std::to_string(port));
    constant.def.set_op("Const");
    constant.frozen_value = std::move(frozen);
    const int c = graph.add_node(std::move(constant));
    const TensorRef from{n, port};
    for (size_t u = 0; u < graph.size(); ++u) {
      Node& user = graph.node(static_cast<int>(u));
      bool changed = false;
      for (TensorRef& in : user.inputs) {
        if (in == from) {
          in = TensorRef{c, 0};
          changed = true;
        }
      }
      if (changed) sync_def_inputs(graph, user);
    }
  }
  return fixed;
}

ControlFlowReport resolve_static_control_flow(Graph& graph, std::vector<TensorRef>& fetches,
                                              const std::set<TensorRef>& feeds) {
  ControlFlowReport report;
  for (int round = 0; round < 64; ++round) {
    const PruneResult reach = prune_for_fetches(graph, fetches, feeds);
    std::vector<bool> session = reach.keep;
    for (int c : reach.control_only) session[static_cast<size_t>(c)] = true;
    std::map<TensorRef, Predicate> cache;
    std::vector<std::pair<int, bool>> decided;
    report.unresolved.clear();
    for (size_t n = 0; n < graph.size(); ++n) {
      const Node& node = graph.node(static_cast<int>(n));
      if (!session[n] || node.removed || !is_switch_op(node.op()) || node.inputs.size() != 2) continue;
      const TensorRef pred = node.inputs[1];
      auto it = cache.find(pred);
      if (it == cache.end()) it = cache.emplace(pred, evaluate_predicate(graph, pred, feeds)).first;
      if (it->second.known) {
        decided.emplace_back(static_cast<int>(n), it->second.value);
      } else {
        report.unresolved[static_cast<int>(n)] = it->second.why;
      }
    }
    if (decided.empty()) break;
    Deadness deadness(graph);
    std::vector<int> switches;
    for (const auto& [s, taken] : decided) {
      deadness.resolve_switch(s, taken);
      switches.push_back(s);
    }
    report.merges_resolved += rewrite(graph, deadness, switches, fetches, report);
    report.switches_resolved += static_cast<int>(decided.size());
  }
  return report;
}

int read_assigned_values(Graph& graph, const std::vector<TensorRef>& fetches, const std::set<TensorRef>& feeds) {
  const PruneResult reach = prune_for_fetches(graph, fetches, feeds);
  int rewritten = 0;
  for (size_t n = 0; n < graph.size(); ++n) {
    const Node& update = graph.node(static_cast<int>(n));
    if (!reach.keep[n] || update.removed || !is_fetchable_variable_update(update.op()) || update.inputs.empty()) {
      continue;
    }
    const TensorRef variable = update.inputs[0];
    Node& assign = graph.node(variable.node);
    if (assign.op() != "Assign" || assign.inputs.size() != 2 || feeds.count(variable)) continue;
    assign.inputs.erase(assign.inputs.begin());
    assign.def.set_op("Identity");
    sync_def_inputs(graph, assign);
    ++rewritten;
  }
  return rewritten;
}

}  // namespace floe::conv
