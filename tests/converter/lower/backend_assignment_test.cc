// SPDX-License-Identifier: Apache-2.0
// Backend assignment for the XNNPACK targets: which ops XNNPACK takes, and that
// ops below kParallelMinWork are marked single_threaded (the pool's wake-up
// and join would cost more than they save) while large ones are not.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "converter/lower/backend_xnnpack.h"
#include "schemas/floe_generated.h"
#include "tests/converter/support/tf1_test_util.h"
#include "tests/support/corpus.h"

namespace floe::testing {
namespace {

std::string matmul(const std::string& name, const std::string& a, const std::string& b) {
  return "node { name: '" + name + "' op: 'MatMul' input: '" + a + "' input: '" + b +
         "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
}

// x[1,784] -> 784x300 (235,200 MACs) -> 300x10 (3,000 MACs) -> Softmax (20 elements).
std::string mlp_graph() {
  return "versions { producer: 27 }\n" + placeholder("x", "DT_FLOAT", "dim { size: 1 } dim { size: 784 }") +
         float_const("w1", "dim { size: 784 } dim { size: 300 }", "float_val: 0.01") + matmul("h", "x", "w1") +
         float_const("w2", "dim { size: 300 } dim { size: 10 }", "float_val: 0.02") + matmul("logits", "h", "w2") +
         unary("prob", "Softmax", "logits");
}

std::map<std::string, bool> single_threaded_by_node(const std::vector<uint8_t>& model) {
  std::map<std::string, bool> out;
  const auto* m = schema::GetModel(model.data());
  for (const schema::Operator* op : *m->operators()) {
    EXPECT_EQ(op->backend(), schema::Backend::XNNPACK) << op->name()->str();
    out[op->name()->str()] = op->single_threaded();
  }
  return out;
}

TEST(BackendAssignment, SmallXnnpackOpsRunOnTheCallersThread) {
  for (const char* target : {"x86_64", "aarch64"}) {
    conv::ConvertOptions options = text_graph_options(mlp_graph(), {"prob"});
    options.target = target;
    const ConvertOutcome r = try_convert(options);
    ASSERT_TRUE(r.error.empty()) << r.error;
    const auto single = single_threaded_by_node(r.model);
    ASSERT_EQ(single.size(), 3u);
    EXPECT_FALSE(single.at("h")) << target << ": 235,200 MACs pay for a thread pool";
    EXPECT_TRUE(single.at("logits")) << target << ": 3,000 MACs do not";
    EXPECT_TRUE(single.at("prob")) << target;
    EXPECT_TRUE(contains(r.summary, "(2 too small for a thread pool run on the caller's thread)")) << r.summary;
  }
}

// The XNNPACK budget is the most any CPU of the target needs: on x86-64 that
// includes AMD Zen / Zen+'s FMA3 kernels, whose layout pads input channels to
// a multiple of 4 (the AVX-512F kernels pad nothing).
TEST(BackendAssignment, XnnpackBudgetCoversTheTargetsCpus) {
  const auto budget_for = [](int inputs) {
    const std::string k = std::to_string(inputs);
    const std::string graph = "versions { producer: 27 }\n" +
                              placeholder("x", "DT_FLOAT", "dim { size: 1 } dim { size: " + k + " }") +
                              float_const("w", "dim { size: " + k + " } dim { size: 5 }", "float_val: 0.5") +
                              matmul("y", "x", "w");
    conv::ConvertOptions options = text_graph_options(graph, {"y"});
    options.target = "x86_64";
    const ConvertOutcome r = try_convert(options);
    EXPECT_TRUE(r.error.empty()) << r.error;
    return r.error.empty() ? schema::GetModel(r.model.data())->xnnpack_arena_size() : 0;
  };
  // Packed weights: 16 output channels (the x86 tile) x (inputs + bias)
  // floats. 12 inputs pad nothing; 9 pad to 12 on Zen, so both need the same.
  EXPECT_EQ(budget_for(9), budget_for(12));
  EXPECT_EQ(budget_for(13) - budget_for(12), 16u * 4 * 4);  // 13 -> 16 inputs
}

// "x86_64-avx512" budgets only the AVX-512F kernels, which pad nothing;
// "x86_64" also Zen's, and "aarch64" the 8-wide Cortex-A tiles.
TEST(BackendAssignment, XnnpackBudgetForTheAvx512ClassIsTighter) {
  const std::string graph = "versions { producer: 27 }\n" +
                            placeholder("x", "DT_FLOAT", "dim { size: 1 } dim { size: 9 }") +
                            float_const("w", "dim { size: 9 } dim { size: 5 }", "float_val: 0.5") +
                            matmul("y", "x", "w");
  std::map<std::string, uint64_t> budget;
  for (const char* target : {"x86_64", "x86_64-avx512", "aarch64"}) {
    conv::ConvertOptions options = text_graph_options(graph, {"y"});
    options.target = target;
    const ConvertOutcome r = try_convert(options);
    ASSERT_TRUE(r.error.empty()) << r.error;
    const schema::Model* m = schema::GetModel(r.model.data());
    EXPECT_EQ(m->target()->str(), target);
    budget[target] = m->xnnpack_arena_size();
  }
  // Packed weights: 16 output channels (the x86 tile) x (inputs + bias) floats;
  // Zen pads the 9 inputs to 12. Everything else is the same on both.
  EXPECT_EQ(budget["x86_64"] - budget["x86_64-avx512"], 16u * 3 * 4);
  EXPECT_LT(budget["aarch64"], budget["x86_64-avx512"]);  // 8-wide tile, smaller operator object
}

// int8 KWS (DS-CNN): on the XNNPACK targets its convolutions, depthwise
// convolutions, the 25x5 average pool (global) and the fully connected layer
// go to XNNPACK; the reshape, the int8 softmax (none in XNNPACK 2022-02) and
// the im2col of the one-channel first convolution run the reference kernels.
// Cortex-M targets: the convolutions, depthwise convolutions and the fully
// connected layer on floe's int8 Cortex-M kernels, no XNNPACK region;
// reference: nothing but the reference kernels. The no-dot-product class needs
// at most what "aarch64" states.
TEST(BackendAssignment, Int8KwsOnXnnpackTargets) {
  const char* kws = "int8/mlperf_tiny/kws/kws_ref_model.tflite";
  FLOE_REQUIRE_CORPUS(kws);
  std::map<std::string, uint64_t> budget;
  const std::map<std::string, int> integer_kernel_ops = {
      {"CONV2D", 5}, {"DEPTHWISE_CONV2D", 4}, {"AVG_POOL2D", 1}, {"MATMUL", 1}};
  for (const bool fast : {false, true}) {
    for (const char* target : {"reference", "cortex-m4", "cortex-m55", "x86_64", "x86_64-avx512", "aarch64",
                               "aarch64-no-dotprod"}) {
      conv::ConvertOptions options;
      options.graph_path = corpus_path(kws);
      options.target = target;
      options.int8_fast_rounding = fast;
      const ConvertOutcome r = try_convert(options);
      ASSERT_TRUE(r.error.empty()) << target << ": " << r.error;
      const schema::Model* m = schema::GetModel(r.model.data());
      std::map<std::string, int> on_xnnpack, on_cortexm, on_reference;
      for (const schema::Operator* op : *m->operators()) {
        const std::string code = schema::EnumNameOpCode(op->opcode());
        (op->backend() == schema::Backend::XNNPACK    ? on_xnnpack
         : op->backend() == schema::Backend::CORTEX_M ? on_cortexm
                                                      : on_reference)[code] += 1;
      }
      const std::string t = target;
      // The exact default of every target but the reference: the integer
      // kernels (the Cortex-M ones; on the host, their full requantization).
      if (t == "reference" || t.rfind("cortex-m", 0) == 0 || !fast) {
        EXPECT_TRUE(on_xnnpack.empty()) << target;
        EXPECT_EQ(m->xnnpack_arena_size(), 0u) << target;
        EXPECT_EQ(on_cortexm, (t == "reference" ? std::map<std::string, int>() : integer_kernel_ops)) << target;
        // The host targets' GEMMs (the five convolutions, the fully connected
        // layer) carry the unsigned-input bias on x86-64 only; the ops that
        // may split across threads are those of 32768 multiply-adds or more:
        // all but the fully connected layer (64 x 12) and the average pool.
        const bool host = t.rfind("cortex-m", 0) != 0 && t != "reference";
        const bool x86 = t.rfind("x86_64", 0) == 0;
        int six_inputs = 0, pooled = 0;
        for (const schema::Operator* op : *m->operators()) {
          if (op->backend() != schema::Backend::CORTEX_M) continue;
          six_inputs += op->inputs()->size() == 6;
          pooled += !op->single_threaded();
        }
        EXPECT_EQ(six_inputs, x86 && host ? 6 : 0) << target;
        if (host) {
          EXPECT_EQ(pooled, 9) << target;
        }
        continue;
      }
      budget[target] = m->xnnpack_arena_size();
      EXPECT_TRUE(on_cortexm.empty()) << target;
      EXPECT_EQ(on_xnnpack, (std::map<std::string, int>{
                                {"CONV2D", 5}, {"DEPTHWISE_CONV2D", 4}, {"AVG_POOL2D", 1}, {"MATMUL", 1}}))
          << target;
      // The 10x4 first convolution over one channel: im2col on the reference
      // kernels, then a 1x1 convolution (one of the five) on XNNPACK.
      EXPECT_EQ(on_reference, (std::map<std::string, int>{{"EXTRACT_PATCHES", 1}, {"RESHAPE", 1}, {"SOFTMAX", 1}}))
          << target;
    }
  }
  EXPECT_LE(budget["aarch64-no-dotprod"], budget["aarch64"]);
  EXPECT_LE(budget["x86_64-avx512"], budget["x86_64"]);
}

TEST(BackendAssignment, ReferenceTargetMarksNothing) {
  const ConvertOutcome r = try_convert(text_graph_options(mlp_graph(), {"prob"}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  for (const schema::Operator* op : *schema::GetModel(r.model.data())->operators()) {
    EXPECT_EQ(op->backend(), schema::Backend::REFERENCE);
    EXPECT_FALSE(op->single_threaded());
  }
}

}  // namespace
}  // namespace floe::testing
