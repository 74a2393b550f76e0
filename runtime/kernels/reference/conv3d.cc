// SPDX-License-Identifier: Apache-2.0
// CONV3D (see conv3d.h). Formulas follow the TensorFlow CPU kernels'
// documented conventions; code is our own.
#include "runtime/kernels/reference/conv3d.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "runtime/kernels/reference/element_copy.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {

void conv3d_f32(const Conv3DParams& p, In<float> input, In<float> filter, Out<float> output) {
  const int32_t* id = input.shape.dims;
  const int32_t* fd = filter.shape.dims;
  const int32_t* od = output.shape.dims;
  const ptrdiff_t batches = id[0], in_d = id[1], in_h = id[2], in_w = id[3], in_c = id[4];
  const ptrdiff_t k_d = fd[0], k_h = fd[1], k_w = fd[2], out_c = fd[4];
  const ptrdiff_t out_d = od[1], out_h = od[2], out_w = od[3];
  float* o = output.data;
  for (ptrdiff_t n = 0; n < batches; ++n) {
    for (ptrdiff_t oz = 0; oz < out_d; ++oz) {
      for (ptrdiff_t oy = 0; oy < out_h; ++oy) {
        for (ptrdiff_t ox = 0; ox < out_w; ++ox, o += out_c) {
          for (ptrdiff_t co = 0; co < out_c; ++co) o[co] = 0.0f;
          for (ptrdiff_t kz = 0; kz < k_d; ++kz) {
            const ptrdiff_t iz = oz * p.stride_d - p.pad_front + kz * p.dilation_d;
            if (iz < 0 || iz >= in_d) continue;
            for (ptrdiff_t ky = 0; ky < k_h; ++ky) {
              const ptrdiff_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
              if (iy < 0 || iy >= in_h) continue;
              for (ptrdiff_t kx = 0; kx < k_w; ++kx) {
                const ptrdiff_t ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
                if (ix < 0 || ix >= in_w) continue;
                const float* x = input.data + (((n * in_d + iz) * in_h + iy) * in_w + ix) * in_c;
                const float* f = filter.data + ((kz * k_h + ky) * k_w + kx) * in_c * out_c;
                for (ptrdiff_t ci = 0; ci < in_c; ++ci, f += out_c) {
                  const float xv = x[ci];
                  for (ptrdiff_t co = 0; co < out_c; ++co) o[co] += xv * f[co];
                }
              }
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

const char* prepare_conv3d(const OpContext& ctx) {
  if (!has_io(ctx, 2, 1)) return FLOE_MSG("expects input, filter and 1 output");
  for (int i = 0; i < 2; ++i) {
    if (ctx.input(i).dtype != DType::kFloat32) return FLOE_MSG("conv3d is float32");
  }
  if (ctx.output(0).dtype != DType::kFloat32) return FLOE_MSG("conv3d is float32");
  const Shape in = ctx.input(0).shape, f = ctx.input(1).shape, out = ctx.output(0).shape;
  if (in.rank != 5 || f.rank != 5 || out.rank != 5) return FLOE_MSG("tensors must be 5-D (NDHWC, DHWIO)");
  if (f.dims[3] != in.dims[4] || f.dims[4] != out.dims[4] || in.dims[0] != out.dims[0]) {
    return FLOE_MSG("channel or batch dimensions disagree");
  }
  const auto* o = ctx.op->options_as_Conv3DOptions();
  if (o->stride_d() < 1 || o->stride_h() < 1 || o->stride_w() < 1 || o->dilation_d() < 1 ||
      o->dilation_h() < 1 || o->dilation_w() < 1) {
    return FLOE_MSG("strides and dilations must be >= 1");
  }
  // Taps outside the input are skipped by the kernel.
  ref::Conv3DParams& p = ctx.params<ref::Conv3DParams>();
  p.stride_d = o->stride_d();
  p.stride_h = o->stride_h();
  p.stride_w = o->stride_w();
  p.dilation_d = o->dilation_d();
  p.dilation_h = o->dilation_h();
  p.dilation_w = o->dilation_w();
  p.pad_front = o->pad_front();
  p.pad_top = o->pad_top();
  p.pad_left = o->pad_left();
  return nullptr;
}

Status eval_conv3d(const PreparedOp& ctx) {
  ref::conv3d_f32(ctx.params_as<ref::Conv3DParams>(), in_as<float>(ctx.input(0)), in_as<float>(ctx.input(1)), out_as<float>(ctx.output(0)));
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, CONV3D, ANY, ref::Conv3DParams, ops::prepare_conv3d, ops::eval_conv3d)
