// SPDX-License-Identifier: Apache-2.0
// Direct depthwise 2-D convolution (TF DepthwiseConv2dNative): NHWC input,
// filter [kh, kw, in_c, multiplier], output channel c*multiplier + m from input
// channel c, then + bias, then the fused activation. Padding, stride and dilation
// follow conv2d (out-of-bounds taps contribute zero and are clipped away).
// The output must not overlap the input or filter (it is used as the accumulator).
#include "runtime/kernels/reference/depthwise_conv2d.h"

#include <math.h>

#include "runtime/kernels/common/window.h"
#include <stddef.h>
#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/reference/weighted_quantized_adapter.h"
#include "runtime/kernels/common/wrapping.h"

namespace floe::ref {
void depthwise_conv2d_f32(const DepthwiseConv2DParams& params, const DepthwiseConv2DOperands& ops) {
  const int32_t* in_dims = ops.input.shape.dims;
  const int32_t* f_dims = ops.filter.shape.dims;
  const int32_t* out_dims = ops.output.shape.dims;
  const ptrdiff_t batches = in_dims[0], in_h = in_dims[1], in_w = in_dims[2], in_c = in_dims[3];
  // The multiplier is taken from the filter's layout (the data actually read);
  // params.depth_multiplier must agree with it, which the caller validates.
  const ptrdiff_t k_h = f_dims[0], k_w = f_dims[1], mult = f_dims[3];
  const ptrdiff_t out_c = in_c * mult;
  const ptrdiff_t out_h = out_dims[1], out_w = out_dims[2];
  const ptrdiff_t stride_h = params.stride_h, stride_w = params.stride_w;
  const ptrdiff_t dil_h = params.dilation_h, dil_w = params.dilation_w;
  const float* bias = ops.bias.data;

  const ActivationRange range = activation_range(params.activation);

  // A filter tap (ky,kx) is out_c = in_c*mult contiguous weights laid out exactly
  // like an output pixel, so the inner loops walk filter and output in lockstep.
  const ptrdiff_t in_row = in_w * in_c;
  const ptrdiff_t in_image = in_h * in_row;
  const ptrdiff_t f_row = k_w * out_c;

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
            const float* f = f_y + kx * out_c;
            if (mult == 1) {
              for (ptrdiff_t c = 0; c < in_c; ++c) o[c] += x[c] * f[c];
            } else {
              float* oo = o;
              for (ptrdiff_t c = 0; c < in_c; ++c, oo += mult, f += mult) {
                const float xv = x[c];
                for (ptrdiff_t m = 0; m < mult; ++m) oo[m] += xv * f[m];
              }
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

Status eval_depthwise_conv2d(const PreparedOp& ctx) {
  ref::depthwise_conv2d_f32(ctx.params_as<ref::DepthwiseConv2DParams>(), kernels::weighted_f32_operands<kernels::DepthwiseConv2DOperands>(ctx));
  return Status::kOk;
}

const char* prepare_depthwise_conv2d(const OpContext& ctx) {
  return kernels::check_depthwise_conv2d_f32(ctx, &ctx.params<ref::DepthwiseConv2DParams>());
}

using DepthwiseQuantized = WeightedQuantizedEval<ref::DepthwiseConv2DS8Params, ref::depthwise_conv2d_s8, ref::depthwise_conv2d_s16>;

// int8: filter [kh, kw, in_c, multiplier] as the float op's; 16x8 alike.
const char* prepare_depthwise_conv2d_s8(const OpContext& ctx) {
  if (const char* err = check_reference_weighted_s8(ctx)) return err;
  const auto* o = ctx.op->options_as_DepthwiseConv2DOptions();
  const Shape input = ctx.input(0).shape, filter = ctx.input(1).shape, output = ctx.output(0).shape;
  if (input.rank != 4 || filter.rank != 4 || output.rank != 4) {
    return FLOE_MSG("int8 depthwise tensors must be 4-D");
  }
  if (o->depth_multiplier() < 1 || filter.dims[2] != input.dims[3] || filter.dims[3] != o->depth_multiplier() ||
      output.dims[3] != int64_t{input.dims[3]} * o->depth_multiplier() || output.dims[0] != input.dims[0]) {
    return FLOE_MSG("int8 depthwise channel, multiplier or batch dimensions disagree");
  }
  if (const char* err = check_window(o->stride_h(), o->stride_w(), o->dilation_h(),
                                     o->dilation_w(), o->pad_top(), o->pad_left())) {
    return err;
  }
  const DType activations = ctx.input(0).dtype;
  WeightedS8 w;
  if (const char* err = prepare_weighted_s8(ctx, output.dims[3], &w, activations)) return err;
  ctx.params<ref::DepthwiseConv2DS8Params>() = {
      o->stride_h(),  o->stride_w(),  o->dilation_h(), o->dilation_w(),      o->pad_top(),
      o->pad_left(),  o->depth_multiplier(), w.input_offset, w.output_offset, w.output_multiplier,
      w.output_shift, w.act_min,      w.act_max};
  DepthwiseQuantized::select(ctx, activations, w.per_channel);
  return nullptr;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, DEPTHWISE_CONV2D, ANY, ref::DepthwiseConv2DParams, ops::prepare_depthwise_conv2d,
            ops::eval_depthwise_conv2d)
FLOE_KERNEL(REFERENCE, DEPTHWISE_CONV2D, INT8, ref::DepthwiseConv2DS8Params, ops::prepare_depthwise_conv2d_s8,
            ops::DepthwiseQuantized::kS8PerTensor)
FLOE_KERNEL(REFERENCE, DEPTHWISE_CONV2D, INT16, ref::DepthwiseConv2DS8Params, ops::prepare_depthwise_conv2d_s8,
            ops::DepthwiseQuantized::kS16PerTensor)


namespace floe::ref {

namespace {

template <typename T>
void depthwise_conv2d_quantized(const DepthwiseConv2DS8Params& params, const WeightedOperands<T>& ops) {
  const int32_t* in_dims = ops.input.shape.dims;
  const int32_t* f_dims = ops.filter.shape.dims;
  const int32_t* out_dims = ops.output.shape.dims;
  const ptrdiff_t batches = in_dims[0], in_h = in_dims[1], in_w = in_dims[2], in_c = in_dims[3];
  const ptrdiff_t k_h = f_dims[0], k_w = f_dims[1];
  const ptrdiff_t out_h = out_dims[1], out_w = out_dims[2], out_c = out_dims[3];
  const ptrdiff_t multiplier_count = params.depth_multiplier;
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
          const ptrdiff_t ic = oc / multiplier_count;
          typename QuantizedScheme<T>::Accumulator acc = 0;
          for (ptrdiff_t ky = ty.begin; ky < ty.end; ++ky) {
            const T* row = image + (y0 + ky * params.dilation_h) * in_w * in_c;
            for (ptrdiff_t kx = tx.begin; kx < tx.end; ++kx) {
              const int32_t x = row[(x0 + kx * params.dilation_w) * in_c + ic];
              const int32_t f = ops.filter.data[(ky * k_w + kx) * out_c + oc];
              acc += f * (x + input_offset);
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

void depthwise_conv2d_s8(const DepthwiseConv2DS8Params& params, const DepthwiseConv2DS8Operands& ops) {
  depthwise_conv2d_quantized(params, ops);
}

void depthwise_conv2d_s16(const DepthwiseConv2DS8Params& params, const DepthwiseConv2DS16Operands& ops) {
  depthwise_conv2d_quantized(params, ops);
}

}  // namespace floe::ref
