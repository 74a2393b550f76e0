// SPDX-License-Identifier: Apache-2.0
// int8 QUANTIZE / DEQUANTIZE / requantize (see quantize.h).
#include "runtime/kernels/reference/quantize.h"

#include "runtime/core/quantization.h"

#include <stddef.h>

namespace floe::ref {

void quantize_s8(const QuantizeS8Params& params, const In<float>& input, const Out<int8_t>& output) {
  const ptrdiff_t count = static_cast<ptrdiff_t>(input.shape.num_elements());
  const float zero_point = static_cast<float>(params.zero_point);
  for (ptrdiff_t i = 0; i < count; ++i) {
    const float steps = roundf(input.data[i] / params.scale);
    // Clamp in float before converting: out-of-range conversion is undefined.
    // |steps| < 2^24 converts exactly, so for finite in-range values this is
    // TFLite's round, add zero point, clamp, in integers.
    float q = steps + zero_point;
    if (!(q == q)) q = zero_point;  // NaN
    q = q < -128.0f ? -128.0f : (q > 127.0f ? 127.0f : q);
    output.data[i] = static_cast<int8_t>(q);
  }
}

void dequantize_s8(const QuantizeS8Params& params, const In<int8_t>& input, const Out<float>& output) {
  const ptrdiff_t count = static_cast<ptrdiff_t>(input.shape.num_elements());
  for (ptrdiff_t i = 0; i < count; ++i) {
    // q - zero_point has at most 9 significant bits: the float product is
    // the exact product rounded once, like TFLite's double product cast.
    output.data[i] = params.scale * static_cast<float>(input.data[i] - params.zero_point);
  }
}

void requantize_s8(const RequantizeS8Params& params, const In<int8_t>& input,
                   const Out<int8_t>& output) {
  const ptrdiff_t count = static_cast<ptrdiff_t>(input.shape.num_elements());
  for (ptrdiff_t i = 0; i < count; ++i) {
    const int32_t v = multiply_by_quantized_multiplier(input.data[i] - params.input_zero_point,
                                                       params.multiplier, params.shift) +
                      params.output_zero_point;
    output.data[i] = static_cast<int8_t>(clamp_to(v, INT8_MIN, INT8_MAX));
  }
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

Status eval_requantize(const PreparedOp& ctx) {
  ref::requantize_s8(ctx.params_as<QuantizePrepared>().requantize, in_as<int8_t>(ctx.input(0)),
                     out_as<int8_t>(ctx.output(0)));
  return Status::kOk;
}

}  // namespace

const char* prepare_quantize(const OpContext& ctx) {
  if (!has_io(ctx, 1, 1) || !is_s8(ctx.output(0))) return FLOE_MSG("quantize writes one int8 output");
  const TensorView in = ctx.input(0), out = ctx.output(0);
  if (in.shape.num_elements() != out.shape.num_elements()) return FLOE_MSG("quantize changes the element count");
  if (is_s8(in)) {
    const char* why = nullptr;
    const schema::Requantization* r = requantization_of(ctx, &why);
    if (r == nullptr) return why;
    ref::RequantizeS8Params& p = ctx.params<QuantizePrepared>().requantize;
    p.input_zero_point = -entry(r->input_offsets(), 0);
    p.output_zero_point = r->output_offset();
    p.multiplier = r->output_multiplier();
    p.shift = r->output_shift();
    if (p.input_zero_point < -128 || p.input_zero_point > 127 || !valid_multiplier(p.multiplier, p.shift)) {
      return FLOE_MSG("int8 requantize zero point, multiplier or shift out of range");
    }
    ctx.set_eval(eval_requantize);
    return nullptr;
  }
  if (!is_f32(in)) return FLOE_MSG("quantize reads float32 or int8");
  return affine_of(ctx.output_quantization(0), &ctx.params<QuantizePrepared>().affine);
}

Status eval_quantize(const PreparedOp& ctx) {
  ref::quantize_s8(ctx.params_as<QuantizePrepared>().affine, in_as<float>(ctx.input(0)),
                   out_as<int8_t>(ctx.output(0)));
  return Status::kOk;
}

const char* prepare_dequantize(const OpContext& ctx) {
  if (!has_io(ctx, 1, 1) || !is_s8(ctx.input(0)) || !is_f32(ctx.output(0))) {
    return FLOE_MSG("dequantize reads int8 and writes float32");
  }
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
