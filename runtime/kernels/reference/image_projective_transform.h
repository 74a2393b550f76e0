// SPDX-License-Identifier: Apache-2.0
// IMAGE_PROJECTIVE_TRANSFORM: TF's ImageProjectiveTransformV3 on float32 NHWC
// images. Output point (x, y) of image b reads the input at
// ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1, with
// [a0 a1 a2 b0 b1 b2 c0 c1] = transforms[b] (or transforms[0] for every image);
// points outside the image are mapped by the fill mode (CONSTANT reads
// fill_value, REFLECT, WRAP, NEAREST fold them back), then sampled nearest or
// bilinear. Shapes are validated by the op's prepare step (below).
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

enum class ImageFill : uint8_t { kConstant = 0, kReflect = 1, kWrap = 2, kNearest = 3 };

struct ImageTransformParams {
  uint8_t nearest = 0;
  ImageFill fill = ImageFill::kConstant;
  uint8_t reserved[2] = {0, 0};
};

void image_projective_transform_f32(const ImageTransformParams& p, In<float> images, In<float> transforms,
                                    float fill_value, Out<float> output);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_image_projective_transform(const OpContext& ctx);
Status eval_image_projective_transform(const PreparedOp& ctx);

}  // namespace floe::ops
