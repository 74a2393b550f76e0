// SPDX-License-Identifier: Apache-2.0
// FusedBatchNorm / V2 / V3 in inference mode against the formula
// y = (x - mean) * scale / sqrt(variance + epsilon) + offset, NHWC and NCHW, and
// the training-mode refusals (is_training true or absent, empty statistics).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/converter/tf1_test_util.h"

namespace floe::testing {
namespace {

const std::vector<float> kScale = {1.5f, -0.5f, 2.0f}, kOffset = {0.25f, 1.0f, -3.0f};
const std::vector<float> kMean = {0.1f, -0.2f, 0.3f}, kVariance = {0.5f, 2.0f, 0.01f};

std::string vec3(const std::string& name, const std::vector<float>& v) {
  return float_const(name, "dim { size: 3 }",
                     "float_val: " + std::to_string(v[0]) + " float_val: " + std::to_string(v[1]) +
                         " float_val: " + std::to_string(v[2]));
}

std::string bn_graph(const std::string& op, const std::string& attrs, const std::string& x_dims,
                     const std::string& mean_node = "") {
  return placeholder("x", "DT_FLOAT", x_dims) + vec3("scale", kScale) + vec3("offset", kOffset) +
         (mean_node.empty() ? vec3("mean", kMean) : mean_node) + vec3("variance", kVariance) +
         "node { name: 'bn' op: '" + op +
         "' input: 'x' input: 'scale' input: 'offset' input: 'mean' input: 'variance' attr { key: 'T' value { "
         "type: DT_FLOAT } } attr { key: 'U' value { type: DT_FLOAT } } " + attrs + " }\n";
}

float expected(float x, int c, float epsilon) {
  return (x - kMean[c]) * kScale[c] / std::sqrt(kVariance[c] + epsilon) + kOffset[c];
}

TEST(BatchNorm, InferenceModeMatchesTheFormulaNhwc) {
  for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
    const std::string graph = bn_graph(op, "attr { key: 'is_training' value { b: false } } attr { key: 'epsilon' "
                                       "value { f: 0.001 } }", "dim { size: 1 } dim { size: 2 } dim { size: 2 } dim { size: 3 }");
    const ConvertOutcome r = try_convert(text_graph_options(graph, {"bn"}));
    ASSERT_TRUE(r.error.empty()) << op << ": " << r.error;
    EXPECT_TRUE(contains(r.summary, "ADD x1 MUL x1")) << r.summary;
    const HostTensor x = random_f32({1, 2, 2, 3}, 11, -2.0f, 2.0f);
    const auto out = run_model(r.model, {{"x", x}});
    ASSERT_EQ(out.size(), 1u);
    const std::vector<float> in = as_floats(x), got = as_floats(out[0]);
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], expected(in[i], static_cast<int>(i % 3), 0.001f), 1e-5f) << op << " element " << i;
    }
  }
}

TEST(BatchNorm, NchwUsesDimensionOneAndTheDefaultEpsilon) {
  const std::string graph = bn_graph("FusedBatchNormV3",
                                     "attr { key: 'is_training' value { b: false } } attr { key: 'data_format' "
                                     "value { s: 'NCHW' } }",
                                     "dim { size: 1 } dim { size: 3 } dim { size: 2 } dim { size: 2 }");
  const ConvertOutcome r = try_convert(text_graph_options(graph, {"bn"}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  const HostTensor x = random_f32({1, 3, 2, 2}, 5, -2.0f, 2.0f);
  const auto out = run_model(r.model, {{"x", x}});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<float> in = as_floats(x), got = as_floats(out[0]);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expected(in[i], static_cast<int>(i / 4), 0.0001f), 1e-5f) << i;
  }
}

TEST(BatchNorm, ConstantInputIsFoldedWithItsStatisticsOutputs) {
  const std::string graph =
      float_const("x", "dim { size: 1 } dim { size: 1 } dim { size: 1 } dim { size: 3 }",
                  "float_val: 1 float_val: 2 float_val: 3") + vec3("scale", kScale) + vec3("offset", kOffset) +
      vec3("mean", kMean) + vec3("variance", kVariance) +
      "node { name: 'bn' op: 'FusedBatchNormV3' input: 'x' input: 'scale' input: 'offset' input: 'mean' input: "
      "'variance' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'is_training' value { b: false } } }\n";
  const ConvertOutcome r = try_convert(text_graph_options(graph, {"bn", "bn:1", "bn:2"}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  const auto out = run_model(r.model, {});
  ASSERT_EQ(out.size(), 3u);
  const std::vector<float> y = as_floats(out[0]);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(y[c], expected(float(c + 1), c, 0.0001f), 1e-5f);
  EXPECT_EQ(as_floats(out[1]), kMean);
  EXPECT_EQ(as_floats(out[2]), kVariance);
}

TEST(BatchNorm, AbsentIsTrainingMeansTrainingAndIsRefusedPrecisely) {
  const std::string graph = bn_graph("FusedBatchNormV3", "", "dim { size: 1 } dim { size: 1 } dim { size: 1 } dim { size: 3 }");
  const ConvertOutcome r = try_convert(text_graph_options(graph, {"bn"}));
  EXPECT_TRUE(contains(r.error,
                       "graph is in training mode: node bn (FusedBatchNormV3) has is_training=true; export the "
                       "inference graph (is_training=False / K.set_learning_phase(0))"))
      << r.error;
  EXPECT_TRUE(contains(r.error, "the attr is absent and TF's default is true")) << r.error;
}

TEST(BatchNorm, EmptyStatisticsOfATrainingExportAreRefused) {
  const std::string graph = bn_graph(
      "FusedBatchNorm", "attr { key: 'is_training' value { b: false } }",
      "dim { size: 1 } dim { size: 1 } dim { size: 1 } dim { size: 3 }",
      float_const("mean", "dim { size: 0 }", ""));
  const ConvertOutcome r = try_convert(text_graph_options(graph, {"bn"}));
  EXPECT_TRUE(contains(r.error, "graph is in training mode: node bn (FusedBatchNorm) has empty mean/variance")) << r.error;
}

}  // namespace
}  // namespace floe::testing
