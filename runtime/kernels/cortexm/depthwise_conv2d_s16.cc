// SPDX-License-Identifier: Apache-2.0
// Cortex-M DEPTHWISE_CONV2D in int16x8 (Operator.cortexm_kernel
// S16_DEPTHWISE), multiplier 1: s16_depthwise. Its own translation unit, as
// conv2d_s16.cc.
#include "runtime/core/registry.h"
#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/cortexm/conv_geometry.h"
#include "runtime/kernels/cortexm/s16_adapter.h"

namespace floe::ops {
namespace {

Status eval_depthwise_conv2d_s16_cortexm(const PreparedOp& ctx) {
  const cortexm::DepthwiseS16Plan& p = ctx.params_as<cortexm::DepthwiseS16Plan>();
  cortexm::s16_depthwise(p.shape(), static_cast<const int16_t*>(ctx.input(0).data),
                         static_cast<const int8_t*>(ctx.input(1).data), cortexm::s16_requant(ctx, p.act_min, p.act_max),
                         static_cast<int16_t*>(ctx.output(0).data));
  return Status::kOk;
}

const char* prepare_depthwise_conv2d_s16_cortexm(const OpContext& ctx) {
  if (ctx.op->cortexm_kernel() != schema::CortexMKernel::S16_DEPTHWISE) {
    return FLOE_MSG("int16 depthwise: not a Cortex-M depthwise kernel");
  }
  if (ctx.input_count() < 2 || ctx.output_count() < 1 || !ctx.has_input(0) || !ctx.has_input(1)) {
    return FLOE_MSG("int16 depthwise: missing operands");
  }
  const auto* o = ctx.op->options_as_DepthwiseConv2DOptions();
  const Shape input = ctx.input(0).shape, filter = ctx.input(1).shape, output = ctx.output(0).shape;
  if (input.rank != 4 || filter.rank != 4 || output.rank != 4) return FLOE_MSG("int16 depthwise tensors must be 4-D");
  const int32_t channels = input.dims[3];
  if (o->depth_multiplier() != 1 || filter.dims[2] != channels || filter.dims[3] != 1 ||
      output.dims[3] != channels || output.dims[0] != input.dims[0]) {
    return FLOE_MSG("int16 Cortex-M depthwise needs multiplier 1 and matching channels");
  }
  if (const char* err = check_window(o->stride_h(), o->stride_w(), o->dilation_h(), o->dilation_w(),
                                     o->pad_top(), o->pad_left())) {
    return err;
  }
  cortexm::DepthwiseS16Plan p{};
  if (const char* err = cortexm::prepare_s16_operands(ctx, channels, 1, &p.act_min, &p.act_max)) return err;
  for (int32_t v : {input.dims[1], input.dims[2], filter.dims[0], filter.dims[1], output.dims[1], output.dims[2],
                    o->stride_h(), o->stride_w(), o->dilation_h(), o->dilation_w(), o->pad_top(), o->pad_left()}) {
    if (!cortexm::fits_int16(v)) return FLOE_MSG("int16 depthwise: shape beyond the Cortex-M kernel's range");
  }
  // The 32-bit sums' bound (the converter's proof), checked once here.
  if (!cortexm::s16_depthwise_sums_fit(static_cast<const int8_t*>(ctx.input(1).data), filter.dims[0] * filter.dims[1],
                                       channels)) {
    return FLOE_MSG("int16 depthwise: weights too large for the Cortex-M kernel's 32-bit sums");
  }
  auto s16 = [](int32_t v) { return static_cast<int16_t>(v); };
  p.batches = input.dims[0];
  p.channels = channels;
  p.in_h = s16(input.dims[1]);
  p.in_w = s16(input.dims[2]);
  p.k_h = s16(filter.dims[0]);
  p.k_w = s16(filter.dims[1]);
  p.out_h = s16(output.dims[1]);
  p.out_w = s16(output.dims[2]);
  p.stride_h = s16(o->stride_h());
  p.stride_w = s16(o->stride_w());
  p.dil_h = s16(o->dilation_h());
  p.dil_w = s16(o->dilation_w());
  p.pad_top = s16(o->pad_top());
  p.pad_left = s16(o->pad_left());
  ctx.params<cortexm::DepthwiseS16Plan>() = p;
  ctx.set_eval(eval_depthwise_conv2d_s16_cortexm);
  return nullptr;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(CORTEX_M, DEPTHWISE_CONV2D, INT16, cortexm::DepthwiseS16Plan, ops::prepare_depthwise_conv2d_s16_cortexm,
            ops::eval_depthwise_conv2d_s16_cortexm)
