// SPDX-License-Identifier: Apache-2.0
// RESIZE_*: NHWC image resizing (bilinear, nearest, bicubic, area) with TF's align_corners /
// half_pixel_centers conventions. Shapes are validated by the op's
// prepare step (below); outputs never alias inputs.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

enum class ResizeMode : uint8_t { kBilinear, kNearest, kBicubic, kArea };

struct ResizeParams {
  ResizeMode mode = ResizeMode::kBilinear;
  bool align_corners = false;
  bool half_pixel_centers = false;
};

// NHWC; nearest works on any element size (element_size), the others on float32.
void resize(const ResizeParams& p, size_t element_size, In<void> input, Out<void> output);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_resize_bilinear(const OpContext& ctx);
Status eval_resize_bilinear(const PreparedOp& ctx);
const char* prepare_resize_nearest(const OpContext& ctx);
Status eval_resize_nearest(const PreparedOp& ctx);
const char* prepare_resize_bicubic(const OpContext& ctx);
Status eval_resize_bicubic(const PreparedOp& ctx);
const char* prepare_resize_area(const OpContext& ctx);
Status eval_resize_area(const PreparedOp& ctx);

}  // namespace floe::ops
