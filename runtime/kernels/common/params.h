// SPDX-License-Identifier: Apache-2.0
// The params and operands of the ops several backends run (reference and
// Cortex-M kernels take the same ones, so either can be tested against the
// other), and the checks every backend's prepare of those ops makes: the op's
// rules once, whichever row prepares it (layer_checks.cc).
#pragma once

#include <stdint.h>

#include "runtime/core/registry.h"
#include "runtime/core/tensor.h"
#include "runtime/kernels/common/activation.h"

namespace floe::kernels {

// ---- CONV2D (float32): NHWC input, HWIO filter [kh, kw, in_c, out_c] --------
struct Conv2DParams {
  int32_t stride_h = 1, stride_w = 1;
  int32_t dilation_h = 1, dilation_w = 1;
  int32_t pad_top = 0, pad_left = 0;  // bottom/right padding is implied by the output size
  Activation activation = Activation::kNone;
};

struct Conv2DOperands {
  In<float> input;
  In<float> filter;
  In<float> bias;  // data == nullptr when absent
  Out<float> output;
};

// ---- DEPTHWISE_CONV2D (float32): filter [kh, kw, in_c, multiplier] ----------
struct DepthwiseConv2DParams {
  int32_t stride_h = 1, stride_w = 1;
  int32_t dilation_h = 1, dilation_w = 1;
  int32_t pad_top = 0, pad_left = 0;
  int32_t depth_multiplier = 1;
  Activation activation = Activation::kNone;
};

struct DepthwiseConv2DOperands {
  In<float> input;
  In<float> filter;
  In<float> bias;  // data == nullptr when absent
  Out<float> output;
};

// ---- MATMUL (float32) ---------------------------------------------------------
struct MatMulParams {
  bool transpose_a = false;
  bool transpose_b = false;
  Activation activation = Activation::kNone;
};

struct MatMulOperands {
  In<float> a;
  In<float> b;
  In<float> bias;  // data == nullptr when absent
  Out<float> output;
};

// ---- int8 pooling (input and output share scale and zero point) -------------
// Max: the largest in-image tap. Average: the sum of in-image taps divided by
// their count, rounded half away from zero (TFLite's integer AveragePool).
// Both clamp to [act_min, act_max]. A window with no in-image tap is
// impossible with resolved SAME/VALID padding (prepare refuses it).
struct Pool2DS8Params {
  int32_t filter_h, filter_w;
  int32_t stride_h, stride_w;
  int32_t pad_top, pad_left;
  int32_t act_min, act_max;
};

struct Pool2DS8Operands {
  In<int8_t> input;    // [N, H, W, C]
  Out<int8_t> output;  // [N, OH, OW, C]
};

// The operands of a prepared float CONV2D, DEPTHWISE_CONV2D or MATMUL
// (Conv2DOperands, DepthwiseConv2DOperands, MatMulOperands: input, weights,
// optional bias, output), as its kernels take them.
template <typename Operands>
Operands weighted_f32_operands(const PreparedOp& op) {
  return {{static_cast<const float*>(op.input(0).data), op.input(0).shape},
          {static_cast<const float*>(op.input(1).data), op.input(1).shape},
          {static_cast<const float*>(op.input(2).data), op.input(2).shape},
          {static_cast<float*>(op.output(0).data), op.output(0).shape}};
}

// ---- the checks every backend's prepare makes (layer_checks.cc) -------------
// Each validates the op as its float32 (or int8 pooling) kernels assume it
// and fills the params; nullptr = fine, else the reason.
const char* check_conv2d_f32(const OpContext& ctx, Conv2DParams* params);
const char* check_depthwise_conv2d_f32(const OpContext& ctx, DepthwiseConv2DParams* params);
const char* check_matmul_f32(const OpContext& ctx, MatMulParams* params);
// int8 FULLY_CONNECTED's layout, the same for every backend: a [M, K],
// weights [N, K] (transpose_b), output [M, N].
const char* check_fully_connected_s8_shapes(const OpContext& ctx);
// int8 MAX/AVG_POOL2D: one int8 input and output, geometry, every window
// keeping an in-image tap, the requantization's clamp range.
const char* check_pool2d_s8(const OpContext& ctx, Pool2DS8Params* params);
// NHWC in and out, batch and channels kept, a window >= 1, strides >= 1 and
// non-negative padding: what every pooling kernel assumes (float and int8).
const char* check_pool_geometry(const OpContext& ctx);

// Whether some output's window has no in-image tap (an integer average would
// divide by 0): what every integer pooling's prepare refuses. 64-bit: a
// model's dims times its strides may pass int32.
inline bool pool_window_in_padding(const schema::Pool2DOptions& o, const Shape& input, const Shape& output) {
  return o.pad_top() >= o.filter_h() || o.pad_left() >= o.filter_w() ||
         int64_t{output.dims[1] - 1} * o.stride_h() - o.pad_top() >= input.dims[1] ||
         int64_t{output.dims[2] - 1} * o.stride_w() - o.pad_left() >= input.dims[2];
}

// The window fields every 2-D pooling's params hold (float, int8, with argmax),
// from its Pool2DOptions, read once at Init().
template <typename Params>
void set_pool_window(Params& p, const schema::Pool2DOptions& o) {
  p.filter_h = o.filter_h();
  p.filter_w = o.filter_w();
  p.stride_h = o.stride_h();
  p.stride_w = o.stride_w();
  p.pad_top = o.pad_top();
  p.pad_left = o.pad_left();
}

}  // namespace floe::kernels
