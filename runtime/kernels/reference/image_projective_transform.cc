// SPDX-License-Identifier: Apache-2.0
// IMAGE_PROJECTIVE_TRANSFORM (see image_projective_transform.h). The
// coordinate mapping of each fill mode follows TensorFlow's documented
// ImageProjectiveTransformV3 (its CPU kernel's conventions); code is our own.
#include "runtime/kernels/reference/image_projective_transform.h"

#include <math.h>
#include <stddef.h>

#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {
namespace {

constexpr float kFar = 1e15f;

float clamp_coordinate(float v, float len) { return v < 0.0f ? 0.0f : (v > len - 1.0f ? len - 1.0f : v); }

// Where a coordinate outside [0, len - 1] reads from. CONSTANT leaves it
// outside (the read gives fill_value).
float map_coordinate(float in, ptrdiff_t len, ImageFill fill) {
  const float flen = static_cast<float>(len);
  switch (fill) {
    case ImageFill::kReflect:
      // [abcd] -> [dcba|abcd|dcba]
      if (in < 0.0f) {
        if (len <= 1) return 0.0f;
        const float size2 = 2.0f * flen;
        in = size2 * static_cast<float>(static_cast<int64_t>(-in / size2)) + in;
        in = in < -flen ? in + size2 : -in - 1.0f;
      } else if (in > flen - 1.0f) {
        if (len <= 1) return 0.0f;
        const float size2 = 2.0f * flen;
        in -= size2 * static_cast<float>(static_cast<int64_t>(in / size2));
        if (in >= flen) in = size2 - in - 1.0f;
      }
      return clamp_coordinate(in, flen);
    case ImageFill::kWrap:
      // [abcd] -> [abcd|abcd|abcd]
      if (in < 0.0f) {
        if (len <= 1) return 0.0f;
        const float size = flen - 1.0f;
        in += flen * (static_cast<float>(static_cast<int64_t>(-in / size)) + 1.0f);
      } else if (in > flen - 1.0f) {
        if (len <= 1) return 0.0f;
        const float size = flen - 1.0f;
        in -= flen * static_cast<float>(static_cast<int64_t>(in / size));
      }
      return clamp_coordinate(in, flen);
    case ImageFill::kNearest:
      return clamp_coordinate(in, flen);
    case ImageFill::kConstant:
    default:
      return in;
  }
}

struct Image {
  const float* data;
  ptrdiff_t h, w, ch;
  float fill;
  float read(int64_t y, int64_t x, ptrdiff_t c) const {
    return (y >= 0 && y < h && x >= 0 && x < w) ? data[(static_cast<ptrdiff_t>(y) * w + static_cast<ptrdiff_t>(x)) * ch + c] : fill;
  }
};

}  // namespace

void image_projective_transform_f32(const ImageTransformParams& p, In<float> images, In<float> transforms,
                                    float fill_value, Out<float> output) {
  const int32_t* id = images.shape.dims;
  const int32_t* od = output.shape.dims;
  const ptrdiff_t batches = id[0], in_h = id[1], in_w = id[2], ch = id[3];
  const ptrdiff_t out_h = od[1], out_w = od[2];
  const bool shared = transforms.shape.dims[0] == 1;
  float* o = output.data;
  for (ptrdiff_t n = 0; n < batches; ++n) {
    const float* t = transforms.data + (shared ? 0 : 8 * n);
    const Image img{images.data + n * in_h * in_w * ch, in_h, in_w, ch, fill_value};
    for (ptrdiff_t y = 0; y < out_h; ++y) {
      for (ptrdiff_t x = 0; x < out_w; ++x, o += ch) {
        const float fx = static_cast<float>(x), fy = static_cast<float>(y);
        const float k = t[6] * fx + t[7] * fy + 1.0f;
        const float raw_x = (t[0] * fx + t[1] * fy + t[2]) / k;
        const float raw_y = (t[3] * fx + t[4] * fy + t[5]) / k;
        // A point at infinity (k = 0, as TF) or beyond any integer (NaN, huge
        // transforms) reads fill_value: no float-to-integer conversion overflows.
        if (k == 0.0f || !(fabsf(raw_x) < kFar && fabsf(raw_y) < kFar)) {
          for (ptrdiff_t c = 0; c < ch; ++c) o[c] = fill_value;
          continue;
        }
        const float in_x = map_coordinate(raw_x, in_w, p.fill);
        const float in_y = map_coordinate(raw_y, in_h, p.fill);
        if (p.nearest) {
          const int64_t ny = static_cast<int64_t>(roundf(in_y)), nx = static_cast<int64_t>(roundf(in_x));
          for (ptrdiff_t c = 0; c < ch; ++c) o[c] = img.read(ny, nx, c);
          continue;
        }
        const float y0f = floorf(in_y), x0f = floorf(in_x);
        const float y1f = y0f + 1.0f, x1f = x0f + 1.0f;
        const int64_t y0 = static_cast<int64_t>(y0f), x0 = static_cast<int64_t>(x0f);
        for (ptrdiff_t c = 0; c < ch; ++c) {
          const float top = (x1f - in_x) * img.read(y0, x0, c) + (in_x - x0f) * img.read(y0, x0 + 1, c);
          const float bottom = (x1f - in_x) * img.read(y0 + 1, x0, c) + (in_x - x0f) * img.read(y0 + 1, x0 + 1, c);
          o[c] = (y1f - in_y) * top + (in_y - y0f) * bottom;
        }
      }
    }
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

const char* prepare_image_projective_transform(const OpContext& ctx) {
  if (!has_io(ctx, 3, 1) || !all_f32(ctx)) return FLOE_MSG("expects float32 images, transforms, fill value and output");
  const Shape in = ctx.input(0).shape, t = ctx.input(1).shape, fill = ctx.input(2).shape, out = ctx.output(0).shape;
  if (in.rank != 4 || out.rank != 4 || t.rank != 2 || fill.num_elements() != 1) {
    return FLOE_MSG("expects images NHWC, transforms [1 or batch, 8], a scalar fill value");
  }
  if (t.dims[1] != 8 || (t.dims[0] != 1 && t.dims[0] != in.dims[0])) {
    return FLOE_MSG("transforms must be [1, 8] or [batch, 8]");
  }
  if (out.dims[0] != in.dims[0] || out.dims[3] != in.dims[3]) return FLOE_MSG("transform changes batch or channels");
  const auto* o = ctx.op->options_as_ImageTransformOptions();
  if (o == nullptr) return FLOE_MSG("missing ImageTransformOptions");
  if (static_cast<uint8_t>(o->fill_mode()) > static_cast<uint8_t>(schema::ImageFillMode::MAX)) {
    return FLOE_MSG("unknown fill mode");
  }
  ref::ImageTransformParams& p = ctx.params<ref::ImageTransformParams>();
  p.nearest = o->nearest() ? 1 : 0;
  p.fill = static_cast<ref::ImageFill>(o->fill_mode());
  return nullptr;
}

Status eval_image_projective_transform(const PreparedOp& ctx) {
  ref::image_projective_transform_f32(ctx.params_as<ref::ImageTransformParams>(), in_as<float>(ctx.input(0)),
                                      in_as<float>(ctx.input(1)), *data_as<const float>(ctx.input(2)),
                                      out_as<float>(ctx.output(0)));
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, IMAGE_PROJECTIVE_TRANSFORM, ANY, ref::ImageTransformParams, ops::prepare_image_projective_transform, ops::eval_image_projective_transform)
