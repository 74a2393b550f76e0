// SPDX-License-Identifier: Apache-2.0
// RESIZE_* (see resize.h). Formulas follow the TensorFlow CPU kernels'
// documented conventions; code is our own.
#include "runtime/kernels/reference/resize.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "runtime/kernels/reference/element_copy.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {
namespace {

float resize_scale(int32_t in, int32_t out, bool align_corners) {
  return (align_corners && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                    : static_cast<float>(in) / static_cast<float>(out);
}

inline ptrdiff_t clamp_index(ptrdiff_t i, ptrdiff_t n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

struct CubicTaps {
  ptrdiff_t index[4];
  float weight[4];
};

// Keys' cubic convolution: a = -0.75 (TF's legacy), -0.5 with half-pixel
// centers, where taps outside the image are dropped and weights renormalised.
CubicTaps cubic_taps(float in, ptrdiff_t size, bool half_pixel) {
  const float a = half_pixel ? -0.5f : -0.75f;
  const float base = floorf(in);
  // TF reads the weights from a 1024-entry table: t is quantised to 1/1024.
  const float t = static_cast<float>(lrintf((in - base) * 1024.0f)) / 1024.0f;
  CubicTaps c;
  const float d[4] = {t + 1.0f, t, 1.0f - t, 2.0f - t};
  float sum = 0.0f;
  for (int i = 0; i < 4; ++i) {
    const float x = d[i];
    c.weight[i] = x <= 1.0f ? ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f
                            : ((a * x - 5.0f * a) * x + 8.0f * a) * x - 4.0f * a;
    const ptrdiff_t idx = static_cast<ptrdiff_t>(base) - 1 + i;
    if (half_pixel && (idx < 0 || idx >= size)) c.weight[i] = 0.0f;
    sum += c.weight[i];
    c.index[i] = clamp_index(idx, size);
  }
  if (half_pixel && sum != 0.0f) {
    for (int i = 0; i < 4; ++i) c.weight[i] /= sum;
  }
  return c;
}

void resize_float(const ResizeParams& p, In<float> input, Out<float> output) {
  const int32_t* id = input.shape.dims;
  const int32_t* od = output.shape.dims;
  const ptrdiff_t batches = id[0], in_h = id[1], in_w = id[2], ch = id[3];
  const ptrdiff_t out_h = od[1], out_w = od[2];
  const float sy = resize_scale(id[1], od[1], p.align_corners);
  const float sx = resize_scale(id[2], od[2], p.align_corners);
  const float* in = input.data;
  float* out = output.data;
  auto pixel = [&](ptrdiff_t n, ptrdiff_t y, ptrdiff_t x) { return in + ((n * in_h + y) * in_w + x) * ch; };
  for (ptrdiff_t n = 0; n < batches; ++n) {
    for (ptrdiff_t oy = 0; oy < out_h; ++oy) {
      for (ptrdiff_t ox = 0; ox < out_w; ++ox) {
        float* o = out + ((n * out_h + oy) * out_w + ox) * ch;
        if (p.mode == ResizeMode::kBilinear) {
          const float fy = p.half_pixel_centers ? (oy + 0.5f) * sy - 0.5f : oy * sy;
          const float fx = p.half_pixel_centers ? (ox + 0.5f) * sx - 0.5f : ox * sx;
          const float fy0 = floorf(fy), fx0 = floorf(fx);
          const ptrdiff_t y0 = clamp_index(static_cast<ptrdiff_t>(fy0), in_h);
          const ptrdiff_t y1 = clamp_index(static_cast<ptrdiff_t>(ceilf(fy)), in_h);
          const ptrdiff_t x0 = clamp_index(static_cast<ptrdiff_t>(fx0), in_w);
          const ptrdiff_t x1 = clamp_index(static_cast<ptrdiff_t>(ceilf(fx)), in_w);
          const float ly = fy - fy0, lx = fx - fx0;
          const float *tl = pixel(n, y0, x0), *tr = pixel(n, y0, x1), *bl = pixel(n, y1, x0),
                      *br = pixel(n, y1, x1);
          for (ptrdiff_t c = 0; c < ch; ++c) {
            const float top = tl[c] + (tr[c] - tl[c]) * lx;
            const float bottom = bl[c] + (br[c] - bl[c]) * lx;
            o[c] = top + (bottom - top) * ly;
          }
        } else if (p.mode == ResizeMode::kBicubic) {
          const float fy = p.half_pixel_centers ? (oy + 0.5f) * sy - 0.5f : oy * sy;
          const float fx = p.half_pixel_centers ? (ox + 0.5f) * sx - 0.5f : ox * sx;
          const CubicTaps ty = cubic_taps(fy, in_h, p.half_pixel_centers);
          const CubicTaps tx = cubic_taps(fx, in_w, p.half_pixel_centers);
          for (ptrdiff_t c = 0; c < ch; ++c) {
            float acc = 0.0f;
            for (int i = 0; i < 4; ++i) {
              float row = 0.0f;
              for (int j = 0; j < 4; ++j) row += tx.weight[j] * pixel(n, ty.index[i], tx.index[j])[c];
              acc += ty.weight[i] * row;
            }
            o[c] = acc;
          }
        } else {  // area: average of the input area the output pixel covers
          const float y0 = oy * sy, y1 = (oy + 1) * sy;
          const float x0 = ox * sx, x1 = (ox + 1) * sx;
          for (ptrdiff_t c = 0; c < ch; ++c) o[c] = 0.0f;
          for (ptrdiff_t y = static_cast<ptrdiff_t>(floorf(y0)); y < static_cast<ptrdiff_t>(ceilf(y1)); ++y) {
            const float wy = fminf(static_cast<float>(y + 1), y1) - fmaxf(static_cast<float>(y), y0);
            for (ptrdiff_t x = static_cast<ptrdiff_t>(floorf(x0)); x < static_cast<ptrdiff_t>(ceilf(x1)); ++x) {
              const float wx = fminf(static_cast<float>(x + 1), x1) - fmaxf(static_cast<float>(x), x0);
              const float* v = pixel(n, clamp_index(y, in_h), clamp_index(x, in_w));
              for (ptrdiff_t c = 0; c < ch; ++c) o[c] += v[c] * wy * wx;
            }
          }
          const float inv = 1.0f / (sy * sx);
          for (ptrdiff_t c = 0; c < ch; ++c) o[c] *= inv;
        }
      }
    }
  }
}

}  // namespace

void resize(const ResizeParams& p, size_t element_size, In<void> input, Out<void> output) {
  if (p.mode != ResizeMode::kNearest) {
    resize_float(p, {static_cast<const float*>(input.data), input.shape},
                 {static_cast<float*>(output.data), output.shape});
    return;
  }
  const int32_t* id = input.shape.dims;
  const int32_t* od = output.shape.dims;
  const ptrdiff_t batches = id[0], in_h = id[1], in_w = id[2], ch = id[3];
  const ptrdiff_t out_h = od[1], out_w = od[2];
  const float sy = resize_scale(id[1], od[1], p.align_corners);
  const float sx = resize_scale(id[2], od[2], p.align_corners);
  auto source = [&](ptrdiff_t o, float s, ptrdiff_t size) {
    const float f = p.half_pixel_centers ? (o + 0.5f) * s : o * s;
    const float r = p.align_corners ? roundf(f) : floorf(f);
    return clamp_index(static_cast<ptrdiff_t>(r), size);
  };
  const size_t run = static_cast<size_t>(ch) * element_size;
  const uint8_t* in = static_cast<const uint8_t*>(input.data);
  uint8_t* out = static_cast<uint8_t*>(output.data);
  for (ptrdiff_t n = 0; n < batches; ++n) {
    for (ptrdiff_t oy = 0; oy < out_h; ++oy) {
      const ptrdiff_t y = source(oy, sy, in_h);
      for (ptrdiff_t ox = 0; ox < out_w; ++ox) {
        const ptrdiff_t x = source(ox, sx, in_w);
        if (run) memcpy(out, in + static_cast<size_t>((n * in_h + y) * in_w + x) * run, run);
        out += run;
      }
    }
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {
namespace {

const char* prepare_resize(const OpContext& ctx, ref::ResizeMode mode, bool any_dtype) {
  if (!has_io(ctx, 1, 1)) return FLOE_MSG("expects 1 input and 1 output");
  const TensorView in = ctx.input(0), out = ctx.output(0);
  if (any_dtype ? (in.dtype != out.dtype || dtype_size(in.dtype) == 0) : !all_f32(ctx)) {
    return FLOE_MSG("unsupported dtype");
  }
  if (in.shape.rank != 4 || out.shape.rank != 4) return FLOE_MSG("resize tensors must be NHWC");
  if (in.shape.dims[0] != out.shape.dims[0] || in.shape.dims[3] != out.shape.dims[3]) {
    return FLOE_MSG("resize changes batch or channels");
  }
  if ((in.shape.dims[1] == 0 || in.shape.dims[2] == 0) && out.shape.num_elements() != 0) {
    return FLOE_MSG("cannot resize an empty image");
  }
  const auto* o = ctx.op->options_as_ResizeOptions();
  ref::ResizeParams& p = ctx.params<ref::ResizeParams>();
  p.mode = mode;
  p.align_corners = o->align_corners();
  p.half_pixel_centers = o->half_pixel_centers();
  return nullptr;
}

Status eval_resize(const PreparedOp& ctx) {
  ref::resize(ctx.params_as<ref::ResizeParams>(), dtype_size(ctx.input(0).dtype),
              in_void(ctx.input(0)), out_void(ctx.output(0)));
  return Status::kOk;
}

}  // namespace

const char* prepare_resize_bilinear(const OpContext& ctx) {
  return prepare_resize(ctx, ref::ResizeMode::kBilinear, false);
}

Status eval_resize_bilinear(const PreparedOp& ctx) { return eval_resize(ctx); }

const char* prepare_resize_nearest(const OpContext& ctx) {
  return prepare_resize(ctx, ref::ResizeMode::kNearest, true);
}

Status eval_resize_nearest(const PreparedOp& ctx) { return eval_resize(ctx); }

const char* prepare_resize_bicubic(const OpContext& ctx) {
  return prepare_resize(ctx, ref::ResizeMode::kBicubic, false);
}

Status eval_resize_bicubic(const PreparedOp& ctx) { return eval_resize(ctx); }

const char* prepare_resize_area(const OpContext& ctx) {
  return prepare_resize(ctx, ref::ResizeMode::kArea, false);
}

Status eval_resize_area(const PreparedOp& ctx) { return eval_resize(ctx); }

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, RESIZE_BILINEAR, ANY, ref::ResizeParams, ops::prepare_resize_bilinear, ops::eval_resize_bilinear)
FLOE_KERNEL(REFERENCE, RESIZE_NEAREST, ANY, ref::ResizeParams, ops::prepare_resize_nearest, ops::eval_resize_nearest)
FLOE_KERNEL(REFERENCE, RESIZE_BICUBIC, ANY, ref::ResizeParams, ops::prepare_resize_bicubic, ops::eval_resize_bicubic)
FLOE_KERNEL(REFERENCE, RESIZE_AREA, ANY, ref::ResizeParams, ops::prepare_resize_area, ops::eval_resize_area)
