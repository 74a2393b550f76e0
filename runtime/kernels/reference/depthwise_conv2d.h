// SPDX-License-Identifier: Apache-2.0
// Depthwise 2-D convolution (TF DepthwiseConv2dNative), NHWC input, filter
// [kh, kw, in_c, multiplier]; output channel c*multiplier + m reads input channel c.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/kernels/common/params.h"
#include "runtime/kernels/reference/quantization.h"
#include "runtime/kernels/reference/weighted_quantized.h"

namespace floe::ref {

using DepthwiseConv2DParams = kernels::DepthwiseConv2DParams;
using DepthwiseConv2DOperands = kernels::DepthwiseConv2DOperands;

void depthwise_conv2d_f32(const DepthwiseConv2DParams& params, const DepthwiseConv2DOperands& ops);

// ---- int8 (TFLite's quantized DEPTHWISE_CONV_2D) ----
// Filter [1, kh, kw, in_c * multiplier] (the float layout read as one row);
// per-channel requantization on that last axis. Arithmetic as conv2d_s8.
struct DepthwiseConv2DS8Params {
  int32_t stride_h, stride_w;
  int32_t dilation_h, dilation_w;
  int32_t pad_top, pad_left;
  int32_t depth_multiplier;
  int32_t input_offset;       // minus the input zero point
  int32_t output_offset;      // the output zero point
  int32_t output_multiplier;  // per-tensor requantization, when the operands have no arrays
  int32_t output_shift;
  int32_t act_min, act_max;
};

// [N, H, W, in_c] input, [kh, kw, in_c, depth_multiplier] filter (the float
// kernel's), [in_c * depth_multiplier] bias and output channels.
using DepthwiseConv2DS8Operands = WeightedOperands<int8_t>;
using DepthwiseConv2DS16Operands = WeightedOperands<int16_t>;

void depthwise_conv2d_s8(const DepthwiseConv2DS8Params& params, const DepthwiseConv2DS8Operands& ops);
// 16x8: the same params with zero offsets, int64 sums (weighted_quantized.h).
void depthwise_conv2d_s16(const DepthwiseConv2DS8Params& params, const DepthwiseConv2DS16Operands& ops);

}  // namespace floe::ref
