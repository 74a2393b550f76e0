// SPDX-License-Identifier: Apache-2.0
// Session.run-style pruning: keep what the fetches need. Starting at the fetched
// tensors' nodes, follow data inputs and control inputs, stopping at fed tensors
// (a fed tensor replaces its producer). Nodes reached only through control
// edges cannot change any fetched value once variables are frozen (they are
// initializers, update ops, asserts...), so they are reported, not converted.
#pragma once

#include <set>
#include <vector>

#include "converter/ir/graph.h"

namespace floe::conv {

struct PruneResult {
  std::vector<bool> keep;          // per node: needed through data edges
  std::vector<int> control_only;   // reached by Session.run only through control edges
  std::vector<int> placeholders;   // kept Placeholder nodes that are not fed (default inputs)
};

PruneResult prune_for_fetches(const Graph& graph, const std::vector<TensorRef>& fetches,
                              const std::set<TensorRef>& feeds);

}  // namespace floe::conv
