// SPDX-License-Identifier: Apache-2.0
// What the quantized weighted kernels (CONV2D, DEPTHWISE_CONV2D, MATMUL as
// FULLY_CONNECTED, TRANSPOSE_CONV2D) share: their operands and the last step
// of each output. Two schemes, TFLM's: int8 activations summed in int32 (a
// bias near the int32 limits wraps, as in TFLite, never undefined) with the
// 32-bit requantization, and 16x8 (int16 activations, zero point 0) summed in
// int64 with an int64 bias and the 64-bit requantization.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#include "runtime/core/tensor.h"
#include "runtime/kernels/common/wrapping.h"
#include "runtime/kernels/reference/quantization.h"

namespace floe::ref {

template <typename T>
struct QuantizedScheme {
  static constexpr bool kWide = sizeof(T) == 2;
  using Accumulator = std::conditional_t<kWide, int64_t, int32_t>;
  using Bias = Accumulator;
};

// input, weights and output of either scheme; multiplier and shift are one
// pair per output channel, or nullptr (the params' per-tensor pair).
template <typename T>
struct WeightedOperands {
  In<T> input;
  In<int8_t> filter;
  In<typename QuantizedScheme<T>::Bias> bias;  // [channels]; data == nullptr when absent
  const int32_t* multiplier;
  const int32_t* shift;
  Out<T> output;
};

// Output channel c's sum plus its bias, requantized, plus the output zero
// point, clamped to [lo, hi].
template <typename T>
inline T requantize_channel(typename QuantizedScheme<T>::Accumulator acc, const WeightedOperands<T>& ops, ptrdiff_t c,
                            int32_t multiplier, int32_t shift, int32_t output_offset, int32_t lo, int32_t hi) {
  if (ops.multiplier != nullptr) {
    multiplier = ops.multiplier[c];
    shift = ops.shift[c];
  }
  int32_t scaled;
  if constexpr (QuantizedScheme<T>::kWide) {
    if (ops.bias.data != nullptr) acc = wrapping_add(acc, ops.bias.data[c]);
    scaled = multiply_by_quantized_multiplier_64(acc, multiplier, shift) + output_offset;
  } else {
    if (ops.bias.data != nullptr) acc = wrapping_add(acc, ops.bias.data[c]);
    scaled = wrapping_add(multiply_by_quantized_multiplier(acc, multiplier, shift), output_offset);
  }
  return static_cast<T>(clamp_to(scaled, lo, hi));
}

}  // namespace floe::ref
