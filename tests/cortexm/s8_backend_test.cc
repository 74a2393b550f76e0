// SPDX-License-Identifier: Apache-2.0
// The int8 CORTEX_M backend end to end on the host: what the converter writes
// for the Cortex-M targets (Operator.cortexm_kernel, OHWI filters, folded bias,
// per-channel arrays, the im2col scratch as a planned output), what it leaves
// on the reference kernels, and that KWS and person_detect converted for the
// Cortex-M cores compute on the host (portable variant) bit for bit what the
// reference kernels compute.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>

#if defined(FLOE_TEST_THREAD_POOL)
#include <pthreadpool.h>
#endif

#include "converter/lower/backend_cortexm.h"
#include "runtime/core/interpreter.h"
#include "runtime/kernels/cortexm/s8_microkernels.h"
#include "runtime/tools/npy.h"
#include "schemas/floe_generated.h"
#include "tests/support/corpus.h"
#include "tests/support/edited_model.h"
#include "tests/support/loaded_model.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

using conv::schema::CortexMKernel;
using conv::schema::OpCode;

template <typename T>
int add_constant(conv::LoweredModel& m, DType dtype, std::vector<int64_t> shape, const std::vector<T>& data,
                 conv::Quantization q = {}) {
  auto t = std::make_shared<HostTensor>();
  t->dtype = dtype;
  t->shape = shape;
  t->data.resize(data.size() * sizeof(T));
  std::memcpy(t->data.data(), data.data(), t->data.size());
  conv::Value v;
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.constant = std::move(t);
  v.quantization = std::move(q);
  return m.add_value(std::move(v));
}

int add_activation(conv::LoweredModel& m, std::vector<int64_t> shape) {
  conv::Value v;
  v.dtype = DType::kInt8;
  v.shape = std::move(shape);
  v.quantization.scale = {0.5f};
  v.quantization.zero_point = {0};
  return m.add_value(std::move(v));
}

template <typename T>
std::vector<T> values(const conv::LoweredModel& m, int v) {
  const HostTensor& t = *m.values[static_cast<size_t>(v)].constant;
  return std::vector<T>(t.as<T>(), t.as<T>() + t.num_elements());
}

// An int8 op as converter/quantize leaves it: input, weights, bias, the
// multiplier and shift arrays ([1] = per-tensor), input zero point 3.
conv::LoweredOp& add_s8_op(conv::LoweredModel& m, OpCode code, int input, int weights, int bias, int output,
                           int32_t weight_offset = 0) {
  conv::LoweredOp op;
  op.opcode = code;
  op.inputs = {input, weights, bias, add_constant<int32_t>(m, DType::kInt32, {1}, {1 << 30}),
               add_constant<int32_t>(m, DType::kInt32, {1}, {-3})};
  op.outputs = {output};
  op.requantization = std::make_shared<conv::schema::RequantizationT>();
  op.requantization->input_offsets = {-3};
  if (code == OpCode::MATMUL) op.requantization->input_offsets.push_back(weight_offset);
  op.requantization->activation_min = -128;
  op.requantization->activation_max = 127;
  m.ops.push_back(std::move(op));
  return m.ops.back();
}

// One op of each kind the CORTEX_M backend takes or leaves (see below).
conv::LoweredModel layout_model(const std::vector<int8_t>& hwio) {
  conv::LoweredModel m;
  // CONV2D 3x3 (im2col), filter HWIO [3,3,2,3] = 0..53, bias [3].
  const int x = add_activation(m, {1, 5, 5, 2});
  const int y = add_activation(m, {1, 5, 5, 3});
  auto& conv3 = add_s8_op(m, OpCode::CONV2D, x, add_constant<int8_t>(m, DType::kInt8, {3, 3, 2, 3}, hwio),
                          add_constant<int32_t>(m, DType::kInt32, {3}, {100, 200, 300}), y);
  conv::schema::Conv2DOptionsT same;
  same.pad_top = same.pad_left = same.pad_bottom = same.pad_right = 1;
  conv3.options.Set(same);
  // CONV2D 1x1 (direct GEMM), no bias.
  const int z = add_activation(m, {1, 5, 5, 2});
  add_s8_op(m, OpCode::CONV2D, y, add_constant<int8_t>(m, DType::kInt8, {1, 1, 3, 2}, {1, 2, 3, 4, 5, 6}), -1, z)
      .options.Set(conv::schema::Conv2DOptionsT());
  // Grouped CONV2D (filter in_c 1 of 2): the reference kernel.
  const int g = add_activation(m, {1, 5, 5, 2});
  add_s8_op(m, OpCode::CONV2D, z, add_constant<int8_t>(m, DType::kInt8, {1, 1, 1, 2}, {1, 2}), -1, g)
      .options.Set(conv::schema::Conv2DOptionsT());
  // DEPTHWISE multiplier 1 without bias.
  const int d = add_activation(m, {1, 5, 5, 2});
  conv::schema::DepthwiseConv2DOptionsT dw;
  dw.pad_top = dw.pad_left = dw.pad_bottom = dw.pad_right = 1;
  add_s8_op(m, OpCode::DEPTHWISE_CONV2D, g, add_constant<int8_t>(m, DType::kInt8, {3, 3, 2, 1}, hwio), -1, d)
      .options.Set(dw);
  // DEPTHWISE in_c 1, multiplier 4: rewritten as a CONV2D.
  const int one = add_activation(m, {1, 5, 5, 1});
  const int four = add_activation(m, {1, 5, 5, 4});
  conv::schema::DepthwiseConv2DOptionsT dw4 = dw;
  dw4.depth_multiplier = 4;
  add_s8_op(m, OpCode::DEPTHWISE_CONV2D, one, add_constant<int8_t>(m, DType::kInt8, {3, 3, 1, 4}, hwio), -1, four)
      .options.Set(dw4);
  // FULLY_CONNECTED [2, 3]; then one with asymmetric weights (reference).
  const int a = add_activation(m, {1, 3});
  const int fc = add_activation(m, {1, 2});
  conv::schema::MatMulOptionsT nk;
  nk.transpose_b = true;
  add_s8_op(m, OpCode::MATMUL, a, add_constant<int8_t>(m, DType::kInt8, {2, 3}, {1, 2, 3, -4, -5, -6}),
            add_constant<int32_t>(m, DType::kInt32, {2}, {7, 8}), fc)
      .options.Set(nk);
  const int fc2 = add_activation(m, {1, 2});
  add_s8_op(m, OpCode::MATMUL, a, add_constant<int8_t>(m, DType::kInt8, {2, 3}, {1, 2, 3, 4, 5, 6}), -1, fc2, -5)
      .options.Set(nk);
  return m;
}

// The general layout (the M55's Helium kernels take no other).
TEST(CortexmS8Backend, ConverterWritesTheKernelsLayout) {
  std::vector<int8_t> hwio(54);
  for (size_t i = 0; i < hwio.size(); ++i) hwio[i] = static_cast<int8_t>(i);
  conv::LoweredModel m = layout_model(hwio);
  EXPECT_EQ(conv::assign_cortexm_backends(&m, "cortex-m55"), 5);
  const CortexMKernel kernels[] = {CortexMKernel::S8_IM2COL_GEMM, CortexMKernel::S8_GEMM, CortexMKernel::NONE,
                                   CortexMKernel::S8_DEPTHWISE,   CortexMKernel::S8_IM2COL_GEMM,
                                   CortexMKernel::S8_GEMM,        CortexMKernel::NONE};
  ASSERT_EQ(m.ops.size(), 7u);
  for (size_t i = 0; i < m.ops.size(); ++i) {
    EXPECT_EQ(m.ops[i].cortexm_kernel, kernels[i]) << "op " << i;
    EXPECT_EQ(m.ops[i].backend, kernels[i] == CortexMKernel::NONE ? conv::schema::Backend::REFERENCE
                                                                  : conv::schema::Backend::CORTEX_M)
        << "op " << i;
  }

  // The 3x3 convolution: OHWI filter, bias - zero_point * sum, arrays [3], scratch [rows, 18].
  const conv::LoweredOp& c = m.ops[0];
  EXPECT_EQ(m.values[static_cast<size_t>(c.inputs[1])].shape, (std::vector<int64_t>{3, 3, 3, 2}));
  const std::vector<int8_t> ohwi = values<int8_t>(m, c.inputs[1]);
  for (int oc = 0; oc < 3; ++oc) {
    int32_t sum = 0;
    for (int t = 0; t < 18; ++t) {
      EXPECT_EQ(ohwi[static_cast<size_t>(oc * 18 + t)], hwio[static_cast<size_t>(t * 3 + oc)]);
      sum += hwio[static_cast<size_t>(t * 3 + oc)];
    }
    EXPECT_EQ(values<int32_t>(m, c.inputs[2])[static_cast<size_t>(oc)], 100 * (oc + 1) - 3 * sum);
  }
  EXPECT_EQ(values<int32_t>(m, c.inputs[3]), (std::vector<int32_t>{1 << 30, 1 << 30, 1 << 30}));
  EXPECT_EQ(values<int32_t>(m, c.inputs[4]), (std::vector<int32_t>{-3, -3, -3}));
  ASSERT_EQ(c.outputs.size(), 2u);
  const conv::Value& scratch = m.values[static_cast<size_t>(c.outputs[1])];
  EXPECT_FALSE(scratch.is_constant());
  EXPECT_EQ(scratch.dtype, DType::kInt8);
  EXPECT_EQ(scratch.shape, (std::vector<int64_t>{25, 18}));  // all 25 rows fit the 2 KiB budget

  // 1x1: no scratch; the absent bias becomes the fold alone.
  EXPECT_EQ(m.ops[1].outputs.size(), 1u);
  EXPECT_EQ(values<int32_t>(m, m.ops[1].inputs[2]), (std::vector<int32_t>{-3 * (1 + 3 + 5), -3 * (2 + 4 + 6)}));
  // Depthwise: raw (zero) bias, layout unchanged.
  EXPECT_EQ(values<int32_t>(m, m.ops[3].inputs[2]), (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(m.ops[3].opcode, OpCode::DEPTHWISE_CONV2D);
  // in_c 1 depthwise: a CONV2D with the same stride/padding.
  EXPECT_EQ(m.ops[4].opcode, OpCode::CONV2D);
  ASSERT_NE(m.ops[4].options.AsConv2DOptions(), nullptr);
  EXPECT_EQ(m.ops[4].options.AsConv2DOptions()->pad_top, 1);
  EXPECT_EQ(m.values[static_cast<size_t>(m.ops[4].inputs[1])].shape, (std::vector<int64_t>{4, 3, 3, 1}));
  // FULLY_CONNECTED: [N, K] kept, bias folded.
  EXPECT_EQ(values<int32_t>(m, m.ops[5].inputs[2]), (std::vector<int32_t>{7 - 3 * 6, 8 + 3 * 15}));
}

// M4/M33: every layer above passes the short requantization's bound
// (multiplier 2^30, shift -3, small weights and biases): the same layout with
// the bias doubled and the *_SHORT_REQUANT kernels.
TEST(CortexmS8Backend, ConverterPicksTheShortRequantizationOnM4AndM33) {
  std::vector<int8_t> hwio(54);
  for (size_t i = 0; i < hwio.size(); ++i) hwio[i] = static_cast<int8_t>(i);
  for (const char* target : {"cortex-m4", "cortex-m33"}) {
    conv::LoweredModel general = layout_model(hwio), m = layout_model(hwio);
    conv::assign_cortexm_backends(&general, "cortex-m55");
    EXPECT_EQ(conv::assign_cortexm_backends(&m, target), 5);
    const CortexMKernel kernels[] = {CortexMKernel::S8_IM2COL_GEMM_SHORT_REQUANT,
                                     CortexMKernel::S8_GEMM_SHORT_REQUANT,
                                     CortexMKernel::NONE,
                                     CortexMKernel::S8_DEPTHWISE_SHORT_REQUANT,
                                     CortexMKernel::S8_IM2COL_GEMM_SHORT_REQUANT,
                                     CortexMKernel::S8_GEMM_SHORT_REQUANT,
                                     CortexMKernel::NONE};
    ASSERT_EQ(m.ops.size(), 7u);
    for (size_t i = 0; i < m.ops.size(); ++i) {
      EXPECT_EQ(m.ops[i].cortexm_kernel, kernels[i]) << target << " op " << i;
      if (kernels[i] == CortexMKernel::NONE) continue;
      std::vector<int32_t> doubled = values<int32_t>(general, general.ops[i].inputs[2]);
      for (int32_t& b : doubled) b *= 2;
      EXPECT_EQ(values<int32_t>(m, m.ops[i].inputs[2]), doubled) << target << " op " << i;
      EXPECT_EQ(values<int32_t>(m, m.ops[i].inputs[3]), values<int32_t>(general, general.ops[i].inputs[3]));
      EXPECT_EQ(values<int32_t>(m, m.ops[i].inputs[4]), values<int32_t>(general, general.ops[i].inputs[4]));
    }
  }
}

// A 1x1 convolution with in_c a multiple of 8 (up to 64) and an even out_c:
// on M4/M33 its filter becomes the packed channel pairs (widened weights, then
// each pair's short-requantization constants); the M55 keeps the OHWI GEMM.
TEST(CortexmS8Backend, ConverterPacksChannelPairsOfEligible1x1OnM4AndM33) {
  auto model = [] {
    conv::LoweredModel m;
    const int x = add_activation(m, {1, 3, 3, 8});
    const int y = add_activation(m, {1, 3, 3, 4});
    std::vector<int8_t> hwio(32);
    for (size_t i = 0; i < hwio.size(); ++i) hwio[i] = static_cast<int8_t>(static_cast<int>(i) - 16);
    add_s8_op(m, OpCode::CONV2D, x, add_constant<int8_t>(m, DType::kInt8, {1, 1, 8, 4}, hwio),
              add_constant<int32_t>(m, DType::kInt32, {4}, {10, -20, 30, -40}), y)
        .options.Set(conv::schema::Conv2DOptionsT());
    return m;
  };
  conv::LoweredModel m55 = model();
  ASSERT_EQ(conv::assign_cortexm_backends(&m55, "cortex-m55"), 1);
  EXPECT_EQ(m55.ops[0].cortexm_kernel, CortexMKernel::S8_GEMM);
  const std::vector<int8_t> ohwi = values<int8_t>(m55, m55.ops[0].inputs[1]);
  for (const char* target : {"cortex-m4", "cortex-m33"}) {
    conv::LoweredModel m = model();
    ASSERT_EQ(conv::assign_cortexm_backends(&m, target), 1);
    const conv::LoweredOp& op = m.ops[0];
    EXPECT_EQ(op.cortexm_kernel, CortexMKernel::S8_GEMM_PACKED_SHORT_REQUANT) << target;
    const conv::Value& packed = m.values[static_cast<size_t>(op.inputs[1])];
    EXPECT_EQ(packed.dtype, DType::kInt32);
    EXPECT_EQ(packed.shape, (std::vector<int64_t>{2, 8 + 8}));
    const std::vector<int32_t> bias2 = values<int32_t>(m, op.inputs[2]);
    std::vector<int32_t> folded = values<int32_t>(m55, m55.ops[0].inputs[2]);
    for (int32_t& b : folded) b *= 2;
    EXPECT_EQ(bias2, folded);
    const std::vector<int32_t> mult = values<int32_t>(m, op.inputs[3]), shift = values<int32_t>(m, op.inputs[4]);
    std::vector<int32_t> expected(32);
    for (int32_t c = 0; c < 4; c += 2) {
      cortexm::s8_pack_gemm_pair(ohwi.data() + c * 8, ohwi.data() + (c + 1) * 8, 8, &bias2[static_cast<size_t>(c)],
                                 &mult[static_cast<size_t>(c)], &shift[static_cast<size_t>(c)], 0,
                                 &expected[static_cast<size_t>(c / 2 * 16)]);
    }
    std::vector<int32_t> words(32);
    ASSERT_EQ(packed.constant->data.size(), words.size() * sizeof(int32_t));
    std::memcpy(words.data(), packed.constant->data.data(), packed.constant->data.size());
    EXPECT_EQ(words, expected) << target;
    // Channel 0's first word: its weights 0 and 2 (OHWI) as halfwords.
    EXPECT_EQ(words[0], static_cast<int32_t>((static_cast<uint32_t>(ohwi[0]) & 0xFFFFu) |
                                             (static_cast<uint32_t>(ohwi[2]) << 16)));
    // The constants: bias2, multiplier 2^30, K = 1 << 2 (output offset 0,
    // shift -3), e = 3.
    EXPECT_EQ(std::vector<int32_t>(words.begin() + 8, words.begin() + 12),
              (std::vector<int32_t>{bias2[0], 1 << 30, 1 << 2, 3}));
  }
}

// A layer with one channel outside the short path's ranges keeps the general
// kernel: a shift of 0; a bias whose bound, 2^30 - 1000 + 45 (the fold) +
// 128 * 15, reaches 2^30; a multiplier below 2^30 (zero); a shift of -23.
TEST(CortexmS8Backend, ShortRequantizationNeedsEveryChannelInRange) {
  struct Case {
    std::vector<int32_t> bias, multiplier, shift;
  };
  const Case cases[] = {{{7, 8}, {1 << 30, 1 << 30}, {-3, 0}},
                        {{7, (1 << 30) - 1000}, {1 << 30, 1 << 30}, {-3, -3}},
                        {{7, 8}, {1 << 30, 0}, {-3, -3}},
                        {{7, 8}, {1 << 30, 1 << 30}, {-3, -23}}};
  for (const Case& c : cases) {
    conv::LoweredModel m;
    const int a = add_activation(m, {1, 3});
    const int fc = add_activation(m, {1, 2});
    conv::schema::MatMulOptionsT nk;
    nk.transpose_b = true;
    conv::LoweredOp& op = add_s8_op(m, OpCode::MATMUL, a,
                                    add_constant<int8_t>(m, DType::kInt8, {2, 3}, {1, 2, 3, -4, -5, -6}),
                                    add_constant<int32_t>(m, DType::kInt32, {2}, c.bias), fc);
    op.options.Set(nk);
    op.inputs[3] = add_constant<int32_t>(m, DType::kInt32, {2}, c.multiplier);
    op.inputs[4] = add_constant<int32_t>(m, DType::kInt32, {2}, c.shift);
    EXPECT_EQ(conv::assign_cortexm_backends(&m, "cortex-m4"), 1);
    EXPECT_EQ(m.ops[0].cortexm_kernel, CortexMKernel::S8_GEMM);
  }
}

// int8 AVG_POOL2D runs the Cortex-M pooling kernel (no layout of its own:
// cortexm_kernel stays NONE); max pooling and float pooling have none.
TEST(CortexmS8Backend, ConverterTakesInt8AveragePoolingOnly) {
  conv::LoweredModel m;
  auto add_pool = [&m](OpCode code, int input, int output, bool quantized) {
    conv::LoweredOp op;
    op.opcode = code;
    op.inputs = {input};
    op.outputs = {output};
    if (quantized) {
      op.requantization = std::make_shared<conv::schema::RequantizationT>();
      op.requantization->activation_min = -128;
      op.requantization->activation_max = 127;
    }
    conv::schema::Pool2DOptionsT window;
    window.filter_h = window.filter_w = 2;
    op.options.Set(window);
    m.ops.push_back(std::move(op));
  };
  const int x = add_activation(m, {1, 4, 4, 3});
  add_pool(OpCode::AVG_POOL2D, x, add_activation(m, {1, 3, 3, 3}), true);
  add_pool(OpCode::MAX_POOL2D, x, add_activation(m, {1, 3, 3, 3}), true);
  conv::Value f32;
  f32.dtype = DType::kFloat32;
  f32.shape = {1, 4, 4, 3};
  const int xf = m.add_value(f32);
  f32.shape = {1, 3, 3, 3};
  add_pool(OpCode::AVG_POOL2D, xf, m.add_value(f32), false);
  for (const char* target : {"cortex-m4", "cortex-m33", "cortex-m55"}) {
    for (conv::LoweredOp& op : m.ops) op.backend = conv::schema::Backend::REFERENCE;
    EXPECT_EQ(conv::assign_cortexm_backends(&m, target), 1) << target;
    EXPECT_EQ(m.ops[0].backend, conv::schema::Backend::CORTEX_M) << target;
    EXPECT_EQ(m.ops[0].cortexm_kernel, CortexMKernel::NONE) << target;
    EXPECT_EQ(m.ops[1].backend, conv::schema::Backend::REFERENCE) << target;
    EXPECT_EQ(m.ops[2].backend, conv::schema::Backend::REFERENCE) << target;
  }
}

TEST(CortexmS8Backend, OtherTargetsKeepTheInt8ReferenceLayout) {
  FLOE_REQUIRE_CORPUS("int8/mlperf_tiny/kws/kws_ref_model.tflite");
  for (const char* target : {"reference", "x86_64"}) {
    conv::ConvertOptions options;
    options.graph_path = corpus_path("int8/mlperf_tiny/kws/kws_ref_model.tflite");
    options.target = target;
    options.int8_fast_rounding = true;  // x86_64: XNNPACK's int8
    const std::vector<uint8_t> bytes = conv::convert(options).model;
    for (const schema::Operator* op : *schema::GetModel(bytes.data())->operators()) {
      EXPECT_EQ(op->cortexm_kernel(), schema::CortexMKernel::NONE) << target;
      EXPECT_EQ(op->outputs()->size(), 1u);
    }
  }
}

// The host targets' exact default takes these kernels with the full
// requantization: the short path and the packed pairs are the M4/M33's.
TEST(CortexmS8Backend, HostTargetsTakeTheFullRequantizationKernels) {
  FLOE_REQUIRE_CORPUS("int8/mlperf_tiny/kws/kws_ref_model.tflite");
  for (const char* target : {"x86_64", "aarch64"}) {
    conv::ConvertOptions options;
    options.graph_path = corpus_path("int8/mlperf_tiny/kws/kws_ref_model.tflite");
    options.target = target;
    const std::vector<uint8_t> bytes = conv::convert(options).model;
    std::map<std::string, int> kernels;
    for (const schema::Operator* op : *schema::GetModel(bytes.data())->operators()) {
      if (op->cortexm_kernel() != schema::CortexMKernel::NONE) ++kernels[schema::EnumNameCortexMKernel(op->cortexm_kernel())];
    }
    // TFLite's weights lie in [-127, 127]: the GEMMs may pair products.
    EXPECT_EQ(kernels, (std::map<std::string, int>{
                           {"S8_DEPTHWISE", 4}, {"S8_GEMM_NARROW_WEIGHTS", 5}, {"S8_IM2COL_GEMM_NARROW_WEIGHTS", 1}}))
        << target;
  }
}

// x86-64: each GEMM (the five convolutions, the fully connected layer)
// carries input 5, the unsigned-input bias AVX512-VNNI's byte products need;
// Init() recomputes it from the weights and bias and refuses a model whose
// value differs (the kernels would otherwise give other bytes).
TEST(CortexmS8Backend, UnsignedInputBiasIsCheckedAtInit) {
  FLOE_REQUIRE_CORPUS("int8/mlperf_tiny/kws/kws_ref_model.tflite");
  conv::ConvertOptions options;
  options.graph_path = corpus_path("int8/mlperf_tiny/kws/kws_ref_model.tflite");
  options.target = "x86_64";
  std::vector<uint8_t> bytes = conv::convert(options).model;
  const schema::Model* m = schema::GetModel(bytes.data());
  int gemms = 0;
  const schema::Tensor* first = nullptr;
  for (const schema::Operator* op : *m->operators()) {
    if (op->inputs()->size() != 6) continue;
    ++gemms;
    const schema::Tensor* t = m->tensors()->Get(static_cast<uint32_t>(op->inputs()->Get(5)));
    EXPECT_NE(t->name()->str().find("unsigned_input_bias"), std::string::npos) << t->name()->str();
    EXPECT_TRUE(t->is_constant());
    if (first == nullptr) first = t;
  }
  EXPECT_EQ(gemms, 6);
  ASSERT_NE(first, nullptr);
  {
    const std::unique_ptr<LoadedModel> loaded = load_model(bytes);
    ASSERT_EQ(loaded->status, Status::kOk) << loaded->model.error().message;
    tools::AlignedBytes arena = tools::aligned_bytes(loaded->model.arena_size());
    Interpreter interpreter(loaded->model, arena.get(), loaded->model.arena_size());
    EXPECT_EQ(interpreter.Init(), Status::kOk) << interpreter.error().message;
  }
  // One channel's value off by one (the checksum is not verified by default).
  const size_t at = static_cast<size_t>(m->constants()->data() - bytes.data()) + first->offset();
  bytes[at] = static_cast<uint8_t>(bytes[at] + 1);
  const std::unique_ptr<LoadedModel> loaded = load_model(bytes);
  ASSERT_EQ(loaded->status, Status::kOk) << loaded->model.error().message;
  tools::AlignedBytes arena = tools::aligned_bytes(loaded->model.arena_size());
  Interpreter interpreter(loaded->model, arena.get(), loaded->model.arena_size());
  EXPECT_EQ(interpreter.Init(), Status::kInvalidModel);
  EXPECT_NE(std::string(interpreter.error().message).find("unsigned-input bias does not match"), std::string::npos)
      << interpreter.error().message;
}

HostTensor npy(const std::string& relative) {
  const tools::NpyArray a = tools::read_npy(corpus_path(relative));
  HostTensor t;
  t.dtype = a.dtype;
  t.shape = a.shape;
  t.data = a.data;
  return t;
}

HostTensor seeded_int8(std::vector<int64_t> shape, uint32_t seed) {
  HostTensor t;
  t.dtype = DType::kInt8;
  t.shape = shape;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  t.data.resize(static_cast<size_t>(n));
  for (uint8_t& b : t.data) b = static_cast<uint8_t>((seed = seed * 1664525u + 1013904223u) >> 24);
  return t;
}

void expect_bit_exact(const std::string& model, const std::string& input_name, const std::string& input_file,
                      std::vector<int64_t> shape, size_t expected_cortexm_ops) {
  FLOE_REQUIRE_CORPUS(model);
  conv::ConvertOptions options;
  options.graph_path = corpus_path(model);
  options.target = "reference";
  const std::vector<uint8_t> reference = conv::convert(options).model;
  for (const char* target : {"cortex-m4", "cortex-m33", "cortex-m55"}) {
    options.target = target;
    const std::vector<uint8_t> cortexm = conv::convert(options).model;
    size_t ops = 0;
    for (const schema::Operator* op : *schema::GetModel(cortexm.data())->operators()) {
      ops += op->cortexm_kernel() != schema::CortexMKernel::NONE ? 1 : 0;
    }
    EXPECT_EQ(ops, expected_cortexm_ops) << model << " " << target;
    std::vector<HostTensor> inputs = {npy(input_file)};
    for (uint32_t seed : {1u, 2u, 3u}) inputs.push_back(seeded_int8(shape, seed));
    for (const HostTensor& input : inputs) {
      const auto a = run_model(cortexm, {{input_name, input}});
      const auto b = run_model(reference, {{input_name, input}});
      ASSERT_EQ(a.size(), 1u);
      ASSERT_EQ(b.size(), 1u);
      EXPECT_EQ(a[0].data, b[0].data) << model << " " << target;
    }
  }
}

// ../shared/fuzz-findings/fuzz_model-s8-requant-shift.floe: a KWS conversion
// for cortex-m4 (checksum no longer matching) whose packed 1x1 filter carries
// a right shift of 17,566,882 after a channel pair's weights, which the
// portable kernel would shift by (undefined behaviour): Init() refuses the op.
// The fuzz build replays the file under the sanitizers (fuzz_replay_shared_model_findings).
TEST(CortexmS8Backend, PackedRightShiftOutOfRangeIsRefusedAtInit) {
  const std::string path = shared_dir() + "/fuzz-findings/fuzz_model-s8-requant-shift.floe";
  std::ifstream in(path, std::ios::binary);
  if (!in) GTEST_SKIP() << "SKIPPED: " << path << " absent (../shared)";
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::unique_ptr<LoadedModel> loaded = load_model(bytes);
  ASSERT_EQ(loaded->status, Status::kOk) << loaded->model.error().message;
  tools::AlignedBytes arena = tools::aligned_bytes(loaded->model.arena_size());
  Interpreter interpreter(loaded->model, arena.get(), loaded->model.arena_size());
  EXPECT_EQ(interpreter.Init(), Status::kInvalidModel);
  ASSERT_GE(interpreter.error().op, 0);
  EXPECT_EQ(loaded->model.schema()->operators()->Get(static_cast<uint32_t>(interpreter.error().op))->cortexm_kernel(),
            schema::CortexMKernel::S8_GEMM_PACKED_SHORT_REQUANT);
  EXPECT_NE(std::string(interpreter.error().message).find("short requantization with a multiplier or shift out of its range"), std::string::npos)
      << interpreter.error().message;
}

TEST(CortexmS8Backend, KwsOnCortexMKernelsIsBitExactWithReference) {
  expect_bit_exact("int8/mlperf_tiny/kws/kws_ref_model.tflite", "input_1",
                   "int8/mlperf_tiny/kws/kws_input0_int8.npy", {1, 49, 10, 1}, 10);
}

TEST(CortexmS8Backend, PersonDetectOnCortexMKernelsIsBitExactWithReference) {
  expect_bit_exact("int8/tflite_micro/person_detection/person_detect.tflite", "input",
                   "int8/tflite_micro/person_detection/person_tflm_int8.npy", {1, 96, 96, 1}, 28);
}


// ---- What Init() refuses: the converter's models, edited (object API) into
// what it never writes. Each edit passes Model::Load; without the refusal the
// kernel would loop forever, divide by zero, or shift or index by a value
// checked once but changeable after. ----

void expect_refused(const std::vector<uint8_t>& bytes, const std::function<void(conv::schema::ModelT&)>& edit,
                    const std::string& expected) {
  ASSERT_EQ(init_outcome(bytes).status, Status::kOk) << "as converted: " << init_outcome(bytes).message;
  const InitOutcome r = init_outcome(edited_model(bytes.data(), edit));
  EXPECT_EQ(r.status, Status::kInvalidModel) << r.message;
  EXPECT_NE(r.message.find(expected), std::string::npos) << r.message;
}

// One int8 CONV2D (x [1, size, size, in_c] -> y [1, size, size, 4], bias,
// multiplier 2^30, shift -3) with a k x k filter, emitted for `target`.
std::vector<uint8_t> one_conv_model(int64_t k, int64_t in_c, const char* target, int64_t size = 3) {
  conv::LoweredModel m;
  const int x = add_activation(m, {1, size, size, in_c});
  const int y = add_activation(m, {1, size, size, 4});
  m.values[static_cast<size_t>(x)].name = "x";
  m.values[static_cast<size_t>(y)].name = "y";
  std::vector<int8_t> hwio(static_cast<size_t>(k * k * in_c * 4));
  for (size_t i = 0; i < hwio.size(); ++i) hwio[i] = static_cast<int8_t>(static_cast<int>(i % 32) - 16);
  conv::schema::Conv2DOptionsT same;
  same.pad_top = same.pad_left = same.pad_bottom = same.pad_right = static_cast<int32_t>(k / 2);
  add_s8_op(m, OpCode::CONV2D, x, add_constant<int8_t>(m, DType::kInt8, {k, k, in_c, 4}, hwio),
            add_constant<int32_t>(m, DType::kInt32, {4}, {10, -20, 30, -40}), y)
      .options.Set(same);
  m.inputs = {x};
  m.outputs = {y};
  if (std::string(target) != "reference") conv::assign_cortexm_backends(&m, target);
  return conv::plan_and_emit(m, "test");
}

conv::schema::OperatorT& only_op(conv::schema::ModelT& model) { return *model.operators.at(0); }
conv::schema::TensorT& tensor(conv::schema::ModelT& model, int32_t t) { return *model.tensors[static_cast<size_t>(t)]; }

// The packed GEMM with no input channels: the DSP kernel's do-while over k
// would never end.
TEST(CortexmS8Refusals, PackedGemmWithoutInputChannels) {
  const std::vector<uint8_t> bytes = one_conv_model(1, 8, "cortex-m4");
  expect_refused(bytes,
                 [](conv::schema::ModelT& model) {
                   conv::schema::OperatorT& op = only_op(model);
                   ASSERT_EQ(op.cortexm_kernel, CortexMKernel::S8_GEMM_PACKED_SHORT_REQUANT);
                   conv::schema::TensorT& x = tensor(model, op.inputs[0]);
                   x.shape[3] = 0;
                   x.size = 0;
                   conv::schema::TensorT& w = tensor(model, op.inputs[1]);  // [2, 0 + 8] words
                   w.shape[1] = 8;
                   w.size = 2 * 8 * 4;
                 },
                 "shapes outside the kernel's");
}

// The packed words' multiplier below 2^30 or K (the rounding and offset
// term) beyond 2^29 would overflow the portable arithmetic's int64 sum.
TEST(CortexmS8Refusals, PackedGemmConstantsOutsideTheirRanges) {
  const std::vector<uint8_t> bytes = one_conv_model(1, 8, "cortex-m4");
  for (int word : {1, 2, 5, 6}) {  // channel 0's, then channel 1's multiplier and K
    expect_refused(bytes,
                   [&](conv::schema::ModelT& model) {
                     const conv::schema::TensorT& w = tensor(model, only_op(model).inputs[1]);
                     int32_t v;
                     uint8_t* at = model.constants.data() + w.offset + (8 + word) * sizeof(int32_t);
                     std::memcpy(&v, at, sizeof v);
                     v = word % 4 == 1 ? (1 << 30) - 1 : INT32_MIN;
                     std::memcpy(at, &v, sizeof v);
                   },
                   "short requantization with a multiplier or shift out of its range");
  }
}

// An im2col convolution over no input channels (k_size 0) would divide its
// chunking by zero.
TEST(CortexmS8Refusals, Im2colGemmWithAnEmptyWindow) {
  const std::vector<uint8_t> bytes = one_conv_model(3, 2, "cortex-m55");
  expect_refused(bytes,
                 [](conv::schema::ModelT& model) {
                   conv::schema::OperatorT& op = only_op(model);
                   ASSERT_EQ(op.cortexm_kernel, CortexMKernel::S8_IM2COL_GEMM);
                   for (int32_t t : {op.inputs[0], op.inputs[1], op.outputs[1]}) {  // x, OHWI filter, scratch
                     conv::schema::TensorT& v = tensor(model, t);
                     v.shape.back() = 0;
                     v.size = 0;
                   }
                 },
                 "window beyond the Cortex-M kernel's range");
}

// Multipliers and shifts are checked once, at Init(): the reference int8
// kernels, too, take them only as constants of the model.
TEST(CortexmS8Refusals, MultipliersThatAreNotConstants) {
  for (const char* target : {"reference", "cortex-m55"}) {
    const std::vector<uint8_t> bytes = one_conv_model(3, 2, target);
    expect_refused(bytes, [](conv::schema::ModelT& model) { make_constant_an_input(model, only_op(model).inputs[3]); },
                   "must be constants");
  }
}

#if defined(FLOE_TEST_THREAD_POOL)
// The host GEMM splits its work by output channels when there are fewer than
// 8 rows: with none (an empty output) it must not compute a band of 0 and
// divide by it. Init accepts the empty op; Invoke on a 2-thread pool runs it.
TEST(CortexmS8Refusals, EmptyOutputOnAThreadPoolRuns) {
  const std::vector<uint8_t> edited = edited_model(one_conv_model(1, 8, "x86_64", 1).data(), [](conv::schema::ModelT& model) {
    conv::schema::OperatorT& op = only_op(model);
    ASSERT_EQ(op.backend, conv::schema::Backend::CORTEX_M);
    op.single_threaded = false;
    for (size_t i = 1; i < op.inputs.size(); ++i) {  // the filter's and every per-channel array's channels
      conv::schema::TensorT& t = tensor(model, op.inputs[i]);
      t.shape[0] = 0;
      t.size = 0;
    }
    conv::schema::TensorT& y = tensor(model, op.outputs[0]);
    y.shape[3] = 0;
    y.size = 0;
  });
  const std::unique_ptr<LoadedModel> loaded = load_model(edited);
  ASSERT_EQ(loaded->status, Status::kOk) << loaded->model.error().message;
  tools::AlignedBytes arena = tools::aligned_bytes(loaded->model.arena_size());
  Interpreter interpreter(loaded->model, arena.get(), loaded->model.arena_size());
  pthreadpool_t pool = pthreadpool_create(2);
  interpreter.set_thread_pool(pool);
  ASSERT_EQ(interpreter.Init(), Status::kOk) << interpreter.error().message;
  EXPECT_EQ(interpreter.Invoke(), Status::kOk) << interpreter.error().message;
  pthreadpool_destroy(pool);
}
#endif

// TFLM's int16x8 conv (../shared/corpus/tflm) on the Cortex-M kernel: its
// right shifts, checked at Init(), must not be a tensor that can change.
TEST(CortexmS8Refusals, Int16ShiftsThatAreNotConstants) {
  const std::string path = shared_dir() + "/corpus/tflm/integration_tests/seanet/conv/conv0.tflite";
  if (!std::ifstream(path)) GTEST_SKIP() << "SKIPPED: " << path << " absent (../shared)";
  conv::ConvertOptions options;
  options.graph_path = path;
  options.target = "cortex-m4";
  const std::vector<uint8_t> bytes = conv::convert(options).model;
  expect_refused(bytes,
                 [](conv::schema::ModelT& model) {
                   for (const auto& op : model.operators) {
                     if (op->cortexm_kernel == CortexMKernel::S16_IM2COL_GEMM || op->cortexm_kernel == CortexMKernel::S16_GEMM) make_constant_an_input(model, op->inputs[4]);
                   }
                 },
                 "must be present constants");
}

}  // namespace
}  // namespace floe::testing
