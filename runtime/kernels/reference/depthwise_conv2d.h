// SPDX-License-Identifier: Apache-2.0
// Depthwise 2-D convolution (TF DepthwiseConv2dNative), NHWC input, filter
// [kh, kw, in_c, multiplier]; output channel c*multiplier + m reads input channel c.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/kernels/reference/activation.h"
#include "runtime/core/op_adapter.h"

namespace floe::ref {

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

void depthwise_conv2d_f32(const DepthwiseConv2DParams& params, const DepthwiseConv2DOperands& ops);

}  // namespace floe::ref

// The op's adapter (runtime/ops.def names it; runtime/core/dispatch.h).
namespace floe::ops {

inline ref::DepthwiseConv2DOperands depthwise_operands(const PreparedOp& ctx) {
  return {in_as<float>(ctx.input(0)), in_as<float>(ctx.input(1)), in_as<float>(ctx.input(2)),
          out_as<float>(ctx.output(0))};
}

const char* prepare_depthwise_conv2d(const OpContext& ctx);
Status eval_depthwise_conv2d(const PreparedOp& ctx);

}  // namespace floe::ops
