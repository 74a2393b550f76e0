// SPDX-License-Identifier: Apache-2.0
// Converter front-end throughput on the largest graph in the corpus: the 11k-node
// TensorFlow.NET InceptionV3.meta is parsed, indexed, described (candidate
// outputs) and pruned to its feature vector. The time is printed, never asserted
// (a benchmark, not a timed test); the goal is well under 2 s on the CI machine.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "converter/frontend/graphdef/graph_loader.h"
#include "converter/ir/graph.h"
#include "converter/passes/prune.h"
#include "converter/passes/training_structure.h"
#include "converter/pipeline/info.h"
#include "tests/support/corpus.h"

namespace floe::testing {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

TEST(FrontendThroughput, InceptionV3MetaParsesAndPrunes) {
  const char* rel = "TensorFlow.NET/graph/InceptionV3.meta";
  FLOE_REQUIRE_CORPUS(rel);
  const auto t0 = std::chrono::steady_clock::now();
  const conv::LoadedGraph loaded = conv::load_graph(corpus_path(rel));
  const double load_ms = ms_since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  conv::Graph graph(loaded.graph, loaded.path);
  const double index_ms = ms_since(t1);
  const auto t2 = std::chrono::steady_clock::now();
  const std::vector<std::string> candidates = conv::candidate_outputs(graph);
  const double candidates_ms = ms_since(t2);
  const auto t3 = std::chrono::steady_clock::now();
  std::vector<conv::TensorRef> fetches;
  for (const std::string& name : candidates) fetches.push_back(graph.resolve_tensor(name));
  const conv::ControlFlowReport control_flow = conv::resolve_static_control_flow(graph, fetches, {});
  const conv::PruneResult pruned = conv::prune_for_fetches(graph, fetches, {});
  const double prune_ms = ms_since(t3);
  size_t kept = 0;
  for (bool k : pruned.keep) kept += k;

  EXPECT_EQ(graph.size(), 11040u);
  EXPECT_EQ(candidates.size(), 2u);
  EXPECT_GT(kept, 1000u);
  EXPECT_EQ(control_flow.switches_resolved, 0);
  std::printf("[ bench    ] InceptionV3.meta (%zu nodes): load+parse %.1f ms, graph index %.1f ms, "
              "candidate outputs %.1f ms, control flow + prune %.1f ms (%zu kept), total %.1f ms\n",
              graph.size(), load_ms, index_ms, candidates_ms, prune_ms, kept, ms_since(t0));
}

}  // namespace
}  // namespace floe::testing
