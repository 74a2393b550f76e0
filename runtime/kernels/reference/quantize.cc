// SPDX-License-Identifier: Apache-2.0
// int8 QUANTIZE / DEQUANTIZE / requantize (see quantize.h).
#include "runtime/kernels/reference/quantize.h"

#include "runtime/core/quantization.h"
#include "runtime/kernels/common/wrapping.h"

#include <stddef.h>

namespace floe::ref {

namespace {

template <typename T>
constexpr float kLowest = -128.0f;
template <>
constexpr float kLowest<int16_t> = -32768.0f;
template <typename T>
constexpr float kHighest = 127.0f;
template <>
constexpr float kHighest<int16_t> = 32767.0f;

template <typename T>
void quantize_to(const QuantizeS8Params& params, const In<float>& input, const Out<T>& output) {
  const ptrdiff_t count = static_cast<ptrdiff_t>(input.shape.num_elements());
  const float zero_point = static_cast<float>(params.zero_point);
  for (ptrdiff_t i = 0; i < count; ++i) {
    const float steps = roundf(input.data[i] / params.scale);
    // Clamp in float before converting: out-of-range conversion is undefined.
    // |steps| < 2^24 converts exactly, so for finite in-range values this is
    // TFLite's round, add zero point, clamp, in integers.
    float q = steps + zero_point;
    if (!(q == q)) q = zero_point;  // NaN
    q = q < kLowest<T> ? kLowest<T> : (q > kHighest<T> ? kHighest<T> : q);
    output.data[i] = static_cast<T>(q);
  }
}

template <typename T>
void dequantize_from(const QuantizeS8Params& params, const In<T>& input, const Out<float>& output) {
  const ptrdiff_t count = static_cast<ptrdiff_t>(input.shape.num_elements());
  for (ptrdiff_t i = 0; i < count; ++i) {
    // q - zero_point has at most 17 significant bits: the float product is
    // the exact product rounded once, like TFLite's double product cast.
    output.data[i] = params.scale * static_cast<float>(input.data[i] - params.zero_point);
  }
}

}  // namespace

void quantize_s8(const QuantizeS8Params& params, const In<float>& input, const Out<int8_t>& output) {
  quantize_to(params, input, output);
}

void quantize_s16(const QuantizeS8Params& params, const In<float>& input, const Out<int16_t>& output) {
  quantize_to(params, input, output);
}

void dequantize_s8(const QuantizeS8Params& params, const In<int8_t>& input, const Out<float>& output) {
  dequantize_from(params, input, output);
}

void dequantize_s16(const QuantizeS8Params& params, const In<int16_t>& input, const Out<float>& output) {
  dequantize_from(params, input, output);
}

template <typename TIn, typename TOut>
void requantize(const RequantizeS8Params& params, const In<TIn>& input, const Out<TOut>& output) {
  const ptrdiff_t count = static_cast<ptrdiff_t>(input.shape.num_elements());
  const int32_t lo = sizeof(TOut) == 1 ? INT8_MIN : sizeof(TOut) == 2 ? INT16_MIN : INT32_MIN;
  const int32_t hi = sizeof(TOut) == 1 ? INT8_MAX : sizeof(TOut) == 2 ? INT16_MAX : INT32_MAX;
  for (ptrdiff_t i = 0; i < count; ++i) {
    // An int32 input minus its zero point wraps, as TFLM's int32 subtraction
    // (so does an int32 output's zero point).
    const int32_t x = static_cast<int32_t>(static_cast<uint32_t>(input.data[i]) -
                                           static_cast<uint32_t>(params.input_zero_point));
    const int32_t v = wrapping_add<int32_t>(multiply_by_quantized_multiplier(x, params.multiplier, params.shift),
                                            params.output_zero_point);
    output.data[i] = static_cast<TOut>(clamp_to(v, lo, hi));
  }
}

void requantize_s8(const RequantizeS8Params& params, const In<int8_t>& input,
                   const Out<int8_t>& output) {
  requantize(params, input, output);
}

}  // namespace floe::ref

namespace floe::ops {
namespace {

// The per-tensor scale and zero point of the op's int8 side, or the reason.
const char* affine_of(const Quantization& q, ref::QuantizeS8Params* out) {
  if (q.channels != 1) return FLOE_MSG("int8 side of a (de)quantize must be quantized per tensor");
  out->scale = q.scale;
  out->zero_point = q.zero_point;
  return nullptr;
}

template <typename TIn, typename TOut>
Status eval_requantize(const PreparedOp& ctx) {
  ref::requantize(ctx.params_as<QuantizePrepared>().requantize, in_as<TIn>(ctx.input(0)),
                  out_as<TOut>(ctx.output(0)));
  return Status::kOk;
}

template <typename TOut>
EvalFn requantize_from(DType in) {
  switch (in) {
    case DType::kInt8: return eval_requantize<int8_t, TOut>;
    case DType::kInt16: return eval_requantize<int16_t, TOut>;
    case DType::kInt32: return eval_requantize<int32_t, TOut>;
    default: return nullptr;
  }
}

Status eval_quantize_s16(const PreparedOp& ctx) {
  ref::quantize_s16(ctx.params_as<QuantizePrepared>().affine, in_as<float>(ctx.input(0)),
                    out_as<int16_t>(ctx.output(0)));
  return Status::kOk;
}

Status eval_dequantize_s16(const PreparedOp& ctx) {
  ref::dequantize_s16(ctx.params_as<QuantizePrepared>().affine, in_as<int16_t>(ctx.input(0)),
                      out_as<float>(ctx.output(0)));
  return Status::kOk;
}

}  // namespace

const char* prepare_quantize(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output(0);
  const bool wide = out.dtype == DType::kInt16;
  // int32 output: only a requantized int16 (TFLite's int16 -> int32).
  const bool to_int32 = out.dtype == DType::kInt32 && in.dtype == DType::kInt16;
  if (!has_io(ctx, 1, 1) || (!is_s8(out) && !wide && !to_int32)) {
    return FLOE_MSG("quantize writes one int8 or int16 output (int32 from int16)");
  }
  if (in.shape.num_elements() != out.shape.num_elements()) return FLOE_MSG("quantize changes the element count");
  if (is_s8(in) || in.dtype == DType::kInt16 || in.dtype == DType::kInt32) {
    const char* why = nullptr;
    // An int32 output takes any value: the requantization's clamp is not read.
    const schema::Requantization* r = to_int32 ? ctx.op->requantization() : requantization_of(ctx, &why, out.dtype);
    if (r == nullptr) return why != nullptr ? why : FLOE_MSG("operator without requantization data (convert the model again)");
    ref::RequantizeS8Params& p = ctx.params<QuantizePrepared>().requantize;
    p.input_zero_point = -entry(r->input_offsets(), 0);
    p.output_zero_point = r->output_offset();
    p.multiplier = r->output_multiplier();
    p.shift = r->output_shift();
    // TFLite's zero points: int8 any; int16 any unless the output is int16
    // too (then both 0); int32 0.
    const bool zero_point_ok = is_s8(in) ? p.input_zero_point >= -128 && p.input_zero_point <= 127
                               : in.dtype == DType::kInt16 && !wide
                                   ? p.input_zero_point >= INT16_MIN && p.input_zero_point <= INT16_MAX
                                   : p.input_zero_point == 0;
    if (!zero_point_ok || !valid_multiplier(p.multiplier, p.shift)) {
      return FLOE_MSG("requantize zero point, multiplier or shift out of range (int16 to int16 and int32 input: zero point 0)");
    }
    ctx.set_eval(to_int32 ? eval_requantize<int16_t, int32_t>
                 : wide   ? requantize_from<int16_t>(in.dtype)
                          : requantize_from<int8_t>(in.dtype));
    return nullptr;
  }
  if (!is_f32(in)) return FLOE_MSG("quantize reads float32, int8, int16 or int32");
  if (wide) ctx.set_eval(eval_quantize_s16);
  return affine_of(ctx.output_quantization(0), &ctx.params<QuantizePrepared>().affine);
}

Status eval_quantize(const PreparedOp& ctx) {
  ref::quantize_s8(ctx.params_as<QuantizePrepared>().affine, in_as<float>(ctx.input(0)),
                   out_as<int8_t>(ctx.output(0)));
  return Status::kOk;
}

const char* prepare_dequantize(const OpContext& ctx) {
  if (!has_io(ctx, 1, 1) || (!is_s8(ctx.input(0)) && ctx.input(0).dtype != DType::kInt16) ||
      !is_f32(ctx.output(0))) {
    return FLOE_MSG("dequantize reads int8 or int16 and writes float32");
  }
  if (ctx.input(0).dtype == DType::kInt16) ctx.set_eval(eval_dequantize_s16);
  if (ctx.input(0).shape.num_elements() != ctx.output(0).shape.num_elements()) {
    return FLOE_MSG("dequantize changes the element count");
  }
  return affine_of(ctx.input_quantization(0), &ctx.params<QuantizePrepared>().affine);
}

Status eval_dequantize(const PreparedOp& ctx) {
  ref::dequantize_s8(ctx.params_as<QuantizePrepared>().affine, in_as<int8_t>(ctx.input(0)),
                     out_as<float>(ctx.output(0)));
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, QUANTIZE, ANY, ops::QuantizePrepared, ops::prepare_quantize, ops::eval_quantize)
FLOE_KERNEL(REFERENCE, DEQUANTIZE, ANY, ops::QuantizePrepared, ops::prepare_dequantize, ops::eval_dequantize)
