// SPDX-License-Identifier: Apache-2.0
// FusedBatchNorm / V2 / V3 in inference mode against the formula
// y = (x - mean) * scale / sqrt(variance + epsilon) + offset, NHWC and NCHW; the
// empty statistics of a training export refused in inference mode; training mode
// (is_training true or absent) against the batch statistics computed here in
// double precision, and its reserve-space outputs refused.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/converter/support/tf1_test_util.h"

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

// Session.run's training-mode outputs: y from the batch's own mean and biased
// variance over every axis but the channels; batch_mean; batch_variance with
// Bessel's correction; with exponential_avg_factor f, outputs 1/2 are
// (1 - f) * input statistic + f * batch statistic.
struct TrainingReference {
  std::vector<double> y, mean, variance;
};

TrainingReference training_reference(const std::vector<float>& x, const std::vector<int64_t>& shape, int axis,
                                     float epsilon, float factor) {
  const int64_t channels = shape[static_cast<size_t>(axis)];
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  auto channel_of = [&](size_t i) { return static_cast<int>((static_cast<int64_t>(i) / inner) % channels); };
  const double n = static_cast<double>(x.size()) / static_cast<double>(channels);
  std::vector<double> sum(static_cast<size_t>(channels)), squares(static_cast<size_t>(channels));
  for (size_t i = 0; i < x.size(); ++i) sum[static_cast<size_t>(channel_of(i))] += x[i];
  for (double& m : sum) m /= n;
  for (size_t i = 0; i < x.size(); ++i) {
    const double c = x[i] - sum[static_cast<size_t>(channel_of(i))];
    squares[static_cast<size_t>(channel_of(i))] += c * c / n;
  }
  TrainingReference r;
  for (size_t i = 0; i < x.size(); ++i) {
    const int c = channel_of(i);
    r.y.push_back((x[i] - sum[static_cast<size_t>(c)]) / std::sqrt(squares[static_cast<size_t>(c)] + epsilon) *
                      kScale[static_cast<size_t>(c)] + kOffset[static_cast<size_t>(c)]);
  }
  for (int64_t c = 0; c < channels; ++c) {
    const double corrected = squares[static_cast<size_t>(c)] * n / (n - 1);
    r.mean.push_back((1 - factor) * kMean[static_cast<size_t>(c)] + factor * sum[static_cast<size_t>(c)]);
    r.variance.push_back((1 - factor) * kVariance[static_cast<size_t>(c)] + factor * corrected);
  }
  return r;
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want, double tolerance,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tolerance) << what << " element " << i;
}

TEST(BatchNorm, TrainingModeNormalizesWithTheBatchStatistics) {
  struct Case {
    const char* op;
    const char* attrs;
    std::vector<int64_t> shape;
    int axis;
    float epsilon, factor;
  };
  const Case cases[] = {
      // No is_training attr: TF's default is true.
      {"FusedBatchNorm", "attr { key: 'epsilon' value { f: 0.001 } }", {2, 2, 3, 3}, 3, 0.001f, 1.0f},
      {"FusedBatchNormV2", "attr { key: 'is_training' value { b: true } } attr { key: 'data_format' value { s: 'NCHW' } }",
       {2, 3, 2, 2}, 1, 0.0001f, 1.0f},
      {"FusedBatchNormV3", "attr { key: 'is_training' value { b: true } } attr { key: 'exponential_avg_factor' value { f: 0.25 } }",
       {1, 4, 2, 3}, 3, 0.0001f, 0.25f},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    std::string dims;
    for (int64_t d : c.shape) dims += "dim { size: " + std::to_string(d) + " } ";
    const ConvertOutcome r = try_convert(text_graph_options(bn_graph(c.op, c.attrs, dims), {"bn", "bn:1", "bn:2"}));
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_TRUE(contains(r.summary, "is in training mode: it normalizes with each batch's own mean and variance"))
        << r.summary;
    const HostTensor x = random_f32(c.shape, 21, -3.0f, 5.0f);
    const auto out = run_model(r.model, {{"x", x}});
    ASSERT_EQ(out.size(), 3u);
    const TrainingReference want = training_reference(as_floats(x), c.shape, c.axis, c.epsilon, c.factor);
    expect_near(as_floats(out[0]), want.y, 2e-5, "y");
    expect_near(as_floats(out[1]), want.mean, 2e-6, "batch_mean");
    expect_near(as_floats(out[2]), want.variance, 2e-5, "batch_variance");
  }
}

TEST(BatchNorm, TrainingModeReserveSpacesAreRefused) {
  const std::string graph = bn_graph("FusedBatchNormV3", "attr { key: 'is_training' value { b: true } }",
                                     "dim { size: 1 } dim { size: 2 } dim { size: 2 } dim { size: 3 }");
  for (const char* fetch : {"bn:3", "bn:4", "bn:5"}) {
    const ConvertOutcome r = try_convert(text_graph_options(graph, {"bn", fetch}));
    EXPECT_TRUE(contains(r.error, "node 'bn' (op FusedBatchNormV3): the outputs fetch '" + std::string(fetch) +
                                      "', a reserve space of training-mode batch norm"))
        << r.error;
  }
  const ConvertOutcome read = try_convert(text_graph_options(graph + unary("r", "Relu", "bn:4"), {"r"}));
  EXPECT_TRUE(contains(read.error, "node 'r' reads 'bn:4', a reserve space")) << read.error;
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
