// SPDX-License-Identifier: Apache-2.0
// DILATION2D (see dilation2d.h). Semantics follow TensorFlow's documented
// Dilation2D; code is our own.
#include "runtime/kernels/reference/dilation2d.h"

#include <float.h>
#include <stddef.h>

#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {

void dilation2d_f32(const Dilation2DParams& p, In<float> input, In<float> filter, Out<float> output) {
  const int32_t* id = input.shape.dims;
  const int32_t* fd = filter.shape.dims;
  const int32_t* od = output.shape.dims;
  const ptrdiff_t batches = id[0], in_h = id[1], in_w = id[2], ch = id[3];
  const ptrdiff_t k_h = fd[0], k_w = fd[1];
  const ptrdiff_t out_h = od[1], out_w = od[2];
  float* o = output.data;
  for (ptrdiff_t n = 0; n < batches; ++n) {
    for (ptrdiff_t oy = 0; oy < out_h; ++oy) {
      const ptrdiff_t y0 = oy * p.stride_h - p.pad_top;
      for (ptrdiff_t ox = 0; ox < out_w; ++ox, o += ch) {
        const ptrdiff_t x0 = ox * p.stride_w - p.pad_left;
        for (ptrdiff_t c = 0; c < ch; ++c) {
          // TF starts from the lowest float: a window entirely in the padding gives it.
          float best = -FLT_MAX;
          for (ptrdiff_t ky = 0; ky < k_h; ++ky) {
            const ptrdiff_t y = y0 + ky * p.rate_h;
            if (y < 0 || y >= in_h) continue;
            for (ptrdiff_t kx = 0; kx < k_w; ++kx) {
              const ptrdiff_t x = x0 + kx * p.rate_w;
              if (x < 0 || x >= in_w) continue;
              const float v = input.data[((n * in_h + y) * in_w + x) * ch + c] + filter.data[(ky * k_w + kx) * ch + c];
              if (v > best) best = v;
            }
          }
          o[c] = best;
        }
      }
    }
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

const char* prepare_dilation2d(const OpContext& ctx) {
  if (!has_io(ctx, 2, 1) || !all_f32(ctx)) return FLOE_MSG("expects float32 input, filter and output");
  const Shape in = ctx.input(0).shape, f = ctx.input(1).shape, out = ctx.output(0).shape;
  if (in.rank != 4 || f.rank != 3 || out.rank != 4) return FLOE_MSG("tensors must be NHWC, filter [kh, kw, C]");
  if (f.dims[2] != in.dims[3] || out.dims[3] != in.dims[3] || out.dims[0] != in.dims[0]) {
    return FLOE_MSG("channel or batch dimensions disagree");
  }
  const auto* o = ctx.op->options_as_Conv2DOptions();
  if (o == nullptr) return FLOE_MSG("missing Conv2DOptions");
  if (const char* err = check_window(o->stride_h(), o->stride_w(), o->dilation_h(), o->dilation_w(), o->pad_top(),
                                     o->pad_left())) {
    return err;
  }
  if (o->activation() != schema::Activation::NONE) return FLOE_MSG("dilation2d has no fused activation");
  ref::Dilation2DParams& p = ctx.params<ref::Dilation2DParams>();
  p.stride_h = o->stride_h();
  p.stride_w = o->stride_w();
  p.rate_h = o->dilation_h();
  p.rate_w = o->dilation_w();
  p.pad_top = o->pad_top();
  p.pad_left = o->pad_left();
  return nullptr;
}

Status eval_dilation2d(const PreparedOp& ctx) {
  ref::dilation2d_f32(ctx.params_as<ref::Dilation2DParams>(), in_as<float>(ctx.input(0)), in_as<float>(ctx.input(1)),
                      out_as<float>(ctx.output(0)));
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, DILATION2D, ANY, ref::Dilation2DParams, ops::prepare_dilation2d, ops::eval_dilation2d)
