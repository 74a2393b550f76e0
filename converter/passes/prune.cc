// SPDX-License-Identifier: Apache-2.0
// Pruning to the fetches (see prune.h).
#include "converter/passes/prune.h"

namespace floe::conv {
namespace {

bool is_placeholder(const Node& node) {
  return node.op() == "Placeholder" || node.op() == "PlaceholderV2";
}

// Marks every node reachable from `roots` backwards; feeds cut data edges.
std::vector<bool> reach(const Graph& graph, const std::vector<int>& roots,
                        const std::set<TensorRef>& feeds, bool follow_control) {
  std::vector<bool> seen(graph.size(), false);
  std::vector<int> stack;
  for (int r : roots) {
    if (!seen[static_cast<size_t>(r)]) {
      seen[static_cast<size_t>(r)] = true;
      stack.push_back(r);
    }
  }
  while (!stack.empty()) {
    const int n = stack.back();
    stack.pop_back();
    const Node& node = graph.node(n);
    auto visit = [&](int producer) {
      if (!seen[static_cast<size_t>(producer)]) {
        seen[static_cast<size_t>(producer)] = true;
        stack.push_back(producer);
      }
    };
    for (const TensorRef& in : node.inputs) {
      if (!feeds.count(in)) visit(in.node);
    }
    if (follow_control) {
      for (int c : node.control_inputs) visit(c);
    }
  }
  return seen;
}

}  // namespace

PruneResult prune_for_fetches(const Graph& graph, const std::vector<TensorRef>& fetches,
                              const std::set<TensorRef>& feeds) {
  std::vector<int> roots;
  for (const TensorRef& f : fetches) {
    if (!feeds.count(f)) roots.push_back(f.node);
  }
  PruneResult result;
  result.keep = reach(graph, roots, feeds, /*follow_control=*/false);
  const std::vector<bool> session = reach(graph, roots, feeds, /*follow_control=*/true);
  for (size_t n = 0; n < graph.size(); ++n) {
    const int index = static_cast<int>(n);
    if (session[n] && !result.keep[n]) result.control_only.push_back(index);
    if (result.keep[n] && is_placeholder(graph.node(index)) && !feeds.count(TensorRef{index, 0})) {
      result.placeholders.push_back(index);
    }
  }
  return result;
}

}  // namespace floe::conv
