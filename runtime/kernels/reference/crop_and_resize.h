// SPDX-License-Identifier: Apache-2.0
// CROP_AND_RESIZE: TF's CropAndResize on a float32 NHWC image: each box
// (y1, x1, y2, x2 in normalized coordinates, corners mapped to the first and
// last pixel) of image box_index[b] sampled to [crop_h, crop_w], bilinear or
// nearest; samples outside the image get the extrapolation value. Shapes are
// validated by the op's prepare step (below); box indices, which may be fed
// at run time, by the kernel.
#pragma once

#include <stddef.h>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

struct CropAndResizeParams {
  IndexFault fault;  // eval's report of a bad box index (status.h)
  float extrapolation_value = 0.0f;
  uint8_t nearest = 0;
  uint8_t reserved[3] = {0, 0, 0};
};
static_assert(offsetof(CropAndResizeParams, fault) == 0,
              "Interpreter::index_fault() reads the IndexFault at the start of the params block");

// kIndexOutOfRange when a box index is outside [0, batch), saying which in *fault.
Status crop_and_resize_f32(const CropAndResizeParams& p, In<float> image, In<float> boxes, In<int32_t> box_index,
                           Out<float> output, IndexFault* fault);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_crop_and_resize(const OpContext& ctx);
Status eval_crop_and_resize(const PreparedOp& ctx);

}  // namespace floe::ops
