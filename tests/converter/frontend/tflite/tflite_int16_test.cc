// SPDX-License-Identifier: Apache-2.0
// int16 activations (TFLite's 16x8 scheme: int16 activations with zero point
// 0, int8 weights, int64 biases) on small hand-built .tflite files, against
// TensorFlow Lite 2.9 (../shared/tools/peers/tflite_run.js; skipped visibly
// without node and the peers' node_modules): per-channel strided
// DEPTHWISE_CONV_2D, FULLY_CONNECTED, broadcasting MUL, CONV_2D with a fused RELU,
// AVERAGE_POOL_2D (SAME: windows cut by the border, rounded averages) and
// MAX_POOL_2D with a fused RELU, every output equal on 20 seeded inputs;
// LOGISTIC and TANH on every int16 value, at power-of-two and other input
// scales; SOFTMAX (short and long rows, two betas). Also a RELU and a RELU6
// no producer absorbs, int8 and int16 (TFLM's ReluQuantized: requantized,
// clamped), on 20 seeded inputs. TFLM's own SEANet layers, with
// TFLM's golden outputs, are tests/e2e/tflm_models_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "converter/pipeline/convert.h"
#include "tests/converter/support/tfjs_oracle.h"
#include "tests/converter/support/tflite_builder.h"
#include "runtime/kernels/reference/quantization.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

constexpr int8_t kTflInt16 = 7, kTflInt64 = 4;

TflTensor q16(std::vector<int32_t> shape, const std::string& name, float scale) {
  return {std::move(shape), kTflInt16, {}, name, {scale}, {0}};
}

// Seeded int8 weights, one scale per index of `axis`, or one scale (axis -1).
TflTensor weights(std::vector<int32_t> shape, const std::string& name, int32_t axis, uint32_t seed) {
  size_t n = 1;
  for (int32_t d : shape) n *= static_cast<size_t>(d);
  std::vector<int8_t> w(n);
  uint32_t x = seed;
  for (int8_t& v : w) {
    x = 1664525u * x + 1013904223u;
    v = static_cast<int8_t>(static_cast<int32_t>(x >> 24) - 128);
  }
  const int32_t channels = axis < 0 ? 1 : shape[static_cast<size_t>(axis)];
  std::vector<float> scales;
  for (int32_t c = 0; c < channels; ++c) scales.push_back(0.002f + 0.0005f * static_cast<float>(c));
  TflTensor t{std::move(shape), kTflInt8, raw(w), name, scales, std::vector<int64_t>(scales.size(), 0)};
  t.quantized_dimension = axis < 0 ? 0 : axis;
  return t;
}

TflTensor bias64(int32_t channels, const std::string& name) {
  std::vector<int64_t> b;
  for (int32_t c = 0; c < channels; ++c) b.push_back((c % 2 ? -1 : 1) * 40000LL * (c + 1));
  return {{channels}, kTflInt64, raw(b), name};
}

HostTensor random_int16(const std::vector<int64_t>& shape, uint32_t seed) {
  HostTensor t;
  t.dtype = DType::kInt16;
  t.shape = shape;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  t.data.resize(static_cast<size_t>(n) * 2);
  uint32_t x = seed;
  for (int64_t i = 0; i < n; ++i) {
    x = 1664525u * x + 1013904223u;
    const int16_t v = static_cast<int16_t>(x >> 16);
    std::memcpy(&t.data[static_cast<size_t>(i) * 2], &v, 2);
  }
  return t;
}

// Ops of `model` on one of the int16x8 Cortex-M kernels.
size_t s16_cortexm_ops(const std::vector<uint8_t>& model) {
  size_t ops = 0;
  for (const schema::Operator* op : *schema::GetModel(model.data())->operators()) {
    const schema::CortexMKernel k = op->cortexm_kernel();
    ops += op->backend() == schema::Backend::CORTEX_M &&
           (k == schema::CortexMKernel::S16_GEMM || k == schema::CortexMKernel::S16_IM2COL_GEMM ||
            k == schema::CortexMKernel::S16_DEPTHWISE);
  }
  return ops;
}

// floe equal to TFLite 2.9 on 20 seeded inputs, for the host and reference
// targets and the Cortex-M ones (whose int16x8 kernels run here in their
// portable form; cortexm_ops: how many ops must take one).
// `tolerance`: the largest difference allowed (0: every value equal).
void expect_equal_to_tflite(const std::string& bytes, const std::vector<int64_t>& input_shape, int tolerance = 0,
                            size_t cortexm_ops = 0) {
  REQUIRE_TFLITE_ORACLE();
  expect_converted_like_tflite(
      bytes, {"host", "reference", "cortex-m4", "cortex-m55"},
      [&](uint32_t seed) { return random_int16(input_shape, seed); }, static_cast<double>(tolerance),
      [&](const std::string& target, const std::vector<uint8_t>& model) {
        if (target.rfind("cortex-m", 0) == 0) EXPECT_EQ(s16_cortexm_ops(model), cortexm_ops) << target;
      });
}

TEST(TfliteInt16, DepthwisePerChannelStrided) {
  TfliteBuilder b;
  const int x = b.tensor(q16({1, 7, 6, 6}, "x", 0.0005f));
  const int w = b.tensor(weights({1, 3, 3, 6}, "w", 3, 11));
  const int bias = b.tensor(bias64(6, "bias"));
  const int y = b.tensor(q16({1, 4, 3, 6}, "y", 0.0011f));
  b.op({4, {x, w, bias}, {y}, tfl::BuiltinOptions::DepthwiseConv2DOptions, depthwise_options(0, 2, 1)});
  b.inputs = {x};
  b.outputs = {y};
  expect_equal_to_tflite(b.build(), {1, 7, 6, 6}, 0, 1);
}

// Per-tensor weights: TFLite 2.9's 16x8 FULLY_CONNECTED reads one weight scale.
TEST(TfliteInt16, FullyConnected) {
  TfliteBuilder b;
  const int x = b.tensor(q16({2, 40}, "x", 0.0003f));
  const int w = b.tensor(weights({12, 40}, "w", -1, 5));
  const int bias = b.tensor(bias64(12, "bias"));
  const int y = b.tensor(q16({2, 12}, "y", 0.002f));
  b.op({9, {x, w, bias}, {y}, tfl::BuiltinOptions::FullyConnectedOptions, fc_options()});
  b.inputs = {x};
  b.outputs = {y};
  expect_equal_to_tflite(b.build(), {2, 40}, 0, 1);
}

TEST(TfliteInt16, MulBroadcastsAConstant) {
  TfliteBuilder b;
  const int x = b.tensor(q16({1, 3, 4, 5}, "x", 0.0004f));
  std::vector<int16_t> c;
  for (int i = 0; i < 5; ++i) c.push_back(static_cast<int16_t>(-20000 + 9000 * i));
  TflTensor ct{{5}, kTflInt16, raw(c), "c", {0.00003f}, {0}};
  const int k = b.tensor(ct);
  const int y = b.tensor(q16({1, 3, 4, 5}, "y", 0.0002f));
  b.op({18, {x, k}, {y}});
  b.inputs = {x};
  b.outputs = {y};
  expect_equal_to_tflite(b.build(), {1, 3, 4, 5});
}

// TFLM's QuantizedMeanOrSum on int16: the sum rescaled by an integer
// multiplier with 1/count folded in. TFLite 2.9 rescales the mean in float
// instead, so the two may round 1 apart (a fifth of the values here).
TEST(TfliteInt16, MeanRescalesTheSum) {
  for (const bool over_channels : {true, false}) {
    TfliteBuilder b;
    const int x = b.tensor(q16({1, 5, 6, 7}, "x", 0.0005f));
    const std::vector<int32_t> axes = over_channels ? std::vector<int32_t>{3} : std::vector<int32_t>{1, 2};
    const int a = b.tensor({{static_cast<int32_t>(axes.size())}, kTflInt32, raw(axes), "axes"});
    const int y = b.tensor(over_channels ? q16({1, 5, 6}, "y", 0.0003f) : q16({1, 7}, "y", 0.0002f));
    b.op({40, {x, a}, {y}, tfl::BuiltinOptions::ReducerOptions,
          [](flatbuffers::FlatBufferBuilder& f) { return tfl::CreateReducerOptions(f, false).Union(); }});
    b.inputs = {x};
    b.outputs = {y};
    expect_equal_to_tflite(b.build(), {1, 5, 6, 7}, 1);
  }
}

// int16 MAXIMUM and MINIMUM compare the stored values (one quantization).
TEST(TfliteInt16, MaximumThenMinimumOfAConstant) {
  TfliteBuilder b;
  const int x = b.tensor(q16({2, 3, 8}, "x", 0.0004f));
  std::vector<int16_t> c;
  for (int i = 0; i < 8; ++i) c.push_back(static_cast<int16_t>(-24000 + 6000 * i));
  TflTensor ct{{8}, kTflInt16, raw(c), "c", {0.0004f}, {0}};
  const int k = b.tensor(ct);
  const int m = b.tensor(q16({2, 3, 8}, "m", 0.0004f));
  const int y = b.tensor(q16({2, 3, 8}, "y", 0.0004f));
  b.op({55, {x, k}, {m}});
  b.op({57, {m, k}, {y}});
  b.inputs = {x};
  b.outputs = {y};
  expect_equal_to_tflite(b.build(), {2, 3, 8});
}

// Rows longer than one 32-bit partial-sum block of the Cortex-M kernel.
TEST(TfliteInt16, FullyConnectedLongRows) {
  TfliteBuilder b;
  const int x = b.tensor(q16({1, 700}, "x", 0.0003f));
  const int w = b.tensor(weights({6, 700}, "w", -1, 9));
  const int bias = b.tensor(bias64(6, "bias"));
  const int y = b.tensor(q16({1, 6}, "y", 0.004f));
  b.op({9, {x, w, bias}, {y}, tfl::BuiltinOptions::FullyConnectedOptions, fc_options()});
  b.inputs = {x};
  b.outputs = {y};
  expect_equal_to_tflite(b.build(), {1, 700}, 0, 1);
}

// A 1x1 convolution: the Cortex-M GEMM reads the pixels in place.
TEST(TfliteInt16, PointwiseConv) {
  TfliteBuilder b;
  const int x = b.tensor(q16({1, 5, 5, 12}, "x", 0.0005f));
  const int w = b.tensor(weights({7, 1, 1, 12}, "w", 0, 13));
  const int bias = b.tensor(bias64(7, "bias"));
  const int y = b.tensor(q16({1, 5, 5, 7}, "y", 0.0012f));
  b.op({3, {x, w, bias}, {y}, tfl::BuiltinOptions::Conv2DOptions, conv_options(1, 1, 1)});
  b.inputs = {x};
  b.outputs = {y};
  expect_equal_to_tflite(b.build(), {1, 5, 5, 12}, 0, 1);
}

TEST(TfliteInt16, ConvWithAFusedRelu) {
  TfliteBuilder b;
  const int x = b.tensor(q16({1, 6, 6, 4}, "x", 0.0005f));
  const int w = b.tensor(weights({5, 3, 3, 4}, "w", 0, 3));
  const int bias = b.tensor(bias64(5, "bias"));
  const int y = b.tensor(q16({1, 6, 6, 5}, "y", 0.0015f));
  b.op({3, {x, w, bias}, {y}, tfl::BuiltinOptions::Conv2DOptions, conv_options(0, 1, 1, 1)});
  b.inputs = {x};
  b.outputs = {y};
  expect_equal_to_tflite(b.build(), {1, 6, 6, 4}, 0, 1);
}

TEST(TfliteInt16, AveragePoolSameStrided) {
  TfliteBuilder b;
  const int x = b.tensor(q16({1, 7, 8, 3}, "x", 0.0005f));
  const int y = b.tensor(q16({1, 4, 4, 3}, "y", 0.0005f));
  b.op({1, {x}, {y}, tfl::BuiltinOptions::Pool2DOptions, pool_options(/*SAME*/ 0, 2, 3)});
  b.inputs = {x};
  b.outputs = {y};
  expect_equal_to_tflite(b.build(), {1, 7, 8, 3});
}

TEST(TfliteInt16, MaxPoolValidWithAFusedRelu) {
  TfliteBuilder b;
  const int x = b.tensor(q16({2, 6, 6, 4}, "x", 0.0007f));
  const int y = b.tensor(q16({2, 3, 3, 4}, "y", 0.0007f));
  b.op({17, {x}, {y}, tfl::BuiltinOptions::Pool2DOptions, pool_options(/*VALID*/ 1, 2, 2, /*RELU*/ 1)});
  b.inputs = {x};
  b.outputs = {y};
  expect_equal_to_tflite(b.build(), {2, 6, 6, 4});
}

// A standalone RELU (code 19) or RELU6 (21) from `in` to `out` quantization,
// int8 or int16, against TFLite 2.9 on 20 seeded inputs (host and reference).
void expect_relu_equal_to_tflite(int32_t code, int8_t type, float in_scale, int64_t in_zp, float out_scale,
                                 int64_t out_zp) {
  REQUIRE_TFLITE_ORACLE();
  TfliteBuilder b;
  const int x = b.tensor({{2, 5, 7}, type, {}, "x", {in_scale}, {in_zp}});
  const int y = b.tensor({{2, 5, 7}, type, {}, "y", {out_scale}, {out_zp}});
  b.op({code, {x}, {y}});
  b.inputs = {x};
  b.outputs = {y};
  const std::string bytes = b.build();
  const std::string path = make_temp_dir() + "/m.tflite";
  std::ofstream(path, std::ios::binary) << bytes;
  const DType dtype = type == kTflInt16 ? DType::kInt16 : DType::kInt8;
  const size_t width = dtype == DType::kInt16 ? 2 : 1;
  for (const char* target : {"host", "reference"}) {
    conv::ConvertOptions options;
    options.graph_path = path;
    options.target = target;
    const std::vector<uint8_t> model = conv::convert(options).model;
    for (uint32_t seed = 1; seed <= 20; ++seed) {
      HostTensor in = random_int16({2, 5, 7}, seed);
      if (dtype == DType::kInt8) {
        for (size_t i = 0; i < 70; ++i) in.data[i] = in.data[i * 2 + 1];  // the high bytes: seeded int8
        in.data.resize(70);
        in.dtype = DType::kInt8;
      }
      const std::vector<std::vector<float>> want = run_tflite(bytes, {in}, 1);
      const std::vector<HostTensor> got = run_model(model, {{"x", in}});
      ASSERT_EQ(want.size(), 1u);
      ASSERT_EQ(got.size(), 1u);
      ASSERT_EQ(got[0].data.size(), 70 * width);
      size_t differing = 0;
      for (size_t i = 0; i < 70; ++i) {
        int32_t v;
        if (width == 2) {
          int16_t h;
          std::memcpy(&h, &got[0].data[i * 2], 2);
          v = h;
        } else {
          v = static_cast<int8_t>(got[0].data[i]);
        }
        differing += static_cast<float>(v) != want[0][i];
      }
      EXPECT_EQ(differing, 0u) << target << " seed " << seed;
    }
  }
}

TEST(TfliteQuantizedRelu, Int8ReluRequantizes) { expect_relu_equal_to_tflite(19, kTflInt8, 0.05f, 10, 0.03f, -20); }
TEST(TfliteQuantizedRelu, Int8Relu6) { expect_relu_equal_to_tflite(21, kTflInt8, 0.04f, -3, 0.04f, -3); }
TEST(TfliteQuantizedRelu, Int16ReluRequantizes) { expect_relu_equal_to_tflite(19, kTflInt16, 0.0004f, 0, 0.0003f, 0); }
TEST(TfliteQuantizedRelu, Int16Relu6) { expect_relu_equal_to_tflite(21, kTflInt16, 0.0003f, 0, 0.0003f, 0); }

// SOFTMAX over rows of 10 and of 300 (the table-based exp and reciprocal),
// beta 1 and 0.7 (the input scale x beta sets the exp's stretch).
void expect_softmax_equal_to_tflite(int32_t rows, int32_t depth, float scale, float beta) {
  TfliteBuilder b;
  const int x = b.tensor(q16({rows, depth}, "x", scale));
  const int y = b.tensor(q16({rows, depth}, "y", 1.0f / 32768.0f));
  b.op({25, {x}, {y}, tfl::BuiltinOptions::SoftmaxOptions,
        [beta](flatbuffers::FlatBufferBuilder& fb) { return tfl::CreateSoftmaxOptions(fb, beta).Union(); }});
  b.inputs = {x};
  b.outputs = {y};
  expect_equal_to_tflite(b.build(), {rows, depth});
}

TEST(TfliteInt16, Softmax) { expect_softmax_equal_to_tflite(4, 10, 0.0003f, 1.0f); }
TEST(TfliteInt16, SoftmaxLongRowsWithBeta) { expect_softmax_equal_to_tflite(2, 300, 0.00005f, 0.7f); }

// All 65,536 int16 inputs through LOGISTIC or TANH (code 14 or 28) with
// input scale `scale`, output 2^-15: floe (TFLM's kernel: the sigmoid table,
// whatever the scale) against TFLite 2.9, which runs that table too except at
// the power-of-two scales, where its optimized kernel computes gemmlowp's
// 16-bit fixed-point logistic / tanh instead. There floe stays within 1 step,
// and floe's own 16-bit gemmlowp functions (the int8 LSTM's gates) must give
// TFLite's every value exactly.
void expect_activation_like_tflite(int32_t code, float scale, bool power_of_two) {
  REQUIRE_TFLITE_ORACLE();
  TfliteBuilder b;
  const int x = b.tensor(q16({256, 256}, "x", scale));
  const int y = b.tensor(q16({256, 256}, "y", 1.0f / 32768.0f));
  b.op({code, {x}, {y}});
  b.inputs = {x};
  b.outputs = {y};
  const std::string bytes = b.build();
  const std::string path = make_temp_dir() + "/m.tflite";
  std::ofstream(path, std::ios::binary) << bytes;
  HostTensor in;
  in.dtype = DType::kInt16;
  in.shape = {256, 256};
  in.data.resize(65536 * 2);
  for (int32_t v = -32768; v <= 32767; ++v) {
    const int16_t q = static_cast<int16_t>(v);
    std::memcpy(&in.data[static_cast<size_t>(v + 32768) * 2], &q, 2);
  }
  const std::vector<std::vector<float>> want = run_tflite(bytes, {in}, 1);
  ASSERT_EQ(want.size(), 1u);
  conv::ConvertOptions options;
  options.graph_path = path;
  options.target = "reference";
  const std::vector<HostTensor> got = run_model(conv::convert(options).model, {{"x", in}});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].data.size(), want[0].size() * 2);
  // Two approximations of one function: within 16 steps (5e-4) of each other.
  const int allowed = power_of_two ? 16 : 0;
  size_t differing = 0, fixed_point_differing = 0;
  float largest = 0;
  for (size_t i = 0; i < want[0].size(); ++i) {
    int16_t v;
    std::memcpy(&v, &got[0].data[i * 2], 2);
    const int32_t input = static_cast<int32_t>(i) - 32768;
    const float d = std::fabs(static_cast<float>(v) - want[0][i]);
    differing += d != 0;
    largest = std::max(largest, d);
    if (d > static_cast<float>(allowed)) {
      ADD_FAILURE() << "input " << input << ": floe " << v << ", TFLite " << want[0][i];
    }
    if (power_of_two) {
      // TFLite's Q3.12 input: 2^-12 as is, 2^-11 doubled with saturation.
      const bool doubled = scale > 1.5f / 4096.0f;
      const int16_t q3 = static_cast<int16_t>(doubled ? std::clamp(input * 2, -32768, 32767) : input);
      const int16_t fp = code == 14 ? ref::fixed_point16::logistic(q3, 3) : ref::fixed_point16::tanh(q3, 3);
      fixed_point_differing += static_cast<float>(fp) != want[0][i];
    }
  }
  EXPECT_EQ(fixed_point_differing, 0u) << "floe's 16-bit gemmlowp functions against TFLite's";
  std::printf("int16 %s at scale %g: 65536 inputs, %zu differ from TFLite 2.9 (by at most %.0f)%s\n",
              code == 14 ? "LOGISTIC" : "TANH", static_cast<double>(scale), differing, static_cast<double>(largest),
              power_of_two ? ", TFLite's gemmlowp path" : "");
}

TEST(TfliteInt16, LogisticAtAPowerOfTwoScale) { expect_activation_like_tflite(14, 1.0f / 4096.0f, true); }
TEST(TfliteInt16, LogisticAtAnotherScale) { expect_activation_like_tflite(14, 0.00037f, false); }
TEST(TfliteInt16, TanhAtAPowerOfTwoScale) { expect_activation_like_tflite(28, 1.0f / 2048.0f, true); }
TEST(TfliteInt16, TanhAtAnotherScale) { expect_activation_like_tflite(28, 0.0002f, false); }

}  // namespace
}  // namespace floe::testing
