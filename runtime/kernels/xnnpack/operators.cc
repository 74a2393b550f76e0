// SPDX-License-Identifier: Apache-2.0
// XNNPACK operator creation per floe opcode (see operators.h). The ops are
// those runtime/ops.def marks XNNPACK (checked below); which of their shapes
// come here, and their arena bytes, converter/lower/backend_xnnpack.cc
// decides. MatMul and 1x1/stride-1/unpadded Conv2D -> fully connected; Conv2D
// -> convolution (filter transposed HWIO -> OHWI into scratch first);
// DepthwiseConv2D -> depthwise convolution (TF's [kh,kw,C,M] is XNNPACK's
// HWGo); pooling; broadcasting binary ops; clamp-style unary ops; softmax
// (beta 1); Mean over H,W -> global average pooling.
#include "runtime/kernels/xnnpack/operators.h"

#include "runtime/core/model.h"
#include "runtime/kernels/reference/activation.h"
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

bool is_constant_input(const OpContext& ctx, int i) {
  return ctx.has_input(i) && ctx.model->is_constant(static_cast<size_t>(ctx.op->inputs()->Get(i)));
}

// Output extent of a window op, as XNNPACK computes it from explicit padding.
int64_t window_out(int64_t in, int64_t pad_a, int64_t pad_b, int64_t k, int64_t dilation,
                   int64_t stride) {
  const int64_t effective = (k - 1) * dilation + 1;
  const int64_t padded = in + pad_a + pad_b;
  return padded < effective ? 0 : (padded - effective) / stride + 1;
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
  const OpContext& ctx = *a.ctx;
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
  float* data = nullptr;
  size_t region_bytes = 0;  // taken from the region (0: from the activations)
  size_t saved_limit = 0;
};

Scratch take_scratch(const CreateArgs& a, size_t bytes) {
  Scratch s;
  if (bytes <= a.activation_bytes) {
    s.data = reinterpret_cast<float*>(a.activations);
    return s;
  }
  const size_t need = static_cast<size_t>(
      xnnpack_budget::align_up(bytes, xnnpack_budget::kScratchAlignment));
  if (need > a.region->limit || a.region->limit - need < a.region->used) return s;
  s.saved_limit = a.region->limit;
  s.region_bytes = need;
  a.region->limit -= need;
  s.data = reinterpret_cast<float*>(a.region->base + a.region->limit);
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

Status conv2d(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  const OpContext& ctx = *a.ctx;
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
  if (window_out(xs.dims[1], o->pad_top(), o->pad_bottom(), ws.dims[0], o->dilation_h(),
                 o->stride_h()) != y.shape.dims[1] ||
      window_out(xs.dims[2], o->pad_left(), o->pad_right(), ws.dims[1], o->dilation_w(),
                 o->stride_w()) != y.shape.dims[2]) {
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
  float* ohwi = scratch.data;
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
  const OpContext& ctx = *a.ctx;
  const auto* o = ctx.op->options_as_DepthwiseConv2DOptions();
  if (!is_constant_input(ctx, 1) || (ctx.has_input(2) && !is_constant_input(ctx, 2))) {
    *why = FLOE_MSG("XNNPACK depthwise needs a constant filter and bias");
    return Status::kInvalidModel;
  }
  const TensorView x = ctx.input(0), w = ctx.input(1), y = ctx.output(0);
  const Shape& xs = x.shape;
  const Shape& ws = w.shape;
  if (window_out(xs.dims[1], o->pad_top(), o->pad_bottom(), ws.dims[0], o->dilation_h(),
                 o->stride_h()) != y.shape.dims[1] ||
      window_out(xs.dims[2], o->pad_left(), o->pad_right(), ws.dims[1], o->dilation_w(),
                 o->stride_w()) != y.shape.dims[2]) {
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
  const OpContext& ctx = *a.ctx;
  const auto* o = ctx.op->options_as_Pool2DOptions();
  const TensorView x = ctx.input(0), y = ctx.output(0);
  const Shape& xs = x.shape;
  if (window_out(xs.dims[1], o->pad_top(), o->pad_bottom(), o->filter_h(), 1, o->stride_h()) !=
          y.shape.dims[1] ||
      window_out(xs.dims[2], o->pad_left(), o->pad_right(), o->filter_w(), 1, o->stride_w()) !=
          y.shape.dims[2]) {
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
  const OpContext& ctx = *a.ctx;
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

// ---- the mapping: one row per op the XNNPACK trait marks (runtime/ops.def) ----

using CreateFn = Status (*)(const CreateArgs&, xnn_operator_t*, const char**);

template <bool kMax>
Status pool2d_of(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  return pool2d(a, kMax, op, why);
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
    {schema::OpCode::MATMUL, matmul},
    {schema::OpCode::CONV2D, conv2d},
    {schema::OpCode::DEPTHWISE_CONV2D, depthwise},
    {schema::OpCode::MAX_POOL2D, pool2d_of<true>},
    {schema::OpCode::AVG_POOL2D, pool2d_of<false>},
    {schema::OpCode::ADD, binary_of<xnn_create_add_nd_f32, xnn_setup_add_nd_f32>},
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
static_assert(mappings_match_traits(),
              "XNNPACK mappings must be exactly the ops runtime/ops.def marks XNNPACK");

}  // namespace

Status create_operator(const CreateArgs& a, xnn_operator_t* op, const char** why) {
  for (const Mapping& m : kMappings) {
    if (m.code == a.ctx->op->opcode()) return m.create(a, op, why);
  }
  *why = FLOE_MSG("operator assigned to XNNPACK has no XNNPACK mapping");
  return Status::kUnsupportedOp;
}

}  // namespace floe::xnnpack
