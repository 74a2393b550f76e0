// SPDX-License-Identifier: Apache-2.0
// Concatenation along one axis. Type-agnostic: copies bytes, so one kernel serves
// every dtype (element_size given by the caller).
#pragma once

#include "runtime/kernels/reference/quantization.h"
#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

struct ConcatParams {
  int32_t axis = 0;          // non-negative
  size_t element_size = 4;
};

// `inputs[i]` all have the output's rank and equal dims except along `axis`.
void concat(const ConcatParams& params, const In<void>* inputs, int32_t input_count,
            const Out<void>& output);

// ---- int8 CONCATENATION with per-input requantization ----
// An input whose scale and zero point equal the output's is copied (identity);
// any other is requantized element by element: (q - zero_point) rescaled by
// input_scale / output_scale (TFLM's double rounding) + output zero point,
// clamped to int8 (the integer form of TFLite's ConcatenationWithScaling).
struct ConcatS8Params {
  int32_t axis;               // non-negative
  int32_t output_zero_point;
};

struct ConcatS8InputQuant {
  int32_t identity;           // 1: same quantization as the output, copy
  int32_t input_zero_point;
  int32_t multiplier, shift;  // input_scale / output_scale
};

void concat_s8(const ConcatS8Params& params, const In<int8_t>* inputs,
               const ConcatS8InputQuant* quant, int32_t input_count, const Out<int8_t>& output);

// Host-side (converter): one input's entry.
inline ConcatS8InputQuant prepare_concat_input_s8(float input_scale, int32_t input_zero_point,
                                                  float output_scale, int32_t output_zero_point) {
  const QuantizedMultiplier q =
      quantize_multiplier(static_cast<double>(input_scale) / static_cast<double>(output_scale));
  const bool identity = input_scale == output_scale && input_zero_point == output_zero_point;
  return {identity ? 1 : 0, input_zero_point, q.multiplier, q.shift};
}

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

struct ConcatPrepared {
  int32_t axis;
  int32_t element_size;
};

const char* prepare_concat(const OpContext& ctx);
Status eval_concat(const PreparedOp& ctx);

}  // namespace floe::ops
