// SPDX-License-Identifier: Apache-2.0
// TRANSPOSE_CONV2D (see transpose_conv2d.h). Formulas follow the TensorFlow CPU kernels'
// documented conventions; code is our own.
#include "runtime/kernels/reference/transpose_conv2d.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "runtime/kernels/reference/element_copy.h"
#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/reference/quantization.h"

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

void transpose_conv2d_s16(const TransposeConv2DS16Params& p, const TransposeConv2DS16Operands& ops) {
  const int32_t* id = ops.input.shape.dims;
  const int32_t* fd = ops.filter.shape.dims;
  const int32_t* od = ops.output.shape.dims;
  const ptrdiff_t batches = id[0], in_h = id[1], in_w = id[2], in_c = id[3];
  const ptrdiff_t k_h = fd[0], k_w = fd[1], out_c = fd[2];
  const ptrdiff_t out_h = od[1], out_w = od[2];
  const TransposeConv2DParams& w = p.window;
  int16_t* o = ops.output.data;
  for (ptrdiff_t n = 0; n < batches; ++n) {
    for (ptrdiff_t oy = 0; oy < out_h; ++oy) {
      for (ptrdiff_t ox = 0; ox < out_w; ++ox) {
        for (ptrdiff_t co = 0; co < out_c; ++co, ++o) {
          int64_t acc = 0;
          // Input pixel iy reaches oy through tap ky when iy * stride - pad + ky * dilation == oy.
          for (ptrdiff_t ky = 0; ky < k_h; ++ky) {
            const ptrdiff_t sy = oy + w.pad_top - ky * w.dilation_h;
            if (sy < 0 || sy % w.stride_h != 0 || sy / w.stride_h >= in_h) continue;
            for (ptrdiff_t kx = 0; kx < k_w; ++kx) {
              const ptrdiff_t sx = ox + w.pad_left - kx * w.dilation_w;
              if (sx < 0 || sx % w.stride_w != 0 || sx / w.stride_w >= in_w) continue;
              const int16_t* x = ops.input.data + ((n * in_h + sy / w.stride_h) * in_w + sx / w.stride_w) * in_c;
              const int8_t* f = ops.filter.data + ((ky * k_w + kx) * out_c + co) * in_c;
              for (ptrdiff_t ci = 0; ci < in_c; ++ci) acc += static_cast<int32_t>(x[ci]) * f[ci];
            }
          }
          *o = requantize_channel(acc, ops, co, p.output_multiplier, p.output_shift, 0, p.act_min, p.act_max);
        }
      }
    }
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

namespace {

// The window of either form, read once from the op's options into *p; taps
// outside the output are skipped by the kernels.
const char* prepare_window(const OpContext& ctx, ref::TransposeConv2DParams* p) {
  const auto* o = ctx.op->options_as_Conv2DOptions();
  const Shape in = ctx.input(0).shape, f = ctx.input(1).shape, out = ctx.output(0).shape;
  if (in.rank != 4 || f.rank != 4 || out.rank != 4) return FLOE_MSG("tensors must be 4-D (NHWC, HWOI)");
  if (f.dims[3] != in.dims[3] || f.dims[2] != out.dims[3] || in.dims[0] != out.dims[0]) {
    return FLOE_MSG("channel or batch dimensions disagree");
  }
  if (o->stride_h() < 1 || o->stride_w() < 1 || o->dilation_h() < 1 || o->dilation_w() < 1) {
    return FLOE_MSG("strides and dilations must be >= 1");
  }
  *p = {o->stride_h(), o->stride_w(), o->dilation_h(), o->dilation_w(), o->pad_top(), o->pad_left()};
  return nullptr;
}

}  // namespace

const char* prepare_transpose_conv2d(const OpContext& ctx) {
  if (!has_io(ctx, 2, 1) || !all_f32(ctx)) return FLOE_MSG("expects input, filter (float32) and 1 output");
  return prepare_window(ctx, &ctx.params<ref::TransposeConv2DParams>());
}

template <bool kPerChannel>
Status eval_transpose_conv2d_s16(const PreparedOp& ctx) {
  ref::transpose_conv2d_s16(ctx.params_as<ref::TransposeConv2DS16Params>(),
                            {in_as<int16_t>(ctx.input(0)), in_as<int8_t>(ctx.input(1)), in_as<int64_t>(ctx.input(2)),
                             channel_multipliers(ctx, kPerChannel), channel_shifts(ctx, kPerChannel),
                             out_as<int16_t>(ctx.output(0))});
  return Status::kOk;
}

// 16x8: the float op's checks on the shapes, then the quantized operands.
const char* prepare_transpose_conv2d_s16(const OpContext& ctx) {
  if (const char* err = weighted_s8_operands(ctx)) return err;
  ref::TransposeConv2DS16Params& p = ctx.params<ref::TransposeConv2DS16Params>();
  if (const char* err = prepare_window(ctx, &p.window)) return err;
  WeightedS8 w;
  if (const char* err = prepare_weighted_s8(ctx, ctx.input(1).shape.dims[2], &w, DType::kInt16)) return err;
  p.output_multiplier = w.output_multiplier;
  p.output_shift = w.output_shift;
  p.act_min = w.act_min;
  p.act_max = w.act_max;
  ctx.set_eval(w.per_channel ? eval_transpose_conv2d_s16<true> : eval_transpose_conv2d_s16<false>);
  return nullptr;
}

Status eval_transpose_conv2d(const PreparedOp& ctx) {
  ref::transpose_conv2d_f32(ctx.params_as<ref::TransposeConv2DParams>(), in_as<float>(ctx.input(0)), in_as<float>(ctx.input(1)), out_as<float>(ctx.output(0)));
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, TRANSPOSE_CONV2D, ANY, ref::TransposeConv2DParams, ops::prepare_transpose_conv2d, ops::eval_transpose_conv2d)
FLOE_KERNEL(REFERENCE, TRANSPOSE_CONV2D, INT16, ref::TransposeConv2DS16Params, ops::prepare_transpose_conv2d_s16,
            ops::eval_transpose_conv2d_s16<false>)
