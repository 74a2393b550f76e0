// SPDX-License-Identifier: Apache-2.0
// The TensorFlow graph as the converter edits it: NodeDefs with their input
// strings resolved to (node, port) edges and control edges. Node order is the
// file's order (not necessarily topological); removed nodes stay in place,
// flagged, so indices are stable across passes.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "converter/ir/host_tensor.h"
#include "converter/proto/tf_subset.pb.h"

namespace floe::conv {

// One output of one node: TF's "node:port".
struct TensorRef {
  int node = -1;
  int port = 0;
  bool operator==(const TensorRef& o) const { return node == o.node && port == o.port; }
  bool operator<(const TensorRef& o) const {
    return node != o.node ? node < o.node : port < o.port;
  }
};

struct Node {
  tfproto::NodeDef def;
  std::vector<TensorRef> inputs;    // data inputs, in order
  std::vector<int> control_inputs;  // "^name" dependencies
  // Set by freezing: the variable's value (the node then acts as a Const).
  std::shared_ptr<const HostTensor> frozen_value;
  bool removed = false;

  const std::string& name() const { return def.name(); }
  const std::string& op() const { return def.op(); }
};

// TF1 cond primitives, Ref variants included.
inline bool is_switch_op(const std::string& op) { return op == "Switch" || op == "RefSwitch"; }
inline bool is_merge_op(const std::string& op) { return op == "Merge" || op == "RefMerge"; }
inline bool is_enter_op(const std::string& op) { return op == "Enter" || op == "RefEnter"; }
inline bool is_exit_op(const std::string& op) { return op == "Exit" || op == "RefExit"; }
inline bool is_next_iteration_op(const std::string& op) { return op == "NextIteration" || op == "RefNextIteration"; }

class Graph;
// Rebuilds node.def's input strings from its resolved edges (after a pass
// rewired them), so --info, dumps and error messages show the edited graph.
void sync_def_inputs(const Graph& graph, Node& node);

class Graph {
 public:
  // Resolves every input string; a reference to a missing node is an error
  // naming both nodes and `source` (the file the graph came from).
  Graph(const tfproto::GraphDef& graph, std::string source);

  size_t size() const { return nodes_.size(); }
  Node& node(int index) { return nodes_[static_cast<size_t>(index)]; }
  const Node& node(int index) const { return nodes_[static_cast<size_t>(index)]; }
  const std::string& source() const { return source_; }

  // -1 when absent.
  int find(const std::string& name) const;
  // Parses "name" / "name:k" (a leading '^' is not allowed); throws when the
  // node does not exist, listing close matches.
  TensorRef resolve_tensor(const std::string& tensor_name) const;
  // Canonical TF name: "node:k".
  std::string tensor_name(TensorRef ref) const;
  // Appends a node (its resolved edges set by the caller); returns its index.
  // Throws when the name is taken. References to nodes may move.
  int add_node(Node node);

 private:
  std::vector<Node> nodes_;
  std::unordered_map<std::string, int> index_;
  std::string source_;
};

// The nodes with keep[n], inputs before users; throws naming a node on a cycle.
// `control_flow_waits`: a run-time loop's _FloeWhileLoop and a run-time cond's
// _FloeIf also come after the computed tensors their ops read from outside
// (their control inputs other than constants), so those ops, grouped right
// after the WHILE or IF, find them written.
std::vector<int> topological_order(const Graph& graph, const std::vector<bool>& keep, bool control_flow_waits = false);

}  // namespace floe::conv
