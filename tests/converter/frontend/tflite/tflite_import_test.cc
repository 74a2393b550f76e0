// SPDX-License-Identifier: Apache-2.0
// The .tflite importer on small hand-built files (tflite_builder.h): weight
// layouts and their quantization axes, TFLite's SAME padding, depthwise
// multipliers, fully connected, fused activations and broadcasting, the
// opcode fields of old and new files, every unsupported op in one refusal,
// and corrupt files. Float graphs are also converted and run, and compared
// with the same arithmetic written out here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <flatbuffers/flexbuffers.h>

#include "converter/frontend/tflite/tflite_import.h"
#include "converter/ir/error.h"
#include "runtime/core/model.h"
#include "runtime/tools/model_file.h"
#include "schemas/floe_generated.h"
#include "tests/converter/support/tflite_builder.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

using conv::ConvertError;
using conv::TfliteImport;

std::vector<float> iota(size_t n, float start = 0.0f, float step = 1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

// Converts `bytes` through floe-convert's path (a temp file) and runs it on x.
std::vector<float> convert_and_run(const std::string& bytes, const std::vector<int64_t>& shape,
                                   const std::vector<float>& x, std::string* summary = nullptr) {
  const std::string path = make_temp_dir() + "/m.tflite";
  std::ofstream(path, std::ios::binary) << bytes;
  conv::ConvertOptions options;
  options.graph_path = path;
  options.target = "reference";
  const conv::ConvertResult r = conv::convert(options);
  if (summary) *summary = r.summary;
  const std::vector<HostTensor> out = run_model(r.model, {{"x", make_f32(shape, x)}});
  return out.empty() ? std::vector<float>{} : as_floats(out[0]);
}

const conv::LoweredOp* find_op(const conv::LoweredModel& m, conv::schema::OpCode code) {
  for (const conv::LoweredOp& op : m.ops) {
    if (op.opcode == code) return &op;
  }
  return nullptr;
}

// ---- CONV_2D -----------------------------------------------------------------

// x [1,6,6,2], 3x3 stride 2 SAME: TFLite pads 0 before and 1 after (the odd
// pixel goes last); OHWI [3,3,3,2] weights, bias, fused RELU.
std::string conv_model(std::vector<float>* filter) {
  TfliteBuilder b;
  *filter = iota(3 * 3 * 3 * 2, -1.0f, 0.05f);
  const int x = b.tensor({{1, 6, 6, 2}, kTflFloat32, {}, "x"});
  const int w = b.tensor({{3, 3, 3, 2}, kTflFloat32, raw(*filter), "w"});
  const int bias = b.tensor({{3}, kTflFloat32, raw(std::vector<float>{0.5f, -0.25f, 0.0f}), "bias"});
  const int y = b.tensor({{1, 3, 3, 3}, kTflFloat32, {}, "y"});
  b.op({3, {x, w, bias}, {y}, tfl::BuiltinOptions::Conv2DOptions, conv_options(0, 2, 2, 1)});
  b.inputs = {x};
  b.outputs = {y};
  return b.build();
}

TEST(TfliteImport, ConvPadsLikeTfliteAndTransposesOhwiToHwio) {
  std::vector<float> ohwi;
  const TfliteImport imported = conv::import_tflite(conv_model(&ohwi), "conv.tflite");
  const conv::LoweredOp* conv = find_op(imported.model, conv::schema::OpCode::CONV2D);
  ASSERT_NE(conv, nullptr);
  const auto* o = conv->options.AsConv2DOptions();
  EXPECT_EQ(o->pad_top, 0);
  EXPECT_EQ(o->pad_bottom, 1);
  EXPECT_EQ(o->pad_left, 0);
  EXPECT_EQ(o->pad_right, 1);
  EXPECT_EQ(o->activation, conv::schema::Activation::RELU);
  const conv::Value& w = imported.model.values[static_cast<size_t>(conv->inputs[1])];
  ASSERT_EQ(w.shape, (std::vector<int64_t>{3, 3, 2, 3}));
  const float* hwio = w.constant->as<float>();
  for (int oc = 0; oc < 3; ++oc)
    for (int h = 0; h < 3; ++h)
      for (int k = 0; k < 3; ++k)
        for (int i = 0; i < 2; ++i) {
          ASSERT_EQ(hwio[((h * 3 + k) * 2 + i) * 3 + oc], ohwi[static_cast<size_t>(((oc * 3 + h) * 3 + k) * 2 + i)]);
        }
}

TEST(TfliteImport, ConvComputesWhatTfliteDefines) {
  std::vector<float> w;
  const std::string bytes = conv_model(&w);
  const std::vector<float> x = iota(72, -2.0f, 0.06f);
  const std::vector<float> got = convert_and_run(bytes, {1, 6, 6, 2}, x);
  ASSERT_EQ(got.size(), 27u);
  const float bias[3] = {0.5f, -0.25f, 0.0f};
  for (int oy = 0; oy < 3; ++oy)
    for (int ox = 0; ox < 3; ++ox)
      for (int oc = 0; oc < 3; ++oc) {
        double acc = bias[oc];
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx) {
            const int iy = oy * 2 + ky, ix = ox * 2 + kx;  // pad before = 0
            if (iy >= 6 || ix >= 6) continue;
            for (int ic = 0; ic < 2; ++ic) {
              acc += static_cast<double>(x[static_cast<size_t>((iy * 6 + ix) * 2 + ic)]) *
                     w[static_cast<size_t>(((oc * 3 + ky) * 3 + kx) * 2 + ic)];
            }
          }
        EXPECT_NEAR(got[static_cast<size_t>((oy * 3 + ox) * 3 + oc)], std::max(acc, 0.0), 1e-5);
      }
}

// ---- DEPTHWISE_CONV_2D ---------------------------------------------------------

TEST(TfliteImport, DepthwiseMultiplierKeepsChannelOrder) {
  // 2 channels x multiplier 2, 2x2 VALID: output channel c*2+m reads input channel c.
  TfliteBuilder b;
  const std::vector<float> w = iota(2 * 2 * 4, 0.5f, -0.1f);
  const int x = b.tensor({{1, 3, 3, 2}, kTflFloat32, {}, "x"});
  const int f = b.tensor({{1, 2, 2, 4}, kTflFloat32, raw(w), "w"});
  const int y = b.tensor({{1, 2, 2, 4}, kTflFloat32, {}, "y"});
  b.op({4, {x, f, -1}, {y}, tfl::BuiltinOptions::DepthwiseConv2DOptions, depthwise_options(1, 1, 2)});
  b.inputs = {x};
  b.outputs = {y};
  const std::vector<float> xv = iota(18, 1.0f, 0.25f);
  const std::vector<float> got = convert_and_run(b.build(), {1, 3, 3, 2}, xv);
  ASSERT_EQ(got.size(), 16u);
  for (int oy = 0; oy < 2; ++oy)
    for (int ox = 0; ox < 2; ++ox)
      for (int oc = 0; oc < 4; ++oc) {
        double acc = 0;
        for (int ky = 0; ky < 2; ++ky)
          for (int kx = 0; kx < 2; ++kx) {
            acc += static_cast<double>(xv[static_cast<size_t>(((oy + ky) * 3 + ox + kx) * 2 + oc / 2)]) *
                   w[static_cast<size_t>((ky * 2 + kx) * 4 + oc)];
          }
        EXPECT_NEAR(got[static_cast<size_t>((oy * 2 + ox) * 4 + oc)], acc, 1e-5);
      }
}

// An int8 depthwise from one channel to 8 (person_detect's first layer): the
// 8 per-channel scales land on floe's multiplier axis, and a bias carrying
// quantized_dimension 3 (person_detect's quirk) is read as 0 with a note.
std::string int8_depthwise_model() {
  TfliteBuilder b;
  const int x = b.tensor({{1, 4, 4, 1}, kTflInt8, {}, "x", {0.5f}, {-1}});
  const int f = b.tensor({{1, 3, 3, 8}, kTflInt8, std::vector<uint8_t>(72, 3), "w",
                          {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f}, std::vector<int64_t>(8, 0), 3});
  const int bias = b.tensor({{8}, kTflInt32, raw(std::vector<int32_t>(8, 7)), "bias",
                             {0.05f, 0.1f, 0.15f, 0.2f, 0.25f, 0.3f, 0.35f, 0.4f}, std::vector<int64_t>(8, 0), 3});
  const int y = b.tensor({{1, 2, 2, 8}, kTflInt8, {}, "y", {0.25f}, {5}});
  b.op({4, {x, f, bias}, {y}, tfl::BuiltinOptions::DepthwiseConv2DOptions, depthwise_options(1, 1, 8, 3)});
  b.inputs = {x};
  b.outputs = {y};
  return b.build();
}

TEST(TfliteImport, Int8DepthwiseQuantizationFollowsTheLayout) {
  const TfliteImport imported = conv::import_tflite(int8_depthwise_model(), "dw.tflite");
  EXPECT_TRUE(imported.quantized);
  const conv::LoweredOp* dw = find_op(imported.model, conv::schema::OpCode::DEPTHWISE_CONV2D);
  ASSERT_NE(dw, nullptr);
  EXPECT_EQ(dw->options.AsDepthwiseConv2DOptions()->depth_multiplier, 8);
  EXPECT_EQ(dw->options.AsDepthwiseConv2DOptions()->activation, conv::schema::Activation::RELU6);
  const conv::Value& w = imported.model.values[static_cast<size_t>(dw->inputs[1])];
  EXPECT_EQ(w.shape, (std::vector<int64_t>{3, 3, 1, 8}));
  EXPECT_EQ(w.quantization.dimension, 3);
  EXPECT_EQ(w.quantization.scale.size(), 8u);
  const conv::Value& bias = imported.model.values[static_cast<size_t>(dw->inputs[2])];
  EXPECT_EQ(bias.quantization.dimension, 0);
  ASSERT_EQ(imported.notes.size(), 1u);
  EXPECT_NE(imported.notes[0].find("'bias': 3"), std::string::npos) << imported.notes[0];
  const conv::Value& y = imported.model.values[static_cast<size_t>(imported.model.outputs[0])];
  EXPECT_EQ(y.quantization.scale, std::vector<float>{0.25f});
  EXPECT_EQ(y.quantization.zero_point, std::vector<int64_t>{5});
}

// The converted file carries the records and the runtime accepts them.
TEST(TfliteImport, Int8ModelKeepsItsQuantizationInTheFloeFile) {
  const std::string path = make_temp_dir() + "/dw.tflite";
  std::ofstream(path, std::ios::binary) << int8_depthwise_model();
  conv::ConvertOptions options;
  options.graph_path = path;
  const conv::ConvertResult r = conv::convert(options);
  tools::AlignedBytes bytes = tools::aligned_bytes(r.model.size());
  std::memcpy(bytes.get(), r.model.data(), r.model.size());
  Model model;
  ASSERT_EQ(model.Load(bytes.get(), r.model.size()), Status::kOk) << model.error().message;
  const Quantization x = model.quantization(static_cast<size_t>(model.schema()->inputs()->Get(0)));
  EXPECT_EQ(x.scale, 0.5f);
  EXPECT_EQ(x.zero_point, -1);
  EXPECT_NE(r.summary.find("input   x  int8 [1,4,4,1]  scale 0.5 zero point -1"), std::string::npos) << r.summary;
  // The 8 per-channel weight scales share one zero point (0) in the file.
  bool saw_weights = false;
  for (const auto* t : *model.schema()->tensors()) {
    if (t->quantization() == nullptr || t->quantization()->scale()->size() != 8) continue;
    EXPECT_EQ(t->quantization()->zero_point()->size(), 1u) << t->name()->str();
    saw_weights |= t->dtype() == schema::DType::INT8;
  }
  EXPECT_TRUE(saw_weights);
}

// ---- FULLY_CONNECTED ------------------------------------------------------------

TEST(TfliteImport, FullyConnectedReadsWeightsTransposed) {
  for (const bool keep_num_dims : {false, true}) {
    TfliteBuilder b;
    const std::vector<float> w = iota(12, -0.5f, 0.1f), bias = {1.0f, 2.0f, 3.0f};
    const int x = b.tensor({{1, 1, 1, 4}, kTflFloat32, {}, "x"});
    const int f = b.tensor({{3, 4}, kTflFloat32, raw(w), "w"});
    const int c = b.tensor({{3}, kTflFloat32, raw(bias), "b"});
    const int y = b.tensor({keep_num_dims ? std::vector<int32_t>{1, 1, 1, 3} : std::vector<int32_t>{1, 3},
                            kTflFloat32, {}, "y"});
    b.op({9, {x, f, c}, {y}, tfl::BuiltinOptions::FullyConnectedOptions, fc_options(0, keep_num_dims)});
    b.inputs = {x};
    b.outputs = {y};
    const TfliteImport imported = conv::import_tflite(b.build(), "fc.tflite");
    const conv::LoweredOp* mm = find_op(imported.model, conv::schema::OpCode::MATMUL);
    ASSERT_NE(mm, nullptr);
    EXPECT_TRUE(mm->options.AsMatMulOptions()->transpose_b);
    const std::vector<float> xv = {1.0f, -2.0f, 0.5f, 4.0f};
    const std::vector<float> got = convert_and_run(b.build(), {1, 1, 1, 4}, xv);
    ASSERT_EQ(got.size(), 3u);
    for (int n = 0; n < 3; ++n) {
      double acc = bias[static_cast<size_t>(n)];
      for (int k = 0; k < 4; ++k) acc += static_cast<double>(xv[static_cast<size_t>(k)]) * w[static_cast<size_t>(n * 4 + k)];
      EXPECT_NEAR(got[static_cast<size_t>(n)], acc, 1e-5) << "keep_num_dims " << keep_num_dims;
    }
  }
}

// ---- element-wise, activations, reductions, data movement --------------------------

TEST(TfliteImport, SmallFloatGraphComputesLikeTflite) {
  // y = softmax(beta 0.5, concat(mean_w(pad(x)), relu6(x*c + d)) ...): every
  // remaining op of the supported list on one small graph.
  TfliteBuilder b;
  const int x = b.tensor({{1, 2, 2, 2}, kTflFloat32, {}, "x"});
  const int c = b.tensor({{2}, kTflFloat32, raw(std::vector<float>{2.0f, -1.0f}), "c"});
  const int d = b.tensor({{1, 1, 1, 2}, kTflFloat32, raw(std::vector<float>{0.5f, 7.0f}), "d"});
  const int pads = b.tensor({{4, 2}, kTflInt32, raw(std::vector<int32_t>{0, 0, 1, 0, 0, 1, 0, 0}), "pads"});
  const int axes = b.tensor({{1}, kTflInt32, raw(std::vector<int32_t>{-2}), "axes"});
  const int xc = b.tensor({{1, 2, 2, 2}, kTflFloat32, {}, "xc"});
  const int xcd = b.tensor({{1, 2, 2, 2}, kTflFloat32, {}, "xcd"});
  const int padded = b.tensor({{1, 3, 3, 2}, kTflFloat32, {}, "padded"});
  const int mean = b.tensor({{1, 3, 1, 2}, kTflFloat32, {}, "mean"});
  const int sub = b.tensor({{1, 2, 2, 2}, kTflFloat32, {}, "sub"});
  const int sig = b.tensor({{1, 2, 2, 2}, kTflFloat32, {}, "sig"});
  const int th = b.tensor({{1, 2, 2, 2}, kTflFloat32, {}, "th"});
  const int flat_mean = b.tensor({{1, 6}, kTflFloat32, {}, "flat_mean"});
  const int flat_th = b.tensor({{1, 8}, kTflFloat32, {}, "flat_th"});
  const int shape = b.tensor({{2}, kTflInt32, raw(std::vector<int32_t>{1, -1}), "shape"});
  const int cat = b.tensor({{1, 14}, kTflFloat32, {}, "cat"});
  const int y = b.tensor({{1, 14}, kTflFloat32, {}, "y"});
  b.op({18, {x, c}, {xc}, tfl::BuiltinOptions::MulOptions,
        [](flatbuffers::FlatBufferBuilder& f) { return tfl::CreateMulOptions(f, 0).Union(); }});
  b.op({0, {xc, d}, {xcd}, tfl::BuiltinOptions::AddOptions,
        [](flatbuffers::FlatBufferBuilder& f) { return tfl::CreateAddOptions(f, 3).Union(); }});  // RELU6
  b.op({34, {x, pads}, {padded}});
  b.op({40, {padded, axes}, {mean}, tfl::BuiltinOptions::ReducerOptions,
        [](flatbuffers::FlatBufferBuilder& f) { return tfl::CreateReducerOptions(f, true).Union(); }});
  b.op({41, {xcd, x}, {sub}, tfl::BuiltinOptions::SubOptions,
        [](flatbuffers::FlatBufferBuilder& f) { return tfl::CreateSubOptions(f, 1).Union(); }});  // RELU
  b.op({14, {sub}, {sig}});
  b.op({28, {sig}, {th}});
  b.op({22, {mean, shape}, {flat_mean}});
  b.op({22, {th, shape}, {flat_th}});
  b.op({2, {flat_mean, flat_th}, {cat}, tfl::BuiltinOptions::ConcatenationOptions,
        [](flatbuffers::FlatBufferBuilder& f) { return tfl::CreateConcatenationOptions(f, -1, 0).Union(); }});
  b.op({25, {cat}, {y}, tfl::BuiltinOptions::SoftmaxOptions,
        [](flatbuffers::FlatBufferBuilder& f) { return tfl::CreateSoftmaxOptions(f, 0.5f).Union(); }});
  b.inputs = {x};
  b.outputs = {y};
  const std::vector<float> xv = {1.0f, -2.0f, 3.5f, 0.25f, -1.5f, 4.0f, 0.0f, 2.0f};
  std::string summary;
  const std::vector<float> got = convert_and_run(b.build(), {1, 2, 2, 2}, xv, &summary);
  ASSERT_EQ(got.size(), 14u) << summary;
  // The same arithmetic, NHWC [1,2,2,2].
  auto at = [&](int h, int w, int ch) { return static_cast<double>(xv[static_cast<size_t>((h * 2 + w) * 2 + ch)]); };
  std::vector<double> cat_v;
  for (int h = 0; h < 3; ++h)  // pad: one row before, one column after; mean over W, kept
    for (int ch = 0; ch < 2; ++ch) {
      double s = 0;
      for (int w = 0; w < 3; ++w) s += (h >= 1 && w < 2) ? at(h - 1, w, ch) : 0.0;
      cat_v.push_back(s / 3);
    }
  for (int h = 0; h < 2; ++h)
    for (int w = 0; w < 2; ++w)
      for (int ch = 0; ch < 2; ++ch) {
        const double xcd_v = std::min(std::max(at(h, w, ch) * (ch ? -1.0 : 2.0) + (ch ? 7.0 : 0.5), 0.0), 6.0);
        const double sub_v = std::max(xcd_v - at(h, w, ch), 0.0);
        cat_v.push_back(std::tanh(1.0 / (1.0 + std::exp(-sub_v))));
      }
  double max = cat_v[0], sum = 0;
  for (double v : cat_v) max = std::max(max, v);
  for (double v : cat_v) sum += std::exp(0.5 * (v - max));
  for (size_t i = 0; i < cat_v.size(); ++i) EXPECT_NEAR(got[i], std::exp(0.5 * (cat_v[i] - max)) / sum, 1e-6) << i;
}

TEST(TfliteImport, ConstantFloat16WeightsAreDequantizedAtConversion) {
  TfliteBuilder b;
  // 1.0, -2.0, 0.5, 65504 (largest half), 2^-24 (smallest subnormal)
  const std::vector<uint16_t> half = {0x3C00, 0xC000, 0x3800, 0x7BFF, 0x0001};
  const int w16 = b.tensor({{5}, kTflFloat16, raw(half), "w16"});
  const int w = b.tensor({{5}, kTflFloat32, {}, "w"});
  const int x = b.tensor({{5}, kTflFloat32, {}, "x"});
  const int y = b.tensor({{5}, kTflFloat32, {}, "y"});
  b.op({6, {w16}, {w}});
  b.op({18, {x, w}, {y}});
  b.inputs = {x};
  b.outputs = {y};
  const TfliteImport imported = conv::import_tflite(b.build(), "fp16.tflite");
  EXPECT_EQ(find_op(imported.model, conv::schema::OpCode::DEQUANTIZE), nullptr);
  const std::vector<float> got = convert_and_run(b.build(), {5}, {1, 1, 1, 1, 1});
  EXPECT_EQ(got, (std::vector<float>{1.0f, -2.0f, 0.5f, 65504.0f, std::ldexp(1.0f, -24)}));
}

// ---- opcodes and refusals ------------------------------------------------------------

TEST(TfliteImport, OldFilesUseTheDeprecatedCodeByte) {
  std::vector<float> w;
  TfliteBuilder b;
  const int x = b.tensor({{1, 4}, kTflFloat32, {}, "x"});
  const int y = b.tensor({{1, 4}, kTflFloat32, {}, "y"});
  b.op({21, {x}, {y}});  // RELU6
  b.inputs = {x};
  b.outputs = {y};
  b.old_style_codes = true;
  const TfliteImport imported = conv::import_tflite(b.build(), "old.tflite");
  ASSERT_EQ(imported.model.ops.size(), 1u);
  EXPECT_EQ(imported.model.ops[0].opcode, conv::schema::OpCode::RELU6);
}

TEST(TfliteImport, EveryUnsupportedOpIsListedAtOnce) {
  TfliteBuilder b;
  const int x = b.tensor({{1, 4, 4, 4}, kTflFloat32, {}, "x"});
  const int w = b.tensor({{4, 1, 1, 4}, kTflFloat32, raw(iota(16)), "w"});
  const int a = b.tensor({{1, 4, 4, 4}, kTflFloat32, {}, "a"});
  const int g = b.tensor({{1, 4, 4, 4}, kTflFloat32, {}, "g"});
  const int c = b.tensor({{1, 4, 4, 4}, kTflFloat32, {}, "c"});
  const int d = b.tensor({{1, 8, 8, 1}, kTflFloat32, {}, "d"});
  b.op({3, {x, w, -1}, {a}, tfl::BuiltinOptions::Conv2DOptions, conv_options(0, 1, 1, 2)});  // RELU_N1_TO_1
  b.op({150, {a}, {g}});                                                                  // GELU (extended code)
  b.op({32, {g}, {c}, tfl::BuiltinOptions::NONE, nullptr, "MyCustomOp"});
  b.op({5, {c}, {d}});  // DEPTH_TO_SPACE
  b.inputs = {x};
  b.outputs = {d};
  try {
    conv::import_tflite(b.build(), "four.tflite");
    FAIL() << "expected a refusal";
  } catch (const ConvertError& e) {
    EXPECT_EQ(e.category(), conv::ErrorCategory::kUnsupported);
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("four.tflite: 4 node(s)", 0), 0u) << m;
    for (const char* op : {"CONV_2D (fused RELU_N1_TO_1) x1", "GELU x1", "CUSTOM 'MyCustomOp' x1", "DEPTH_TO_SPACE x1"}) {
      EXPECT_NE(m.find(op), std::string::npos) << op << "\n" << m;
    }
    ASSERT_EQ(e.refusals().size(), 1u);
    EXPECT_EQ(e.refusals()[0].nodes_by_op.size(), 4u);
  }
}

std::string error_of(const std::string& bytes, const std::string& path) {
  try {
    conv::import_tflite(bytes, path);
  } catch (const ConvertError& e) {
    EXPECT_EQ(e.where().file, path);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(TfliteImport, CorruptFilesGetOneClearError) {
  std::vector<float> w;
  const std::string good = conv_model(&w);
  for (size_t cut : {size_t{0}, size_t{7}, size_t{8}, good.size() / 2, good.size() - 1}) {
    const std::string m = error_of(good.substr(0, cut), "cut.tflite");
    EXPECT_EQ(m.rfind("cut.tflite: ", 0), 0u) << m;
    EXPECT_TRUE(m.find("verifier failed") != std::string::npos || m.find("no TFL3 identifier") != std::string::npos)
        << m;
  }
  std::string garbage(512, '\x5a');
  std::memcpy(&garbage[4], "TFL3", 4);
  EXPECT_NE(error_of(garbage, "garbage.tflite").find("verifier failed"), std::string::npos);
}

TEST(TfliteImport, BadIndicesNameTheOperatorAndOffset) {
  TfliteBuilder b;
  const int x = b.tensor({{1, 4}, kTflFloat32, {}, "x"});
  const int y = b.tensor({{1, 4}, kTflFloat32, {}, "y"});
  b.op({19, {x}, {y}});
  b.op({19, {99}, {y}});  // no tensor 99
  b.inputs = {x};
  b.outputs = {y};
  const std::string m = error_of(b.build(), "bad.tflite");
  EXPECT_NE(m.find("operator #1 RELU"), std::string::npos) << m;
  EXPECT_NE(m.find("tensor index 99 is out of range"), std::string::npos) << m;
  EXPECT_NE(m.find("(byte offset "), std::string::npos) << m;
}

TEST(TfliteImport, InconsistentShapesAndDtypesAreRefused) {
  {  // output shape disagrees with the convolution's
    TfliteBuilder b;
    const int x = b.tensor({{1, 4, 4, 1}, kTflFloat32, {}, "x"});
    const int w = b.tensor({{2, 3, 3, 1}, kTflFloat32, raw(iota(18)), "w"});
    const int y = b.tensor({{1, 4, 4, 3}, kTflFloat32, {}, "y"});
    b.op({3, {x, w, -1}, {y}, tfl::BuiltinOptions::Conv2DOptions, conv_options(0, 1, 1)});
    b.inputs = {x};
    b.outputs = {y};
    EXPECT_NE(error_of(b.build(), "s.tflite").find("the operator computes [1,4,4,2]"), std::string::npos);
  }
  {  // an int8 conv whose activations carry no scale
    TfliteBuilder b;
    const int x = b.tensor({{1, 2, 2, 1}, kTflInt8, {}, "x"});
    const int w = b.tensor({{1, 1, 1, 1}, kTflInt8, {1}, "w", {0.5f}, {0}});
    const int y = b.tensor({{1, 2, 2, 1}, kTflInt8, {}, "y", {0.5f}, {0}});
    b.op({3, {x, w, -1}, {y}, tfl::BuiltinOptions::Conv2DOptions, conv_options(0, 1, 1)});
    b.inputs = {x};
    b.outputs = {y};
    EXPECT_NE(error_of(b.build(), "q.tflite").find("int8 tensor 'x' without quantization"), std::string::npos);
  }
}

// An int8 SOFTMAX or LOGISTIC whose input scale is too small for TFLite's
// fixed-point kernels (beta x scale x 2^26 < 0.5 gives a negative shift): its
// input radius would not fit int32 and Init would refuse the model, so the
// conversion refuses it, naming the op. Also a tests/fuzz/regress input.
std::string int8_activation_model(int32_t code, float input_scale) {
  TfliteBuilder b;
  const int x = b.tensor({{1, 4}, kTflInt8, {}, "x", {input_scale}, {0}});
  const int y = b.tensor({{1, 4}, kTflInt8, {}, "y", {1.0f / 256}, {-128}});
  if (code == 25) {
    b.op({25, {x}, {y}, tfl::BuiltinOptions::SoftmaxOptions,
          [](flatbuffers::FlatBufferBuilder& f) { return tfl::CreateSoftmaxOptions(f, 1.0f).Union(); }});
  } else {
    b.op({code, {x}, {y}});
  }
  b.inputs = {x};
  b.outputs = {y};
  return b.build();
}

TEST(TfliteImport, Int8FixedPointOpsOutOfRangeAreRefusedAtConversion) {
  for (const int32_t code : {25, 14}) {
    const std::string path = make_temp_dir() + "/tiny.tflite";
    std::ofstream(path, std::ios::binary) << int8_activation_model(code, 1e-12f);
    conv::ConvertOptions options;
    options.graph_path = path;
    try {
      conv::convert(options);
      ADD_FAILURE() << "code " << code << ": expected a refusal";
    } catch (const ConvertError& e) {
      EXPECT_EQ(e.category(), conv::ErrorCategory::kUnsupported) << e.what();
      EXPECT_NE(std::string(e.what()).find(code == 25 ? "SOFTMAX" : "LOGISTIC/TANH"), std::string::npos) << e.what();
    }
    // A scale in range converts.
    std::ofstream(path, std::ios::binary) << int8_activation_model(code, 0.05f);
    EXPECT_NO_THROW(conv::convert(options)) << code;
  }
}

// An int8 MUL whose scales ask for a requantization factor of 2^30 or more:
// refused at conversion, since Init would refuse the emitted model. Also a
// tests/fuzz/regress input.
std::string int8_mul_model(float output_scale) {
  TfliteBuilder b;
  const int x = b.tensor({{1, 4}, kTflInt8, {}, "x", {1.0f}, {0}});
  const int c = b.tensor({{1, 4}, kTflInt8, {1, 2, 3, 4}, "c", {1.0f}, {0}});
  const int y = b.tensor({{1, 4}, kTflInt8, {}, "y", {output_scale}, {0}});
  b.op({18, {x, c}, {y}});
  b.inputs = {x};
  b.outputs = {y};
  return b.build();
}

TEST(TfliteImport, Int8RequantizationBeyondTheKernelsRangeIsRefused) {
  const std::string path = make_temp_dir() + "/mul.tflite";
  std::ofstream(path, std::ios::binary) << int8_mul_model(1e-12f);
  conv::ConvertOptions options;
  options.graph_path = path;
  try {
    conv::convert(options);
    ADD_FAILURE() << "expected a refusal";
  } catch (const ConvertError& e) {
    EXPECT_EQ(e.category(), conv::ErrorCategory::kUnsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("beyond the int8 kernels' range"), std::string::npos) << e.what();
  }
  std::ofstream(path, std::ios::binary) << int8_mul_model(0.5f);
  EXPECT_NO_THROW(conv::convert(options));
}

// An int8 conv whose bias is near INT32_MIN: on the harness's zeroed input the
// accumulator is -10000 and adding the bias overflows int32, which the int8
// kernels must wrap as TFLite does rather than leave undefined. A
// tests/fuzz/regress input.
std::string int8_conv_bias_limit_model() {
  TfliteBuilder b;
  const int x = b.tensor({{1, 1, 1, 1}, kTflInt8, {}, "x", {1.0f}, {100}});
  const int w = b.tensor({{1, 1, 1, 1}, kTflInt8, {100}, "w", {1.0f}, {0}});
  const int bias = b.tensor({{1}, kTflInt32, raw(std::vector<int32_t>{INT32_MIN + 5}), "bias", {1.0f}, {0}});
  const int y = b.tensor({{1, 1, 1, 1}, kTflInt8, {}, "y", {1.0f}, {0}});
  b.op({3, {x, w, bias}, {y}, tfl::BuiltinOptions::Conv2DOptions, conv_options(1, 1, 1)});
  b.inputs = {x};
  b.outputs = {y};
  return b.build();
}

// ---- SVDF and variable tensors ----------------------------------------------

// int8 SVDF, rank 2, an int16 state kept across invocations (a fuzz seed).
std::string int8_svdf_model() {
  TfliteBuilder b;
  const int x = b.tensor({{1, 6}, kTflInt8, {}, "x", {0.02f}, {-3}});
  std::vector<int8_t> wf(4 * 6);
  for (size_t i = 0; i < wf.size(); ++i) wf[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
  std::vector<int16_t> wt(4 * 3);
  for (size_t i = 0; i < wt.size(); ++i) wt[i] = static_cast<int16_t>(static_cast<int>(i * 9973 % 65535) - 32767);
  const int f = b.tensor({{4, 6}, kTflInt8, raw(wf), "wf", {0.01f}, {0}});
  const int t = b.tensor({{4, 3}, 7, raw(wt), "wt", {1.0f / 65536}, {0}});
  const int bias = b.tensor({{2}, kTflInt32, raw(std::vector<int32_t>{1000, -1000}), "bias", {1e-8f}, {0}});
  TflTensor state{{1, 12}, 7, {}, "state", {0.001f}, {0}};
  state.variable = true;
  const int st = b.tensor(state);
  const int y = b.tensor({{1, 2}, kTflInt8, {}, "y", {0.01f}, {1}});
  b.op({27, {x, f, t, bias, st}, {y}, tfl::BuiltinOptions::SVDFOptions, svdf_options(2)});
  b.inputs = {x};
  b.outputs = {y};
  return b.build();
}

TEST(TfliteImport, SvdfStateIsAVariableAndOtherOpsMayNotReadOne) {
  const conv::TfliteImport imported = conv::import_tflite(int8_svdf_model(), "svdf.tflite");
  ASSERT_EQ(imported.model.ops.size(), 1u);
  const conv::LoweredOp& op = imported.model.ops[0];
  EXPECT_EQ(op.opcode, conv::schema::OpCode::SVDF);
  ASSERT_EQ(op.inputs.size(), 5u);
  EXPECT_TRUE(imported.model.values[static_cast<size_t>(op.inputs[4])].variable);
  EXPECT_EQ(op.options.AsSvdfOptions()->rank, 2);

  // A variable tensor read by an ordinary op is no state floe keeps.
  TfliteBuilder b;
  TflTensor v{{4}, kTflFloat32, {}, "v"};
  v.variable = true;
  const int x = b.tensor({{4}, kTflFloat32, {}, "x"});
  const int var = b.tensor(v);
  const int y = b.tensor({{4}, kTflFloat32, {}, "y"});
  b.op({0, {x, var}, {y}, tfl::BuiltinOptions::AddOptions,
        [](flatbuffers::FlatBufferBuilder& fb) { return tfl::CreateAddOptions(fb).Union(); }});
  b.inputs = {x};
  b.outputs = {y};
  const std::string m = error_of(b.build(), "var.tflite");
  EXPECT_NE(m.find("reads variable tensor 'v' as an ordinary input"), std::string::npos) << m;
}

// The committed fuzz seeds (tests/fuzz/corpus/fuzz_tflite) and regression
// inputs are this file's models; FLOE_WRITE_TFLITE_SEEDS=1 rewrites them.
// ---- TRANSPOSE, STRIDED_SLICE, LEAKY_RELU, TRANSPOSE_CONV ------------------------

// Runs a one-op float model on x (input "x" of `shape`).
std::vector<float> run_one_op(TfliteBuilder& b, const std::vector<int64_t>& shape, const std::vector<float>& x) {
  return convert_and_run(b.build(), shape, x);
}

TEST(TfliteImport, TransposeMovesEveryAxis) {
  TfliteBuilder b;
  const int x = b.tensor({{2, 3, 4}, kTflFloat32, {}, "x"});
  const int perm = b.tensor({{3}, kTflInt32, raw(std::vector<int32_t>{2, 0, 1}), "perm"});
  const int y = b.tensor({{4, 2, 3}, kTflFloat32, {}, "y"});
  b.op({39, {x, perm}, {y}});
  b.inputs = {x};
  b.outputs = {y};
  const std::vector<float> in = iota(24);
  const std::vector<float> got = run_one_op(b, {2, 3, 4}, in);
  ASSERT_EQ(got.size(), 24u);
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(got[static_cast<size_t>((k * 2 + i) * 3 + j)], in[static_cast<size_t>((i * 3 + j) * 4 + k)]);
}

// x [4, 6]: rows 3, 1 (begin -1, stride -2, end_mask: down to row 0), columns
// 1, 3 (end given as an offset from begin); then one row by shrink_axis_mask.
TEST(TfliteImport, StridedSliceReadsMasksAndOffsetsAsTflite) {
  const std::vector<float> in = iota(24);
  {
    TfliteBuilder b;
    const int x = b.tensor({{4, 6}, kTflFloat32, {}, "x"});
    const int begin = b.tensor({{2}, kTflInt32, raw(std::vector<int32_t>{-1, 1}), "begin"});
    const int end = b.tensor({{2}, kTflInt32, raw(std::vector<int32_t>{0, 4}), "end"});
    const int strides = b.tensor({{2}, kTflInt32, raw(std::vector<int32_t>{-2, 2}), "strides"});
    const int y = b.tensor({{2, 2}, kTflFloat32, {}, "y"});
    // end_mask on dim 0 (run to the start); offset: end is begin + end on dim 1 (1 + 4 = 5).
    b.op({45, {x, begin, end, strides}, {y}, tfl::BuiltinOptions::StridedSliceOptions,
          [](flatbuffers::FlatBufferBuilder& fb) {
            return tfl::CreateStridedSliceOptions(fb, 0, 1, 0, 0, 0, true).Union();
          }});
    b.inputs = {x};
    b.outputs = {y};
    EXPECT_EQ(run_one_op(b, {4, 6}, in), (std::vector<float>{19, 21, 7, 9}));
  }
  {
    TfliteBuilder b;
    const int x = b.tensor({{4, 6}, kTflFloat32, {}, "x"});
    const int begin = b.tensor({{2}, kTflInt32, raw(std::vector<int32_t>{2, 0}), "begin"});
    const int end = b.tensor({{2}, kTflInt32, raw(std::vector<int32_t>{3, 0}), "end"});
    const int strides = b.tensor({{2}, kTflInt32, raw(std::vector<int32_t>{1, 1}), "strides"});
    const int y = b.tensor({{6}, kTflFloat32, {}, "y"});
    b.op({45, {x, begin, end, strides}, {y}, tfl::BuiltinOptions::StridedSliceOptions,
          [](flatbuffers::FlatBufferBuilder& fb) {
            return tfl::CreateStridedSliceOptions(fb, 2, 2, 0, 0, 1).Union();  // row 2, all columns
          }});
    b.inputs = {x};
    b.outputs = {y};
    EXPECT_EQ(run_one_op(b, {4, 6}, in), (std::vector<float>{12, 13, 14, 15, 16, 17}));
  }
}

TEST(TfliteImport, LeakyReluUsesItsAlpha) {
  TfliteBuilder b;
  const int x = b.tensor({{5}, kTflFloat32, {}, "x"});
  const int y = b.tensor({{5}, kTflFloat32, {}, "y"});
  b.op({98, {x}, {y}, tfl::BuiltinOptions::LeakyReluOptions,
        [](flatbuffers::FlatBufferBuilder& fb) { return tfl::CreateLeakyReluOptions(fb, 0.25f).Union(); }});
  b.inputs = {x};
  b.outputs = {y};
  EXPECT_EQ(run_one_op(b, {5}, {-4, -1, 0, 2, 8}), (std::vector<float>{-1, -0.25f, 0, 2, 8}));
}

// x [1,2,3,2] -> y [1,4,6,3], 3x3 stride 2 SAME, OHWI weights, bias: each
// input pixel scatters its weighted taps; the padding is the forward
// convolution's from y back to x, as TFLite computes it.
TEST(TfliteImport, TransposeConvScattersTapsLikeTflite) {
  const std::vector<float> w = iota(3 * 3 * 3 * 2, -1.0f, 0.07f);
  const std::vector<float> bias = {0.5f, -0.25f, 1.0f};
  TfliteBuilder b;
  const int shape = b.tensor({{4}, kTflInt32, raw(std::vector<int32_t>{1, 4, 6, 3}), "shape"});
  const int wt = b.tensor({{3, 3, 3, 2}, kTflFloat32, raw(w), "w"});
  const int x = b.tensor({{1, 2, 3, 2}, kTflFloat32, {}, "x"});
  const int bt = b.tensor({{3}, kTflFloat32, raw(bias), "bias"});
  const int y = b.tensor({{1, 4, 6, 3}, kTflFloat32, {}, "y"});
  b.op({67, {shape, wt, x, bt}, {y}, tfl::BuiltinOptions::TransposeConvOptions,
        [](flatbuffers::FlatBufferBuilder& fb) { return tfl::CreateTransposeConvOptions(fb, 0, 2, 2).Union(); }});
  b.inputs = {x};
  b.outputs = {y};
  const std::vector<float> in = iota(12, -1.0f, 0.2f);
  const std::vector<float> got = run_one_op(b, {1, 2, 3, 2}, in);
  ASSERT_EQ(got.size(), 72u);
  // SAME from the output: ceil(4 / 2) = 2 rows, total padding (2 - 1) * 2 + 3 - 4 = 1, before 0;
  // columns: ceil(6 / 2) = 3, (3 - 1) * 2 + 3 - 6 = 1, before 0.
  std::vector<double> want(72, 0.0);
  for (int iy = 0; iy < 2; ++iy)
    for (int ix = 0; ix < 3; ++ix)
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx) {
          const int oy = iy * 2 + ky, ox = ix * 2 + kx;
          if (oy >= 4 || ox >= 6) continue;
          for (int oc = 0; oc < 3; ++oc)
            for (int ic = 0; ic < 2; ++ic) {
              want[static_cast<size_t>((oy * 6 + ox) * 3 + oc)] +=
                  static_cast<double>(in[static_cast<size_t>((iy * 3 + ix) * 2 + ic)]) *
                  w[static_cast<size_t>(((oc * 3 + ky) * 3 + kx) * 2 + ic)];
            }
        }
  for (size_t i = 0; i < 72; ++i) EXPECT_NEAR(got[i], want[i] + bias[i % 3], 1e-5) << i;
}

// A FlexBuffer map of integer attributes, as TFLite's converter writes a
// custom op's options.
std::vector<uint8_t> flex_map(const std::vector<std::pair<std::string, int64_t>>& attributes) {
  flexbuffers::Builder fbb;
  fbb.Map([&] {
    for (const auto& [key, v] : attributes) fbb.Int(key.c_str(), v);
  });
  fbb.Finish();
  return fbb.GetBuffer();
}

// A small TFLM Signal front end (64-sample frames, 4 channels), every Signal
// op once: a fuzz seed that needs no ../shared.
std::string signal_front_end_model() {
  TfliteBuilder b;
  constexpr int8_t kI16 = 7, kU32 = 15, kU64 = 12;
  const int x = b.tensor({{64}, kI16, {}, "audio"});
  std::vector<int16_t> window(64);
  for (int i = 0; i < 64; ++i) window[static_cast<size_t>(i)] = static_cast<int16_t>(64 * (i < 32 ? i : 63 - i));
  const int w = b.tensor({{64}, kI16, raw(window), "window"});
  const int windowed = b.tensor({{64}, kI16, {}, "windowed"});
  const int scaled = b.tensor({{64}, kI16, {}, "scaled"});
  const int bits = b.tensor({{}, kTflInt32, {}, "scale_bits"});
  const int spectrum = b.tensor({{66}, kI16, {}, "spectrum"});
  const int energy = b.tensor({{33}, kU32, {}, "energy"});
  const std::vector<int16_t> widths = {2, 4, 4, 6, 6}, weight_starts = {0, 2, 6, 10, 16},
                             freq_starts = {1, 3, 7, 11, 17};
  std::vector<int16_t> weights(22), unweights(22);
  for (int i = 0; i < 22; ++i) {
    weights[static_cast<size_t>(i)] = static_cast<int16_t>(180 * i + 100);
    unweights[static_cast<size_t>(i)] = static_cast<int16_t>(4096 - weights[static_cast<size_t>(i)]);
  }
  const int tw = b.tensor({{22}, kI16, raw(weights), "weights"});
  const int tu = b.tensor({{22}, kI16, raw(unweights), "unweights"});
  const int tf = b.tensor({{5}, kI16, raw(freq_starts), "channel_frequency_starts"});
  const int ts = b.tensor({{5}, kI16, raw(weight_starts), "channel_weight_starts"});
  const int tw2 = b.tensor({{5}, kI16, raw(widths), "channel_widths"});
  const int banks = b.tensor({{4}, kU64, {}, "filter_bank"});
  const int roots = b.tensor({{4}, kU32, {}, "square_root"});
  const int clean = b.tensor({{4}, kU32, {}, "subtracted"});
  const int noise = b.tensor({{4}, kU32, {}, "noise_estimate"});
  std::vector<int16_t> lut(125);
  for (int i = 0; i < 125; ++i) lut[static_cast<size_t>(i)] = static_cast<int16_t>(i % 4 == 3 ? 0 : 32000 - 250 * i);
  const int gain = b.tensor({{125}, kI16, raw(lut), "gain_lut"});
  const int pcan = b.tensor({{4}, kU32, {}, "pcan"});
  const int logs = b.tensor({{4}, kI16, {}, "log"});
  auto custom = [&](const char* name, std::vector<int32_t> in, std::vector<int32_t> out,
                    std::vector<std::pair<std::string, int64_t>> attributes) {
    TflOp op{32, std::move(in), std::move(out)};
    op.custom_code = name;
    if (!attributes.empty()) op.custom_options = flex_map(attributes);
    b.op(std::move(op));
  };
  custom("SignalWindow", {x, w}, {windowed}, {{"shift", 12}});
  custom("SignalFftAutoScale", {windowed}, {scaled, bits}, {});
  custom("SignalRfft", {scaled}, {spectrum}, {{"T", 7}, {"fft_length", 64}});
  custom("SignalEnergy", {spectrum}, {energy}, {{"end_index", 30}, {"start_index", 1}});
  custom("SignalFilterBank", {energy, tw, tu, tf, ts, tw2}, {banks}, {{"num_channels", 4}});
  custom("SignalFilterBankSquareRoot", {banks, bits}, {roots}, {});
  custom("SignalFilterBankSpectralSubtraction", {roots}, {clean, noise},
         {{"alternate_one_minus_smoothing", 15401}, {"alternate_smoothing", 983}, {"clamping", 1},
          {"min_signal_remaining", 819}, {"num_channels", 4}, {"one_minus_smoothing", 15975}, {"smoothing", 409},
          {"smoothing_bits", 10}, {"spectral_subtraction_bits", 14}});
  custom("SignalPCAN", {clean, noise, gain}, {pcan}, {{"snr_shift", 6}});
  custom("SignalFilterBankLog", {pcan}, {logs}, {{"input_correction_bits", 3}, {"output_scale", 64}});
  b.inputs = {x};
  b.outputs = {logs};
  return b.build();
}

// The seed converts and runs (its values are the Signal kernels' own,
// checked against TFLM in tests/kernels/signal_ops_test.cc and
// tests/e2e/tflm_micro_speech_test.cc).
TEST(TfliteImport, ASignalFrontEndConvertsAndRuns) {
  const std::string dir = make_temp_dir();
  std::ofstream(dir + "/signal.tflite", std::ios::binary) << signal_front_end_model();
  const CommandResult r =
      run_command(tool_path("floe-convert") + " -q --graph " + dir + "/signal.tflite -o " + dir + "/signal.floe");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(file_exists(dir + "/signal.floe"));
}

TEST(TfliteImport, FuzzSeedsAreTheseModels) {
  std::vector<float> w;
  const std::string fuzz = std::string(FLOE_SOURCE_DIR) + "/tests/fuzz/";
  const std::map<std::string, std::string> seeds = {
      {"corpus/fuzz_tflite/conv_same_relu.tflite", conv_model(&w)},
      {"corpus/fuzz_tflite/int8_depthwise_x8.tflite", int8_depthwise_model()},
      {"corpus/fuzz_tflite/int8_svdf_rank2.tflite", int8_svdf_model()},
      {"corpus/fuzz_tflite/signal_front_end.tflite", signal_front_end_model()},
      {"regress/fuzz_tflite/int8_softmax_tiny_input_scale.tflite", int8_activation_model(25, 1e-12f)},
      {"regress/fuzz_tflite/int8_mul_requantization_over_2e30.tflite", int8_mul_model(1e-12f)},
      {"regress/fuzz_tflite/int8_conv_bias_near_int32_min.tflite", int8_conv_bias_limit_model()}};
  for (const auto& [relative, bytes] : seeds) {
    const std::string name = fuzz + relative;
    const std::string dir = name.substr(0, name.rfind('/') + 1);
    if (std::getenv("FLOE_WRITE_TFLITE_SEEDS") != nullptr) {
      std::filesystem::create_directories(dir);
      std::ofstream(name, std::ios::binary) << bytes;
    }
    std::ifstream in(name, std::ios::binary);
    EXPECT_EQ(imported_content(std::string(std::istreambuf_iterator<char>(in), {})), imported_content(bytes))
        << relative;
  }
}

}  // namespace
}  // namespace floe::testing
