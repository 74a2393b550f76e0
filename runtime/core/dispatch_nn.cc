// SPDX-License-Identifier: Apache-2.0
// Adapters for the float32 NN coverage kernels (runtime/kernels/reference/
// nn_extra.h): BatchMatMul, transposed conv, resize, TopK, cumulative ops,
// FakeQuant, LRN, LogSoftmax. Prepare checks every dim the kernels index by.
#include "runtime/core/dispatch_ops.h"
#include "runtime/kernels/reference/nn_extra.h"

namespace floe::ops {
namespace {

bool all_f32(const OpContext& ctx) {
  for (int i = 0; i < ctx.input_count(); ++i) {
    if (ctx.has_input(i) && ctx.input(i).dtype != DType::kFloat32) return false;
  }
  for (int i = 0; i < ctx.output_count(); ++i) {
    if (ctx.output(i).dtype != DType::kFloat32) return false;
  }
  return true;
}

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

const char* prepare_cumulative(const OpContext& ctx, bool product) {
  if (!has_io(ctx, 1, 1)) return FLOE_MSG("expects 1 input and 1 output");
  const TensorView in = ctx.input(0), out = ctx.output(0);
  if (in.dtype != out.dtype || !ref::cumulative_supports(in.dtype)) return FLOE_MSG("unsupported dtype");
  if (!dims_equal(in.shape, out.shape)) return FLOE_MSG("output shape differs from input shape");
  const auto* o = ctx.op->options_as_CumulativeOptions();
  const int32_t axis = o->axis();
  if (axis < 0 || axis >= in.shape.rank) return FLOE_MSG("axis out of range");
  ref::CumulativeParams& p = ctx.params<ref::CumulativeParams>();
  p.axis = axis;
  p.exclusive = o->exclusive();
  p.reverse = o->reverse();
  p.product = product;
  return nullptr;
}

Status eval_cumulative(const PreparedOp& ctx) {
  ref::cumulative(ctx.params_as<ref::CumulativeParams>(), ctx.input(0).dtype,
                  in_void(ctx.input(0)), out_void(ctx.output(0)));
  return Status::kOk;
}

const char* prepare_last_axis_f32(const OpContext& ctx) {
  if (!has_io(ctx, 1, 1) || !all_f32(ctx)) return FLOE_MSG("expects 1 float32 input and output");
  if (!dims_equal(ctx.input(0).shape, ctx.output(0).shape)) return FLOE_MSG("output shape differs");
  if (ctx.input(0).shape.rank < 1) return FLOE_MSG("input must have rank >= 1");
  return nullptr;
}

}  // namespace

const char* prepare_batch_matmul(const OpContext& ctx) {
  if (!has_io(ctx, 2, 1) || !all_f32(ctx)) return FLOE_MSG("expects 2 float32 inputs and 1 output");
  const auto* o = ctx.op->options_as_BatchMatMulOptions();
  const Shape x = ctx.input(0).shape, y = ctx.input(1).shape, out = ctx.output(0).shape;
  if (x.rank < 2 || y.rank < 2 || out.rank != (x.rank > y.rank ? x.rank : y.rank)) {
    return FLOE_MSG("operands must have rank >= 2; output the larger rank");
  }
  const int32_t m = o->adj_x() ? x.dims[x.rank - 1] : x.dims[x.rank - 2];
  const int32_t kx = o->adj_x() ? x.dims[x.rank - 2] : x.dims[x.rank - 1];
  const int32_t ky = o->adj_y() ? y.dims[y.rank - 1] : y.dims[y.rank - 2];
  const int32_t n = o->adj_y() ? y.dims[y.rank - 2] : y.dims[y.rank - 1];
  if (kx != ky) return FLOE_MSG("inner dimensions differ");
  if (out.dims[out.rank - 2] != m || out.dims[out.rank - 1] != n) return FLOE_MSG("output is not [..., M, N]");
  const Shape xb{x.dims, x.rank - 2}, yb{y.dims, y.rank - 2}, ob{out.dims, out.rank - 2};
  const Shape shapes[2] = {xb, yb};
  if (!is_broadcast_of(shapes, 2, ob)) return FLOE_MSG("batch dims do not broadcast to the output's");
  ref::BatchMatMulParams& p = ctx.params<ref::BatchMatMulParams>();
  p.adj_x = o->adj_x();
  p.adj_y = o->adj_y();
  return nullptr;
}

Status eval_batch_matmul(const PreparedOp& ctx) {
  ref::batch_matmul_f32(ctx.params_as<ref::BatchMatMulParams>(), in_as<float>(ctx.input(0)), in_as<float>(ctx.input(1)), out_as<float>(ctx.output(0)));
  return Status::kOk;
}

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

const char* prepare_topk(const OpContext& ctx) {
  if (!has_io(ctx, 1, 2)) return FLOE_MSG("expects 1 input and 2 outputs");
  const TensorView in = ctx.input(0), values = ctx.output(0), indices = ctx.output(1);
  if (in.dtype != DType::kFloat32 || values.dtype != DType::kFloat32 || indices.dtype != DType::kInt32) {
    return FLOE_MSG("expects float32 values and int32 indices");
  }
  if (in.shape.rank < 1 || !dims_equal(values.shape, indices.shape) || values.shape.rank != in.shape.rank) {
    return FLOE_MSG("output shapes mismatch");
  }
  for (int d = 0; d + 1 < in.shape.rank; ++d) {
    if (values.shape.dims[d] != in.shape.dims[d]) return FLOE_MSG("output shapes mismatch");
  }
  if (values.shape.dims[in.shape.rank - 1] > in.shape.dims[in.shape.rank - 1]) return FLOE_MSG("k > last dim");
  ctx.params<TopKPrepared>().sorted = ctx.op->options_as_TopKOptions()->sorted();
  return nullptr;
}

Status eval_topk(const PreparedOp& ctx) {
  ref::topk_f32(ctx.params_as<TopKPrepared>().sorted, in_as<float>(ctx.input(0)), out_as<float>(ctx.output(0)), out_as<int32_t>(ctx.output(1)));
  return Status::kOk;
}

const char* prepare_cumsum(const OpContext& ctx) { return prepare_cumulative(ctx, false); }
Status eval_cumsum(const PreparedOp& ctx) { return eval_cumulative(ctx); }
const char* prepare_cumprod(const OpContext& ctx) { return prepare_cumulative(ctx, true); }
Status eval_cumprod(const PreparedOp& ctx) { return eval_cumulative(ctx); }

const char* prepare_fake_quant(const OpContext& ctx) {
  if (!has_io(ctx, 3, 1) || !all_f32(ctx)) return FLOE_MSG("expects x, min, max (float32) and 1 output");
  const TensorView x = ctx.input(0), lo = ctx.input(1), hi = ctx.input(2);
  if (!dims_equal(x.shape, ctx.output(0).shape)) return FLOE_MSG("output shape differs");
  const int64_t c = lo.shape.num_elements();
  if (c != hi.shape.num_elements() || c < 1) return FLOE_MSG("min/max sizes differ");
  if (c > 1 && (x.shape.rank < 1 || x.shape.dims[x.shape.rank - 1] != c)) {
    return FLOE_MSG("per-channel min/max must match the last dim");
  }
  const auto* o = ctx.op->options_as_FakeQuantOptions();
  const int32_t bits = o->num_bits();
  if (bits < 2 || bits > 16) return FLOE_MSG("num_bits must be in [2, 16]");
  FakeQuantPrepared& prepared = ctx.params<FakeQuantPrepared>();
  prepared.num_bits = bits;
  prepared.narrow_range = o->narrow_range();
  return nullptr;
}

Status eval_fake_quant(const PreparedOp& ctx) {
  const FakeQuantPrepared& prepared = ctx.params_as<FakeQuantPrepared>();
  ref::fake_quant_f32(prepared.num_bits, prepared.narrow_range, in_as<float>(ctx.input(0)), in_as<float>(ctx.input(1)),
                      in_as<float>(ctx.input(2)), out_as<float>(ctx.output(0)));
  return Status::kOk;
}

const char* prepare_lrn(const OpContext& ctx) {
  if (const char* err = prepare_last_axis_f32(ctx)) return err;
  const auto* o = ctx.op->options_as_LrnOptions();
  if (o->depth_radius() < 0) return FLOE_MSG("depth_radius must be >= 0");
  ref::LrnParams& p = ctx.params<ref::LrnParams>();
  p.depth_radius = o->depth_radius();
  p.bias = o->bias();
  p.alpha = o->alpha();
  p.beta = o->beta();
  return nullptr;
}

Status eval_lrn(const PreparedOp& ctx) {
  ref::lrn_f32(ctx.params_as<ref::LrnParams>(), in_as<float>(ctx.input(0)), out_as<float>(ctx.output(0)));
  return Status::kOk;
}

const char* prepare_log_softmax(const OpContext& ctx) { return prepare_last_axis_f32(ctx); }
Status eval_log_softmax(const PreparedOp& ctx) {
  ref::log_softmax_f32(in_as<float>(ctx.input(0)), out_as<float>(ctx.output(0)));
  return Status::kOk;
}

}  // namespace floe::ops

namespace floe::ops {

const char* prepare_extract_patches(const OpContext& ctx) {
  if (!has_io(ctx, 1, 1)) return FLOE_MSG("expects 1 input and 1 output");
  const TensorView in = ctx.input(0), out = ctx.output(0);
  if (in.dtype != out.dtype || dtype_size(in.dtype) == 0) return FLOE_MSG("dtype mismatch");
  if (in.shape.rank != 4 || out.shape.rank != 4) return FLOE_MSG("tensors must be NHWC");
  const auto* o = ctx.op->options_as_ExtractPatchesOptions();
  if (o->size_h() < 1 || o->size_w() < 1 || o->stride_h() < 1 || o->stride_w() < 1 || o->rate_h() < 1 ||
      o->rate_w() < 1 || o->pad_top() < 0 || o->pad_left() < 0) {
    return FLOE_MSG("sizes, strides and rates must be >= 1, pads >= 0");
  }
  const int64_t depth = static_cast<int64_t>(o->size_h()) * o->size_w() * in.shape.dims[3];
  if (out.shape.dims[0] != in.shape.dims[0] || out.shape.dims[3] != depth) {
    return FLOE_MSG("output must be [N, OH, OW, size_h * size_w * C]");
  }
  // Taps outside the input are written as zeros, never read.
  ref::ExtractPatchesParams& p = ctx.params<ref::ExtractPatchesParams>();
  p.size_h = o->size_h();
  p.size_w = o->size_w();
  p.stride_h = o->stride_h();
  p.stride_w = o->stride_w();
  p.rate_h = o->rate_h();
  p.rate_w = o->rate_w();
  p.pad_top = o->pad_top();
  p.pad_left = o->pad_left();
  return nullptr;
}

Status eval_extract_patches(const PreparedOp& ctx) {
  ref::extract_patches(ctx.params_as<ref::ExtractPatchesParams>(), dtype_size(ctx.input(0).dtype), in_void(ctx.input(0)), out_void(ctx.output(0)));
  return Status::kOk;
}

}  // namespace floe::ops

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
