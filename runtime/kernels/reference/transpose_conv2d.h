// SPDX-License-Identifier: Apache-2.0
// TRANSPOSE_CONV2D: transposed 2-D convolution (TF Conv2DBackpropInput). Shapes are validated by the op's
// prepare step (below); outputs never alias inputs.
#pragma once

#include "runtime/core/registry.h"
#include "runtime/core/tensor.h"
#include "runtime/kernels/reference/weighted_quantized.h"

namespace floe::ref {

struct TransposeConv2DParams {
  int32_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int32_t pad_top = 0, pad_left = 0;  // of the forward convolution
};

// input [N, H, W, Cin] (the forward conv's output), filter [kh, kw, Cout, Cin],
// output [N, OH, OW, Cout] (the forward conv's input).
void transpose_conv2d_f32(const TransposeConv2DParams& p, In<float> input, In<float> filter,
                          Out<float> output);

// 16x8 (int16 input and output, int8 filter, optional int64 bias, TFLM's
// per-channel 64-bit requantization, zero offsets). Each output sums its
// taps in int64, so no scratch accumulator is needed.
struct TransposeConv2DS16Params {
  TransposeConv2DParams window;
  int32_t output_multiplier, output_shift;  // when the operands have no arrays
  int32_t act_min, act_max;
};
// [N, H, W, Cin] input, [kh, kw, Cout, Cin] filter, [Cout] bias, [N, OH, OW, Cout] output.
using TransposeConv2DS16Operands = WeightedOperands<int16_t>;
void transpose_conv2d_s16(const TransposeConv2DS16Params& p, const TransposeConv2DS16Operands& ops);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_transpose_conv2d(const OpContext& ctx);
Status eval_transpose_conv2d(const PreparedOp& ctx);

}  // namespace floe::ops
