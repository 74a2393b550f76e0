// SPDX-License-Identifier: Apache-2.0
// The integer arithmetic every int8 kernel shares, defined to give the same
// bits as TensorFlow Lite Micro and CMSIS-NN (their default "double rounding"
// requantization and gemmlowp's fixed-point exp / reciprocal / logistic / tanh).
// These are the one definition of int8 semantics in floe: optimized int8
// kernels are tested bit-exact against kernels built on these functions.
//
// Conventions (TFLite's): real = scale * (q - zero_point); a multiplier is a
// Q31 value in [2^30, 2^31) (or 0) and `shift` is a power of two applied after
// it, positive = left shift. Signed right shifts are arithmetic (floe's
// compilers: GCC and Clang on two's-complement targets).
//
// The host-side helpers at the end (quantize_multiplier and friends) use
// double and libm; only the converter and tests call them. Being inline, they
// cost a firmware build nothing.
#pragma once

#include <math.h>
#include <stdint.h>

#include "runtime/kernels/common/activation.h"

namespace floe::ref {

constexpr int32_t kInt32Min = INT32_MIN;
constexpr int32_t kInt32Max = INT32_MAX;

// x * 2^exponent on the raw two's-complement bits (wraps instead of the
// undefined behaviour of shifting a negative value or overflowing).
inline int32_t wrapping_shift_left(int32_t x, int exponent) {
  return static_cast<int32_t>(static_cast<uint32_t>(x) << exponent);
}

// round(a * b / 2^31) with ties toward +infinity: the high half of the
// doubled 64-bit product (gemmlowp's SaturatingRoundingDoublingHighMul, Arm's
// VQRDMULH). The one product that does not fit, INT32_MIN * INT32_MIN,
// saturates to INT32_MAX.
inline int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
  if (a == kInt32Min && b == kInt32Min) return kInt32Max;
  const int64_t product = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int64_t nudge = product >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  // Division truncates toward zero; with the nudge one below 1/2 for negative
  // products, both signs round half up.
  return static_cast<int32_t>((product + nudge) / (int64_t{1} << 31));
}

// x / 2^exponent rounded to nearest, ties away from zero (gemmlowp's
// RoundingDivideByPOT); exponent in [0, 31].
inline int32_t rounding_divide_by_pot(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

// x * multiplier * 2^shift, as TFLM's MultiplyByQuantizedMultiplier: a left
// shift first (shift > 0), then the rounding high multiply, then a rounding
// right shift (shift < 0). Two roundings, deliberately: this is what the
// reference kernels and CMSIS-NN compute by default.
inline int32_t multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  return rounding_divide_by_pot(
      saturating_rounding_doubling_high_mul(wrapping_shift_left(x, left), multiplier), right);
}

// The 64-bit-accumulator form (int16 activations, int64 biases): the Q31
// multiplier is first reduced to Q15 (rounded, capped at 0x7FFF) and the
// product is shifted right by 15 - shift with one rounding (ties toward +inf),
// as TFLM's MultiplyByQuantizedMultiplier(int64_t, ...). Exact for
// |x| < 2^47 and shift in [-31, 7], with a result that fits int32; beyond
// that (a model's huge int64 bias) the product wraps, never undefined.
inline int32_t multiply_by_quantized_multiplier_64(int64_t x, int32_t multiplier, int shift) {
  const int32_t reduced =
      multiplier < 0x7FFF0000 ? static_cast<int32_t>((multiplier + (1 << 15)) >> 16) : 0x7FFF;
  const int total_shift = 15 - shift;
  const int64_t round = int64_t{1} << (total_shift - 1);
  int64_t product;
  __builtin_mul_overflow(x, int64_t{reduced}, &product);
  __builtin_add_overflow(product, round, &product);
  // The product may be negative: an arithmetic shift is a floor division.
  return static_cast<int32_t>(product >> total_shift);
}

// ---- gemmlowp-style fixed point, raw int32 values ---------------------------
// A value with I integer bits is stored as raw / 2^(31 - I).

namespace fixed_point {

// raw * 2^exponent with saturation for exponent > 0, rounding for exponent < 0
// (gemmlowp's SaturatingRoundingMultiplyByPOT).
inline int32_t saturating_rounding_multiply_by_pot(int32_t raw, int exponent) {
  if (exponent == 0) return raw;
  if (exponent < 0) return rounding_divide_by_pot(raw, -exponent);
  const int32_t threshold = static_cast<int32_t>((int64_t{1} << (31 - exponent)) - 1);
  if (raw > threshold) return kInt32Max;
  if (raw < -threshold) return kInt32Min;
  return wrapping_shift_left(raw, exponent);
}

// A product of values with Ia and Ib integer bits has Ia + Ib integer bits.
inline int32_t mul(int32_t a, int32_t b) { return saturating_rounding_doubling_high_mul(a, b); }

// Changes the integer bits of a value from `from_bits` to `to_bits`.
inline int32_t rescale(int32_t raw, int from_bits, int to_bits) {
  return saturating_rounding_multiply_by_pot(raw, from_bits - to_bits);
}

// (a + b) / 2 rounded half away from zero, computed without overflow.
inline int32_t rounding_half_sum(int32_t a, int32_t b) {
  const int64_t sum = static_cast<int64_t>(a) + static_cast<int64_t>(b);
  const int64_t sign = sum >= 0 ? 1 : -1;
  return static_cast<int32_t>((sum + sign) / 2);
}

// 1.0 with I integer bits (with I = 0 the largest value below 1).
inline int32_t one(int integer_bits) {
  return integer_bits == 0 ? kInt32Max : static_cast<int32_t>(int64_t{1} << (31 - integer_bits));
}

// exp(a) for a in [-1/4, 0), Q0.31 in and out: a Taylor expansion around -1/8.
int32_t exp_on_interval_minus_quarter_to_zero(int32_t a);

// exp(a) for a <= 0 given with `integer_bits` integer bits; result Q0.31.
// a = -(k/4) + r with r in [-1/4, 0): exp(r) times the exp(-2^j) constants
// of k's set bits. a < -32 (reachable when integer_bits > 5) gives 0, and
// a == 0 the largest Q0.31 value.
int32_t exp_on_negative_values(int32_t a, int integer_bits);

// 1 / (1 + x) for x in [0, 1], Q0.31 in and out (Newton-Raphson, 3 steps).
int32_t one_over_one_plus_x_for_x_in_0_1(int32_t x);

// (1 - x) / (1 + x) for x in [0, 1], Q0.31 in and out.
int32_t one_minus_x_over_one_plus_x_for_x_in_0_1(int32_t x);

// logistic(a) and tanh(a) for a with `integer_bits` integer bits; result Q0.31.
int32_t logistic(int32_t a, int integer_bits);
int32_t tanh(int32_t a, int integer_bits);

}  // namespace fixed_point

// ---- the same functions on raw int16 values ---------------------------------
// gemmlowp's FixedPoint<int16_t, I> (TFLite's integer LSTM gates): a value
// with I integer bits is raw / 2^(15 - I); products round in 16 bits, the
// int32 constants above are rounded to 16 bits, sums wrap except where
// gemmlowp saturates. Results are Q0.15.
namespace fixed_point16 {

int16_t logistic(int16_t a, int integer_bits);
int16_t tanh(int16_t a, int integer_bits);  // integer_bits in [0, 6]

}  // namespace fixed_point16

// The reciprocal of a positive value x with `integer_bits` integer bits, as
// TFLM's GetReciprocal: x = m * 2^e with m in [1, 2); returns 1/m in Q0.31 and
// e in `*num_bits_over_unit`, so 1/x = result * 2^-e.
int32_t reciprocal(int32_t x, int integer_bits, int* num_bits_over_unit);

inline int32_t clamp_to(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

// ---- host-side preparation (converter, tests; never called on a device) ----

struct QuantizedMultiplier {
  int32_t multiplier;  // Q31, in [2^30, 2^31) or 0
  int32_t shift;       // positive = left shift
};

// TFLite's QuantizeMultiplier: frexp's mantissa rounded to Q31 (ties away
// from zero), halved with the exponent bumped when the rounding reaches 2^31;
// multipliers below 2^-32 become 0.
inline QuantizedMultiplier quantize_multiplier(double real_multiplier) {
  if (real_multiplier == 0.0) return {0, 0};
  int exponent = 0;
  const double mantissa = frexp(real_multiplier, &exponent);
  int64_t q = static_cast<int64_t>(round(mantissa * static_cast<double>(int64_t{1} << 31)));
  if (q == (int64_t{1} << 31)) {
    q /= 2;
    ++exponent;
  }
  if (exponent < -31) return {0, 0};
  return {static_cast<int32_t>(q), exponent};
}

// Per-output-channel requantization of CONV_2D, DEPTHWISE_CONV_2D and
// FULLY_CONNECTED (TFLite's PopulateConvolutionQuantizationParams): the
// effective scale input_scale * filter_scale[c] / output_scale, computed in
// double from the stored float32 scales, then quantize_multiplier.
inline void quantize_channel_multipliers(float input_scale, const float* filter_scales,
                                         int32_t count, float output_scale,
                                         int32_t* multipliers, int32_t* shifts) {
  for (int32_t c = 0; c < count; ++c) {
    const double effective = static_cast<double>(input_scale) *
                             static_cast<double>(filter_scales[c]) /
                             static_cast<double>(output_scale);
    const QuantizedMultiplier q = quantize_multiplier(effective);
    multipliers[c] = q.multiplier;
    shifts[c] = q.shift;
  }
}

// The largest input magnitude (in input steps) that fixed-point ops with
// `integer_bits` integer bits can represent after a left shift of
// `left_shift` (TFLite's CalculateInputRadius).
inline int32_t calculate_input_radius(int integer_bits, int left_shift, int total_signed_bits = 31) {
  const double max_rescaled = 1.0 * ((1 << integer_bits) - 1) *
                              static_cast<double>(int64_t{1} << (total_signed_bits - integer_bits)) /
                              static_cast<double>(int64_t{1} << left_shift);
  return static_cast<int32_t>(floor(max_rescaled));
}

// The clamp range of a fused activation on a quantized output (TFLite's
// CalculateActivationRangeQuantized): relu / relu6 in real values, quantized
// with the output's scale and zero point, intersected with [-128, 127].
struct QuantizedRange {
  int32_t min;
  int32_t max;
};
inline QuantizedRange quantized_activation_range_s8(Activation activation, float output_scale,
                                                    int32_t output_zero_point) {
  int32_t lo = -128, hi = 127;
  auto quantize = [&](float real) {
    return output_zero_point + static_cast<int32_t>(round(real / output_scale));
  };
  if (activation == Activation::kRelu || activation == Activation::kRelu6) {
    const int32_t zero = quantize(0.0f);
    lo = zero > lo ? zero : lo;
  }
  if (activation == Activation::kRelu6) {
    const int32_t six = quantize(6.0f);
    hi = six < hi ? six : hi;
  }
  return {lo, hi};
}

}  // namespace floe::ref
