// SPDX-License-Identifier: Apache-2.0
// SVDF (see svdf.h). The integer sums wrap in 32 bits, as TFLM's int32
// arithmetic does in practice (their order then does not matter); the float
// sums keep TFLM's order.
#include "runtime/kernels/reference/svdf.h"

#include <stddef.h>

#include "runtime/core/quantization.h"
#include "runtime/kernels/common/activation.h"
#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/common/wrapping.h"
#include "runtime/kernels/reference/quantization.h"

namespace floe::ref {

namespace {

// Dimensions shared by both forms, from the checked shapes.
struct SvdfDims {
  int32_t batch, input_size, filters, memory, units;
};

template <typename Operands>
SvdfDims dims_of(const SvdfParams& params, const Operands& ops) {
  const int32_t filters = ops.weights_feature.shape.dims[0];
  return {ops.input.shape.dims[0], ops.input.shape.dims[1], filters, ops.weights_time.shape.dims[1],
          filters / params.rank};
}

// The state moves one element left over its whole length (each filter's
// oldest slot takes the next filter's, which the projection then overwrites).
template <typename T>
void shift_state(T* state, const SvdfDims& d) {
  const ptrdiff_t count = static_cast<ptrdiff_t>(d.batch) * d.filters * d.memory;
  for (ptrdiff_t i = 0; i + 1 < count; ++i) state[i] = state[i + 1];
}

// A product's or bias's bits, for sums that wrap (an int16 weight times a
// state minus its zero point can pass 2^31).
uint32_t as_bits(int64_t v) { return static_cast<uint32_t>(v); }

template <typename State>
void svdf_integer(const SvdfParams& p, const SvdfOperands<State>& ops) {
  const SvdfDims d = dims_of(p, ops);
  State* const state = ops.state;
  shift_state(state, d);
  constexpr int32_t kStateMin = sizeof(State) == 2 ? INT16_MIN : INT8_MIN;
  constexpr int32_t kStateMax = sizeof(State) == 2 ? INT16_MAX : INT8_MAX;
  for (int32_t b = 0; b < d.batch; ++b) {
    const int8_t* x = ops.input.data + static_cast<ptrdiff_t>(b) * d.input_size;
    for (int32_t f = 0; f < d.filters; ++f) {
      const int8_t* w = ops.weights_feature.data + static_cast<ptrdiff_t>(f) * d.input_size;
      uint32_t acc = 0;
      for (int32_t c = 0; c < d.input_size; ++c) acc += as_bits(w[c] * (x[c] - p.input_zero_point));
      // The state's zero point joins before the clamp (TFLM's order).
      const int32_t v = multiply_by_quantized_multiplier(static_cast<int32_t>(acc), p.to_state_multiplier,
                                                         p.to_state_shift);
      state[(static_cast<ptrdiff_t>(b) * d.filters + f) * d.memory + d.memory - 1] =
          static_cast<State>(clamp_to(wrapping_add<int32_t>(v, p.state_zero_point), kStateMin, kStateMax));
    }
  }
  for (int32_t b = 0; b < d.batch; ++b) {
    for (int32_t u = 0; u < d.units; ++u) {
      uint32_t acc = ops.bias.data != nullptr ? as_bits(ops.bias.data[u]) : 0;
      for (int32_t r = 0; r < p.rank; ++r) {
        const ptrdiff_t f = static_cast<ptrdiff_t>(u) * p.rank + r;
        const State* s = state + (static_cast<ptrdiff_t>(b) * d.filters + f) * d.memory;
        const State* w = ops.weights_time.data + f * d.memory;
        for (int32_t m = 0; m < d.memory; ++m) acc += as_bits(int64_t{w[m]} * (s[m] - p.state_zero_point));
      }
      const int32_t v = multiply_by_quantized_multiplier(static_cast<int32_t>(acc), p.to_output_multiplier,
                                                         p.to_output_shift);
      ops.output.data[static_cast<ptrdiff_t>(b) * d.units + u] =
          static_cast<int8_t>(clamp_to(wrapping_add<int32_t>(v, p.output_zero_point), INT8_MIN, INT8_MAX));
    }
  }
}

}  // namespace

void svdf_f32(const SvdfParams& p, const SvdfF32Operands& ops) {
  const SvdfDims d = dims_of(p, ops);
  float* const state = ops.state;
  shift_state(state, d);
  for (int32_t b = 0; b < d.batch; ++b) {
    const float* x = ops.input.data + static_cast<ptrdiff_t>(b) * d.input_size;
    for (int32_t f = 0; f < d.filters; ++f) {
      const float* w = ops.weights_feature.data + static_cast<ptrdiff_t>(f) * d.input_size;
      float dot = 0.0f;
      for (int32_t c = 0; c < d.input_size; ++c) dot += w[c] * x[c];
      state[(static_cast<ptrdiff_t>(b) * d.filters + f) * d.memory + d.memory - 1] = dot;
    }
  }
  const Activation act = static_cast<Activation>(p.activation);
  for (int32_t b = 0; b < d.batch; ++b) {
    for (int32_t u = 0; u < d.units; ++u) {
      float acc = ops.bias.data != nullptr ? ops.bias.data[u] : 0.0f;
      for (int32_t r = 0; r < p.rank; ++r) {
        const ptrdiff_t f = static_cast<ptrdiff_t>(u) * p.rank + r;
        const float* s = state + (static_cast<ptrdiff_t>(b) * d.filters + f) * d.memory;
        const float* w = ops.weights_time.data + f * d.memory;
        float dot = 0.0f;
        for (int32_t m = 0; m < d.memory; ++m) dot += w[m] * s[m];
        acc += dot;
      }
      ops.output.data[static_cast<ptrdiff_t>(b) * d.units + u] = apply_activation(act, acc);
    }
  }
}

void svdf_s8_state16(const SvdfParams& params, const SvdfOperands<int16_t>& ops) { svdf_integer(params, ops); }
void svdf_s8_state8(const SvdfParams& params, const SvdfOperands<int8_t>& ops) { svdf_integer(params, ops); }

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() (and resets its state);
// eval runs one time step on the bound operands (runtime/core/registry.h).
namespace floe::ops {

namespace {

// Operands 0..4 and the output, shaped as svdf.h says; the state a variable
// tensor, reset here (Init() is when a state starts).
const char* check_svdf(const OpContext& ctx, ref::SvdfParams* p) {
  if (ctx.input_count() != 5 || ctx.output_count() != 1 || !ctx.has_input(0) || !ctx.has_input(1) ||
      !ctx.has_input(2) || !ctx.has_input(4)) {
    return FLOE_MSG("SVDF expects input, weights_feature, weights_time, optional bias, state and one output");
  }
  const Shape &in = ctx.input(0).shape, &wf = ctx.input(1).shape, &wt = ctx.input(2).shape,
              &state = ctx.input(4).shape, &out = ctx.output(0).shape;
  if (in.rank != 2 || wf.rank != 2 || wt.rank != 2 || state.rank != 2 || out.rank != 2) {
    return FLOE_MSG("SVDF operands must have rank 2");
  }
  const auto* o = ctx.op->options_as_SvdfOptions();
  const int32_t rank = o->rank(), filters = wf.dims[0], memory = wt.dims[1];
  if (rank < 1 || filters % rank != 0 || memory < 1) {
    return FLOE_MSG("SVDF rank must divide the filter count and memory be >= 1");
  }
  const int32_t units = filters / rank;
  if (wf.dims[1] != in.dims[1] || wt.dims[0] != filters || state.dims[0] != in.dims[0] ||
      int64_t{state.dims[1]} != int64_t{filters} * memory || out.dims[0] != in.dims[0] || out.dims[1] != units ||
      (ctx.has_input(3) && (ctx.input(3).shape.rank != 1 || ctx.input(3).shape.dims[0] != units))) {
    return FLOE_MSG("SVDF operand shapes disagree");
  }
  if (!ctx.input_is_state(4)) return FLOE_MSG("SVDF state must be a variable tensor live throughout");
  p->rank = rank;
  p->activation = static_cast<int32_t>(o->activation());
  if (p->activation > static_cast<int32_t>(schema::Activation::RELU6)) return FLOE_MSG("unknown activation");
  return nullptr;
}

Status eval_svdf(const PreparedOp& ctx) {
  ref::svdf_f32(ctx.params_as<ref::SvdfParams>(),
                {in_as<float>(ctx.input(0)), in_as<float>(ctx.input(1)), in_as<float>(ctx.input(2)),
                 in_as<float>(ctx.input(3)), data_as<float>(ctx.input(4)), out_as<float>(ctx.output(0))});
  return Status::kOk;
}

template <typename State>
ref::SvdfOperands<State> integer_operands(const PreparedOp& ctx) {
  return {in_as<int8_t>(ctx.input(0)), in_as<int8_t>(ctx.input(1)), in_as<State>(ctx.input(2)),
          in_as<int32_t>(ctx.input(3)), data_as<State>(ctx.input(4)), out_as<int8_t>(ctx.output(0))};
}

Status eval_svdf_state16(const PreparedOp& ctx) {
  ref::svdf_s8_state16(ctx.params_as<ref::SvdfParams>(), integer_operands<int16_t>(ctx));
  return Status::kOk;
}

Status eval_svdf_state8(const PreparedOp& ctx) {
  ref::svdf_s8_state8(ctx.params_as<ref::SvdfParams>(), integer_operands<int8_t>(ctx));
  return Status::kOk;
}

}  // namespace

const char* prepare_svdf(const OpContext& ctx) {
  ref::SvdfParams& p = ctx.params<ref::SvdfParams>();
  if (const char* why = check_svdf(ctx, &p)) return why;
  for (int i : {0, 1, 2, 3, 4}) {
    if ((i != 3 || ctx.has_input(3)) && !is_f32(ctx.input(i))) return FLOE_MSG("float SVDF operands must be float32");
  }
  if (!is_f32(ctx.output(0))) return FLOE_MSG("float SVDF operands must be float32");
  reset_variable(ctx.input(4), 0);
  return nullptr;
}

// int8 input, weights_feature and output, int32 bias, and weights_time and
// state both int16 or both int8; the converter's two multipliers.
const char* prepare_svdf_quantized(const OpContext& ctx) {
  ref::SvdfParams& p = ctx.params<ref::SvdfParams>();
  if (const char* why = check_svdf(ctx, &p)) return why;
  const DType state = ctx.input(4).dtype;
  if (!is_s8(ctx.input(0)) || !is_s8(ctx.input(1)) || !is_s8(ctx.output(0)) ||
      (state != DType::kInt16 && state != DType::kInt8) || ctx.input(2).dtype != state ||
      (ctx.has_input(3) && ctx.input(3).dtype != DType::kInt32)) {
    return FLOE_MSG("int8 SVDF takes int8 input, weights_feature and output, int16 or int8 weights_time and "
                    "state, an int32 bias");
  }
  const char* why = nullptr;
  const schema::Requantization* r = requantization_of(ctx, &why);
  if (r == nullptr) return why;
  const Quantization state_q = ctx.input_quantization(4);
  const int32_t lo = state == DType::kInt16 ? INT16_MIN : INT8_MIN, hi = state == DType::kInt16 ? INT16_MAX : INT8_MAX;
  p.input_zero_point = -entry(r->input_offsets(), 0);
  p.state_zero_point = state_q.zero_point;
  p.output_zero_point = r->output_offset();
  p.to_state_multiplier = entry(r->input_multipliers(), 0);
  p.to_state_shift = entry(r->input_shifts(), 0);
  p.to_output_multiplier = r->output_multiplier();
  p.to_output_shift = r->output_shift();
  if (state_q.channels != 1 || p.state_zero_point < lo || p.state_zero_point > hi || p.input_zero_point < INT8_MIN ||
      p.input_zero_point > INT8_MAX || !valid_multiplier(p.to_state_multiplier, p.to_state_shift) ||
      !valid_multiplier(p.to_output_multiplier, p.to_output_shift)) {
    return FLOE_MSG("int8 SVDF zero points, multipliers or shifts out of range");
  }
  reset_variable(ctx.input(4), p.state_zero_point);
  ctx.set_eval(state == DType::kInt16 ? eval_svdf_state16 : eval_svdf_state8);
  return nullptr;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, SVDF, ANY, ref::SvdfParams, ops::prepare_svdf, ops::eval_svdf)
FLOE_KERNEL(REFERENCE, SVDF, INT8, ref::SvdfParams, ops::prepare_svdf_quantized, ops::eval_svdf_state16)
