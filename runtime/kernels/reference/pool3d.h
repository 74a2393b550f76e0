// SPDX-License-Identifier: Apache-2.0
// MAX_POOL3D / AVG_POOL3D: NDHWC pooling with explicit front/top/left padding
// (TF's MaxPool3D / AvgPool3D). Shapes are validated by the op's prepare step
// (below); outputs never alias inputs.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

struct Pool3DParams {
  int32_t filter_d = 1, filter_h = 1, filter_w = 1;
  int32_t stride_d = 1, stride_h = 1, stride_w = 1;
  int32_t pad_front = 0, pad_top = 0, pad_left = 0;
};

// Taps in the padding are skipped: the maximum / the mean of the in-bounds taps.
void max_pool3d_f32(const Pool3DParams& p, In<float> input, Out<float> output);
void avg_pool3d_f32(const Pool3DParams& p, In<float> input, Out<float> output);

}  // namespace floe::ref

// The ops' adapters (schemas/contract/ops.def names them; runtime/core/registry.h).
namespace floe::ops {

const char* prepare_pool3d(const OpContext& ctx);
Status eval_max_pool3d(const PreparedOp& ctx);
Status eval_avg_pool3d(const PreparedOp& ctx);

}  // namespace floe::ops
