// SPDX-License-Identifier: Apache-2.0
// DILATION2D: TF's Dilation2D, grayscale morphological dilation of an NHWC
// input by a [kh, kw, C] structuring function: out = max over the in-bounds
// taps of input + filter. Shapes are validated by the op's prepare step (below).
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

struct Dilation2DParams {
  int32_t stride_h = 1, stride_w = 1;
  int32_t rate_h = 1, rate_w = 1;
  int32_t pad_top = 0, pad_left = 0;
};

void dilation2d_f32(const Dilation2DParams& p, In<float> input, In<float> filter, Out<float> output);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_dilation2d(const OpContext& ctx);
Status eval_dilation2d(const PreparedOp& ctx);

}  // namespace floe::ops
