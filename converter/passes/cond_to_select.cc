// SPDX-License-Identifier: Apache-2.0
// Input-dependent TF1 conds as Select (see cond_to_select.h). A branch is the set
// of nodes between the cond's Switches and one Merge input that depend on a
// Switch output (through data or control edges: constants in a branch hang off
// the pivot by a control edge). Nodes that depend on no Switch are outside the
// cond and always live, as in TF. Computing both branches is only sound when
// the untaken one has no effect and cannot fail, hence the op checks.
#include "converter/passes/cond_to_select.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>

#include "converter/ir/tf_dtype.h"
#include "converter/ir/attrs.h"
#include "converter/ir/error.h"
#include "converter/passes/control_flow.h"
#include "converter/passes/freeze.h"
#include "converter/passes/prune.h"

namespace floe::conv {
namespace {


// Why `node` may not run when its branch is not taken ("" when it may), and
// whether running only the taken branch (a run-time IF) makes it safe.
struct Hazard {
  std::string why;
  bool runs_as_if = false;
};

Hazard unsafe_in_untaken_branch(const Node& node) {
  const std::string& op = node.op();
  if (is_switch_op(op) || is_merge_op(op)) return {"it contains a nested cond that cannot be rewritten"};
  // A cond already run at run time may fail on its own branches.
  if (op == "_FloeIf" || op == "_FloeIfEnd") return {"it contains a cond run at run time", true};
  if (is_variable_op(op) || op == "Identity" || op == "NoOp") return {};
  if (classify_node(node.def) != OpClass::kSupported) {
    return {"branch node " + node.name() + " (" + op + ") is not a pure op"};
  }
  // A draw advances its generator: only the taken branch may run it, as in TF.
  if (op == "RandomUniform") return {"branch node " + node.name() + " (" + op + ") draws random values", true};
  // Data-dependent failures: TF never runs the untaken branch.
  static const char* const kMayFail[] = {"Gather", "GatherV2", "GatherNd", "ResourceGather", "CheckNumerics"};
  for (const char* f : kMayFail) {
    if (op == f) return {"branch node " + node.name() + " (" + op + ") can fail on the untaken branch's data", true};
  }
  static const char* const kDivisions[] = {"Div", "FloorDiv", "FloorMod", "Mod", "TruncateDiv", "TruncateMod",
                                           "RealDiv"};
  for (const char* d : kDivisions) {
    if (op != d) continue;
    const DType t = tf_dtype_to_floe(attr_type(node.def, "T", 0));
    if (t != DType::kFloat32 && t != DType::kFloat16 && t != DType::kBFloat16 && t != DType::kFloat64) {
      return {"branch node " + node.name() + " (" + op + ") is an integer division that can fail on the untaken "
              "branch's data", true};
    }
  }
  return {};
}

// One Merge input traced back to the Switches it hangs off.
struct Branch {
  std::set<int> nodes;           // depend on a Switch output
  std::set<int> switches;        // boundary Switches
  std::optional<TensorRef> pred;  // their common predicate
  int port = -1;                 // their common output port (1: true side)
  std::string problem;           // non-empty: not a simple branch
};

// TF gives a cond's data Switches `pred_id = Identity(pred)` and its pivots `pred`
// itself: follow Identities to the tensor that decides.
TensorRef canonical_predicate(const Graph& graph, TensorRef t, const std::set<TensorRef>& feeds) {
  for (int hops = 0; hops < 1000 && !feeds.count(t); ++hops) {
    const Node& node = graph.node(t.node);
    if (node.op() != "Identity" || node.inputs.size() != 1) break;
    t = node.inputs[0];
  }
  return t;
}

class CondTracer {
 public:
  CondTracer(const Graph& graph, const std::set<TensorRef>& feeds) : graph_(graph), feeds_(feeds) {}

  Branch trace(TensorRef start) {
    Branch b;
    std::map<int, bool> memo;  // node -> depends on a Switch
    auto note_switch = [&](int s, int port) {
      const Node& sw = graph_.node(s);
      if (sw.inputs.size() != 2) {
        b.problem = "Switch " + sw.name() + " is malformed";
        return;
      }
      if (port != 0 && port != 1) {  // a Switch has outputs :0 (false) and :1 (true) only
        b.problem = "it reads " + sw.name() + ":" + std::to_string(port) + ", but a Switch has outputs :0 and :1 only";
        return;
      }
      const TensorRef pred = canonical_predicate(graph_, sw.inputs[1], feeds_);
      if (b.pred && !(*b.pred == pred)) b.problem = "its branches hang off Switches on different predicates";
      if (b.port >= 0 && b.port != port) b.problem = "a branch mixes both sides of its Switches";
      b.pred = pred;
      b.port = port;
      b.switches.insert(s);
    };
    // Iterative DFS: a node depends on a Switch when one of its inputs is a Switch
    // output or a node that does.
    std::function<bool(int)> depends = [&](int n) -> bool {
      const auto it = memo.find(n);
      if (it != memo.end()) return it->second;
      memo[n] = false;  // cycles only through loops, which are excluded
      const Node& node = graph_.node(n);
      bool dep = false;
      for (const TensorRef& in : node.inputs) {
        if (feeds_.count(in)) continue;  // a fed tensor cuts the graph
        if (is_switch_op(graph_.node(in.node).op())) {
          note_switch(in.node, in.port);
          dep = true;
        } else {
          dep = depends(in.node) || dep;
        }
      }
      for (int c : node.control_inputs) {
        if (is_switch_op(graph_.node(c).op())) {
          b.problem = "node " + node.name() + " has a control edge from Switch " + graph_.node(c).name();
          dep = true;
        } else {
          dep = depends(c) || dep;
        }
      }
      memo[n] = dep;
      if (dep) b.nodes.insert(n);
      return dep;
    };
    if (feeds_.count(start)) {
      b.problem = "a Merge input is fed";
    } else if (is_switch_op(graph_.node(start.node).op())) {
      note_switch(start.node, start.port);  // the branch passes an outside tensor through
    } else {
      depends(start.node);
    }
    if (b.switches.empty() && b.problem.empty()) b.problem = "a branch depends on no Switch";
    return b;
  }

 private:
  const Graph& graph_;
  const std::set<TensorRef>& feeds_;
};

// Users of every node (data and control), for the "feeds only its branch" check.
std::vector<std::vector<int>> users_of(const Graph& graph) {
  std::vector<std::vector<int>> users(graph.size());
  for (size_t n = 0; n < graph.size(); ++n) {
    const Node& node = graph.node(static_cast<int>(n));
    if (node.removed) continue;
    for (const TensorRef& in : node.inputs) users[static_cast<size_t>(in.node)].push_back(static_cast<int>(n));
    for (int c : node.control_inputs) users[static_cast<size_t>(c)].push_back(static_cast<int>(n));
  }
  return users;
}

struct CondGroup {
  std::vector<int> merges;
  std::vector<std::pair<Branch, Branch>> sides;  // per merge: (input 0, input 1)
};

// A cond whose branches may not both run, after its Switches became
// Identities: a _FloeIf(pred, ^outside reads) node, each branch node tagged with
// the if and its side (nodes of a nested if keep their own tags; its _FloeIf
// node takes this one's), and the Merges Identities of one
// _FloeIfEnd(_FloeIf, then results, else results) (ops/if_ops.cc).
void rewrite_as_runtime_if(Graph& graph, TensorRef pred, const CondGroup& group, const std::set<int> (&side_nodes)[2],
                           const std::set<int>& outside_reads, const std::string& why, ControlFlowReport& report) {
  const int id = static_cast<int>(report.runtime_ifs.size());
  const std::string& merge_name = graph.node(group.merges.front()).name();
  const size_t slash = merge_name.rfind('/');
  const std::string name = slash == std::string::npos ? merge_name : merge_name.substr(0, slash);
  Node if_node;
  if_node.def.set_name(name + "/floe_if");
  if_node.def.set_op("_FloeIf");
  (*if_node.def.mutable_attr())["_floe_runs_if"].set_i(id);
  (*if_node.def.mutable_attr())["if_name"].set_s(name);
  if_node.inputs.push_back(pred);
  if_node.control_inputs.assign(outside_reads.begin(), outside_reads.end());
  // Inside a run-time loop's body (or condition), the two nodes are the loop's too.
  // (Copies: adding nodes may move the graph's nodes.)
  using Attr = std::decay_t<decltype(*find_attr(graph.node(0).def, ""))>;
  std::map<std::string, Attr> loop_tags;
  for (const char* key : {"_floe_loop", "_floe_loop_cond"}) {
    if (const auto* a = find_attr(graph.node(group.merges.front()).def, key)) loop_tags[key] = *a;
  }
  auto tag_loop = [&](Node& node) {
    for (const auto& [key, value] : loop_tags) (*node.def.mutable_attr())[key] = value;
  };
  tag_loop(if_node);
  const int if_index = graph.add_node(std::move(if_node));
  sync_def_inputs(graph, graph.node(if_index));
  for (int side = 0; side < 2; ++side) {
    for (int n : side_nodes[side]) {
      Node& node = graph.node(n);
      if (find_attr(node.def, "_floe_if") != nullptr) continue;  // a nested if's own branch
      (*node.def.mutable_attr())["_floe_if"].set_i(id);
      (*node.def.mutable_attr())["_floe_if_then"].set_b(side == 1);
    }
  }
  Node end;
  end.def.set_name(name + "/floe_if_end");
  end.def.set_op("_FloeIfEnd");
  (*end.def.mutable_attr())["_floe_if_ends"].set_i(id);
  end.inputs.push_back(TensorRef{if_index, 0});
  std::vector<TensorRef> on_true, on_false;
  for (size_t i = 0; i < group.merges.size(); ++i) {
    const Node& merge = graph.node(group.merges[i]);
    const Branch& a = group.sides[i].first;
    on_true.push_back(a.port == 1 ? merge.inputs[0] : merge.inputs[1]);
    on_false.push_back(a.port == 1 ? merge.inputs[1] : merge.inputs[0]);
  }
  end.inputs.insert(end.inputs.end(), on_true.begin(), on_true.end());
  end.inputs.insert(end.inputs.end(), on_false.begin(), on_false.end());
  tag_loop(end);
  const int end_index = graph.add_node(std::move(end));
  sync_def_inputs(graph, graph.node(end_index));
  for (size_t i = 0; i < group.merges.size(); ++i) {
    Node& merge = graph.node(group.merges[i]);
    merge.inputs = {TensorRef{end_index, static_cast<int>(i)}};
    merge.def.set_op("Identity");
    merge.def.mutable_attr()->erase("N");
    sync_def_inputs(graph, merge);
  }
  report.runtime_ifs.push_back("cond '" + name + "': run-time IF, only the taken branch runs (" + why + ")");
}

// One pass over the candidate Merges; returns how many conds were rewritten.
int rewrite_round(Graph& graph, const std::vector<TensorRef>& fetches, const std::set<TensorRef>& feeds,
                  ControlFlowReport& report) {
  const PruneResult pruned = prune_for_fetches(graph, fetches, feeds);
  const std::vector<bool> candidates = outside_loops(graph, pruned.keep);
  CondTracer tracer(graph, feeds);
  std::map<TensorRef, CondGroup> groups;
  std::map<TensorRef, std::string> refused;  // predicate -> why
  for (size_t n = 0; n < graph.size(); ++n) {
    const Node& node = graph.node(static_cast<int>(n));
    if (!candidates[n] || node.removed || !is_merge_op(node.op())) continue;
    if (node.inputs.size() != 2) continue;
    Branch a = tracer.trace(node.inputs[0]), b = tracer.trace(node.inputs[1]);
    if (!a.pred || !b.pred) continue;  // no Switch at all: not ours to judge
    const TensorRef pred = *a.pred;
    std::string problem = !a.problem.empty() ? a.problem : b.problem;
    if (problem.empty() && !(*b.pred == pred)) problem = "its two inputs hang off different predicates";
    if (problem.empty() && a.port == b.port) problem = "both of its inputs come from the same side";
    if (!problem.empty()) {
      refused.emplace(pred, "Merge " + node.name() + ": " + problem);
      continue;
    }
    groups[pred].merges.push_back(static_cast<int>(n));
    groups[pred].sides.emplace_back(std::move(a), std::move(b));
  }

  const std::vector<std::vector<int>> users = users_of(graph);
  int rewritten = 0;
  for (auto& [pred, group] : groups) {
    if (refused.count(pred)) continue;
    std::set<int> side_nodes[2], switches, merges(group.merges.begin(), group.merges.end());
    for (auto& [a, b] : group.sides) {
      for (const Branch* br : {&a, &b}) {
        side_nodes[br->port].insert(br->nodes.begin(), br->nodes.end());
        switches.insert(br->switches.begin(), br->switches.end());
      }
    }
    std::string problem, impure;  // impure: why only the taken branch may run
    for (int side = 0; side < 2 && problem.empty(); ++side) {
      for (int n : side_nodes[side]) {
        const Hazard hazard = unsafe_in_untaken_branch(graph.node(n));
        if (!hazard.runs_as_if) problem = hazard.why;
        if (!problem.empty()) break;
        if (impure.empty()) impure = hazard.why;
        if (side_nodes[1 - side].count(n)) {
          problem = "node " + graph.node(n).name() + " is in both branches";
          break;
        }
        for (int u : users[static_cast<size_t>(n)]) {
          if (!side_nodes[side].count(u) && !merges.count(u)) {
            problem = "branch node " + graph.node(n).name() + " is also read by " + graph.node(u).name() +
                      ", outside the cond";
            break;
          }
        }
        if (!problem.empty()) break;
      }
    }
    for (int s : switches) {
      if (!problem.empty()) break;
      for (int u : users[static_cast<size_t>(s)]) {
        if (!side_nodes[0].count(u) && !side_nodes[1].count(u) && !merges.count(u)) {
          problem = "Switch " + graph.node(s).name() + " is also read by " + graph.node(u).name() + ", outside the cond";
          break;
        }
      }
    }
    for (int m : group.merges) {
      if (!problem.empty()) break;
      for (int u : users[static_cast<size_t>(m)]) {
        for (const TensorRef& in : graph.node(u).inputs) {
          if (in.node == m && in.port != 0) problem = "node " + graph.node(u).name() + " reads the value_index of Merge " + graph.node(m).name();
        }
      }
      for (const TensorRef& f : fetches) {
        if (f.node == m && f.port != 0) problem = "the value_index of Merge " + graph.node(m).name() + " is fetched";
      }
    }
    if (!problem.empty()) {
      refused.emplace(pred, problem);
      continue;
    }

    // Branch nodes read from outside the cond (through the Switches too): the
    // IF op waits for them. Collected before the Switches change.
    std::set<int> outside_reads;
    if (!impure.empty()) {
      for (int side = 0; side < 2; ++side) {
        for (int n : side_nodes[side]) {
          const Node& node = graph.node(n);
          for (const TensorRef& in : node.inputs) {
            if (!side_nodes[0].count(in.node) && !side_nodes[1].count(in.node)) outside_reads.insert(in.node);
          }
          for (int c : node.control_inputs) {
            if (!side_nodes[0].count(c) && !side_nodes[1].count(c)) outside_reads.insert(c);
          }
        }
      }
    }
    // Switch -> Identity of its data input; both outputs become output 0.
    for (int s : switches) {
      for (int u : users[static_cast<size_t>(s)]) {
        Node& user = graph.node(u);
        for (TensorRef& in : user.inputs) {
          if (in.node == s) in.port = 0;
        }
        sync_def_inputs(graph, user);
      }
      Node& sw = graph.node(s);
      sw.inputs.resize(1);
      sw.def.set_op("Identity");
      sync_def_inputs(graph, sw);
    }
    if (!impure.empty()) {
      rewrite_as_runtime_if(graph, pred, group, side_nodes, outside_reads, impure, report);
      ++rewritten;
      continue;
    }
    // Merge(false, true) -> Select(pred, true, false); Select has no N attr.
    for (size_t i = 0; i < group.merges.size(); ++i) {
      Node& merge = graph.node(group.merges[i]);
      const auto& [a, b] = group.sides[i];
      const TensorRef on_true = a.port == 1 ? merge.inputs[0] : merge.inputs[1];
      const TensorRef on_false = a.port == 1 ? merge.inputs[1] : merge.inputs[0];
      merge.inputs = {pred, on_true, on_false};
      merge.def.set_op("Select");
      merge.def.mutable_attr()->erase("N");
      sync_def_inputs(graph, merge);
      report.selected_merges.push_back(merge.name());
    }
    ++rewritten;
  }
  for (const auto& [pred, why] : refused) {
    for (size_t n = 0; n < graph.size(); ++n) {
      const Node& node = graph.node(static_cast<int>(n));
      if (!node.removed && is_switch_op(node.op()) && node.inputs.size() == 2 &&
          canonical_predicate(graph, node.inputs[1], feeds) == pred) {
        std::string& reason = report.unresolved[static_cast<int>(n)];
        if (reason.find(why) == std::string::npos) {
          reason += (reason.empty() ? "" : "; ") + std::string("not computable as a Select: ") + why;
        }
      }
    }
  }
  return rewritten;
}

}  // namespace

void select_input_dependent_conds(Graph& graph, const std::vector<TensorRef>& fetches,
                                  const std::set<TensorRef>& feeds, ControlFlowReport& report) {
  // Inside out: a nested cond's Switches are rewritten before its outer one can qualify.
  for (int round = 0; round < 64; ++round) {
    const size_t ifs_before = report.runtime_ifs.size();
    const int rewritten = rewrite_round(graph, fetches, feeds, report);
    report.conds_selected += rewritten - static_cast<int>(report.runtime_ifs.size() - ifs_before);
    if (rewritten == 0) break;
  }
}

}  // namespace floe::conv
