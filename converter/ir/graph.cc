// SPDX-License-Identifier: Apache-2.0
// Graph construction: index node names, resolve input strings to edges.
#include "converter/ir/graph.h"

#include <algorithm>

#include "converter/ir/attrs.h"
#include "converter/ir/error.h"

namespace floe::conv {

Graph::Graph(const tfproto::GraphDef& graph, std::string source) : source_(std::move(source)) {
  nodes_.reserve(static_cast<size_t>(graph.node_size()));
  for (const auto& def : graph.node()) {
    if (index_.count(def.name())) {
      throw ConvertError(source_ + ": node '" + def.name() + "' is defined twice");
    }
    index_[def.name()] = static_cast<int>(nodes_.size());
    Node node;
    node.def = def;
    nodes_.push_back(std::move(node));
  }
  for (Node& node : nodes_) {
    for (const std::string& input : node.def.input()) {
      const InputRef ref = parse_input(input);
      const int producer = find(ref.node);
      if (producer < 0) {
        throw ConvertError(source_ + ": node '" + node.name() + "' (op " + node.op() +
                           ") reads '" + input + "', but the graph has no node '" + ref.node + "'");
      }
      if (ref.control) {
        node.control_inputs.push_back(producer);
      } else {
        node.inputs.push_back(TensorRef{producer, ref.port});
      }
    }
  }
}

int Graph::add_node(Node node) {
  if (index_.count(node.name())) throw ConvertError(source_ + ": node '" + node.name() + "' is defined twice");
  const int index = static_cast<int>(nodes_.size());
  index_[node.name()] = index;
  nodes_.push_back(std::move(node));
  return index;
}

int Graph::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

TensorRef Graph::resolve_tensor(const std::string& tensor_name) const {
  const InputRef ref = parse_input(tensor_name);
  if (ref.control || ref.node.empty()) {
    throw ConvertError(source_ + ": '" + tensor_name + "' is not a tensor name (use node or node:k)");
  }
  const int node = find(ref.node);
  if (node < 0) {
    // Suggest nodes whose name contains the query, so typos are quick to fix.
    std::string hint;
    int shown = 0;
    for (const Node& n : nodes_) {
      if (n.name().find(ref.node) != std::string::npos && shown < 5) {
        hint += (shown++ ? ", " : "") + n.name();
      }
    }
    throw ConvertError(source_ + ": no node named '" + ref.node + "'" +
                       (hint.empty() ? std::string() : " (did you mean: " + hint + "?)"));
  }
  return TensorRef{node, ref.port};
}

std::string Graph::tensor_name(TensorRef ref) const {
  return node(ref.node).name() + ":" + std::to_string(ref.port);
}

void sync_def_inputs(const Graph& graph, Node& node) {
  node.def.clear_input();
  for (const TensorRef& in : node.inputs) {
    node.def.add_input(in.port == 0 ? graph.node(in.node).name() : graph.tensor_name(in));
  }
  for (int c : node.control_inputs) node.def.add_input("^" + graph.node(c).name());
}

std::vector<int> topological_order(const Graph& graph, const std::vector<bool>& keep, bool control_flow_waits) {
  std::vector<int> pending(graph.size(), 0);
  std::vector<std::vector<int>> users(graph.size());
  for (size_t n = 0; n < graph.size(); ++n) {
    if (!keep[n]) continue;
    const Node& node = graph.node(static_cast<int>(n));
    std::vector<int> producers;
    for (const TensorRef& in : node.inputs) producers.push_back(in.node);
    if (control_flow_waits && (node.op() == "_FloeWhileLoop" || node.op() == "_FloeIf")) {
      for (int c : node.control_inputs) {
        const Node& dep = graph.node(c);
        if (dep.op() != "Const" && !dep.frozen_value) producers.push_back(c);
      }
    }
    for (int p : producers) {
      if (keep[static_cast<size_t>(p)]) {
        ++pending[n];
        users[static_cast<size_t>(p)].push_back(static_cast<int>(n));
      }
    }
  }
  std::vector<int> order;
  for (size_t n = 0; n < graph.size(); ++n) {
    if (keep[n] && pending[n] == 0) order.push_back(static_cast<int>(n));
  }
  for (size_t i = 0; i < order.size(); ++i) {
    for (int user : users[static_cast<size_t>(order[i])]) {
      if (--pending[static_cast<size_t>(user)] == 0) order.push_back(user);
    }
  }
  for (size_t n = 0; n < graph.size(); ++n) {
    if (keep[n] && pending[n] > 0) {
      const Node& node = graph.node(static_cast<int>(n));
      throw ConvertError(graph.source() + ": node '" + node.name() + "' (op " + node.op() +
                         ") is on a cycle (a while loop that was not unrolled)");
    }
  }
  return order;
}


}  // namespace floe::conv
