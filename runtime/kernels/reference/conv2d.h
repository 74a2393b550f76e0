// SPDX-License-Identifier: Apache-2.0
// 2-D convolution, NHWC input, HWIO filter ([kh, kw, in_c, out_c]), explicit
// padding (the converter resolves SAME/VALID), dilation, optional bias, fused
// activation. Output [N, OH, OW, out_c] is given by the caller.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/kernels/reference/activation.h"
#include "runtime/core/dispatch.h"

namespace floe::ref {

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

void conv2d_f32(const Conv2DParams& params, const Conv2DOperands& ops);

}  // namespace floe::ref

// The op's adapter (runtime/ops.def names it; runtime/core/dispatch.h).
namespace floe::ops {

const char* prepare_conv2d(const OpContext& ctx);
Status eval_conv2d(const PreparedOp& ctx);

}  // namespace floe::ops
