// SPDX-License-Identifier: Apache-2.0
// CONV3D: NDHWC x DHWIO, explicit front/top/left padding. Shapes are validated by the op's
// prepare step (below); outputs never alias inputs.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

struct Conv3DParams {
  int32_t stride_d = 1, stride_h = 1, stride_w = 1;
  int32_t dilation_d = 1, dilation_h = 1, dilation_w = 1;
  int32_t pad_front = 0, pad_top = 0, pad_left = 0;
};

// NDHWC input, DHWIO filter, output [N, OD, OH, OW, Cout]; taps in the padding
// contribute zero.
void conv3d_f32(const Conv3DParams& p, In<float> input, In<float> filter, Out<float> output);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_conv3d(const OpContext& ctx);
Status eval_conv3d(const PreparedOp& ctx);

}  // namespace floe::ops
