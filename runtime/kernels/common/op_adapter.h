// SPDX-License-Identifier: Apache-2.0
// What every backend's op adapters share (the adapters live with their kernels
// in runtime/kernels/<backend>/<op>.cc and register as rows, runtime/core/registry.h):
// operand views, shape and dtype checks a prepare step makes, and the params
// blocks several ops use. An adapter's prepare validates everything its kernel assumes (counts, ranks, dims, dtypes,
// constant indices) once at Init(), so that no model passing Init can make a
// kernel read or write out of bounds, and writes the op's params block; its
// eval reads only that block and the bound operands, and checks only
// data-dependent indices (returning kKernelError).
#pragma once

#include "runtime/core/quantization.h"  // OpContext::input_is_constant
#include "runtime/core/registry.h"
#include "runtime/kernels/common/activation.h"

namespace floe {
static_assert(static_cast<int>(Activation::kRelu6) == static_cast<int>(schema::Activation::RELU6),
              "runtime Activation must mirror schema Activation");
}  // namespace floe

namespace floe::ops {

inline In<void> in_void(const TensorView& v) { return In<void>{v.data, v.shape}; }
inline Out<void> out_void(const TensorView& v) { return Out<void>{v.data, v.shape}; }
template <typename T>
In<T> in_as(const TensorView& v) { return In<T>{static_cast<const T*>(v.data), v.shape}; }
template <typename T>
Out<T> out_as(const TensorView& v) { return Out<T>{static_cast<T*>(v.data), v.shape}; }

inline bool dims_equal(const Shape& a, const Shape& b) {
  if (a.rank != b.rank) return false;
  for (int i = 0; i < a.rank; ++i) {
    if (a.dims[i] != b.dims[i]) return false;
  }
  return true;
}

// Exactly `inputs` present inputs and `outputs` outputs.
inline bool has_io(const OpContext& ctx, int inputs, int outputs) {
  if (ctx.input_count() != inputs || ctx.output_count() != outputs) return false;
  for (int i = 0; i < inputs; ++i) {
    if (!ctx.has_input(i)) return false;
  }
  return true;
}

inline bool is_f32(const TensorView& v) { return v.dtype == DType::kFloat32; }

inline Activation activation(schema::Activation a) { return static_cast<Activation>(a); }

// Checks the common "n float inputs -> 1 float output" signature.
inline const char* expect_f32_io(const OpContext& ctx, int inputs) {
  if (ctx.input_count() != inputs || ctx.output_count() != 1) {
    return FLOE_MSG("wrong number of inputs or outputs");
  }
  for (int i = 0; i < inputs; ++i) {
    if (!ctx.has_input(i) || !is_f32(ctx.input(i))) return FLOE_MSG("input must be float32");
  }
  if (!is_f32(ctx.output(0))) return FLOE_MSG("output must be float32");
  return nullptr;
}

// Checks an optional bias of `channels` floats at input index 2.
inline const char* check_bias(const OpContext& ctx, int32_t channels) {
  if (!ctx.has_input(2)) return nullptr;
  const TensorView bias = ctx.input(2);
  if (!is_f32(bias) || bias.shape.rank != 1 || bias.shape.dims[0] != channels) {
    return FLOE_MSG("bias must be float32 [output channels]");
  }
  return nullptr;
}

inline const char* expect_weights_io(const OpContext& ctx) {
  if (ctx.input_count() < 2 || ctx.input_count() > 3 || ctx.output_count() != 1) {
    return FLOE_MSG("expects input, weights, optional bias and one output");
  }
  for (int i = 0; i < 2; ++i) {
    if (!ctx.has_input(i) || !is_f32(ctx.input(i))) return FLOE_MSG("input must be float32");
  }
  if (!is_f32(ctx.output(0))) return FLOE_MSG("output must be float32");
  return nullptr;
}

// Shared geometry checks for NHWC window ops.
inline const char* check_window(int32_t stride_h, int32_t stride_w, int32_t dilation_h,
                         int32_t dilation_w, int32_t pad_top, int32_t pad_left) {
  if (stride_h < 1 || stride_w < 1 || dilation_h < 1 || dilation_w < 1) {
    return FLOE_MSG("strides and dilations must be >= 1");
  }
  if (pad_top < 0 || pad_left < 0) return FLOE_MSG("padding must be >= 0");
  return nullptr;
}

// Whether every position a window op computes (y * stride - pad + tap *
// dilation, and the same for x) stays within 2^30 of the image, so kernels
// index rows and columns in int32 without overflow on 32-bit targets.
inline bool window_positions_fit(const Shape& input, const Shape& output, int32_t k_h, int32_t k_w,
                                 int32_t stride_h, int32_t stride_w, int32_t dilation_h, int32_t dilation_w,
                                 int32_t pad_top, int32_t pad_left) {
  constexpr int64_t kMax = int64_t{1} << 30;
  const int64_t span_h = int64_t{output.dims[1] - 1} * stride_h + int64_t{k_h - 1} * dilation_h;
  const int64_t span_w = int64_t{output.dims[2] - 1} * stride_w + int64_t{k_w - 1} * dilation_w;
  return span_h <= kMax && span_w <= kMax && input.dims[1] <= kMax && input.dims[2] <= kMax && pad_top <= kMax &&
         pad_left <= kMax;
}

inline bool is_broadcast_of(const Shape* shapes, int n, const Shape& o) {
  int rank = 0;
  for (int k = 0; k < n; ++k) rank = shapes[k].rank > rank ? shapes[k].rank : rank;
  if (o.rank != rank) return false;
  for (int i = 0; i < rank; ++i) {
    int32_t want = 1;
    for (int k = 0; k < n; ++k) {
      const int ki = i - (rank - shapes[k].rank);
      const int32_t d = ki >= 0 ? shapes[k].dims[ki] : 1;
      if (d == 1) continue;
      if (want != 1 && want != d) return false;
      want = d;
    }
    if (o.dims[i] != want) return false;
  }
  return true;
}

inline bool all_f32(const OpContext& ctx) {
  for (int i = 0; i < ctx.input_count(); ++i) {
    if (ctx.has_input(i) && ctx.input(i).dtype != DType::kFloat32) return false;
  }
  for (int i = 0; i < ctx.output_count(); ++i) {
    if (ctx.output(i).dtype != DType::kFloat32) return false;
  }
  return true;
}

inline const char* prepare_last_axis_f32(const OpContext& ctx) {
  if (!has_io(ctx, 1, 1) || !all_f32(ctx)) return FLOE_MSG("expects 1 float32 input and output");
  if (!dims_equal(ctx.input(0).shape, ctx.output(0).shape)) return FLOE_MSG("output shape differs");
  if (ctx.input(0).shape.rank < 1) return FLOE_MSG("input must have rank >= 1");
  return nullptr;
}

inline bool same_io_dtype(const OpContext& ctx) {
  return ctx.has_input(0) && ctx.input(0).dtype == ctx.output(0).dtype &&
         dtype_size(ctx.input(0).dtype) > 0;
}

struct AxisPrepared {
  int32_t axis;
};

// ---- int8 operators ---------------------------------------------------------
// Their integers come from the converter (Operator.requantization,
// converter/quantize): prepare copies them into the params block and checks
// what the kernel relies on; nothing is derived on the device.

inline bool is_s8(const TensorView& v) { return v.dtype == DType::kInt8; }

// The operator's requantization, or the reason it cannot run quantized: the
// clamp range and output zero point within the output's dtype, int8 unless
// the caller says int16 (TFLite's 16x8 scheme: zero point 0). A constant
// dtype keeps the int8 kernels' prepare as small as before.
inline const schema::Requantization* requantization_of(const OpContext& ctx, const char** why,
                                                       DType output = DType::kInt8) {
  const schema::Requantization* r = ctx.op->requantization();
  if (r == nullptr) {
    *why = FLOE_MSG("operator without requantization data (convert the model again)");
    return nullptr;
  }
  const bool wide = output == DType::kInt16;
  const int32_t lo = wide ? INT16_MIN : INT8_MIN, hi = wide ? INT16_MAX : INT8_MAX;
  if (r->activation_min() < lo || r->activation_max() > hi || r->activation_min() > r->activation_max() ||
      (wide ? r->output_offset() != 0 : (r->output_offset() < lo || r->output_offset() > hi))) {
    *why = FLOE_MSG("clamp range or output zero point outside its dtype");
    return nullptr;
  }
  return r;
}

// Entry i of a requantization vector (0 when absent or short).
inline int32_t entry(const flatbuffers::Vector<int32_t>* v, uint32_t i) {
  return v != nullptr && i < v->size() ? v->Get(i) : 0;
}

// A multiply-by-quantized-multiplier pair the int8 arithmetic can apply
// without overflowing its shifts: a non-negative Q31 multiplier, shift in [-31, 30].
inline bool valid_multiplier(int32_t multiplier, int32_t shift) {
  return multiplier >= 0 && shift >= -31 && shift <= 30;
}

// CONV2D, DEPTHWISE_CONV2D, MATMUL in int8: int8 input, weights and output, an
// optional int32 bias [channels], the converter's int32 multiplier and shift
// arrays at inputs 3 and 4 ([channels], or [1] for one pair), and its
// requantization (offsets, per-tensor pair, clamp range), all checked here.
struct WeightedS8 {
  bool per_channel;  // the arrays hold one pair per output channel
  int32_t input_offset, weight_offset, output_offset;
  int32_t output_multiplier, output_shift;
  int32_t act_min, act_max;
};

// The operand counts, checked before any operand is looked at.
inline const char* weighted_s8_operands(const OpContext& ctx) {
  if (ctx.input_count() != 5 || ctx.output_count() != 1 || !ctx.has_input(0) || !ctx.has_input(1) ||
      !ctx.has_input(3) || !ctx.has_input(4)) {
    return FLOE_MSG("int8 op expects input, weights, optional bias, multipliers and shifts");
  }
  return nullptr;
}

// `activations` is kInt8, or kInt16 for TFLite's 16x8 scheme: int16 input
// and output, int8 weights, an int64 bias, zero offsets, and shifts <= 7 (the
// 64-bit requantization shifts right by 15 - shift).
inline const char* prepare_weighted_s8(const OpContext& ctx, int32_t channels, WeightedS8* out,
                                       DType activations = DType::kInt8) {
  if (const char* err = weighted_s8_operands(ctx)) return err;
  const bool wide = activations == DType::kInt16;
  if (ctx.input(0).dtype != activations || !is_s8(ctx.input(1)) || ctx.output(0).dtype != activations) {
    return FLOE_MSG("quantized op: input and output must be int8 (or int16), weights int8");
  }
  if (ctx.has_input(2)) {
    const TensorView bias = ctx.input(2);
    if (bias.dtype != (wide ? DType::kInt64 : DType::kInt32) || bias.shape.rank != 1 ||
        bias.shape.dims[0] != channels) {
      return FLOE_MSG("quantized op: bias must be int32 (int64 for int16 input) [output channels]");
    }
  }
  // Checked here once and shifted by at every Invoke(): constants of the model.
  if (!ctx.input_is_constant(3) || !ctx.input_is_constant(4)) {
    return FLOE_MSG("quantized op: multipliers and shifts must be constants");
  }
  const TensorView mult = ctx.input(3), shift = ctx.input(4);
  if (mult.dtype != DType::kInt32 || shift.dtype != DType::kInt32 || mult.shape.rank != 1 ||
      !dims_equal(mult.shape, shift.shape) ||
      (mult.shape.dims[0] != channels && mult.shape.dims[0] != 1)) {
    return FLOE_MSG("int8 op: multipliers and shifts must be int32 [output channels] or [1]");
  }
  const int32_t* m = static_cast<const int32_t*>(mult.data);
  const int32_t* sh = static_cast<const int32_t*>(shift.data);
  for (int32_t c = 0; c < mult.shape.dims[0]; ++c) {
    if (!valid_multiplier(m[c], sh[c]) || (wide && sh[c] > 7)) {
      return FLOE_MSG("quantized op: multiplier or shift out of range");
    }
  }
  const char* why = nullptr;
  const schema::Requantization* r = requantization_of(ctx, &why, activations);
  if (r == nullptr) return why;
  *out = {mult.shape.dims[0] == channels && channels > 1, entry(r->input_offsets(), 0),
          entry(r->input_offsets(), 1), r->output_offset(), r->output_multiplier(), r->output_shift(),
          r->activation_min(), r->activation_max()};
  // Offsets are minus a zero point; a non-int8 one would overflow the products.
  if (out->input_offset < -127 || out->input_offset > 128 || out->weight_offset < -127 ||
      out->weight_offset > 128 || !valid_multiplier(out->output_multiplier, out->output_shift) ||
      (wide && (out->input_offset != 0 || out->weight_offset != 0 || out->output_shift > 7))) {
    return FLOE_MSG("quantized op: offset, multiplier or shift out of range");
  }
  return nullptr;
}

// The kernels' per-channel arrays (inputs 3 and 4), or null: the params' pair.
inline const int32_t* channel_multipliers(const PreparedOp& ctx, bool per_channel) {
  return per_channel ? static_cast<const int32_t*>(ctx.input(3).data) : nullptr;
}
inline const int32_t* channel_shifts(const PreparedOp& ctx, bool per_channel) {
  return per_channel ? static_cast<const int32_t*>(ctx.input(4).data) : nullptr;
}

}  // namespace floe::ops
