// SPDX-License-Identifier: Apache-2.0
// gemmlowp-compatible fixed-point transcendental pieces (see quantization.h).
// Every constant below is a real number in Q0.31 or Q2.29; the golden and
// random tests recompute each one from its formula.
#include "runtime/kernels/reference/quantization.h"

namespace floe::ref {
namespace fixed_point {
namespace {

constexpr int32_t kExpMinusOneEighth = 1895147668;  // exp(-1/8), Q0.31
constexpr int32_t kOneThird = 715827883;            // 1/3, Q0.31
constexpr int32_t kFortyEightOverSeventeen = 1515870810;        // 48/17, Q2.29
constexpr int32_t kMinusThirtyTwoOverSeventeen = -1010580540;   // -32/17, Q2.29

// exp(-2^k / 4) for k = 0..6, Q0.31: the factors for each bit of a's multiple of 1/4.
struct ExpStep {
  int exponent;  // the bit's weight is 2^exponent
  int32_t factor;
};
constexpr ExpStep kExpSteps[] = {
    {-2, 1672461947},  // exp(-1/4)
    {-1, 1302514674},  // exp(-1/2)
    {0, 790015084},    // exp(-1)
    {1, 290630308},    // exp(-2)
    {2, 39332535},     // exp(-4)
    {3, 720401},       // exp(-8)
    {4, 242},          // exp(-16)
};

// Newton-Raphson for 1 / (1 + x), x in [0, 1]: iterates on d = (1 + x) / 2 in
// [1/2, 1] from the best linear start 48/17 - 32/17 * d; returns 1/d in Q2.29.
int32_t reciprocal_of_half_denominator(int32_t half_denominator) {
  int32_t estimate = kFortyEightOverSeventeen + mul(half_denominator, kMinusThirtyTwoOverSeventeen);
  const int32_t one_q2 = one(2);
  for (int i = 0; i < 3; ++i) {
    const int32_t error = one_q2 - mul(half_denominator, estimate);  // Q2.29
    estimate = estimate + rescale(mul(estimate, error), 4, 2);
  }
  return estimate;
}

}  // namespace

int32_t exp_on_interval_minus_quarter_to_zero(int32_t a) {
  // exp(a) = exp(-1/8) * exp(x) with x = a + 1/8 in [-1/8, 1/8), and
  // exp(x) ~ 1 + x + x^2/2 + x^3/6 + x^4/24.
  const int32_t x = a + (int32_t{1} << 28);
  const int32_t x2 = mul(x, x);
  const int32_t x3 = mul(x2, x);
  const int32_t x4 = mul(x2, x2);
  const int32_t x4_over_4 = saturating_rounding_multiply_by_pot(x4, -2);
  const int32_t higher_terms =
      saturating_rounding_multiply_by_pot(mul(x4_over_4 + x3, kOneThird) + x2, -1);
  return kExpMinusOneEighth + mul(kExpMinusOneEighth, x + higher_terms);
}

int32_t exp_on_negative_values(int32_t a, int integer_bits) {
  const int fractional_bits = 31 - integer_bits;
  const int32_t one_quarter = int32_t{1} << (fractional_bits - 2);
  const int32_t mask = one_quarter - 1;
  const int32_t in_last_quarter = (a & mask) - one_quarter;  // in [-1/4, 0)
  int32_t result = exp_on_interval_minus_quarter_to_zero(rescale(in_last_quarter, integer_bits, 0));
  // The multiple of 1/4 that was removed, as a non-negative count of quarters
  // scaled like a: each set bit multiplies in one exp(-2^k) factor.
  const int32_t removed = in_last_quarter - a;
  for (const ExpStep& step : kExpSteps) {
    if (integer_bits <= step.exponent) continue;  // a cannot reach that magnitude
    const int bit = fractional_bits + step.exponent;
    if (removed & (int32_t{1} << bit)) result = mul(result, step.factor);
  }
  if (integer_bits > 5) {
    const int32_t minus_32 = -(int32_t{1} << (36 - integer_bits));
    if (a < minus_32) result = 0;
  }
  if (a == 0) result = one(0);
  return result;
}

int32_t one_over_one_plus_x_for_x_in_0_1(int32_t x) {
  const int32_t half_denominator = rounding_half_sum(x, one(0));
  // 1/(1+x) = (1/d) / 2: the halving turns Q2.29 into Q1.30 on the same bits.
  return rescale(reciprocal_of_half_denominator(half_denominator), 1, 0);
}

int32_t one_minus_x_over_one_plus_x_for_x_in_0_1(int32_t x) {
  const int32_t half_denominator = rounding_half_sum(x, one(0));
  // (1-x)/(1+x) = 1/d - 1 with d = (1+x)/2.
  return rescale(reciprocal_of_half_denominator(half_denominator) - one(2), 2, 0);
}

int32_t logistic(int32_t a, int integer_bits) {
  if (a == 0) return int32_t{1} << 30;  // 1/2
  const int32_t magnitude = a > 0 ? a : -a;
  // logistic(|a|) = 1 / (1 + exp(-|a|)); logistic(-|a|) = 1 - logistic(|a|).
  const int32_t of_magnitude =
      one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(-magnitude, integer_bits));
  return a > 0 ? of_magnitude : one(0) - of_magnitude;
}

int32_t tanh(int32_t a, int integer_bits) {
  if (a == 0) return 0;
  const int32_t minus_magnitude = a < 0 ? a : -a;
  // tanh(|a|) = (1 - exp(-2|a|)) / (1 + exp(-2|a|)); -2|a| has the same raw
  // bits as -|a| read with one more integer bit.
  const int32_t of_magnitude = one_minus_x_over_one_plus_x_for_x_in_0_1(
      exp_on_negative_values(minus_magnitude, integer_bits + 1));
  return a < 0 ? -of_magnitude : of_magnitude;
}

}  // namespace fixed_point

namespace fixed_point16 {
namespace {

int16_t wrap(int32_t v) { return static_cast<int16_t>(v); }
int16_t saturate(int32_t v) { return static_cast<int16_t>(clamp_to(v, INT16_MIN, INT16_MAX)); }

// gemmlowp's int16 SaturatingRoundingDoublingHighMul: round(a * b / 2^15),
// ties toward +infinity; -1 * -1 saturates.
int16_t mul(int16_t a, int16_t b) {
  if (a == INT16_MIN && b == INT16_MIN) return INT16_MAX;
  const int32_t product = int32_t{a} * int32_t{b};
  const int32_t nudge = product >= 0 ? (1 << 14) : (1 - (1 << 14));
  return wrap((product + nudge) / (1 << 15));
}

int16_t multiply_by_pot(int16_t raw, int exponent) {
  if (exponent < 0) return wrap(rounding_divide_by_pot(raw, -exponent));
  const int32_t threshold = (1 << (15 - exponent)) - 1;
  if (raw > threshold) return INT16_MAX;
  if (raw < -threshold) return INT16_MIN;
  return wrap(int32_t{raw} * (1 << exponent));
}

// An int32 gemmlowp constant as its int16 counterpart.
int16_t constant(int32_t raw32) { return wrap(rounding_divide_by_pot(raw32, 16)); }

int16_t negate(int16_t v) { return wrap(-int32_t{v}); }

constexpr int16_t kOneQ0 = INT16_MAX;
constexpr int16_t kOneQ2 = 1 << 13;

int16_t exp_on_interval_minus_quarter_to_zero(int16_t a) {
  const int16_t exp_minus_one_eighth = constant(1895147668);
  const int16_t x = wrap(a + (1 << 12));  // a + 1/8
  const int16_t x2 = mul(x, x);
  const int16_t x3 = mul(x2, x);
  const int16_t x4 = mul(x2, x2);
  const int16_t x4_over_4 = multiply_by_pot(x4, -2);
  const int16_t higher_terms =
      multiply_by_pot(wrap(mul(wrap(x4_over_4 + x3), constant(715827883)) + x2), -1);
  // The one sum gemmlowp saturates in 16 bits.
  return saturate(exp_minus_one_eighth + mul(exp_minus_one_eighth, wrap(x + higher_terms)));
}

int16_t exp_on_negative_values(int16_t a, int integer_bits) {
  static constexpr int32_t kFactors[] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  const int fractional_bits = 15 - integer_bits;
  const int16_t one_quarter = wrap(1 << (fractional_bits - 2));
  const int16_t in_last_quarter = wrap((a & (one_quarter - 1)) - one_quarter);
  int16_t result = exp_on_interval_minus_quarter_to_zero(multiply_by_pot(in_last_quarter, integer_bits));
  const int16_t removed = wrap(in_last_quarter - a);
  for (int k = 0; k < 7; ++k) {
    const int exponent = k - 2;
    if (integer_bits <= exponent) continue;
    if (removed & (1 << (fractional_bits + exponent))) result = mul(result, constant(kFactors[k]));
  }
  if (integer_bits > 5 && a < constant(-(int32_t{1} << (36 - integer_bits)))) result = 0;
  return a == 0 ? kOneQ0 : result;
}

// Newton-Raphson on d = (1 + x) / 2 (see fixed_point): 1/d in Q2.13.
int16_t reciprocal_of_half_denominator(int16_t half_denominator) {
  int16_t estimate = wrap(constant(1515870810) + mul(half_denominator, constant(-1010580540)));
  for (int i = 0; i < 3; ++i) {
    const int16_t error = wrap(kOneQ2 - mul(half_denominator, estimate));
    estimate = wrap(estimate + multiply_by_pot(mul(estimate, error), 2));
  }
  return estimate;
}

int16_t half_sum_with_one(int16_t x) {
  const int32_t sum = int32_t{x} + kOneQ0;
  return wrap((sum + (sum >= 0 ? 1 : -1)) / 2);
}

}  // namespace

int16_t logistic(int16_t a, int integer_bits) {
  if (a == 0) return 1 << 14;
  const int16_t magnitude = a > 0 ? a : negate(a);
  const int16_t e = exp_on_negative_values(negate(magnitude), integer_bits);
  const int16_t of_magnitude = multiply_by_pot(reciprocal_of_half_denominator(half_sum_with_one(e)), 1);
  return a > 0 ? of_magnitude : wrap(kOneQ0 - of_magnitude);
}

int16_t tanh(int16_t a, int integer_bits) {
  if (a == 0) return 0;
  const int16_t minus_magnitude = a < 0 ? a : negate(a);
  const int16_t e = exp_on_negative_values(minus_magnitude, integer_bits + 1);
  const int16_t of_magnitude =
      multiply_by_pot(wrap(reciprocal_of_half_denominator(half_sum_with_one(e)) - kOneQ2), 2);
  return a < 0 ? negate(of_magnitude) : of_magnitude;
}

}  // namespace fixed_point16

int32_t reciprocal(int32_t x, int integer_bits, int* num_bits_over_unit) {
  const uint32_t bits = static_cast<uint32_t>(x);
  const int leading_zeros = bits == 0 ? 32 : __builtin_clz(bits);
  *num_bits_over_unit = integer_bits - leading_zeros;
  // Normalized to [1, 2) with the leading one at bit 31; minus that one it is
  // the fraction in [0, 1) that 1/(1+x) takes.
  const uint32_t normalized = leading_zeros >= 32 ? 0 : bits << leading_zeros;
  const int32_t fraction = static_cast<int32_t>(normalized - (uint32_t{1} << 31));
  return fixed_point::one_over_one_plus_x_for_x_in_0_1(fraction);
}

}  // namespace floe::ref
