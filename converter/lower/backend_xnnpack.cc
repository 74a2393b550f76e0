// SPDX-License-Identifier: Apache-2.0
// XNNPACK backend selection and arena budget (see backend_xnnpack.h).
//
// The budget replays, for every microkernel configuration XNNPACK may pick on
// the target's CPUs, the allocations the runtime makes while Init() creates
// and sets up the chosen operators (schemas/contract/xnnpack_budget.h, which
// names the XNNPACK version the replay assumes), and keeps the largest. The
// runtime enforces it (its region limit is the budget); the XNNPACK tests
// check it is at most 1 % above what Init() uses on the CPU class a target
// names exactly (x86_64-avx512, aarch64-no-dotprod; aarch64 for float graphs)
// and a bound on every CPU.
#include "converter/lower/backend_xnnpack.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "converter/ir/error.h"
#include "schemas/contract/limits.h"
#include "schemas/contract/xnnpack_budget.h"

namespace floe::conv {
namespace {

uint64_t elements(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

bool all_f32(const LoweredModel& m, const LoweredOp& op) {
  for (int v : op.inputs) {
    if (v >= 0 && m.values[static_cast<size_t>(v)].dtype != DType::kFloat32) return false;
  }
  for (int v : op.outputs) {
    if (m.values[static_cast<size_t>(v)].dtype != DType::kFloat32) return false;
    if (elements(m.values[static_cast<size_t>(v)].shape) == 0) return false;
  }
  return true;
}

bool is_const(const LoweredModel& m, const LoweredOp& op, size_t i) {
  return i < op.inputs.size() && op.inputs[i] >= 0 && m.values[static_cast<size_t>(op.inputs[i])].is_constant();
}
bool absent_or_const(const LoweredModel& m, const LoweredOp& op, size_t i) {
  return i >= op.inputs.size() || op.inputs[i] < 0 || is_const(m, op, i);
}
const std::vector<int64_t>& shape_of(const LoweredModel& m, int v) {
  return m.values[static_cast<size_t>(v)].shape;
}

int64_t window_out(int64_t in, int64_t pad_a, int64_t pad_b, int64_t k, int64_t dilation,
                   int64_t stride) {
  const int64_t effective = (k - 1) * dilation + 1;
  const int64_t padded = in + pad_a + pad_b;
  return padded < effective ? 0 : (padded - effective) / stride + 1;
}

template <typename O>
bool window_ok(const O& o, const std::vector<int64_t>& in, const std::vector<int64_t>& out,
               int64_t kh, int64_t kw, int64_t dh, int64_t dw) {
  return in.size() == 4 && out.size() == 4 && o.pad_top >= 0 && o.pad_left >= 0 &&
         o.pad_bottom >= 0 && o.pad_right >= 0 &&
         window_out(in[1], o.pad_top, o.pad_bottom, kh, dh, o.stride_h) == out[1] &&
         window_out(in[2], o.pad_left, o.pad_right, kw, dw, o.stride_w) == out[2];
}

bool padded(int32_t top, int32_t left, int32_t bottom, int32_t right) {
  return (top | left | bottom | right) != 0;
}

DType dtype_of(const LoweredModel& m, int v) { return m.values[static_cast<size_t>(v)].dtype; }
const Quantization& quantization_of(const LoweredModel& m, int v) {
  return m.values[static_cast<size_t>(v)].quantization;
}
// The per-tensor scale of an int8 activation (0 when it has none).
float activation_scale(const LoweredModel& m, int v) {
  const Quantization& q = quantization_of(m, v);
  return q.scale.size() == 1 && q.zero_point.size() == 1 ? q.scale[0] : 0.0f;
}

// An int8 CONV2D / DEPTHWISE_CONV2D / MATMUL as XNNPACK's QC8 convolution:
// int8 activations, symmetric weights, a constant int32 bias and the
// converter's per-channel (or one) Q31 multiplier and shift, each a scale
// QC8 accepts.
bool qc8_weighted(const LoweredModel& m, const LoweredOp& op) {
  if (op.inputs.size() != 5 || op.outputs.size() != 1 || op.requantization == nullptr) return false;
  if (dtype_of(m, op.inputs[0]) != DType::kInt8 || dtype_of(m, op.outputs[0]) != DType::kInt8 ||
      op.inputs[1] < 0 || dtype_of(m, op.inputs[1]) != DType::kInt8 || !is_const(m, op, 1) ||
      !absent_or_const(m, op, 2) || !is_const(m, op, 3) || !is_const(m, op, 4)) {
    return false;
  }
  const schema::RequantizationT& r = *op.requantization;
  if (r.input_offsets.empty() || (r.input_offsets.size() > 1 && r.input_offsets[1] != 0)) return false;
  const HostTensor& mult = *m.values[static_cast<size_t>(op.inputs[3])].constant;
  const HostTensor& shift = *m.values[static_cast<size_t>(op.inputs[4])].constant;
  if (mult.dtype != DType::kInt32 || shift.dtype != DType::kInt32 ||
      mult.num_elements() != shift.num_elements() || mult.num_elements() < 1) {
    return false;
  }
  for (int64_t c = 0; c < mult.num_elements(); ++c) {
    if (!xnnpack_budget::qc8_scale_supported(mult.as<int32_t>()[c], shift.as<int32_t>()[c])) return false;
  }
  return r.activation_min < r.activation_max;
}

// Can XNNPACK 2022-02 run int8 `op`? QC8 convolution for CONV2D,
// DEPTHWISE_CONV2D and MATMUL (a 1x1 convolution over its rows, so
// per-channel weights work too); QS8 add; QS8 global average pooling for an
// unpadded AVG_POOL2D whose window is the whole image and for MEAN over H,W.
// The rest (softmax, the other pooling, mul, ...) stays on floe's own int8
// kernels: that snapshot has no QS8 operator for them.
bool take_int8(const LoweredModel& m, const LoweredOp& op) {
  using schema::OpCode;
  if (op.outputs.size() != 1 || op.inputs.empty() || op.inputs[0] < 0) return false;
  const std::vector<int64_t>& out = shape_of(m, op.outputs[0]);
  if (elements(out) == 0) return false;
  switch (op.opcode) {
    case OpCode::CONV2D: {
      const auto* o = op.options.AsConv2DOptions();
      if (o == nullptr || !qc8_weighted(m, op)) return false;
      const auto& w = shape_of(m, op.inputs[1]);
      return w.size() == 4 &&
             window_ok(*o, shape_of(m, op.inputs[0]), out, w[0], w[1], o->dilation_h, o->dilation_w);
    }
    case OpCode::DEPTHWISE_CONV2D: {
      const auto* o = op.options.AsDepthwiseConv2DOptions();
      if (o == nullptr || !qc8_weighted(m, op)) return false;
      const auto& w = shape_of(m, op.inputs[1]);
      return w.size() == 4 &&
             window_ok(*o, shape_of(m, op.inputs[0]), out, w[0], w[1], o->dilation_h, o->dilation_w);
    }
    case OpCode::MATMUL: {  // int8 weights are [N, K] (transpose_b): XNNPACK's OHWI of a 1x1 filter
      const auto* o = op.options.AsMatMulOptions();
      if (o == nullptr || o->transpose_a || !o->transpose_b || !qc8_weighted(m, op)) return false;
      return shape_of(m, op.inputs[0]).size() == 2 && out.size() == 2;
    }
    case OpCode::ADD: {
      if (op.inputs.size() != 2 || op.inputs[1] < 0 || op.requantization == nullptr) return false;
      for (int v : {op.inputs[0], op.inputs[1], op.outputs[0]}) {
        if (dtype_of(m, v) != DType::kInt8 || activation_scale(m, v) <= 0.0f) return false;
        if (shape_of(m, v).size() > 6) return false;
      }
      const float out_scale = activation_scale(m, op.outputs[0]);
      return xnnpack_budget::qs8_add_ratio_supported(activation_scale(m, op.inputs[0]) / out_scale) &&
             xnnpack_budget::qs8_add_ratio_supported(activation_scale(m, op.inputs[1]) / out_scale) &&
             op.requantization->activation_min < op.requantization->activation_max;
    }
    case OpCode::AVG_POOL2D:
    case OpCode::MEAN: {
      if (op.inputs.size() != 1 || op.requantization == nullptr) return false;
      const int x = op.inputs[0], y = op.outputs[0];
      if (dtype_of(m, x) != DType::kInt8 || dtype_of(m, y) != DType::kInt8) return false;
      const auto& xs = shape_of(m, x);
      if (xs.size() != 4 || out.size() != 4 || out[1] != 1 || out[2] != 1 || out[3] != xs[3]) return false;
      if (op.opcode == OpCode::AVG_POOL2D) {
        const auto* o = op.options.AsPool2DOptions();
        if (o == nullptr || o->filter_h != xs[1] || o->filter_w != xs[2] ||
            padded(o->pad_top, o->pad_left, o->pad_bottom, o->pad_right)) {
          return false;
        }
      } else {
        const auto* o = op.options.AsReduceOptions();
        if (o == nullptr || o->axes != std::vector<int32_t>{1, 2}) return false;
      }
      const float in_scale = activation_scale(m, x), out_scale = activation_scale(m, y);
      return in_scale > 0.0f && out_scale > 0.0f &&
             xnnpack_budget::qs8_average_ratio_supported(in_scale / out_scale) &&
             op.requantization->activation_min < op.requantization->activation_max;
    }
    default:
      return false;
  }
}

// XNNPACK's QC8 kernels pad every tap's input channels to their k tile (8
// on most CPUs), so an int8 convolution over few channels does mostly padding:
// KWS's 10x4 first convolution over one channel costs 8 multiply-adds per
// real one. Such a convolution becomes EXTRACT_PATCHES (im2col on the
// reference kernels, padding with the input's zero point, i.e. real zero)
// feeding a 1x1 convolution over all kh*kw*Ci taps at once (its HWIO filter
// is the same bytes as [1, 1, kh*kw*Ci, Co]). The integers are the same; the
// XNNPACK work drops to the real multiply-adds rounded to the tile once.
constexpr int64_t kNarrowConvChannels = 4;  // at most half of the k tile

bool narrow_int8_conv(const LoweredModel& m, const LoweredOp& op) {
  if (op.opcode != schema::OpCode::CONV2D || op.backend != schema::Backend::REFERENCE || !take_int8(m, op)) return false;
  const auto& w = shape_of(m, op.inputs[1]);
  return w[2] <= kNarrowConvChannels && w[0] * w[1] > 1;
}

void im2col_narrow_int8_convs(LoweredModel* m) {
  std::vector<LoweredOp> ops;
  ops.reserve(m->ops.size());
  for (LoweredOp& op : m->ops) {
    if (!narrow_int8_conv(*m, op)) {
      ops.push_back(std::move(op));
      continue;
    }
    const schema::Conv2DOptionsT o = *op.options.AsConv2DOptions();
    const Value x = m->values[static_cast<size_t>(op.inputs[0])];
    const Value w = m->values[static_cast<size_t>(op.inputs[1])];
    const std::vector<int64_t> out = shape_of(*m, op.outputs[0]);
    const int64_t taps = w.shape[0] * w.shape[1] * w.shape[2];

    Value patches;
    patches.name = op.node_name + "/patches";
    patches.dtype = x.dtype;
    patches.shape = {out[0], out[1], out[2], taps};
    patches.quantization = x.quantization;
    const int patches_id = m->add_value(std::move(patches));
    schema::ExtractPatchesOptionsT e;
    e.size_h = static_cast<int32_t>(w.shape[0]);
    e.size_w = static_cast<int32_t>(w.shape[1]);
    e.stride_h = o.stride_h;
    e.stride_w = o.stride_w;
    e.rate_h = o.dilation_h;
    e.rate_w = o.dilation_w;
    e.pad_top = o.pad_top;
    e.pad_left = o.pad_left;
    LoweredOp im2col;
    im2col.opcode = schema::OpCode::EXTRACT_PATCHES;
    im2col.options.Set(std::move(e));
    im2col.inputs = {op.inputs[0]};
    im2col.outputs = {patches_id};
    im2col.node_name = op.node_name + "/im2col";
    ops.push_back(std::move(im2col));

    Value filter = w;  // the same constant bytes, seen as a 1x1 filter
    filter.name = w.name + "/1x1";
    filter.shape = {1, 1, taps, w.shape[3]};
    auto data = std::make_shared<HostTensor>(*w.constant);
    data->shape = filter.shape;
    filter.constant = std::move(data);
    const int filter_id = m->add_value(std::move(filter));
    schema::Conv2DOptionsT pointwise = o;
    pointwise.stride_h = pointwise.stride_w = 1;
    pointwise.dilation_h = pointwise.dilation_w = 1;
    pointwise.pad_top = pointwise.pad_bottom = pointwise.pad_left = pointwise.pad_right = 0;
    op.options.Set(std::move(pointwise));
    op.inputs[0] = patches_id;
    op.inputs[1] = filter_id;
    ops.push_back(std::move(op));
  }
  m->ops = std::move(ops);
}

bool is_int8_op(const LoweredModel& m, const LoweredOp& op) {
  return !op.outputs.empty() && dtype_of(m, op.outputs[0]) == DType::kInt8;
}

// Can XNNPACK run `op`?
bool take(const LoweredModel& m, const LoweredOp& op) {
  using schema::OpCode;
  const OpTraits traits = op_traits(op.opcode);
  if (op.backend != schema::Backend::REFERENCE || !runs_on(op.opcode, schema::Backend::XNNPACK)) return false;
  if (is_int8_op(m, op)) return take_int8(m, op);
  if (op.outputs.size() != 1 || !all_f32(m, op)) return false;
  const std::vector<int64_t>& out = shape_of(m, op.outputs[0]);
  if (traits.elementwise_binary()) {
    return op.inputs.size() == 2 && shape_of(m, op.inputs[0]).size() <= 6 &&
           shape_of(m, op.inputs[1]).size() <= 6;
  }
  if (traits.elementwise_unary()) return op.inputs.size() == 1;
  switch (op.opcode) {
    case OpCode::MATMUL: {
      const auto* o = op.options.AsMatMulOptions();
      if (o == nullptr || o->transpose_a || !is_const(m, op, 1) || !absent_or_const(m, op, 2)) return false;
      const auto& a = shape_of(m, op.inputs[0]);
      return a.size() == 2 && out.size() == 2;
    }
    case OpCode::CONV2D: {
      const auto* o = op.options.AsConv2DOptions();
      if (o == nullptr || !is_const(m, op, 1) || !absent_or_const(m, op, 2)) return false;
      const auto& x = shape_of(m, op.inputs[0]);
      const auto& w = shape_of(m, op.inputs[1]);
      return w.size() == 4 && window_ok(*o, x, out, w[0], w[1], o->dilation_h, o->dilation_w);
    }
    case OpCode::DEPTHWISE_CONV2D: {
      const auto* o = op.options.AsDepthwiseConv2DOptions();
      if (o == nullptr || !is_const(m, op, 1) || !absent_or_const(m, op, 2)) return false;
      const auto& x = shape_of(m, op.inputs[0]);
      const auto& w = shape_of(m, op.inputs[1]);
      return w.size() == 4 && window_ok(*o, x, out, w[0], w[1], o->dilation_h, o->dilation_w);
    }
    case OpCode::MAX_POOL2D:
    case OpCode::AVG_POOL2D: {
      const auto* o = op.options.AsPool2DOptions();
      if (o == nullptr || o->filter_h * o->filter_w < 2) return false;
      const auto& x = shape_of(m, op.inputs[0]);
      return window_ok(*o, x, out, o->filter_h, o->filter_w, 1, 1);
    }
    case OpCode::SOFTMAX: {
      const auto* o = op.options.AsSoftmaxOptions();
      return o != nullptr && o->beta == 1.0f && !out.empty();
    }
    case OpCode::MEAN: {
      const auto* o = op.options.AsReduceOptions();
      const auto& x = shape_of(m, op.inputs[0]);
      return o != nullptr && x.size() == 4 && o->axes == std::vector<int32_t>{1, 2};
    }
    default:
      return false;
  }
}

// The HWIO -> OHWI filter rewrite a Conv2D needs at Init while XNNPACK packs
// the filter, and the region bytes in use once the operator exists.
struct FilterRewrite {
  uint64_t bytes = 0;  // 0: the op needs none
  uint64_t in_use = 0;
};

// The Init scratch of an int8 weighted op: its float channel scales, then
// (CONV2D) its filter rewritten HWIO -> OHWI (operators.cc, qc8_scratch).
uint64_t qc8_scratch_bytes(uint64_t output_channels, uint64_t filter_bytes) {
  return output_channels * 4 + filter_bytes;
}

// Replays what Init() allocates for int8 XNNPACK op `op`.
FilterRewrite replay_int8_op(const LoweredModel& m, const LoweredOp& op, xnnpack_budget::Replay* r) {
  using schema::OpCode;
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  const std::vector<int64_t>& out = shape_of(m, op.outputs[0]);
  switch (op.opcode) {
    case OpCode::CONV2D: {
      const auto& o = *op.options.AsConv2DOptions();
      const auto& w = shape_of(m, op.inputs[1]);
      const uint64_t created = r->qc8_convolution(
          {1, u(w[2]), u(w[3]), u(w[0]), u(w[1]), u(o.stride_h), u(o.stride_w), u(o.dilation_w),
           padded(o.pad_top, o.pad_left, o.pad_bottom, o.pad_right), u(out[1]), u(out[2])});
      return {qc8_scratch_bytes(u(w[3]), elements(w)), created};
    }
    case OpCode::DEPTHWISE_CONV2D: {
      const auto& o = *op.options.AsDepthwiseConv2DOptions();
      const auto& w = shape_of(m, op.inputs[1]);
      const uint64_t created = r->qc8_convolution(
          {u(w[2]), 1, u(w[3]), u(w[0]), u(w[1]), u(o.stride_h), u(o.stride_w), u(o.dilation_w),
           padded(o.pad_top, o.pad_left, o.pad_bottom, o.pad_right), u(out[1]), u(out[2])});
      return {qc8_scratch_bytes(u(w[2] * w[3]), 0), created};
    }
    case OpCode::MATMUL: {  // a 1x1 convolution over the rows
      const auto& x = shape_of(m, op.inputs[0]);
      const uint64_t created =
          r->qc8_convolution({1, u(x[1]), u(out[1]), 1, 1, 1, 1, 1, false, u(x[0]), 1});
      return {qc8_scratch_bytes(u(out[1]), 0), created};
    }
    case OpCode::AVG_POOL2D:
    case OpCode::MEAN:
      r->qs8_global_average_pooling(u(out[3]));
      return {};
    default:  // ADD: the operator object only
      r->operator_only();
      return {};
  }
}

// Replays what Init() allocates for XNNPACK op `op` (the runtime's mapping in
// runtime/kernels/xnnpack/operators.cc).
FilterRewrite replay_op(const LoweredModel& m, const LoweredOp& op, xnnpack_budget::Replay* r) {
  using schema::OpCode;
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  const std::vector<int64_t>& out = shape_of(m, op.outputs[0]);
  if (is_int8_op(m, op)) return replay_int8_op(m, op, r);
  switch (op.opcode) {
    case OpCode::MATMUL:
      r->fully_connected(u(shape_of(m, op.inputs[0])[1]), u(out[1]));
      return {};
    case OpCode::CONV2D: {
      const auto& o = *op.options.AsConv2DOptions();
      const auto& w = shape_of(m, op.inputs[1]);
      const bool any_padding = padded(o.pad_top, o.pad_left, o.pad_bottom, o.pad_right);
      if (w[0] == 1 && w[1] == 1 && o.stride_h == 1 && o.stride_w == 1 && !any_padding) {
        r->fully_connected(u(w[2]), u(w[3]));  // a [Ci, Co] matrix over every pixel
        return {};
      }
      const uint64_t created =
          r->convolution({1, u(w[2]), u(w[3]), u(w[0]), u(w[1]), u(o.stride_h), u(o.stride_w),
                          u(o.dilation_w), any_padding, u(out[1]), u(out[2])});
      return {elements(w) * 4, created};
    }
    case OpCode::DEPTHWISE_CONV2D: {  // [kh, kw, C, M]: C groups of 1 input, M outputs
      const auto& o = *op.options.AsDepthwiseConv2DOptions();
      const auto& w = shape_of(m, op.inputs[1]);
      r->convolution({u(w[2]), 1, u(w[3]), u(w[0]), u(w[1]), u(o.stride_h), u(o.stride_w),
                      u(o.dilation_w), padded(o.pad_top, o.pad_left, o.pad_bottom, o.pad_right),
                      u(out[1]), u(out[2])});
      return {};
    }
    case OpCode::MAX_POOL2D:
    case OpCode::AVG_POOL2D: {
      const auto& o = *op.options.AsPool2DOptions();
      if (op.opcode == OpCode::MAX_POOL2D) {
        r->max_pooling(u(o.filter_h), u(o.filter_w), u(o.stride_w), u(out[1]), u(out[2]));
      } else {
        r->average_pooling(u(out[3]), u(o.filter_h), u(o.filter_w), u(o.stride_w),
                           padded(o.pad_top, o.pad_left, o.pad_bottom, o.pad_right), u(out[1]),
                           u(out[2]));
      }
      return {};
    }
    case OpCode::MEAN:
      r->global_average_pooling(u(shape_of(m, op.inputs[0])[3]));
      return {};
    default:  // element-wise, clamps, softmax: the operator object only
      r->operator_only();
      return {};
  }
}

// Multiply-adds (GEMM-like ops) or elements touched (the rest) of `op`: what
// decides whether splitting it across threads pays.
uint64_t parallel_work(const LoweredModel& m, const LoweredOp& op) {
  auto elements = [&](int v) {
    uint64_t n = 1;
    for (int64_t d : shape_of(m, v)) n *= static_cast<uint64_t>(d);
    return n;
  };
  const uint64_t out = elements(op.outputs[0]);
  switch (op.opcode) {
    case schema::OpCode::MATMUL: {  // out = rows x N; K is A's last dim (no transpose_a here)
      const auto& a = shape_of(m, op.inputs[0]);
      return out * static_cast<uint64_t>(a.empty() ? 1 : a.back());
    }
    case schema::OpCode::CONV2D: {
      const auto& w = shape_of(m, op.inputs[1]);  // HWIO
      return out * static_cast<uint64_t>(w[0] * w[1] * w[2]);
    }
    case schema::OpCode::DEPTHWISE_CONV2D: {
      const auto& w = shape_of(m, op.inputs[1]);
      return out * static_cast<uint64_t>(w[0] * w[1]);
    }
    default: {
      uint64_t n = out;
      for (int v : op.inputs) n += v >= 0 ? elements(v) : 0;
      return n;
    }
  }
}

}  // namespace

std::string resolve_target(const std::string& name) {
  if (name == "host") {
#if defined(__aarch64__)
    return xnnpack_budget::kTargetAarch64;
#elif defined(__x86_64__)
    // The converting machine's own class: on an AVX-512 host the budget is
    // exact for this host (and the runtime still falls back to the reference
    // kernels on a CPU without AVX-512F).
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") ? xnnpack_budget::kTargetX86_64Avx512 : xnnpack_budget::kTargetX86_64;
#else
    return "reference";
#endif
  }
  if (name == "reference" || name == xnnpack_budget::kTargetX86_64 ||
      name == xnnpack_budget::kTargetX86_64Avx512 || name == xnnpack_budget::kTargetAarch64 ||
      name == xnnpack_budget::kTargetAarch64NoDotprod) {
    return name;
  }
  throw ConvertError("--target '" + name +
                     "': expected host, x86_64, x86_64-avx512, aarch64, aarch64-no-dotprod or reference");
}

BackendReport assign_backends(LoweredModel* model, const std::string& target, bool int8_ops) {
  BackendReport report;
  report.target = resolve_target(target);
  if (report.target == "reference") return report;
  if (int8_ops) im2col_narrow_int8_convs(model);
  for (LoweredOp& op : model->ops) {
    if ((int8_ops || !is_int8_op(*model, op)) && take(*model, op)) {
      op.backend = schema::Backend::XNNPACK;
      op.single_threaded = parallel_work(*model, op) < kParallelMinWork;
      report.single_threaded_ops += op.single_threaded;
      ++report.xnnpack_ops;
    }
  }
  model->target = report.target;
  plan_xnnpack_region(model);
  return report;
}

void plan_xnnpack_region(LoweredModel* model) {
  model->xnnpack_budget = 0;
  model->xnnpack_rewrites.clear();
  const bool any = std::any_of(model->ops.begin(), model->ops.end(), [](const LoweredOp& op) {
    return op.backend == schema::Backend::XNNPACK;
  });
  if (!any) return;
  // XNNPACK picks its microkernels by the CPU it runs on: replay each choice
  // the target allows and keep the most demanding. The replay follows the ops
  // in their final order: each request is aligned where the one before it
  // ended, so another order can need a few bytes more. A filter rewrite needs
  // the region in use when its operator is created plus its own bytes.
  const xnnpack_budget::Target& t =
      model->target == xnnpack_budget::kTargetAarch64            ? xnnpack_budget::kAarch64
      : model->target == xnnpack_budget::kTargetAarch64NoDotprod ? xnnpack_budget::kAarch64NoDotprod
      : model->target == xnnpack_budget::kTargetX86_64Avx512     ? xnnpack_budget::kX86_64Avx512
                                                                 : xnnpack_budget::kX86_64;
  // Whole scratch units; the region starts at the first 64-byte boundary
  // after the activations, so it reserves that unit whole too.
  const auto units = [](uint64_t bytes) {
    return xnnpack_budget::align_up(bytes, xnnpack_budget::kScratchAlignment);
  };
  uint64_t most = 0;
  std::vector<XnnpackRewrite> rewrites;  // in op order, the same for every choice
  for (size_t k = 0; k < t.kernel_count; ++k) {
    xnnpack_budget::Replay replay(t, t.kernels[k]);
    replay.state(model->ops.size());
    size_t n = 0;
    for (const LoweredOp& op : model->ops) {
      if (op.backend != schema::Backend::XNNPACK) continue;
      const FilterRewrite rewrite = replay_op(*model, op, &replay);
      if (rewrite.bytes == 0) continue;
      if (n == rewrites.size()) rewrites.push_back({rewrite.bytes, 0});
      const uint64_t region =
          kBackendRegionAlignment + units(rewrite.in_use) + units(rewrite.bytes);
      rewrites[n].region_bytes = std::max(rewrites[n].region_bytes, region);
      ++n;
    }
    most = std::max(most, replay.used());
  }
  model->xnnpack_budget = kBackendRegionAlignment + units(most);
  model->xnnpack_rewrites = std::move(rewrites);
}

}  // namespace floe::conv
