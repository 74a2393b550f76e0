// SPDX-License-Identifier: Apache-2.0
// EXTRACT_PATCHES (TF ExtractImagePatches), any dtype. Shapes are validated by the op's
// prepare step (below); outputs never alias inputs.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

struct ExtractPatchesParams {
  int32_t size_h = 1, size_w = 1, stride_h = 1, stride_w = 1, rate_h = 1, rate_w = 1;
  int32_t pad_top = 0, pad_left = 0;
  int32_t pad_byte = 0;  // what taps in the padding hold: real zero (an int8 input's zero point)
};

// NHWC input -> [N, OH, OW, size_h * size_w * C], taps in (ky, kx, c) order;
// taps in the padding are real zero (bytes 0; an int8 input's zero point).
// Any element size.
void extract_patches(const ExtractPatchesParams& p, size_t element_size, In<void> input, Out<void> output);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_extract_patches(const OpContext& ctx);
Status eval_extract_patches(const PreparedOp& ctx);

}  // namespace floe::ops
