// SPDX-License-Identifier: Apache-2.0
// The checks every backend's prepare of CONV2D, DEPTHWISE_CONV2D, MATMUL and
// int8 pooling makes (params.h): one statement of each op's rules.
#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/common/params.h"

namespace floe::kernels {

using ops::activation;

namespace {

// A convolution's window (CONV2D, DEPTHWISE_CONV2D options; the filter's
// dims 0 and 1 are its height and width): checked, then copied into its
// params with the fused activation.
template <typename Options, typename Params>
const char* take_window(const Options& o, const Shape& input, const Shape& filter, const Shape& output,
                        Params* params) {
  if (const char* err = ops::check_window(o.stride_h(), o.stride_w(), o.dilation_h(), o.dilation_w(),
                                          o.pad_top(), o.pad_left())) {
    return err;
  }
  if (!ops::window_positions_fit(input, output, filter.dims[0], filter.dims[1], o.stride_h(), o.stride_w(),
                                 o.dilation_h(), o.dilation_w(), o.pad_top(), o.pad_left())) {
    return FLOE_MSG("image or window positions beyond the kernels' int32 indexing");
  }
  params->stride_h = o.stride_h();
  params->stride_w = o.stride_w();
  params->dilation_h = o.dilation_h();
  params->dilation_w = o.dilation_w();
  params->pad_top = o.pad_top();
  params->pad_left = o.pad_left();
  params->activation = activation(o.activation());
  return nullptr;
}

}  // namespace

const char* check_conv2d_f32(const OpContext& ctx, Conv2DParams* params) {
  if (const char* err = ops::expect_weights_io(ctx)) return err;
  const auto* o = ctx.op->options_as_Conv2DOptions();
  const Shape input = ctx.input(0).shape, filter = ctx.input(1).shape, output = ctx.output(0).shape;
  if (input.rank != 4 || filter.rank != 4 || output.rank != 4) {
    return FLOE_MSG("conv2d tensors must be 4-D (NHWC, HWIO)");
  }
  if (filter.dims[2] != input.dims[3] || output.dims[3] != filter.dims[3] ||
      output.dims[0] != input.dims[0]) {
    return FLOE_MSG("conv2d channel or batch dimensions disagree");
  }
  if (const char* err = ops::check_bias(ctx, filter.dims[3])) return err;
  return take_window(*o, input, filter, output, params);
}

const char* check_depthwise_conv2d_f32(const OpContext& ctx, DepthwiseConv2DParams* params) {
  if (const char* err = ops::expect_weights_io(ctx)) return err;
  const auto* o = ctx.op->options_as_DepthwiseConv2DOptions();
  const Shape input = ctx.input(0).shape, filter = ctx.input(1).shape, output = ctx.output(0).shape;
  if (input.rank != 4 || filter.rank != 4 || output.rank != 4) {
    return FLOE_MSG("depthwise tensors must be 4-D");
  }
  if (filter.dims[2] != input.dims[3] || filter.dims[3] != o->depth_multiplier() ||
      output.dims[3] != input.dims[3] * filter.dims[3] || output.dims[0] != input.dims[0]) {
    return FLOE_MSG("depthwise channel, multiplier or batch dimensions disagree");
  }
  if (const char* err = ops::check_bias(ctx, output.dims[3])) return err;
  params->depth_multiplier = o->depth_multiplier();
  return take_window(*o, input, filter, output, params);
}

const char* check_matmul_f32(const OpContext& ctx, MatMulParams* params) {
  if (const char* err = ops::expect_weights_io(ctx)) return err;
  const auto* options = ctx.op->options_as_MatMulOptions();
  const Shape a = ctx.input(0).shape, b = ctx.input(1).shape, o = ctx.output(0).shape;
  if (a.rank != 2 || b.rank != 2 || o.rank != 2) return FLOE_MSG("matmul operands must be 2-D");
  const int32_t m = options->transpose_a() ? a.dims[1] : a.dims[0];
  const int32_t ka = options->transpose_a() ? a.dims[0] : a.dims[1];
  const int32_t kb = options->transpose_b() ? b.dims[1] : b.dims[0];
  const int32_t n = options->transpose_b() ? b.dims[0] : b.dims[1];
  if (ka != kb) return FLOE_MSG("matmul inner dimensions differ");
  if (o.dims[0] != m || o.dims[1] != n) return FLOE_MSG("matmul output shape is not [M, N]");
  if (const char* err = ops::check_bias(ctx, n)) return err;
  params->transpose_a = options->transpose_a();
  params->transpose_b = options->transpose_b();
  params->activation = activation(options->activation());
  return nullptr;
}

const char* check_fully_connected_s8_shapes(const OpContext& ctx) {
  const auto* options = ctx.op->options_as_MatMulOptions();
  const Shape a = ctx.input(0).shape, b = ctx.input(1).shape, o = ctx.output(0).shape;
  if (a.rank != 2 || b.rank != 2 || o.rank != 2) return FLOE_MSG("int8 matmul operands must be 2-D");
  if (options->transpose_a() || !options->transpose_b()) {
    return FLOE_MSG("int8 matmul takes weights [N, K] (transpose_b) and an untransposed input");
  }
  if (a.dims[1] != b.dims[1] || o.dims[0] != a.dims[0] || o.dims[1] != b.dims[0]) {
    return FLOE_MSG("int8 matmul shapes disagree");
  }
  return nullptr;
}

const char* check_pool_geometry(const OpContext& ctx) {
  const auto* o = ctx.op->options_as_Pool2DOptions();
  const Shape input = ctx.input(0).shape, output = ctx.output(0).shape;
  if (input.rank != 4 || output.rank != 4) return FLOE_MSG("pooling tensors must be 4-D (NHWC)");
  if (input.dims[0] != output.dims[0] || input.dims[3] != output.dims[3]) {
    return FLOE_MSG("pooling changes batch or channels");
  }
  if (o->filter_h() < 1 || o->filter_w() < 1) return FLOE_MSG("pooling window must be >= 1");
  return ops::check_window(o->stride_h(), o->stride_w(), 1, 1, o->pad_top(), o->pad_left());
}

const char* check_pool2d_s8(const OpContext& ctx, Pool2DS8Params* p) {
  if (!ops::has_io(ctx, 1, 1) || !ops::is_s8(ctx.input(0)) || !ops::is_s8(ctx.output(0))) {
    return FLOE_MSG("int8 pooling takes one int8 input and output");
  }
  const auto* o = ctx.op->options_as_Pool2DOptions();
  const Shape input = ctx.input(0).shape, output = ctx.output(0).shape;
  if (const char* err = check_pool_geometry(ctx)) return err;
  // Every window must keep one in-image tap (the average divides by their count).
  if (pool_window_in_padding(*o, input, output)) {
    return FLOE_MSG("int8 pooling window entirely in the padding");
  }
  const char* why = nullptr;
  const schema::Requantization* r = ops::requantization_of(ctx, &why);
  if (r == nullptr) return why;
  set_pool_window(*p, *o);
  p->act_min = r->activation_min();
  p->act_max = r->activation_max();
  return nullptr;
}

}  // namespace floe::kernels
