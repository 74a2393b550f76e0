// SPDX-License-Identifier: Apache-2.0
// Quantization-aware-trained TF1 graphs -> int8 without calibration data
// (converter/quantize/quantization_aware.h, fake_quant_ranges.h):
//  - TF's FakeQuant nudging against the values of TF's own kernel tests
//    (tensorflow/core/kernels/fake_quant_ops_test.cc);
//  - a small QAT network (conv + relu, depthwise + relu6, 1x1 conv, matmul;
//    FakeQuant on the input, on every weight tensor — per tensor on batch-norm-
//    folded weights, per channel, narrow_range — and after every layer; weights,
//    biases and every min/max stored as variables in a V2 checkpoint) converts
//    with --quantize int8 alone, and its int8 outputs stay within one output
//    step of the FakeQuant float graph run through floe's float path;
//  - FakeQuant on raw weights with batch norm after the conv (the fold must
//    rescale the weights' grid); asymmetric weight ranges; narrow-range
//    activations; int8 inputs/outputs carrying the FakeQuant grids; a residual
//    Add + Relu;
//  - num_bits != 8 and missing ranges are refused, listing every offender;
//    calibration data fills a missing range;
//  - examples/qat_conv, a contrib.quantize-style graph written by tf1_writer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>

#include "converter/ir/tf_dtype.h"
#include "converter/quantize/fake_quant_ranges.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "tests/converter/support/checkpoint_test_util.h"
#include "tests/converter/support/tf1_test_util.h"
#include "tests/support/npz_writer.h"

namespace floe::testing {
namespace {

using conv::nudge_fake_quant;
using conv::NudgedRange;

// ---- TF's nudging -------------------------------------------------------------

struct NudgeCase {
  int num_bits;
  bool narrow_range;
  float min, max;                        // as stored in the graph
  int64_t zero_point;                    // TF's nudged zero point
  float nudged_min, nudged_max, scale;   // TF's nudged range
};

// The ranges of TF's FakeQuantWithMinMaxArgs/Vars kernel tests, with the
// nudged zero point and range their comments and expected outputs give.
TEST(FakeQuantNudge, MatchesTensorFlowsKernelTests) {
  const NudgeCase cases[] = {
      {8, false, -10.0f, 53.75f, 40, -10.0f, 53.75f, 0.25f},    // no nudging
      {8, true, -10.0f, 53.5f, 41, -10.0f, 53.5f, 0.25f},
      {8, false, -0.1f, 63.65f, 0, 0.0f, 63.75f, 0.25f},        // zero point 0.4 nudged down
      {8, true, -0.1f, 63.4f, 1, 0.0f, 63.5f, 0.25f},
      {8, false, -0.1275f, 63.6225f, 1, -0.25f, 63.5f, 0.25f},  // 0.51 nudged up
      {8, true, -0.1275f, 63.3725f, 2, -0.25f, 63.25f, 0.25f},
      {8, false, -63.65f, 0.1f, 255, -63.75f, 0.0f, 0.25f},     // zero point at the top
      {8, true, -63.4f, 0.1f, 255, -63.5f, 0.0f, 0.25f},
      {4, false, -6.0f, 1.5f, 12, -6.0f, 1.5f, 0.5f},
      {4, true, -6.0f, 1.0f, 13, -6.0f, 1.0f, 0.5f},
      {4, false, -0.4f, 7.1f, 1, -0.5f, 7.0f, 0.5f},
      {4, true, -6.8f, 0.2f, 15, -7.0f, 0.0f, 0.5f},
      {2, false, -1.0f, 0.5f, 2, -1.0f, 0.5f, 0.5f},
      {2, true, -1.0f, 0.0f, 3, -1.0f, 0.0f, 0.5f},
      {8, true, -10.0f, 10.0f, 128, -10.0f, 10.0f, 20.0f / 254.0f},  // symmetric narrow range: no nudging
  };
  for (const NudgeCase& c : cases) {
    SCOPED_TRACE(std::to_string(c.num_bits) + " bits, narrow " + std::to_string(c.narrow_range) + ", [" +
                 std::to_string(c.min) + ", " + std::to_string(c.max) + "]");
    const NudgedRange r = nudge_fake_quant(c.min, c.max, c.num_bits, c.narrow_range);
    EXPECT_EQ(r.zero_point, c.zero_point);
    EXPECT_EQ(r.quant_min, c.narrow_range ? 1 : 0);
    EXPECT_EQ(r.quant_max, (1 << c.num_bits) - 1);
    EXPECT_NEAR(r.scale, c.scale, 1e-6f);
    EXPECT_NEAR(r.min, c.nudged_min, 1e-4f);
    EXPECT_NEAR(r.max, c.nudged_max, 1e-4f);
  }
}

// TF's symmetric [-10, 10] regular-range case only checks that 0 stays 0: its
// zero point is 127.5 in exact arithmetic, but in float (as TF computes it)
// -min / scale is 127.49999, so the nudged zero point is 127.
TEST(FakeQuantNudge, ZeroIsExactlyRepresentableAfterNudging) {
  const NudgedRange r = nudge_fake_quant(-10.0f, 10.0f, 8, false);
  EXPECT_EQ(r.zero_point, 127);
  EXPECT_EQ(r.min + static_cast<float>(r.zero_point) * r.scale, 0.0f);
  EXPECT_NEAR(r.max - r.min, 255 * r.scale, 1e-5f);
}

// TensorFlow's MLIR converter regression test for a QAT-trained SSD box
// predictor (compiler/mlir/lite/tests/end2end/fake_quant_per_channel.pbtxt):
// its FakeQuant ranges and the int8 scales and zero points its FileCheck lines
// expect for the input, the output and the weights.
TEST(FakeQuantNudge, MatchesTensorFlowLiteConvertersInt8Export) {
  const conv::Quantization input = conv::int8_from_fake_quant({-33.614346f}, {21.54917f}, false, 0);
  EXPECT_NEAR(input.scale[0], 0.216328f, 1e-6f);
  EXPECT_EQ(input.zero_point[0], 27);
  const conv::Quantization output = conv::int8_from_fake_quant({-14.066669f}, {9.810242f}, false, 0);
  EXPECT_NEAR(output.scale[0], 0.093635f, 1e-6f);
  EXPECT_EQ(output.zero_point[0], 22);
  // Its first two per-channel weight ranges (symmetric, narrow range; the
  // float bit patterns of its tensor_content) and the weight scales expected.
  auto from_bits = [](uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  };
  const float top0 = from_bits(0x417fa58fu), top1 = from_bits(0x3e644005u);
  const conv::Quantization weights = conv::int8_from_fake_quant({-top0, -top1}, {top0, top1}, true, 3);
  EXPECT_NEAR(weights.scale[0], 0.12581039f, 1e-7f);
  EXPECT_NEAR(weights.scale[1], 0.001755f, 1e-6f);
  EXPECT_EQ(weights.zero_point, (std::vector<int64_t>{0, 0}));
}

TEST(FakeQuantNudge, Int8QuantizationIsTheNudgedGridShiftedBy128) {
  const conv::Quantization asymmetric = conv::int8_from_fake_quant({-10.0f}, {53.75f}, false, 0);
  EXPECT_EQ(asymmetric.scale, std::vector<float>{0.25f});
  EXPECT_EQ(asymmetric.zero_point, std::vector<int64_t>{40 - 128});
  // Weights as TF's QAT writes them: symmetric, narrow range -> zero point 0,
  // one scale per channel along the given axis.
  const conv::Quantization weights = conv::int8_from_fake_quant({-1.27f, -0.254f}, {1.27f, 0.254f}, true, 3);
  EXPECT_EQ(weights.zero_point, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(weights.dimension, 3);
  EXPECT_NEAR(weights.scale[0], 0.01f, 1e-8f);
  EXPECT_NEAR(weights.scale[1], 0.002f, 1e-9f);
  EXPECT_TRUE(conv::symmetric(weights));
  EXPECT_FALSE(conv::symmetric(asymmetric));
}

// ---- a QAT network ------------------------------------------------------------

struct Variable {
  std::string name;
  std::vector<int64_t> dims;
  std::vector<float> values;
};

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s;
  for (int64_t d : dims) s += "dim { size: " + std::to_string(d) + " } ";
  return s;
}

std::string float_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// A V2 checkpoint holding `variables`; returns its prefix.
std::string write_checkpoint(const std::string& dir, const std::vector<Variable>& variables) {
  std::map<std::string, std::string> sorted{{"", single_shard_header()}};
  std::string data;
  for (const Variable& v : variables) {
    const std::string bytes = float_bytes(v.values);
    sorted[v.name] = entry_proto(conv::kTfFloat, v.dims, 0, data.size(), bytes);
    data += bytes;
  }
  write_file_bytes(dir + "/qat.index", build_table({sorted.begin(), sorted.end()}));
  write_file_bytes(dir + "/qat.data-00000-of-00001", data);
  return dir + "/qat";
}

struct QatGraphOptions {
  bool depthwise_output_fake_quant = true;  // false: one activation lacks a range
  int activation_bits = 8;                  // of the depthwise output's FakeQuant
  int weight_bits = 8;                      // of the 1x1 conv's weight FakeQuant
  bool batch_norm_after_conv = false;       // conv1: FakeQuant on the raw weights, FusedBatchNorm after the conv
  bool asymmetric_depthwise_weights = false;  // dw weights' FakeQuant range not centred on 0
  bool narrow_range_output = false;  // the output's FakeQuant: narrow_range, a min most outputs fall below
  bool conv2_weight_fake_quant = true;  // false: the 1x1 conv reads its weight variable directly
};

struct QatGraph {
  std::string pbtxt;
  std::vector<Variable> variables;
  float output_scale = 0;  // the output FakeQuant's nudged scale
  NudgedRange output_nudged;
};

class QatGraphBuilder {
 public:
  explicit QatGraphBuilder(uint32_t seed) : rng_(seed) {}

  std::vector<float> uniform(size_t n, float lo, float hi) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng_);
    return v;
  }

  // A VariableV2 with its `/read` Identity, restored from the checkpoint.
  std::string variable(const std::string& name, std::vector<int64_t> dims, std::vector<float> values) {
    graph_.variables.push_back({name, dims, std::move(values)});
    return "node { name: '" + name + "' op: 'VariableV2' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: "
           "'shape' value { shape { " + dims_text(dims) + "} } } }\n" + unary(name + "/read", "Identity", name);
  }

  // FakeQuantWithMinMaxVars (or PerChannel) of `x` with min/max variables.
  std::string fake_quant(const std::string& name, const std::string& x, const std::vector<float>& min,
                         const std::vector<float>& max, bool narrow_range, int num_bits = 8) {
    const bool per_channel = min.size() > 1;
    const std::vector<int64_t> dims = per_channel ? std::vector<int64_t>{static_cast<int64_t>(min.size())}
                                                  : std::vector<int64_t>{};
    std::string g = variable(name + "/min", dims, min) + variable(name + "/max", dims, max);
    g += "node { name: '" + name + "' op: '" +
         (per_channel ? "FakeQuantWithMinMaxVarsPerChannel" : "FakeQuantWithMinMaxVars") + "' input: '" + x +
         "' input: '" + name + "/min/read' input: '" + name + "/max/read' attr { key: 'num_bits' value { i: " +
         std::to_string(num_bits) + " } } attr { key: 'narrow_range' value { b: " +
         (narrow_range ? "true" : "false") + " } } }\n";
    return g;
  }

  // Per-output-channel symmetric narrow-range FakeQuant ranges of weights
  // whose last dim is the channel, as TF's per-channel QAT records them.
  static void symmetric_ranges(const std::vector<float>& w, size_t channels, std::vector<float>* min,
                               std::vector<float>* max) {
    max->assign(channels, 0.0f);
    for (size_t i = 0; i < w.size(); ++i) (*max)[i % channels] = std::max((*max)[i % channels], std::fabs(w[i]));
    min->clear();
    for (float m : *max) min->push_back(-m);
  }

  const std::vector<Variable>& variables() const { return graph_.variables; }

  QatGraph build(const QatGraphOptions& o) {
    std::string g = placeholder("images", "DT_FLOAT", "dim { size: 1 } dim { size: 8 } dim { size: 8 } dim { size: 2 }");
    // The input's range as attributes (FakeQuantWithMinMaxArgs), the others as variables.
    g += "node { name: 'input/act_quant' op: 'FakeQuantWithMinMaxArgs' input: 'images' attr { key: 'min' value { f: "
         "-1.0 } } attr { key: 'max' value { f: 1.0 } } attr { key: 'num_bits' value { i: 8 } } attr { key: "
         "'narrow_range' value { b: false } } }\n";
    const std::string conv_attrs =
        "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } attr { key: 'padding' value { s: 'SAME' } } "
        "attr { key: 'data_format' value { s: 'NHWC' } }";
    // conv1 (3x3, 2 -> 4) + relu
    g += variable("conv1/weights", {3, 3, 2, 4}, uniform(72, -0.5f, 0.5f));
    if (o.batch_norm_after_conv) {
      g += fake_quant("conv1/weights_quant", "conv1/weights/read", {-0.5f}, {0.5f}, true);
      g += binary("conv1/Conv2D", "Conv2D", "input/act_quant", "conv1/weights_quant", conv_attrs);
      g += float_const("conv1/gamma", "dim { size: 4 }", "float_val: 0.9 float_val: -1.1 float_val: 0.8 float_val: 1.2");
      g += float_const("conv1/beta", "dim { size: 4 }", "float_val: 0.1 float_val: -0.2 float_val: 0.3 float_val: 0.0");
      g += float_const("conv1/mean", "dim { size: 4 }", "float_val: 0.05 float_val: -0.1 float_val: 0.0 float_val: 0.2");
      g += float_const("conv1/variance", "dim { size: 4 }", "float_val: 1.1 float_val: 0.9 float_val: 1.3 float_val: 0.7");
      g += "node { name: 'conv1/bn' op: 'FusedBatchNorm' input: 'conv1/Conv2D' input: 'conv1/gamma' input: "
           "'conv1/beta' input: 'conv1/mean' input: 'conv1/variance' attr { key: 'T' value { type: DT_FLOAT } } "
           "attr { key: 'epsilon' value { f: 0.001 } } attr { key: 'is_training' value { b: false } } "
           "attr { key: 'data_format' value { s: 'NHWC' } } }\n";
      g += unary("conv1/Relu", "Relu", "conv1/bn");
    } else {
      // TF's quantize rewriter: batch norm folded into the weights in the
      // graph (weights * gamma / sqrt(variance + eps)), FakeQuant after.
      g += float_const("conv1/bn_multiplier", "dim { size: 4 }",
                       "float_val: 0.9 float_val: 1.1 float_val: 0.8 float_val: 1.2");
      g += binary("conv1/mul_fold", "Mul", "conv1/weights/read", "conv1/bn_multiplier");
      g += fake_quant("conv1/weights_quant", "conv1/mul_fold", {-0.6f}, {0.6f}, true);
      g += binary("conv1/Conv2D", "Conv2D", "input/act_quant", "conv1/weights_quant", conv_attrs);
      g += variable("conv1/biases", {4}, uniform(4, -0.1f, 0.1f));
      g += binary("conv1/BiasAdd", "BiasAdd", "conv1/Conv2D", "conv1/biases/read");
      g += unary("conv1/Relu", "Relu", "conv1/BiasAdd");
    }
    g += fake_quant("conv1/act_quant", "conv1/Relu", {0.0f}, {2.5f}, false);
    // depthwise (3x3, multiplier 1) + relu6
    g += variable("dw/weights", {3, 3, 4, 1}, uniform(36, -0.5f, 0.5f));
    g += fake_quant("dw/weights_quant", "dw/weights/read", {o.asymmetric_depthwise_weights ? -0.3f : -0.5f}, {0.5f},
                    true);
    g += binary("dw/depthwise", "DepthwiseConv2dNative", "conv1/act_quant", "dw/weights_quant", conv_attrs);
    g += variable("dw/biases", {4}, uniform(4, -0.1f, 0.1f));
    g += binary("dw/BiasAdd", "BiasAdd", "dw/depthwise", "dw/biases/read");
    g += unary("dw/Relu6", "Relu6", "dw/BiasAdd");
    std::string dw_out = "dw/Relu6";
    if (o.depthwise_output_fake_quant) {
      g += fake_quant("dw/act_quant", "dw/Relu6", {0.0f}, {1.5f}, false, o.activation_bits);
      dw_out = "dw/act_quant";
    }
    // conv2 (1x1, 4 -> 6), per-channel weights, no activation
    const std::vector<float> w2 = uniform(24, -1.0f, 1.0f);
    std::vector<float> w2_min, w2_max;
    symmetric_ranges(w2, 6, &w2_min, &w2_max);
    g += variable("conv2/weights", {1, 1, 4, 6}, w2);
    if (o.conv2_weight_fake_quant) {
      g += fake_quant("conv2/weights_quant", "conv2/weights/read", w2_min, w2_max, true, o.weight_bits);
    }
    g += binary("conv2/Conv2D", "Conv2D", dw_out,
                o.conv2_weight_fake_quant ? "conv2/weights_quant" : "conv2/weights/read", conv_attrs);
    g += variable("conv2/biases", {6}, uniform(6, -0.2f, 0.2f));
    g += binary("conv2/BiasAdd", "BiasAdd", "conv2/Conv2D", "conv2/biases/read");
    g += fake_quant("conv2/act_quant", "conv2/BiasAdd", {-1.9f}, {2.2f}, false);
    // flatten + matmul (384 -> 10), per-channel weights
    g += "node { name: 'flatten/shape' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: "
         "'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 1 int_val: 384 } } } }\n"
         "node { name: 'flatten' op: 'Reshape' input: 'conv2/act_quant' input: 'flatten/shape' attr { key: 'T' "
         "value { type: DT_FLOAT } } attr { key: 'Tshape' value { type: DT_INT32 } } }\n";
    const std::vector<float> w3 = uniform(3840, -0.1f, 0.1f);
    std::vector<float> w3_min, w3_max;
    symmetric_ranges(w3, 10, &w3_min, &w3_max);
    g += variable("fc/weights", {384, 10}, w3);
    g += fake_quant("fc/weights_quant", "fc/weights/read", w3_min, w3_max, true);
    g += binary("fc/MatMul", "MatMul", "flatten", "fc/weights_quant",
                "attr { key: 'transpose_a' value { b: false } } attr { key: 'transpose_b' value { b: false } }");
    g += variable("fc/biases", {10}, uniform(10, -0.1f, 0.1f));
    g += binary("fc/BiasAdd", "BiasAdd", "fc/MatMul", "fc/biases/read");
    const float output_min = o.narrow_range_output ? -0.05f : -2.3f;
    g += fake_quant("fc/act_quant", "fc/BiasAdd", {output_min}, {2.9f}, o.narrow_range_output);
    graph_.pbtxt = g;
    graph_.output_nudged = nudge_fake_quant(output_min, 2.9f, 8, o.narrow_range_output);
    graph_.output_scale = graph_.output_nudged.scale;
    return graph_;
  }

 private:
  std::mt19937 rng_;
  QatGraph graph_;
};

conv::ConvertOptions qat_options(const QatGraph& graph, const TempDir& dir, bool quantize) {
  conv::ConvertOptions options;
  options.graph_path = dir.file("qat.pbtxt");
  std::ofstream(options.graph_path, std::ios::binary) << graph.pbtxt;
  options.checkpoint_path = write_checkpoint(dir.path(), graph.variables);
  options.outputs = {"fc/act_quant"};
  options.quantize_int8 = quantize;
  return options;
}

std::vector<HostTensor> seeded_inputs(int count) {
  std::vector<HostTensor> inputs;
  for (int i = 0; i < count; ++i) inputs.push_back(random_f32({1, 8, 8, 2}, 1000u + static_cast<uint32_t>(i)));
  return inputs;
}

struct Agreement {
  int outputs = 0, equal = 0, within_one_step = 0;
  int max_steps = 0;
};

// The int8 model's dequantized outputs against the FakeQuant float graph's,
// in steps of the output scale.
Agreement compare(const std::vector<uint8_t>& float_model, const std::vector<uint8_t>& int8_model, float scale,
                  const std::vector<HostTensor>& inputs) {
  Agreement a;
  for (const HostTensor& input : inputs) {
    const std::vector<HostTensor> f = run_model(float_model, {{"images", input}});
    const std::vector<HostTensor> q = run_model(int8_model, {{"images", input}});
    if (f.size() != 1 || q.size() != 1) {
      ADD_FAILURE() << "a model did not run";
      return a;
    }
    const std::vector<float> fv = as_floats(f[0]), qv = as_floats(q[0]);
    EXPECT_EQ(fv.size(), qv.size());
    for (size_t k = 0; k < fv.size() && k < qv.size(); ++k) {
      const int steps = static_cast<int>(std::lround(std::fabs(fv[k] - qv[k]) / scale));
      ++a.outputs;
      a.equal += steps == 0;
      a.within_one_step += steps <= 1;
      a.max_steps = std::max(a.max_steps, steps);
    }
  }
  return a;
}

TEST(QuantizationAware, QatGraphConvertsToInt8WithoutCalibrationWithinOneOutputStep) {
  TempDir dir;
  const QatGraph graph = QatGraphBuilder(7).build({});
  const ConvertOutcome float_model = try_convert(qat_options(graph, dir, false));
  ASSERT_FALSE(float_model.model.empty()) << float_model.error;
  EXPECT_TRUE(contains(float_model.summary, "FAKE_QUANT")) << float_model.summary;  // the float graph keeps them
  const ConvertOutcome int8_model = try_convert(qat_options(graph, dir, true));
  ASSERT_FALSE(int8_model.model.empty()) << int8_model.error;
  // conv, depthwise, conv, reshape, matmul int8; the input's QUANTIZE and the
  // output's DEQUANTIZE; no FakeQuant left, no op left float.
  EXPECT_TRUE(contains(int8_model.summary, "FakeQuant ranges of 5 activation op(s) and 4 weight tensor(s); 5 op(s) int8, "
                                            "1 QUANTIZE and 1 DEQUANTIZE inserted"))
      << int8_model.summary;
  EXPECT_TRUE(contains(int8_model.summary, "no op left float")) << int8_model.summary;
  EXPECT_TRUE(contains(int8_model.summary,
                       "6 range(s) from FakeQuant: conv1/Relu:0 conv2/BiasAdd:0 dw/Relu6:0 fc/act_quant:0 flatten:0 "
                       "images:0"))
      << int8_model.summary;
  EXPECT_TRUE(contains(int8_model.summary,
                       "weights on their FakeQuant grid: conv1/Conv2D (CONV2D) dw/depthwise (DEPTHWISE_CONV2D) "
                       "conv2/Conv2D (CONV2D) fc/MatMul (MATMUL)"))
      << int8_model.summary;
  EXPECT_FALSE(contains(int8_model.summary, "without a FakeQuant grid")) << int8_model.summary;
  EXPECT_FALSE(contains(int8_model.summary, "from calibration")) << int8_model.summary;
  EXPECT_FALSE(contains(int8_model.summary, "FAKE_QUANT")) << int8_model.summary;

  const Agreement a = compare(float_model.model, int8_model.model, graph.output_scale, seeded_inputs(20));
  EXPECT_EQ(a.outputs, 200);
  EXPECT_EQ(a.within_one_step, a.outputs) << "largest difference: " << a.max_steps << " steps";
  std::printf("QAT graph: %d of %d outputs equal, %d within 1 step of %g (largest %d); int8 model %zu bytes, float "
              "model %zu bytes\n",
              a.equal, a.outputs, a.within_one_step, static_cast<double>(graph.output_scale), a.max_steps,
              int8_model.model.size(), float_model.model.size());
  RecordProperty("outputs_equal", a.equal);
  RecordProperty("outputs_within_one_step", a.within_one_step);
}

// Weight FakeQuants left for the optimizer's fold-constants pass (lowering
// without folding) keep their grid as well.
TEST(QuantizationAware, WeightGridsSurviveFoldingByTheOptimizer) {
  TempDir dir;
  const QatGraph graph = QatGraphBuilder(7).build({});
  conv::ConvertOptions float_options = qat_options(graph, dir, false);
  const ConvertOutcome float_model = try_convert(float_options);
  ASSERT_FALSE(float_model.model.empty()) << float_model.error;
  conv::ConvertOptions options = qat_options(graph, dir, true);
  options.optimize.fold_while_lowering = false;
  const ConvertOutcome r = try_convert(options);
  ASSERT_FALSE(r.model.empty()) << r.error;
  EXPECT_TRUE(contains(r.summary, "FakeQuant ranges of 5 activation op(s) and 4 weight tensor(s)")) << r.summary;
  const Agreement a = compare(float_model.model, r.model, graph.output_scale, seeded_inputs(20));
  EXPECT_EQ(a.equal, 197);
  EXPECT_EQ(a.within_one_step, a.outputs);
}

// With int8 inputs and outputs, their quantization is the FakeQuant's grid.
TEST(QuantizationAware, Int8InputAndOutputCarryTheFakeQuantGrids) {
  TempDir dir;
  const QatGraph graph = QatGraphBuilder(7).build({});
  conv::ConvertOptions options = qat_options(graph, dir, true);
  options.post_training.int8_io = true;
  const ConvertOutcome r = try_convert(options);
  ASSERT_FALSE(r.model.empty()) << r.error;
  tools::AlignedBytes buffer = tools::aligned_bytes(r.model.size());
  std::memcpy(buffer.get(), r.model.data(), r.model.size());
  Model model;
  ASSERT_EQ(model.Load(buffer.get(), r.model.size()), Status::kOk) << model.error().message;
  alignas(16) static uint8_t arena[64 * 1024];
  Interpreter interpreter(model, arena, sizeof(arena));
  const NudgedRange in = nudge_fake_quant(-1.0f, 1.0f, 8, false), out = nudge_fake_quant(-2.3f, 2.9f, 8, false);
  const Quantization qi = interpreter.input_quantization(0), qo = interpreter.output_quantization(0);
  EXPECT_EQ(qi.scale, in.scale);
  EXPECT_EQ(qi.zero_point, in.zero_point - 128);
  EXPECT_EQ(qo.scale, out.scale);
  EXPECT_EQ(qo.zero_point, out.zero_point - 128);
  EXPECT_TRUE(contains(r.summary, "0 QUANTIZE and 0 DEQUANTIZE inserted")) << r.summary;
}

TEST(QuantizationAware, BatchNormAfterFakeQuantWeightsRescalesTheirGrid) {
  TempDir dir;
  QatGraphOptions o;
  o.batch_norm_after_conv = true;
  const QatGraph graph = QatGraphBuilder(11).build(o);
  const ConvertOutcome float_model = try_convert(qat_options(graph, dir, false));
  ASSERT_FALSE(float_model.model.empty()) << float_model.error;
  const ConvertOutcome int8_model = try_convert(qat_options(graph, dir, true));
  ASSERT_FALSE(int8_model.model.empty()) << int8_model.error;
  // The folded weights (one per-tensor grid times each channel's batch-norm
  // multiplier, one negative) are still quantized on their grid.
  EXPECT_TRUE(contains(int8_model.summary, "4 weight tensor(s)")) << int8_model.summary;
  EXPECT_FALSE(contains(int8_model.summary, "quantized symmetric from their values")) << int8_model.summary;
  const Agreement a = compare(float_model.model, int8_model.model, graph.output_scale, seeded_inputs(20));
  EXPECT_EQ(a.within_one_step, a.outputs) << "largest difference: " << a.max_steps << " steps";
  std::printf("QAT graph with batch norm after the conv: %d of %d outputs equal, %d within 1 step\n", a.equal,
              a.outputs, a.within_one_step);
}

// TFLite's int8 weights have zero point 0. A fake-quantized weight is a
// multiple of its grid's scale whatever the zero point, so with zero point 0
// the scale still holds every channel whose multiples stay within ±127; with
// an asymmetric range some channels reach beyond and are quantized symmetric
// from their values (as post-training quantization does), and the summary says so.
TEST(QuantizationAware, AsymmetricWeightGridIsRequantizedSymmetricWithANote) {
  TempDir dir;
  QatGraphOptions o;
  o.asymmetric_depthwise_weights = true;
  const QatGraph graph = QatGraphBuilder(7).build(o);
  const ConvertOutcome float_model = try_convert(qat_options(graph, dir, false));
  ASSERT_FALSE(float_model.model.empty()) << float_model.error;
  const ConvertOutcome r = try_convert(qat_options(graph, dir, true));
  ASSERT_FALSE(r.model.empty()) << r.error;
  EXPECT_TRUE(contains(r.summary, "4 weight tensor(s)")) << r.summary;
  EXPECT_TRUE(contains(r.summary, "note: weights of dw/depthwise (DEPTHWISE_CONV2D): 3 of 4 channel(s) reach beyond "
                                  "±127 steps of their FakeQuant grid"))
      << r.summary;
  const Agreement a = compare(float_model.model, r.model, graph.output_scale, seeded_inputs(20));
  std::printf("QAT graph with asymmetric depthwise weights: %d of %d outputs equal, %d within 1 step (largest %d)\n",
              a.equal, a.outputs, a.within_one_step, a.max_steps);
  EXPECT_EQ(a.outputs, 200);
  EXPECT_LE(a.max_steps, 2);
}

// A narrow-range FakeQuant never gives int8 -128 (its quant range is
// [1, 255]): the int8 op computing that value clamps at -127 as well, so
// outputs below the range equal the FakeQuant's nudged min.
TEST(QuantizationAware, NarrowRangeActivationClampsWhereItsFakeQuantDoes) {
  TempDir dir;
  QatGraphOptions o;
  o.narrow_range_output = true;
  const QatGraph graph = QatGraphBuilder(7).build(o);
  const ConvertOutcome float_model = try_convert(qat_options(graph, dir, false));
  ASSERT_FALSE(float_model.model.empty()) << float_model.error;
  const ConvertOutcome int8_model = try_convert(qat_options(graph, dir, true));
  ASSERT_FALSE(int8_model.model.empty()) << int8_model.error;
  int clamped = 0, clamped_equal = 0;
  for (const HostTensor& input : seeded_inputs(20)) {
    const std::vector<HostTensor> f = run_model(float_model.model, {{"images", input}});
    const std::vector<HostTensor> q = run_model(int8_model.model, {{"images", input}});
    ASSERT_EQ(f.size(), 1u);
    ASSERT_EQ(q.size(), 1u);
    const std::vector<float> fv = as_floats(f[0]), qv = as_floats(q[0]);
    for (size_t k = 0; k < fv.size() && k < qv.size(); ++k) {
      if (std::fabs(fv[k] - graph.output_nudged.min) > graph.output_scale / 4) continue;
      ++clamped;
      clamped_equal += std::fabs(qv[k] - fv[k]) < graph.output_scale / 4;
    }
  }
  EXPECT_GT(clamped, 20);
  EXPECT_EQ(clamped_equal, clamped);
  const Agreement a = compare(float_model.model, int8_model.model, graph.output_scale, seeded_inputs(20));
  EXPECT_EQ(a.within_one_step, a.outputs) << "largest difference: " << a.max_steps << " steps";
  std::printf("narrow-range output: %d of %d outputs at the FakeQuant's min, %d of them equal; %d of %d outputs equal\n",
              clamped, a.outputs, clamped_equal, a.equal, a.outputs);
}

// A residual block as TF's quantize rewriter leaves it: FakeQuant after the
// conv and after the Add + Relu (the Relu folds into the int8 ADD's clamp).
TEST(QuantizationAware, ResidualAddTakesItsRangesFromFakeQuant) {
  QatGraphBuilder b(3);
  const std::string conv_attrs =
      "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } attr { key: 'padding' value { s: 'SAME' } } "
      "attr { key: 'data_format' value { s: 'NHWC' } }";
  std::string g = placeholder("x", "DT_FLOAT", "dim { size: 1 } dim { size: 4 } dim { size: 4 } dim { size: 3 }");
  g += b.fake_quant("input/act_quant", "x", {-1.0f}, {1.0f}, false);
  const std::vector<float> w = b.uniform(9, -0.8f, 0.8f);
  std::vector<float> w_min, w_max;
  QatGraphBuilder::symmetric_ranges(w, 3, &w_min, &w_max);
  g += b.variable("conv/weights", {1, 1, 3, 3}, w);
  g += b.fake_quant("conv/weights_quant", "conv/weights/read", w_min, w_max, true);
  g += binary("conv/Conv2D", "Conv2D", "input/act_quant", "conv/weights_quant", conv_attrs);
  g += b.variable("conv/biases", {3}, b.uniform(3, -0.1f, 0.1f));
  g += binary("conv/BiasAdd", "BiasAdd", "conv/Conv2D", "conv/biases/read");
  g += b.fake_quant("conv/act_quant", "conv/BiasAdd", {-1.5f}, {1.5f}, false);
  g += binary("add", "Add", "conv/act_quant", "input/act_quant");
  g += unary("add/Relu", "Relu", "add");
  g += b.fake_quant("add/act_quant", "add/Relu", {0.0f}, {2.5f}, false);
  TempDir dir;
  conv::ConvertOptions options;
  options.graph_path = dir.file("residual.pbtxt");
  std::ofstream(options.graph_path, std::ios::binary) << g;
  options.checkpoint_path = write_checkpoint(dir.path(), b.variables());
  options.outputs = {"add/act_quant"};
  const ConvertOutcome float_model = try_convert(options);
  ASSERT_FALSE(float_model.model.empty()) << float_model.error;
  options.quantize_int8 = true;
  const ConvertOutcome int8_model = try_convert(options);
  ASSERT_FALSE(int8_model.model.empty()) << int8_model.error;
  EXPECT_TRUE(contains(int8_model.summary, "3 op(s) int8")) << int8_model.summary;  // CONV2D, ADD, RELU (folded)
  EXPECT_TRUE(contains(int8_model.summary, "no op left float")) << int8_model.summary;
  EXPECT_TRUE(contains(int8_model.summary, "1 RELU/RELU6 folded into clamp ranges")) << int8_model.summary;
  const float scale = nudge_fake_quant(0.0f, 2.5f, 8, false).scale;
  int outputs = 0, equal = 0, within_one = 0;
  for (uint32_t seed = 0; seed < 20; ++seed) {
    const HostTensor input = random_f32({1, 4, 4, 3}, 500u + seed);
    const std::vector<HostTensor> f = run_model(float_model.model, {{"x", input}});
    const std::vector<HostTensor> q = run_model(int8_model.model, {{"x", input}});
    ASSERT_EQ(f.size(), 1u);
    ASSERT_EQ(q.size(), 1u);
    const std::vector<float> fv = as_floats(f[0]), qv = as_floats(q[0]);
    for (size_t k = 0; k < fv.size() && k < qv.size(); ++k) {
      const long steps = std::lround(std::fabs(fv[k] - qv[k]) / scale);
      ++outputs;
      equal += steps == 0;
      within_one += steps <= 1;
    }
  }
  EXPECT_EQ(outputs, 20 * 48);
  EXPECT_EQ(within_one, outputs);
  std::printf("residual block: %d of %d outputs equal, %d within 1 step\n", equal, outputs, within_one);
}

// Weights need no calibration: without a FakeQuant they are quantized from
// their values (TFLite's post-training rule), and the summary names them.
TEST(QuantizationAware, WeightsWithoutFakeQuantAreQuantizedFromTheirValues) {
  TempDir dir;
  QatGraphOptions o;
  o.conv2_weight_fake_quant = false;
  const QatGraph graph = QatGraphBuilder(7).build(o);
  const ConvertOutcome r = try_convert(qat_options(graph, dir, true));
  ASSERT_FALSE(r.model.empty()) << r.error;
  EXPECT_TRUE(contains(r.summary, "FakeQuant ranges of 5 activation op(s) and 3 weight tensor(s)")) << r.summary;
  EXPECT_TRUE(contains(r.summary, "weights without a FakeQuant grid, quantized from their values: conv2/Conv2D (CONV2D)"))
      << r.summary;
}

TEST(QuantizationAware, NumBitsOtherThanEightIsRefusedNamingEveryNode) {
  TempDir dir;
  QatGraphOptions o;
  o.activation_bits = 4;
  o.weight_bits = 6;
  const QatGraph graph = QatGraphBuilder(7).build(o);
  const ConvertOutcome r = try_convert(qat_options(graph, dir, true));
  EXPECT_TRUE(r.model.empty());
  EXPECT_TRUE(contains(r.error, "2 FakeQuant op(s) cannot give int8 ranges")) << r.error;
  EXPECT_TRUE(contains(r.error, "conv2/weights_quant (FakeQuantWithMinMaxVarsPerChannel): num_bits 6 on weights")) << r.error;
  EXPECT_TRUE(contains(r.error, "dw/act_quant (FAKE_QUANT): num_bits 4")) << r.error;
  // The float path runs them as TF does.
  EXPECT_FALSE(try_convert(qat_options(graph, dir, false)).model.empty());
}

TEST(QuantizationAware, MissingRangeIsRefusedWithoutCalibrationAndFilledWithIt) {
  TempDir dir;
  QatGraphOptions o;
  o.depthwise_output_fake_quant = false;
  const QatGraph graph = QatGraphBuilder(7).build(o);
  conv::ConvertOptions options = qat_options(graph, dir, true);
  const ConvertOutcome refused = try_convert(options);
  EXPECT_TRUE(refused.model.empty());
  EXPECT_TRUE(contains(refused.error, "--quantize int8: 1 tensor(s) have no range")) << refused.error;
  EXPECT_TRUE(contains(refused.error, "dw/Relu6:0 (computed by dw/depthwise (DEPTHWISE_CONV2D))")) << refused.error;

  std::vector<float> batch;
  for (const HostTensor& t : seeded_inputs(16)) {
    const std::vector<float> v = as_floats(t);
    batch.insert(batch.end(), v.begin(), v.end());
  }
  options.calibration_path = dir.file("calibration.npz");
  std::ofstream(options.calibration_path, std::ios::binary) << npz_bytes({{"images.npy", npy_f32({16, 8, 8, 2}, batch)}});
  const ConvertOutcome filled = try_convert(options);
  ASSERT_FALSE(filled.model.empty()) << filled.error;
  EXPECT_TRUE(contains(filled.summary, "calibrated on 16 sample(s)")) << filled.summary;
  EXPECT_TRUE(contains(filled.summary, "1 range(s) from calibration: dw/Relu6:0")) << filled.summary;
  EXPECT_TRUE(contains(filled.summary, "range(s) from FakeQuant: conv1/Relu:0")) << filled.summary;
}

TEST(QuantizationAware, CliRefusesAMissingRangeWithExitTwoAndWritesNothing) {
  TempDir dir;
  QatGraphOptions o;
  o.depthwise_output_fake_quant = false;
  const QatGraph graph = QatGraphBuilder(7).build(o);
  const conv::ConvertOptions options = qat_options(graph, dir, true);
  const std::string out = dir.file("qat.floe");
  const CommandResult r = run_command(tool_path("floe-convert") + " --graph " + options.graph_path + " --checkpoint " +
                                      options.checkpoint_path + " --outputs fc/act_quant --quantize int8 -o " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "dw/Relu6:0")) << r.output;
  EXPECT_FALSE(file_exists(out));
}

// examples/qat_conv: a contrib.quantize-style eval graph (.meta + V2
// checkpoint) written by the project's TF1 writer. Its per-tensor weight
// ranges are the weights' own min/max (asymmetric, as contrib.quantize records
// them): the channels holding the extreme weight reach beyond ±127 steps and
// are quantized from their values, so outputs differ by up to 2 steps there.
TEST(QuantizationAware, QatConvExampleConvertsWithoutCalibration) {
  conv::ConvertOptions options;
  options.graph_path = std::string(FLOE_SOURCE_DIR) + "/examples/qat_conv/model/qat_conv.meta";
  options.outputs = {"fc/act_quant/FakeQuantWithMinMaxVars"};
  const ConvertOutcome float_model = try_convert(options);
  ASSERT_FALSE(float_model.model.empty()) << float_model.error;
  options.quantize_int8 = true;
  const ConvertOutcome int8_model = try_convert(options);
  ASSERT_FALSE(int8_model.model.empty()) << int8_model.error;
  EXPECT_TRUE(contains(int8_model.summary, "FakeQuant ranges of 5 activation op(s) and 4 weight tensor(s); 5 op(s) int8"))
      << int8_model.summary;
  EXPECT_TRUE(contains(int8_model.summary, "weights of conv1/Conv2D (CONV2D): 1 of 4 channel(s) reach beyond"))
      << int8_model.summary;
  EXPECT_TRUE(contains(int8_model.summary, "weights of dw/depthwise (DEPTHWISE_CONV2D): 1 of 4 channel(s) reach beyond"))
      << int8_model.summary;
  const float scale = nudge_fake_quant(-1.390374f, 0.924932f, 8, false).scale;
  const Agreement a = compare(float_model.model, int8_model.model, scale, seeded_inputs(20));
  std::printf("examples/qat_conv: %d of %d outputs equal, %d within 1 step (largest %d); int8 model %zu bytes\n",
              a.equal, a.outputs, a.within_one_step, a.max_steps, int8_model.model.size());
  EXPECT_EQ(a.outputs, 200);
  EXPECT_LE(a.max_steps, 2);
}

}  // namespace
}  // namespace floe::testing
