// SPDX-License-Identifier: Apache-2.0
// MAX_POOL_WITH_ARGMAX: TF's MaxPoolWithArgmax on NHWC float32: the maximum of
// each window and the flat index of the input element that holds it,
// ((b * H + y) * W + x) * C + c (the b term only with include_batch_in_index),
// as INT64 or INT32. The first maximum in window order wins ties. Shapes are
// validated by the op's prepare step (below).
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

struct MaxPoolArgmaxParams {
  int32_t filter_h = 1, filter_w = 1;
  int32_t stride_h = 1, stride_w = 1;
  int32_t pad_top = 0, pad_left = 0;
  uint8_t include_batch_in_index = 0;
  uint8_t index_is_int64 = 1;
  uint8_t reserved[2] = {0, 0};
};

// `argmax` is int64_t or int32_t elements (params.index_is_int64).
void max_pool_with_argmax_f32(const MaxPoolArgmaxParams& p, In<float> input, Out<float> output, Out<void> argmax);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_max_pool_with_argmax(const OpContext& ctx);
Status eval_max_pool_with_argmax(const PreparedOp& ctx);

}  // namespace floe::ops
