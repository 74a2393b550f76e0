// SPDX-License-Identifier: Apache-2.0
// Direct 2-D convolution: NHWC input, HWIO filter, explicit top/left padding,
// strides, dilations, then + bias, then the fused activation (TF's Conv2D ->
// BiasAdd -> Relu order). Taps that fall in the padding contribute zero; they are
// skipped by clipping each window's tap range once per output row/column.
// The output must not overlap the input or filter (it is used as the accumulator).
#include "runtime/kernels/reference/conv2d.h"

#include <math.h>

#include "runtime/kernels/common/window.h"
#include <stddef.h>
#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/reference/weighted_quantized_adapter.h"
#include "runtime/kernels/common/wrapping.h"

namespace floe::ref {
void conv2d_f32(const Conv2DParams& params, const Conv2DOperands& ops) {
  const int32_t* in_dims = ops.input.shape.dims;
  const int32_t* f_dims = ops.filter.shape.dims;
  const int32_t* out_dims = ops.output.shape.dims;
  const ptrdiff_t batches = in_dims[0], in_h = in_dims[1], in_w = in_dims[2], in_c = in_dims[3];
  const ptrdiff_t k_h = f_dims[0], k_w = f_dims[1], out_c = f_dims[3];
  const ptrdiff_t out_h = out_dims[1], out_w = out_dims[2];
  const ptrdiff_t stride_h = params.stride_h, stride_w = params.stride_w;
  const ptrdiff_t dil_h = params.dilation_h, dil_w = params.dilation_w;
  const float* bias = ops.bias.data;

  const ActivationRange range = activation_range(params.activation);

  // Element strides. A filter tap (ky,kx) is an [in_c, out_c] matrix, so for
  // each input channel the out_c weights are contiguous, as is the output pixel:
  // the innermost loop is a contiguous multiply-accumulate over out_c.
  const ptrdiff_t in_row = in_w * in_c;
  const ptrdiff_t in_image = in_h * in_row;
  const ptrdiff_t f_tap = in_c * out_c;
  const ptrdiff_t f_row = k_w * f_tap;

  float* o = ops.output.data;
  for (ptrdiff_t n = 0; n < batches; ++n) {
    const float* image = ops.input.data + n * in_image;
    for (ptrdiff_t oy = 0; oy < out_h; ++oy) {
      const ptrdiff_t y0 = oy * stride_h - params.pad_top;
      const kernels::TapRange taps_y = kernels::tap_range(y0, in_h, k_h, dil_h);
      for (ptrdiff_t ox = 0; ox < out_w; ++ox, o += out_c) {
        const ptrdiff_t x0 = ox * stride_w - params.pad_left;
        const kernels::TapRange taps_x = kernels::tap_range(x0, in_w, k_w, dil_w);

        for (ptrdiff_t oc = 0; oc < out_c; ++oc) o[oc] = 0.0f;
        for (ptrdiff_t ky = taps_y.begin; ky < taps_y.end; ++ky) {
          const float* in_y = image + (y0 + ky * dil_h) * in_row;
          const float* f_y = ops.filter.data + ky * f_row;
          for (ptrdiff_t kx = taps_x.begin; kx < taps_x.end; ++kx) {
            const float* x = in_y + (x0 + kx * dil_w) * in_c;
            const float* f = f_y + kx * f_tap;
            for (ptrdiff_t ic = 0; ic < in_c; ++ic, f += out_c) {
              const float xv = x[ic];
              for (ptrdiff_t oc = 0; oc < out_c; ++oc) o[oc] += xv * f[oc];
            }
          }
        }
        add_bias_and_activate(o, bias, out_c, params.activation, range);
      }
    }
  }
}

}  // namespace floe::ref

// ---- adapters: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {
namespace {

Status eval_conv2d(const PreparedOp& ctx) {
  ref::conv2d_f32(ctx.params_as<ref::Conv2DParams>(), kernels::weighted_f32_operands<kernels::Conv2DOperands>(ctx));
  return Status::kOk;
}

const char* prepare_conv2d(const OpContext& ctx) {
  return kernels::check_conv2d_f32(ctx, &ctx.params<ref::Conv2DParams>());
}

using Conv2DQuantized = WeightedQuantizedEval<ref::Conv2DS8Params, ref::conv2d_s8, ref::conv2d_s16>;

// int8: HWIO filter [kh, kw, in_c / groups, out_c], groups = in_c / filter's in_c.
// int16 (16x8) takes the same checks and params.
const char* prepare_conv2d_s8(const OpContext& ctx) {
  if (const char* err = check_reference_weighted_s8(ctx)) return err;
  const auto* o = ctx.op->options_as_Conv2DOptions();
  const Shape input = ctx.input(0).shape, filter = ctx.input(1).shape, output = ctx.output(0).shape;
  if (input.rank != 4 || filter.rank != 4 || output.rank != 4) {
    return FLOE_MSG("int8 conv2d tensors must be 4-D (NHWC, HWIO)");
  }
  if (filter.dims[2] < 1 || input.dims[3] < filter.dims[2] || input.dims[3] % filter.dims[2] != 0 ||
      output.dims[3] != filter.dims[3] ||
      output.dims[0] != input.dims[0] || filter.dims[3] % (input.dims[3] / filter.dims[2]) != 0) {
    return FLOE_MSG("int8 conv2d channel, group or batch dimensions disagree");
  }
  if (const char* err = check_window(o->stride_h(), o->stride_w(), o->dilation_h(),
                                     o->dilation_w(), o->pad_top(), o->pad_left())) {
    return err;
  }
  const DType activations = ctx.input(0).dtype;
  WeightedS8 w;
  if (const char* err = prepare_weighted_s8(ctx, filter.dims[3], &w, activations)) return err;
  ctx.params<ref::Conv2DS8Params>() = {o->stride_h(),   o->stride_w(),    o->dilation_h(), o->dilation_w(),
                                       o->pad_top(),    o->pad_left(),    w.input_offset,  w.output_offset,
                                       w.output_multiplier, w.output_shift, w.act_min,      w.act_max};
  Conv2DQuantized::select(ctx, activations, w.per_channel);
  return nullptr;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, CONV2D, ANY, ref::Conv2DParams, ops::prepare_conv2d, ops::eval_conv2d)
FLOE_KERNEL(REFERENCE, CONV2D, INT8, ref::Conv2DS8Params, ops::prepare_conv2d_s8, ops::Conv2DQuantized::kS8PerTensor)
FLOE_KERNEL(REFERENCE, CONV2D, INT16, ref::Conv2DS8Params, ops::prepare_conv2d_s8, ops::Conv2DQuantized::kS16PerTensor)


namespace floe::ref {

namespace {

// The int8 and 16x8 convolutions share their loops (weighted_quantized.h).
template <typename T>
void conv2d_quantized(const Conv2DS8Params& params, const WeightedOperands<T>& ops) {
  const int32_t* in_dims = ops.input.shape.dims;
  const int32_t* f_dims = ops.filter.shape.dims;
  const int32_t* out_dims = ops.output.shape.dims;
  const ptrdiff_t batches = in_dims[0], in_h = in_dims[1], in_w = in_dims[2], in_c = in_dims[3];
  const ptrdiff_t k_h = f_dims[0], k_w = f_dims[1], f_in_c = f_dims[2], out_c = f_dims[3];
  const ptrdiff_t out_h = out_dims[1], out_w = out_dims[2];
  const ptrdiff_t groups = in_c / f_in_c;
  const ptrdiff_t per_group = out_c / groups;
  const int32_t input_offset = params.input_offset;

  T* o = ops.output.data;
  for (ptrdiff_t n = 0; n < batches; ++n) {
    const T* image = ops.input.data + n * in_h * in_w * in_c;
    for (ptrdiff_t oy = 0; oy < out_h; ++oy) {
      const ptrdiff_t y0 = oy * params.stride_h - params.pad_top;
      const kernels::TapRange ty = kernels::tap_range(y0, in_h, k_h, params.dilation_h);
      for (ptrdiff_t ox = 0; ox < out_w; ++ox) {
        const ptrdiff_t x0 = ox * params.stride_w - params.pad_left;
        const kernels::TapRange tx = kernels::tap_range(x0, in_w, k_w, params.dilation_w);
        for (ptrdiff_t oc = 0; oc < out_c; ++oc, ++o) {
          const ptrdiff_t first_channel = (oc / per_group) * f_in_c;
          typename QuantizedScheme<T>::Accumulator acc = 0;
          for (ptrdiff_t ky = ty.begin; ky < ty.end; ++ky) {
            const T* row = image + (y0 + ky * params.dilation_h) * in_w * in_c;
            for (ptrdiff_t kx = tx.begin; kx < tx.end; ++kx) {
              const T* x = row + (x0 + kx * params.dilation_w) * in_c + first_channel;
              // The tap's [in_c / groups, out_c] matrix, column oc.
              const int8_t* f = ops.filter.data + (ky * k_w + kx) * f_in_c * out_c + oc;
              for (ptrdiff_t ic = 0; ic < f_in_c; ++ic) {
                acc += f[ic * out_c] * (x[ic] + input_offset);
              }
            }
          }
          *o = requantize_channel(acc, ops, oc, params.output_multiplier, params.output_shift, params.output_offset,
                                  params.act_min, params.act_max);
        }
      }
    }
  }
}

}  // namespace

void conv2d_s8(const Conv2DS8Params& params, const Conv2DS8Operands& ops) { conv2d_quantized(params, ops); }

void conv2d_s16(const Conv2DS8Params& params, const Conv2DS16Operands& ops) { conv2d_quantized(params, ops); }

}  // namespace floe::ref
