// SPDX-License-Identifier: Apache-2.0
// The int8 edges of a quantized graph, as TFLite's reference kernels compute
// them: QUANTIZE (float -> int8), DEQUANTIZE (int8 -> float) and QUANTIZE from
// int8 to int8 with other parameters (requantize).
//   quantize:   q = clamp(round(x / scale) + zero_point), the division in
//               float and round() half away from zero (TFLite's AffineQuantize);
//               NaN becomes the zero point, +-inf saturates.
//   dequantize: x = scale * (q - zero_point); the exact product rounded once
//               to float (what TFLite's double product then float cast gives).
//   requantize: q' = clamp(mbqm(q - zero_point, multiplier, shift) + zero_point'),
//               multiplier/shift from input_scale / output_scale.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/kernels/reference/quantization.h"

namespace floe::ref {

struct QuantizeS8Params {
  float scale;
  int32_t zero_point;
};

struct RequantizeS8Params {
  int32_t input_zero_point;
  int32_t output_zero_point;
  int32_t multiplier, shift;
};

// Element counts of input and output are equal; output may not alias input
// (it may for requantize).
void quantize_s8(const QuantizeS8Params& params, const In<float>& input, const Out<int8_t>& output);
void dequantize_s8(const QuantizeS8Params& params, const In<int8_t>& input, const Out<float>& output);
void requantize_s8(const RequantizeS8Params& params, const In<int8_t>& input,
                   const Out<int8_t>& output);

// The int16 side of TFLite's 16x8 scheme, and requantizing between int8,
// int16 and int32 (TFLM's QUANTIZE with an integer input): the same formulas,
// clamped to the output dtype.
void quantize_s16(const QuantizeS8Params& params, const In<float>& input, const Out<int16_t>& output);
void dequantize_s16(const QuantizeS8Params& params, const In<int16_t>& input, const Out<float>& output);
template <typename TIn, typename TOut>
void requantize(const RequantizeS8Params& params, const In<TIn>& input, const Out<TOut>& output);

// Host-side (converter).
inline RequantizeS8Params prepare_requantize_s8(float input_scale, int32_t input_zero_point,
                                                float output_scale, int32_t output_zero_point) {
  const QuantizedMultiplier q =
      quantize_multiplier(static_cast<double>(input_scale) / static_cast<double>(output_scale));
  return {input_zero_point, output_zero_point, q.multiplier, q.shift};
}

}  // namespace floe::ref

// The ops' adapters (schemas/contract/ops.def): QUANTIZE float -> int8 / int16
// and int8 / int16 / int32 -> int8 / int16 (requantize, with the converter's
// multiplier), DEQUANTIZE int8 / int16 -> float.
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ops {

union QuantizePrepared {
  ref::QuantizeS8Params affine;        // float <-> int8 / int16: the integer side's scale and zero point
  ref::RequantizeS8Params requantize;  // integer -> integer
};

const char* prepare_quantize(const OpContext& ctx);
Status eval_quantize(const PreparedOp& ctx);
const char* prepare_dequantize(const OpContext& ctx);
Status eval_dequantize(const PreparedOp& ctx);

}  // namespace floe::ops
