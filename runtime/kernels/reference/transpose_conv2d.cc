// SPDX-License-Identifier: Apache-2.0
// TRANSPOSE_CONV2D (see transpose_conv2d.h). Formulas follow the TensorFlow CPU kernels'
// documented conventions; code is our own.
#include "runtime/kernels/reference/transpose_conv2d.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "runtime/kernels/reference/element_copy.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {

// ---- transposed convolution ---------------------------------------------------------

void transpose_conv2d_f32(const TransposeConv2DParams& p, In<float> input, In<float> filter,
                          Out<float> output) {
  const int32_t* id = input.shape.dims;
  const int32_t* fd = filter.shape.dims;
  const int32_t* od = output.shape.dims;
  const ptrdiff_t batches = id[0], in_h = id[1], in_w = id[2], in_c = id[3];
  const ptrdiff_t k_h = fd[0], k_w = fd[1], out_c = fd[2];
  const ptrdiff_t out_h = od[1], out_w = od[2];
  const ptrdiff_t total = static_cast<ptrdiff_t>(output.shape.num_elements());
  for (ptrdiff_t i = 0; i < total; ++i) output.data[i] = 0.0f;
  for (ptrdiff_t n = 0; n < batches; ++n) {
    for (ptrdiff_t iy = 0; iy < in_h; ++iy) {
      for (ptrdiff_t ix = 0; ix < in_w; ++ix) {
        const float* x = input.data + ((n * in_h + iy) * in_w + ix) * in_c;
        for (ptrdiff_t ky = 0; ky < k_h; ++ky) {
          const ptrdiff_t oy = iy * p.stride_h - p.pad_top + ky * p.dilation_h;
          if (oy < 0 || oy >= out_h) continue;
          for (ptrdiff_t kx = 0; kx < k_w; ++kx) {
            const ptrdiff_t ox = ix * p.stride_w - p.pad_left + kx * p.dilation_w;
            if (ox < 0 || ox >= out_w) continue;
            float* o = output.data + ((n * out_h + oy) * out_w + ox) * out_c;
            const float* f = filter.data + (ky * k_w + kx) * out_c * in_c;
            for (ptrdiff_t co = 0; co < out_c; ++co) {
              float acc = 0.0f;
              for (ptrdiff_t ci = 0; ci < in_c; ++ci) acc += x[ci] * f[co * in_c + ci];
              o[co] += acc;
            }
          }
        }
      }
    }
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

const char* prepare_transpose_conv2d(const OpContext& ctx) {
  if (!has_io(ctx, 2, 1) || !all_f32(ctx)) return FLOE_MSG("expects input, filter (float32) and 1 output");
  const auto* o = ctx.op->options_as_Conv2DOptions();
  const Shape in = ctx.input(0).shape, f = ctx.input(1).shape, out = ctx.output(0).shape;
  if (in.rank != 4 || f.rank != 4 || out.rank != 4) return FLOE_MSG("tensors must be 4-D (NHWC, HWOI)");
  if (f.dims[3] != in.dims[3] || f.dims[2] != out.dims[3] || in.dims[0] != out.dims[0]) {
    return FLOE_MSG("channel or batch dimensions disagree");
  }
  if (o->stride_h() < 1 || o->stride_w() < 1 || o->dilation_h() < 1 || o->dilation_w() < 1) {
    return FLOE_MSG("strides and dilations must be >= 1");
  }
  // Taps outside the output are skipped by the kernel.
  ref::TransposeConv2DParams& p = ctx.params<ref::TransposeConv2DParams>();
  p.stride_h = o->stride_h();
  p.stride_w = o->stride_w();
  p.dilation_h = o->dilation_h();
  p.dilation_w = o->dilation_w();
  p.pad_top = o->pad_top();
  p.pad_left = o->pad_left();
  return nullptr;
}

Status eval_transpose_conv2d(const PreparedOp& ctx) {
  ref::transpose_conv2d_f32(ctx.params_as<ref::TransposeConv2DParams>(), in_as<float>(ctx.input(0)), in_as<float>(ctx.input(1)), out_as<float>(ctx.output(0)));
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, TRANSPOSE_CONV2D, ANY, ref::TransposeConv2DParams, ops::prepare_transpose_conv2d, ops::eval_transpose_conv2d)
