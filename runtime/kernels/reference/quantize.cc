// SPDX-License-Identifier: Apache-2.0
// int8 QUANTIZE / DEQUANTIZE / requantize (see quantize.h).
#include "runtime/kernels/reference/quantize.h"

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
