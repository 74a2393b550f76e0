// SPDX-License-Identifier: Apache-2.0
// XNNPACK operator creation per floe opcode (see operators.h). The ops are
// those schemas/contract/ops.def marks XNNPACK (checked below); which of their shapes
// come here, and their arena bytes, converter/lower/backend_xnnpack.cc
// decides. MatMul and 1x1/stride-1/unpadded Conv2D -> fully connected; Conv2D
// -> convolution (filter transposed HWIO -> OHWI into scratch first);
// DepthwiseConv2D -> depthwise convolution (TF's [kh,kw,C,M] is XNNPACK's
// HWGo); pooling; broadcasting binary ops; clamp-style unary ops; softmax
// (beta 1); Mean over H,W -> global average pooling.
#include "runtime/kernels/xnnpack/operators.h"

#include "runtime/core/model.h"
#include "runtime/kernels/common/activation.h"
#include "schemas/contract/op_traits.h"
#include "schemas/contract/xnnpack_budget.h"
#include "schemas/floe_generated.h"

namespace floe::xnnpack {
namespace {

constexpr float kInf = __builtin_inff();

struct Range {
  float min;
  float max;
};

Range clamp_of(schema::Activation a) {
  const ActivationRange r = activation_range(static_cast<Activation>(a));
  return {r.lo, r.hi};
}

Status from_xnn(xnn_status s, const char* what, const char** why) {
  if (s == xnn_status_success) return Status::kOk;
  *why = what;
  if (s == xnn_status_out_of_memory) return Status::kArenaTooSmall;
  return Status::kInvalidModel;
}

const float* f32(const TensorView& v) { return static_cast<const float*>(v.data); }
float* f32_out(const TensorView& v) { return static_cast<float*>(v.data); }

bool is_constant_input(const XnnOpContext& ctx, int i) {
  return ctx.has_input(i) && ctx.model->is_constant(static_cast<size_t>(ctx.op->inputs()->Get(i)));
}

// Output extent of a window op, as XNNPACK computes it from explicit padding,
// or -1 where XNNPACK would compute another: negative pads (it takes them as
// uint32), a window larger than the padded input (it still writes one row), a
// dilated window over 2^31 (its uint32 arithmetic wraps). The tensor must have
// exactly this extent, or XNNPACK writes rows the plan never gave the output.
int64_t window_out(int64_t in, int64_t pad_a, int64_t pad_b, int64_t k, int64_t dilation,
                   int64_t stride) {
  if (pad_a < 0 || pad_b < 0 || k < 1 || dilation < 1 || stride < 1) return -1;
  const int64_t effective = (k - 1) * dilation + 1;
  const int64_t padded = in + pad_a + pad_b;
  if (effective > INT32_MAX || padded < effective) return -1;
  return (padded - effective) / stride + 1;
}

// Whether an NHWC window op's output H and W are those XNNPACK computes.
template <typename Options>
bool window_gives_output(const Options& o, const Shape& input, int64_t k_h, int64_t k_w,
                         int64_t dilation_h, int64_t dilation_w, const Shape& output) {
  return input.rank == 4 && output.rank == 4 &&
         window_out(input.dims[1], o.pad_top(), o.pad_bottom(), k_h, dilation_h, o.stride_h()) ==
             output.dims[1] &&
         window_out(input.dims[2], o.pad_left(), o.pad_right(), k_w, dilation_w, o.stride_w()) ==
             output.dims[2];
}

Status fully_connected(const CreateArgs& a, const float* input, size_t batch, size_t in_ch,
                       size_t out_ch, const float* weights, bool weights_are_in_by_out,
                       const float* bias, Range r, float* output, xnn_operator_t* op,
                       const char** why) {
  const uint32_t flags = weights_are_in_by_out ? XNN_FLAG_TRANSPOSE_WEIGHTS : 0;
  FLOE_RETURN_IF_ERROR(from_xnn(xnn_create_fully_connected_nc_f32(in_ch, out_ch, in_ch, out_ch,
                                                                   weights, bias, r.min, r.max,
                                                                   flags, op),
                                FLOE_MSG("xnn_create_fully_connected_nc_f32 failed"), why));
  return from_xnn(xnn_setup_fully_connected_nc_f32(*op, batch, input, output, a.thread_pool),
                  FLOE_MSG("xnn_setup_fully_connected_nc_f32 failed"), why);
}

Status matmul(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  const XnnOpContext& ctx = *a.ctx;
  const auto* o = ctx.op->options_as_MatMulOptions();
  if (o->transpose_a() || !is_constant_input(ctx, 1) ||
      (ctx.has_input(2) && !is_constant_input(ctx, 2))) {
    *why = FLOE_MSG("XNNPACK matmul needs constant weights/bias and no transpose_a");
    return Status::kInvalidModel;
  }
  const TensorView x = ctx.input(0), w = ctx.input(1), y = ctx.output(0);
  const size_t k = static_cast<size_t>(x.shape.dims[1]);
  const size_t n = static_cast<size_t>(y.shape.dims[1]);
  return fully_connected(a, f32(x), static_cast<size_t>(x.shape.dims[0]), k, n, f32(w),
                         !o->transpose_b(), ctx.has_input(2) ? f32(ctx.input(2)) : nullptr,
                         clamp_of(o->activation()), f32_out(y), op, why);
}

// Scratch for an Init-time weight rewrite: the activations when large enough
// (nothing is live during Init), else the top of the persistent region, whose
// limit is lowered until the operator exists (the converter budgets the region
// in use by then plus the scratch: xnnpack_budget::Replay::convolution).
struct Scratch {
  void* data = nullptr;
  size_t region_bytes = 0;  // taken from the region (0: from the activations)
  size_t saved_limit = 0;
};

Scratch take_scratch(const CreateArgs& a, size_t bytes) {
  Scratch s;
  if (bytes <= a.activation_bytes) {
    s.data = a.activations;
    return s;
  }
  const size_t need = static_cast<size_t>(
      xnnpack_budget::align_up(bytes, xnnpack_budget::kScratchAlignment));
  if (need > a.region->limit || a.region->limit - need < a.region->used) return s;
  s.saved_limit = a.region->limit;
  s.region_bytes = need;
  a.region->limit -= need;
  s.data = a.region->base + a.region->limit;
  return s;
}

// The operator is created: the scratch is free again. What Init needed for it
// is what XNNPACK allocated meanwhile plus the scratch.
void release_scratch(const CreateArgs& a, const Scratch& s) {
  if (s.region_bytes == 0) return;
  a.region->limit = s.saved_limit;
  const size_t needed = a.region->used + s.region_bytes;
  if (needed > a.region->peak) a.region->peak = needed;
}

// ---- int8: XNNPACK's QC8 convolution and QS8 add / global average pooling ----
// The converter gives XNNPACK only the int8 ops these accept
// (converter/lower/backend_xnnpack.cc, take_int8). XNNPACK requantizes in
// fp32: its results are within one step of the reference kernels'.

bool is_int8(const XnnOpContext& ctx) { return ctx.output(0).dtype == DType::kInt8; }
const int8_t* s8(const TensorView& v) { return static_cast<const int8_t*>(v.data); }
int8_t* s8_out(const TensorView& v) { return static_cast<int8_t*>(v.data); }

int32_t offset_entry(const schema::Requantization* r, uint32_t i) {
  return r->input_offsets() != nullptr && i < r->input_offsets()->size() ? r->input_offsets()->Get(i) : 0;
}

// The clamp and output zero point the converter wrote.
struct Int8Output {
  int8_t zero_point, min, max;
};
bool int8_output(const XnnOpContext& ctx, Int8Output* out, const char** why) {
  const schema::Requantization* r = ctx.op->requantization();
  if (r == nullptr || r->output_offset() < -128 || r->output_offset() > 127 ||
      r->activation_min() < -128 || r->activation_max() > 127 ||
      r->activation_min() >= r->activation_max()) {
    *why = FLOE_MSG("XNNPACK int8 op needs its requantization (zero point, clamp range)");
    return false;
  }
  *out = {static_cast<int8_t>(r->output_offset()), static_cast<int8_t>(r->activation_min()),
          static_cast<int8_t>(r->activation_max())};
  return true;
}

// A QC8 convolution of an int8 CONV2D, DEPTHWISE_CONV2D or MATMUL.
struct Qc8Convolution {
  uint32_t pad_top, pad_right, pad_bottom, pad_left, kernel_h, kernel_w, stride_h, stride_w,
      dilation_h, dilation_w, groups;
  size_t group_input_channels, group_output_channels;
  uint32_t flags;
  const int8_t* filter;  // OHWI, or [1, kh, kw, groups * M] for depthwise
  size_t batch, input_h, input_w;
  const int8_t* input;
  int8_t* output;
};

// Init scratch of a QC8 op: its channel scales, then room for a filter
// rewrite (the converter budgets the same bytes: qc8_scratch_bytes).
struct Qc8Scratch {
  Scratch scratch;
  float* scales = nullptr;
  int8_t* filter = nullptr;
};

Status qc8_scratch(const CreateArgs& a, size_t channels, size_t filter_bytes, Qc8Scratch* out,
                   const char** why) {
  out->scratch = take_scratch(a, channels * sizeof(float) + filter_bytes);
  if (out->scratch.data == nullptr) {
    *why = FLOE_MSG("arena too small for the int8 scale and filter scratch (XNNPACK persistent region)");
    return Status::kArenaTooSmall;
  }
  out->scales = static_cast<float*>(out->scratch.data);
  out->filter = reinterpret_cast<int8_t*>(out->scales + channels);
  // The reference kernels' multiplier m and shift s per output channel (or
  // one pair) give XNNPACK's requantization scale m * 2^(s - 31), as the
  // converter checked it (input and output scale 1 below).
  const TensorView mult = a.ctx->input(3), shift = a.ctx->input(4);
  const size_t pairs = static_cast<size_t>(mult.shape.num_elements());
  const int32_t* m = static_cast<const int32_t*>(mult.data);
  const int32_t* e = static_cast<const int32_t*>(shift.data);
  for (size_t c = 0; c < channels; ++c) {
    const size_t k = pairs == channels ? c : 0;
    if (!xnnpack_budget::qc8_scale_supported(m[k], e[k])) {
      release_scratch(a, out->scratch);
      *why = FLOE_MSG("int8 multiplier outside what XNNPACK's QC8 convolution accepts");
      return Status::kInvalidModel;
    }
    out->scales[c] = xnnpack_budget::qc8_channel_scale(m[k], e[k]);
  }
  return Status::kOk;
}

Status qc8_convolution(const CreateArgs& a, const Qc8Convolution& c, const Qc8Scratch& scratch,
                       xnn_operator_t* op, const char** why) {
  const XnnOpContext& ctx = *a.ctx;
  Int8Output out;
  if (!int8_output(ctx, &out, why)) {
    release_scratch(a, scratch.scratch);
    return Status::kInvalidModel;
  }
  const schema::Requantization* r = ctx.op->requantization();
  const int32_t input_offset = offset_entry(r, 0);
  if (input_offset < -127 || input_offset > 128 || offset_entry(r, 1) != 0) {
    release_scratch(a, scratch.scratch);
    *why = FLOE_MSG("XNNPACK int8 op needs an int8 input zero point and symmetric weights");
    return Status::kInvalidModel;
  }
  const int32_t* bias = ctx.has_input(2) ? static_cast<const int32_t*>(ctx.input(2).data) : nullptr;
  const size_t in_stride = c.groups * c.group_input_channels;
  const size_t out_stride = c.groups * c.group_output_channels;
  const Status s = from_xnn(
      xnn_create_convolution2d_nhwc_qc8(
          c.pad_top, c.pad_right, c.pad_bottom, c.pad_left, c.kernel_h, c.kernel_w, c.stride_h,
          c.stride_w, c.dilation_h, c.dilation_w, c.groups, c.group_input_channels,
          c.group_output_channels, in_stride, out_stride, static_cast<int8_t>(-input_offset), 1.0f,
          scratch.scales, c.filter, bias, out.zero_point, 1.0f, out.min, out.max, c.flags, op),
      FLOE_MSG("xnn_create_convolution2d_nhwc_qc8 failed"), why);
  release_scratch(a, scratch.scratch);  // XNNPACK packed its own copy of both
  FLOE_RETURN_IF_ERROR(s);
  return from_xnn(xnn_setup_convolution2d_nhwc_qc8(*op, c.batch, c.input_h, c.input_w, c.input,
                                                   c.output, a.thread_pool),
                  FLOE_MSG("xnn_setup_convolution2d_nhwc_qc8 failed"), why);
}

Status conv2d_s8(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  const XnnOpContext& ctx = *a.ctx;
  const auto* o = ctx.op->options_as_Conv2DOptions();
  const TensorView x = ctx.input(0), w = ctx.input(1), y = ctx.output(0);
  const Shape& ws = w.shape;
  const size_t kh = static_cast<size_t>(ws.dims[0]), kw = static_cast<size_t>(ws.dims[1]);
  const size_t ci = static_cast<size_t>(ws.dims[2]), co = static_cast<size_t>(ws.dims[3]);
  if (!window_gives_output(*o, x.shape, ws.dims[0], ws.dims[1], o->dilation_h(), o->dilation_w(), y.shape)) {
    *why = FLOE_MSG("int8 conv2d padding does not give the output shape (XNNPACK needs exact pads)");
    return Status::kInvalidModel;
  }
  const size_t taps = kh * kw * ci;
  Qc8Scratch scratch;
  FLOE_RETURN_IF_ERROR(qc8_scratch(a, co, taps * co, &scratch, why));
  const int8_t* hwio = s8(w);  // XNNPACK wants OHWI
  for (size_t t = 0; t < taps; ++t) {
    for (size_t c = 0; c < co; ++c) scratch.filter[c * taps + t] = hwio[t * co + c];
  }
  const Qc8Convolution c{static_cast<uint32_t>(o->pad_top()), static_cast<uint32_t>(o->pad_right()),
                         static_cast<uint32_t>(o->pad_bottom()), static_cast<uint32_t>(o->pad_left()),
                         static_cast<uint32_t>(kh), static_cast<uint32_t>(kw),
                         static_cast<uint32_t>(o->stride_h()), static_cast<uint32_t>(o->stride_w()),
                         static_cast<uint32_t>(o->dilation_h()), static_cast<uint32_t>(o->dilation_w()),
                         1, ci, co, 0, scratch.filter,
                         static_cast<size_t>(x.shape.dims[0]), static_cast<size_t>(x.shape.dims[1]),
                         static_cast<size_t>(x.shape.dims[2]), s8(x), s8_out(y)};
  return qc8_convolution(a, c, scratch, op, why);
}

// floe's [kh, kw, C, M] filter is XNNPACK's depthwise [1, kh, kw, C * M].
Status depthwise_s8(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  const XnnOpContext& ctx = *a.ctx;
  const auto* o = ctx.op->options_as_DepthwiseConv2DOptions();
  const TensorView x = ctx.input(0), w = ctx.input(1), y = ctx.output(0);
  const Shape& ws = w.shape;
  const size_t channels = static_cast<size_t>(ws.dims[2]);
  const size_t multiplier = static_cast<size_t>(ws.dims[3]);
  if (!window_gives_output(*o, x.shape, ws.dims[0], ws.dims[1], o->dilation_h(), o->dilation_w(), y.shape)) {
    *why = FLOE_MSG("int8 depthwise padding does not give the output shape (XNNPACK needs exact pads)");
    return Status::kInvalidModel;
  }
  Qc8Scratch scratch;
  FLOE_RETURN_IF_ERROR(qc8_scratch(a, channels * multiplier, 0, &scratch, why));
  const Qc8Convolution c{static_cast<uint32_t>(o->pad_top()), static_cast<uint32_t>(o->pad_right()),
                         static_cast<uint32_t>(o->pad_bottom()), static_cast<uint32_t>(o->pad_left()),
                         static_cast<uint32_t>(ws.dims[0]), static_cast<uint32_t>(ws.dims[1]),
                         static_cast<uint32_t>(o->stride_h()), static_cast<uint32_t>(o->stride_w()),
                         static_cast<uint32_t>(o->dilation_h()), static_cast<uint32_t>(o->dilation_w()),
                         static_cast<uint32_t>(channels), 1, multiplier,
                         XNN_FLAG_DEPTHWISE_CONVOLUTION, s8(w),
                         static_cast<size_t>(x.shape.dims[0]), static_cast<size_t>(x.shape.dims[1]),
                         static_cast<size_t>(x.shape.dims[2]), s8(x), s8_out(y)};
  return qc8_convolution(a, c, scratch, op, why);
}

// [rows, K] x [N, K]^T: a 1x1 convolution over `rows` pixels whose OHWI filter
// is the [N, K] weights as they are (per-channel weights included).
Status matmul_s8(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  const XnnOpContext& ctx = *a.ctx;
  const auto* o = ctx.op->options_as_MatMulOptions();
  if (o->transpose_a() || !o->transpose_b()) {
    *why = FLOE_MSG("XNNPACK int8 matmul needs [N, K] weights (transpose_b) and no transpose_a");
    return Status::kInvalidModel;
  }
  const TensorView x = ctx.input(0), w = ctx.input(1), y = ctx.output(0);
  const size_t rows = static_cast<size_t>(x.shape.dims[0]), k = static_cast<size_t>(x.shape.dims[1]);
  const size_t n = static_cast<size_t>(y.shape.dims[1]);
  Qc8Scratch scratch;
  FLOE_RETURN_IF_ERROR(qc8_scratch(a, n, 0, &scratch, why));
  const Qc8Convolution c{0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, k, n, 0, s8(w),
                         rows, 1, 1, s8(x), s8_out(y)};
  return qc8_convolution(a, c, scratch, op, why);
}

// The per-tensor scale and zero point of int8 operand `input` (-1: the output).
bool activation_quantization(const XnnOpContext& ctx, int input, float* scale, int8_t* zero_point) {
  const int32_t index = input < 0 ? ctx.op->outputs()->Get(0) : ctx.op->inputs()->Get(input);
  const Quantization q = ctx.model->quantization(static_cast<size_t>(index));
  if (q.channels != 1 || q.zero_point < -128 || q.zero_point > 127 || !(q.scale > 0.0f)) return false;
  *scale = q.scale;
  *zero_point = static_cast<int8_t>(q.zero_point);
  return true;
}

Status add_s8(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  const XnnOpContext& ctx = *a.ctx;
  Int8Output out;
  float s1 = 0, s2 = 0, so = 0;
  int8_t z1 = 0, z2 = 0, zo = 0;
  if (!int8_output(ctx, &out, why)) return Status::kInvalidModel;
  if (!activation_quantization(ctx, 0, &s1, &z1) || !activation_quantization(ctx, 1, &s2, &z2) ||
      !activation_quantization(ctx, -1, &so, &zo)) {
    *why = FLOE_MSG("XNNPACK int8 add needs per-tensor quantized operands");
    return Status::kInvalidModel;
  }
  FLOE_RETURN_IF_ERROR(from_xnn(
      xnn_create_add_nd_qs8(z1, s1, z2, s2, out.zero_point, so, out.min, out.max, 0, op),
      FLOE_MSG("xnn_create_add_nd_qs8 failed"), why));
  const TensorView x1 = ctx.input(0), x2 = ctx.input(1), y = ctx.output(0);
  size_t shape1[XNN_MAX_TENSOR_DIMS], shape2[XNN_MAX_TENSOR_DIMS];
  if (x1.shape.rank > XNN_MAX_TENSOR_DIMS || x2.shape.rank > XNN_MAX_TENSOR_DIMS) {
    *why = FLOE_MSG("XNNPACK int8 add takes at most XNN_MAX_TENSOR_DIMS dimensions");
    return Status::kInvalidModel;
  }
  for (int i = 0; i < x1.shape.rank; ++i) shape1[i] = static_cast<size_t>(x1.shape.dims[i]);
  for (int i = 0; i < x2.shape.rank; ++i) shape2[i] = static_cast<size_t>(x2.shape.dims[i]);
  return from_xnn(xnn_setup_add_nd_qs8(*op, static_cast<size_t>(x1.shape.rank), shape1,
                                       static_cast<size_t>(x2.shape.rank), shape2, s8(x1), s8(x2),
                                       s8_out(y), a.thread_pool),
                  FLOE_MSG("xnn_setup_add_nd_qs8 failed"), why);
}

// Whether an NHWC op is an average over each whole image: a MEAN over axes
// {1, 2}, or an unpadded AVG_POOL2D whose window is H x W; either way XNNPACK's
// global average writes N x C values, the output's size.
bool averages_whole_image(const XnnOpContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const Shape& y = ctx.output(0).shape;
  if (x.rank != 4 || y.num_elements() != x.dims[0] * x.dims[3]) return false;
  if (ctx.op->opcode() == schema::OpCode::MEAN) {
    const auto* axes = ctx.op->options_as_ReduceOptions()->axes();
    return axes != nullptr && axes->size() == 2 && axes->Get(0) == 1 && axes->Get(1) == 2;
  }
  const auto* o = ctx.op->options_as_Pool2DOptions();
  return o->filter_h() == x.dims[1] && o->filter_w() == x.dims[2] && o->pad_top() == 0 &&
         o->pad_bottom() == 0 && o->pad_left() == 0 && o->pad_right() == 0;
}

// An AVG_POOL2D whose window is the whole image, or a MEAN over H and W.
Status global_average_s8(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  const XnnOpContext& ctx = *a.ctx;
  const TensorView x = ctx.input(0), y = ctx.output(0);
  Int8Output out;
  float si = 0, so = 0;
  int8_t zi = 0, zo = 0;
  if (!int8_output(ctx, &out, why)) return Status::kInvalidModel;
  if (x.shape.rank != 4 || !activation_quantization(ctx, 0, &si, &zi) ||
      !activation_quantization(ctx, -1, &so, &zo)) {
    *why = FLOE_MSG("XNNPACK int8 average needs NHWC per-tensor quantized operands");
    return Status::kInvalidModel;
  }
  if (!averages_whole_image(ctx)) {
    *why = FLOE_MSG("XNNPACK int8 average must be over the whole image (H and W) into N x C values");
    return Status::kInvalidModel;
  }
  const size_t c = static_cast<size_t>(x.shape.dims[3]);
  FLOE_RETURN_IF_ERROR(from_xnn(xnn_create_global_average_pooling_nwc_qs8(
                                    c, c, c, zi, si, out.zero_point, so, out.min, out.max, 0, op),
                                FLOE_MSG("xnn_create_global_average_pooling_nwc_qs8 failed"), why));
  return from_xnn(xnn_setup_global_average_pooling_nwc_qs8(
                      *op, static_cast<size_t>(x.shape.dims[0]),
                      static_cast<size_t>(x.shape.dims[1]) * x.shape.dims[2], s8(x), s8_out(y),
                      a.thread_pool),
                  FLOE_MSG("xnn_setup_global_average_pooling_nwc_qs8 failed"), why);
}

Status conv2d(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  const XnnOpContext& ctx = *a.ctx;
  if (is_int8(ctx)) return conv2d_s8(a, op, why);
  const auto* o = ctx.op->options_as_Conv2DOptions();
  if (!is_constant_input(ctx, 1) || (ctx.has_input(2) && !is_constant_input(ctx, 2))) {
    *why = FLOE_MSG("XNNPACK conv2d needs a constant filter and bias");
    return Status::kInvalidModel;
  }
  const TensorView x = ctx.input(0), w = ctx.input(1), y = ctx.output(0);
  const Shape& xs = x.shape;
  const Shape& ws = w.shape;
  const size_t kh = static_cast<size_t>(ws.dims[0]), kw = static_cast<size_t>(ws.dims[1]);
  const size_t ci = static_cast<size_t>(ws.dims[2]), co = static_cast<size_t>(ws.dims[3]);
  const float* bias = ctx.has_input(2) ? f32(ctx.input(2)) : nullptr;
  const Range r = clamp_of(o->activation());
  if (!window_gives_output(*o, xs, ws.dims[0], ws.dims[1], o->dilation_h(), o->dilation_w(), y.shape)) {
    *why = FLOE_MSG("conv2d padding does not give the output shape (XNNPACK needs exact pads)");
    return Status::kInvalidModel;
  }
  const bool pointwise = kh == 1 && kw == 1 && o->stride_h() == 1 && o->stride_w() == 1 &&
                         o->pad_top() == 0 && o->pad_left() == 0 && o->pad_bottom() == 0 &&
                         o->pad_right() == 0;
  if (pointwise) {  // HWIO [1,1,Ci,Co] is a [Ci,Co] matrix over every pixel
    const size_t pixels = static_cast<size_t>(xs.dims[0]) * xs.dims[1] * xs.dims[2];
    return fully_connected(a, f32(x), pixels, ci, co, f32(w), true, bias, r, f32_out(y), op, why);
  }
  const size_t taps = kh * kw * ci;
  const Scratch scratch = take_scratch(a, taps * co * sizeof(float));
  float* ohwi = static_cast<float*>(scratch.data);
  if (ohwi == nullptr) {
    *why = FLOE_MSG("arena too small for the conv2d filter rewrite (XNNPACK persistent region)");
    return Status::kArenaTooSmall;
  }
  const float* hwio = f32(w);
  for (size_t t = 0; t < taps; ++t) {
    for (size_t c = 0; c < co; ++c) ohwi[c * taps + t] = hwio[t * co + c];
  }
  Status s = from_xnn(
      xnn_create_convolution2d_nhwc_f32(
          static_cast<uint32_t>(o->pad_top()), static_cast<uint32_t>(o->pad_right()),
          static_cast<uint32_t>(o->pad_bottom()), static_cast<uint32_t>(o->pad_left()),
          static_cast<uint32_t>(kh), static_cast<uint32_t>(kw),
          static_cast<uint32_t>(o->stride_h()), static_cast<uint32_t>(o->stride_w()),
          static_cast<uint32_t>(o->dilation_h()), static_cast<uint32_t>(o->dilation_w()),
          /*groups=*/1, ci, co, ci, co, ohwi, bias, r.min, r.max, 0, op),
      FLOE_MSG("xnn_create_convolution2d_nhwc_f32 failed"), why);
  release_scratch(a, scratch);  // XNNPACK packed its own copy
  FLOE_RETURN_IF_ERROR(s);
  return from_xnn(xnn_setup_convolution2d_nhwc_f32(*op, static_cast<size_t>(xs.dims[0]),
                                                   static_cast<size_t>(xs.dims[1]),
                                                   static_cast<size_t>(xs.dims[2]), f32(x),
                                                   f32_out(y), a.thread_pool),
                  FLOE_MSG("xnn_setup_convolution2d_nhwc_f32 failed"), why);
}

Status depthwise(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  const XnnOpContext& ctx = *a.ctx;
  if (is_int8(ctx)) return depthwise_s8(a, op, why);
  const auto* o = ctx.op->options_as_DepthwiseConv2DOptions();
  if (!is_constant_input(ctx, 1) || (ctx.has_input(2) && !is_constant_input(ctx, 2))) {
    *why = FLOE_MSG("XNNPACK depthwise needs a constant filter and bias");
    return Status::kInvalidModel;
  }
  const TensorView x = ctx.input(0), w = ctx.input(1), y = ctx.output(0);
  const Shape& xs = x.shape;
  const Shape& ws = w.shape;
  if (!window_gives_output(*o, xs, ws.dims[0], ws.dims[1], o->dilation_h(), o->dilation_w(), y.shape)) {
    *why = FLOE_MSG("depthwise padding does not give the output shape (XNNPACK needs exact pads)");
    return Status::kInvalidModel;
  }
  const size_t channels = static_cast<size_t>(ws.dims[2]);
  const size_t multiplier = static_cast<size_t>(ws.dims[3]);
  const Range r = clamp_of(o->activation());
  FLOE_RETURN_IF_ERROR(from_xnn(
      xnn_create_convolution2d_nhwc_f32(
          static_cast<uint32_t>(o->pad_top()), static_cast<uint32_t>(o->pad_right()),
          static_cast<uint32_t>(o->pad_bottom()), static_cast<uint32_t>(o->pad_left()),
          static_cast<uint32_t>(ws.dims[0]), static_cast<uint32_t>(ws.dims[1]),
          static_cast<uint32_t>(o->stride_h()), static_cast<uint32_t>(o->stride_w()),
          static_cast<uint32_t>(o->dilation_h()), static_cast<uint32_t>(o->dilation_w()),
          static_cast<uint32_t>(channels), 1, multiplier, channels, channels * multiplier, f32(w),
          ctx.has_input(2) ? f32(ctx.input(2)) : nullptr, r.min, r.max,
          XNN_FLAG_DEPTHWISE_CONVOLUTION, op),
      FLOE_MSG("xnn_create_convolution2d_nhwc_f32 (depthwise) failed"), why));
  return from_xnn(xnn_setup_convolution2d_nhwc_f32(*op, static_cast<size_t>(xs.dims[0]),
                                                   static_cast<size_t>(xs.dims[1]),
                                                   static_cast<size_t>(xs.dims[2]), f32(x),
                                                   f32_out(y), a.thread_pool),
                  FLOE_MSG("xnn_setup_convolution2d_nhwc_f32 (depthwise) failed"), why);
}

Status pool2d(const CreateArgs& a, bool max, xnn_operator_t* op, const char** why) {
  const XnnOpContext& ctx = *a.ctx;
  const auto* o = ctx.op->options_as_Pool2DOptions();
  const TensorView x = ctx.input(0), y = ctx.output(0);
  const Shape& xs = x.shape;
  if (!window_gives_output(*o, xs, o->filter_h(), o->filter_w(), 1, 1, y.shape)) {
    *why = FLOE_MSG("pooling padding does not give the output shape (XNNPACK needs exact pads)");
    return Status::kInvalidModel;
  }
  const size_t c = static_cast<size_t>(xs.dims[3]);
  const Range r = clamp_of(o->activation());
  const uint32_t pt = static_cast<uint32_t>(o->pad_top()), pr = static_cast<uint32_t>(o->pad_right());
  const uint32_t pb = static_cast<uint32_t>(o->pad_bottom()), pl = static_cast<uint32_t>(o->pad_left());
  const uint32_t fh = static_cast<uint32_t>(o->filter_h()), fw = static_cast<uint32_t>(o->filter_w());
  const uint32_t sh = static_cast<uint32_t>(o->stride_h()), sw = static_cast<uint32_t>(o->stride_w());
  const size_t n = static_cast<size_t>(xs.dims[0]), h = static_cast<size_t>(xs.dims[1]);
  const size_t w = static_cast<size_t>(xs.dims[2]);
  if (max) {
    FLOE_RETURN_IF_ERROR(from_xnn(xnn_create_max_pooling2d_nhwc_f32(pt, pr, pb, pl, fh, fw, sh, sw,
                                                                    1, 1, c, c, c, r.min, r.max,
                                                                    0, op),
                                  FLOE_MSG("xnn_create_max_pooling2d_nhwc_f32 failed"), why));
    return from_xnn(xnn_setup_max_pooling2d_nhwc_f32(*op, n, h, w, f32(x), f32_out(y),
                                                     a.thread_pool),
                    FLOE_MSG("xnn_setup_max_pooling2d_nhwc_f32 failed"), why);
  }
  FLOE_RETURN_IF_ERROR(from_xnn(xnn_create_average_pooling2d_nhwc_f32(pt, pr, pb, pl, fh, fw, sh,
                                                                      sw, c, c, c, r.min, r.max,
                                                                      0, op),
                                FLOE_MSG("xnn_create_average_pooling2d_nhwc_f32 failed"), why));
  return from_xnn(xnn_setup_average_pooling2d_nhwc_f32(*op, n, h, w, f32(x), f32_out(y),
                                                       a.thread_pool),
                  FLOE_MSG("xnn_setup_average_pooling2d_nhwc_f32 failed"), why);
}

using CreateBinary = xnn_status (*)(float, float, uint32_t, xnn_operator_t*);
using SetupBinary = xnn_status (*)(xnn_operator_t, size_t, const size_t*, size_t, const size_t*,
                                   const float*, const float*, float*, pthreadpool_t);

xnn_status create_maximum(float, float, uint32_t flags, xnn_operator_t* op) {
  return xnn_create_maximum_nd_f32(flags, op);
}
xnn_status create_minimum(float, float, uint32_t flags, xnn_operator_t* op) {
  return xnn_create_minimum_nd_f32(flags, op);
}

Status binary(const CreateArgs& a, CreateBinary create, SetupBinary setup, xnn_operator_t* op,
              const char** why) {
  const XnnOpContext& ctx = *a.ctx;
  const TensorView x = ctx.input(0), z = ctx.input(1), y = ctx.output(0);
  if (x.shape.rank > XNN_MAX_TENSOR_DIMS || z.shape.rank > XNN_MAX_TENSOR_DIMS) {
    *why = FLOE_MSG("XNNPACK binary ops take rank <= 6");
    return Status::kInvalidModel;
  }
  size_t xd[XNN_MAX_TENSOR_DIMS], zd[XNN_MAX_TENSOR_DIMS];
  for (int i = 0; i < x.shape.rank; ++i) xd[i] = static_cast<size_t>(x.shape.dims[i]);
  for (int i = 0; i < z.shape.rank; ++i) zd[i] = static_cast<size_t>(z.shape.dims[i]);
  FLOE_RETURN_IF_ERROR(from_xnn(create(-kInf, kInf, 0, op),
                                FLOE_MSG("XNNPACK binary operator creation failed"), why));
  return from_xnn(setup(*op, static_cast<size_t>(x.shape.rank), xd,
                        static_cast<size_t>(z.shape.rank), zd, f32(x), f32(z), f32_out(y),
                        a.thread_pool),
                  FLOE_MSG("XNNPACK binary operator setup failed"), why);
}

using CreateUnary = xnn_status (*)(size_t, size_t, size_t, uint32_t, xnn_operator_t*);
using SetupUnary = xnn_status (*)(xnn_operator_t, size_t, const float*, float*, pthreadpool_t);

// Element-wise ops see the tensor as one row of num_elements channels.
Status unary(const CreateArgs& a, CreateUnary create, SetupUnary setup, xnn_operator_t* op,
             const char** why) {
  const TensorView x = a.ctx->input(0), y = a.ctx->output(0);
  const size_t n = static_cast<size_t>(x.shape.num_elements());
  FLOE_RETURN_IF_ERROR(from_xnn(create(n, n, n, 0, op),
                                FLOE_MSG("XNNPACK unary operator creation failed"), why));
  return from_xnn(setup(*op, 1, f32(x), f32_out(y), a.thread_pool),
                  FLOE_MSG("XNNPACK unary operator setup failed"), why);
}

Status clamp(const CreateArgs& a, Range r, xnn_operator_t* op, const char** why) {
  const TensorView x = a.ctx->input(0), y = a.ctx->output(0);
  const size_t n = static_cast<size_t>(x.shape.num_elements());
  FLOE_RETURN_IF_ERROR(from_xnn(xnn_create_clamp_nc_f32(n, n, n, r.min, r.max, 0, op),
                                FLOE_MSG("xnn_create_clamp_nc_f32 failed"), why));
  return from_xnn(xnn_setup_clamp_nc_f32(*op, 1, f32(x), f32_out(y), a.thread_pool),
                  FLOE_MSG("xnn_setup_clamp_nc_f32 failed"), why);
}

Status softmax(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  if (a.ctx->op->options_as_SoftmaxOptions()->beta() != 1.0f) {
    *why = FLOE_MSG("XNNPACK softmax has no beta");
    return Status::kInvalidModel;
  }
  const TensorView x = a.ctx->input(0), y = a.ctx->output(0);
  const size_t c = static_cast<size_t>(x.shape.dims[x.shape.rank - 1]);
  const size_t rows = static_cast<size_t>(x.shape.num_elements()) / (c == 0 ? 1 : c);
  FLOE_RETURN_IF_ERROR(from_xnn(xnn_create_softmax_nc_f32(c, c, c, 0, op),
                                FLOE_MSG("xnn_create_softmax_nc_f32 failed"), why));
  return from_xnn(xnn_setup_softmax_nc_f32(*op, rows, f32(x), f32_out(y), a.thread_pool),
                  FLOE_MSG("xnn_setup_softmax_nc_f32 failed"), why);
}

// Mean over axes {1, 2} of an NHWC tensor: global average pooling.
Status mean(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  if (is_int8(*a.ctx)) return global_average_s8(a, op, why);
  const auto* axes = a.ctx->op->options_as_ReduceOptions()->axes();
  const TensorView x = a.ctx->input(0), y = a.ctx->output(0);
  if (x.shape.rank != 4 || axes == nullptr || axes->size() != 2 || axes->Get(0) != 1 ||
      axes->Get(1) != 2) {
    *why = FLOE_MSG("XNNPACK mean handles NHWC over axes {1, 2} only");
    return Status::kInvalidModel;
  }
  const size_t c = static_cast<size_t>(x.shape.dims[3]);
  FLOE_RETURN_IF_ERROR(from_xnn(
      xnn_create_global_average_pooling_nwc_f32(c, c, c, -kInf, kInf, 0, op),
      FLOE_MSG("xnn_create_global_average_pooling_nwc_f32 failed"), why));
  return from_xnn(xnn_setup_global_average_pooling_nwc_f32(
                      *op, static_cast<size_t>(x.shape.dims[0]),
                      static_cast<size_t>(x.shape.dims[1]) * x.shape.dims[2], f32(x), f32_out(y),
                      a.thread_pool),
                  FLOE_MSG("xnn_setup_global_average_pooling_nwc_f32 failed"), why);
}

// ---- the mapping: one row per op the XNNPACK trait marks (schemas/contract/ops.def) ----

using CreateFn = Status (*)(const CreateArgs&, xnn_operator_t*, const char**);

template <bool kMax>
Status pool2d_of(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  if (!kMax && is_int8(*a.ctx)) return global_average_s8(a, op, why);
  return pool2d(a, kMax, op, why);
}
// MatMul is defined before the int8 helpers; its int8 form is a QC8 convolution.
Status matmul_any(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  return is_int8(*a.ctx) ? matmul_s8(a, op, why) : matmul(a, op, why);
}
Status add(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  return is_int8(*a.ctx) ? add_s8(a, op, why)
                         : binary(a, xnn_create_add_nd_f32, xnn_setup_add_nd_f32, op, why);
}
template <CreateBinary kCreate, SetupBinary kSetup>
Status binary_of(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  return binary(a, kCreate, kSetup, op, why);
}
template <CreateUnary kCreate, SetupUnary kSetup>
Status unary_of(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  return unary(a, kCreate, kSetup, op, why);
}
template <schema::Activation kActivation>
Status clamp_of_activation(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  return clamp(a, clamp_of(kActivation), op, why);
}

struct Mapping {
  schema::OpCode code;
  CreateFn create;
};

constexpr Mapping kMappings[] = {
    {schema::OpCode::MATMUL, matmul_any},
    {schema::OpCode::CONV2D, conv2d},
    {schema::OpCode::DEPTHWISE_CONV2D, depthwise},
    {schema::OpCode::MAX_POOL2D, pool2d_of<true>},
    {schema::OpCode::AVG_POOL2D, pool2d_of<false>},
    {schema::OpCode::ADD, add},
    {schema::OpCode::SUB, binary_of<xnn_create_subtract_nd_f32, xnn_setup_subtract_nd_f32>},
    {schema::OpCode::MUL, binary_of<xnn_create_multiply_nd_f32, xnn_setup_multiply_nd_f32>},
    {schema::OpCode::DIV, binary_of<xnn_create_divide_nd_f32, xnn_setup_divide_nd_f32>},
    {schema::OpCode::MAXIMUM, binary_of<create_maximum, xnn_setup_maximum_nd_f32>},
    {schema::OpCode::MINIMUM, binary_of<create_minimum, xnn_setup_minimum_nd_f32>},
    {schema::OpCode::RELU, clamp_of_activation<schema::Activation::RELU>},
    {schema::OpCode::RELU6, clamp_of_activation<schema::Activation::RELU6>},
    {schema::OpCode::SIGMOID, unary_of<xnn_create_sigmoid_nc_f32, xnn_setup_sigmoid_nc_f32>},
    {schema::OpCode::ABS, unary_of<xnn_create_abs_nc_f32, xnn_setup_abs_nc_f32>},
    {schema::OpCode::NEG, unary_of<xnn_create_negate_nc_f32, xnn_setup_negate_nc_f32>},
    {schema::OpCode::SQUARE, unary_of<xnn_create_square_nc_f32, xnn_setup_square_nc_f32>},
    {schema::OpCode::SQRT, unary_of<xnn_create_square_root_nc_f32, xnn_setup_square_root_nc_f32>},
    {schema::OpCode::SOFTMAX, softmax},
    {schema::OpCode::MEAN, mean},
};

// The rows are exactly the ops whose traits name XNNPACK, each once: the
// converter gives XNNPACK no op this file cannot create, and Model::Load
// refuses an XNNPACK op without a row.
constexpr bool mappings_match_traits() {
  size_t marked = 0;
  for (size_t code = 0; code <= static_cast<size_t>(schema::OpCode::MAX); ++code) {
    marked += op_traits(static_cast<schema::OpCode>(code)).runs_on(schema::Backend::XNNPACK) ? 1 : 0;
  }
  size_t rows = 0;
  for (const Mapping& m : kMappings) {
    if (!op_traits(m.code).runs_on(schema::Backend::XNNPACK)) return false;
    for (const Mapping* other = kMappings; other != &m; ++other) {
      if (other->code == m.code) return false;
    }
    ++rows;
  }
  return rows == marked;
}
// The operators are created as f32, or as QC8 / QS8 when the output is int8
// (is_int8): every operand must then have the dtype that operator reads and
// writes, or an f32 operator would run over 1- or 2-byte elements, past them.
bool operand_dtypes_fit(const XnnOpContext& ctx) {
  const schema::OpCode code = ctx.op->opcode();
  const bool weighted = code == schema::OpCode::CONV2D || code == schema::OpCode::DEPTHWISE_CONV2D ||
                        code == schema::OpCode::MATMUL;
  if (!ctx.has_input(0) || ctx.output_count() == 0) return false;
  if (!is_int8(ctx)) {
    for (int i = 0; i < ctx.input_count(); ++i) {
      if (ctx.has_input(i) && ctx.input(i).dtype != DType::kFloat32) return false;
    }
    for (int i = 0; i < ctx.output_count(); ++i) {
      if (ctx.output(i).dtype != DType::kFloat32) return false;
    }
    return true;
  }
  // int8: activations, then (weighted) int8 weights, an optional int32 bias,
  // and the int32 multipliers and shifts XNNPACK's channel scales come from.
  int activations = 1;
  if (code == schema::OpCode::ADD) {
    activations = 2;
  } else if (!weighted && code != schema::OpCode::AVG_POOL2D && code != schema::OpCode::MEAN) {
    return false;
  }
  const int inputs = weighted ? 5 : activations;
  if (ctx.input_count() != inputs || ctx.output_count() != 1) return false;
  for (int i = 0; i < inputs; ++i) {
    const DType want = i < activations || (weighted && i == 1) ? DType::kInt8 : DType::kInt32;
    if (!ctx.has_input(i)) {
      if (!(weighted && i == 2)) return false;  // only the bias is optional
    } else if (ctx.input(i).dtype != want) {
      return false;
    }
  }
  return true;
}

// XNNPACK may read XNN_EXTRA_BYTES past an operand. A constant needs them
// inside the constant section (the converter pads it when a model has
// XNNPACK ops), an arena operand inside its region's arena (the converter
// gives each region that tail; the persistent region's activations are
// followed by XNNPACK's own region). An empty operand is not read.
bool operands_have_read_slack(const XnnOpContext& ctx) {
  const Model& model = *ctx.model;
  const auto* constants = model.schema()->constants();
  const uint64_t constant_bytes = constants != nullptr ? constants->size() : 0;
  for (const auto* list : {ctx.op->inputs(), ctx.op->outputs()}) {
    for (const int32_t t : *list) {
      if (t < 0) continue;
      const size_t index = static_cast<size_t>(t);
      const uint64_t bytes = model.tensor(index).bytes;
      if (bytes == 0) continue;
      const uint64_t end = model.tensor_offset(index) + bytes + XNN_EXTRA_BYTES;
      if (end > (model.is_constant(index) ? constant_bytes : model.region_arena_size(model.tensor_region(index)))) {
        return false;
      }
    }
  }
  return true;
}

static_assert(mappings_match_traits(),
              "XNNPACK mappings must be exactly the ops schemas/contract/ops.def marks XNNPACK");

}  // namespace

Status create_operator(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  if (!operands_have_read_slack(*a.ctx)) {
    *why = FLOE_MSG("XNNPACK operand without the 16 bytes XNNPACK may read past it (XNN_EXTRA_BYTES)");
    return Status::kInvalidModel;
  }
  if (!operand_dtypes_fit(*a.ctx)) {
    *why = FLOE_MSG("XNNPACK runs this op on float32 operands only, or int8 (conv, depthwise, matmul, "
                    "add, average) with int32 bias and requantization arrays");
    return Status::kInvalidModel;
  }
  for (const Mapping& m : kMappings) {
    if (m.code == a.ctx->op->opcode()) return m.create(a, op, why);
  }
  *why = FLOE_MSG("operator assigned to XNNPACK has no XNNPACK mapping");
  return Status::kUnsupportedOp;
}

}  // namespace floe::xnnpack
