// SPDX-License-Identifier: Apache-2.0
#include "converter/quantize/requantization.h"

#include <algorithm>
#include <cmath>

namespace floe::conv::quant {

QuantizedMultiplier quantize_multiplier(double real) {
  QuantizedMultiplier q;
  if (real == 0.0 || !std::isfinite(real)) return q;
  int exponent = 0;
  const double fraction = std::frexp(real, &exponent);
  int64_t fixed = static_cast<int64_t>(std::round(fraction * static_cast<double>(1LL << 31)));
  if (fixed == (1LL << 31)) {
    fixed /= 2;
    ++exponent;
  }
  if (exponent < -31) return q;  // too small to represent: TFLite stores 0
  q.multiplier = static_cast<int32_t>(fixed);
  q.shift = exponent;
  return q;
}

std::vector<QuantizedMultiplier> channel_multipliers(float input_scale,
                                                     const std::vector<float>& weight_scales,
                                                     float output_scale) {
  std::vector<QuantizedMultiplier> out;
  out.reserve(weight_scales.size());
  for (float w : weight_scales) {
    const double effective = static_cast<double>(input_scale) * static_cast<double>(w) /
                             static_cast<double>(output_scale);
    out.push_back(quantize_multiplier(effective));
  }
  return out;
}

QuantizedMultiplier fully_connected_multiplier(float input_scale, float weight_scale,
                                               float output_scale) {
  const float product = input_scale * weight_scale;  // float, as TFLM does
  return quantize_multiplier(static_cast<double>(product) / static_cast<double>(output_scale));
}

int32_t quantize_value(float value, float scale, int32_t zero_point, IntRange bounds) {
  const float q = std::round(value / scale);
  const double v = static_cast<double>(zero_point) + static_cast<double>(q);
  return static_cast<int32_t>(std::clamp(v, static_cast<double>(bounds.min), static_cast<double>(bounds.max)));
}

IntRange activation_range(FusedActivation act, float scale, int32_t zero_point, IntRange bounds) {
  IntRange r = bounds;
  switch (act) {
    case FusedActivation::kNone:
      break;
    case FusedActivation::kRelu:
      r.min = std::max(r.min, quantize_value(0.0f, scale, zero_point, bounds));
      break;
    case FusedActivation::kRelu6:
      r.min = std::max(r.min, quantize_value(0.0f, scale, zero_point, bounds));
      r.max = std::min(r.max, quantize_value(6.0f, scale, zero_point, bounds));
      break;
    case FusedActivation::kReluN1To1:
      r.min = std::max(r.min, quantize_value(-1.0f, scale, zero_point, bounds));
      r.max = std::min(r.max, quantize_value(1.0f, scale, zero_point, bounds));
      break;
  }
  return r;
}

AddSubRequantization add_sub_requantization(float input1_scale, float input2_scale,
                                            float output_scale, int32_t left_shift) {
  AddSubRequantization r;
  r.left_shift = left_shift;
  const double twice_max = 2.0 * static_cast<double>(std::max(input1_scale, input2_scale));
  r.input1 = quantize_multiplier(static_cast<double>(input1_scale) / twice_max);
  r.input2 = quantize_multiplier(static_cast<double>(input2_scale) / twice_max);
  r.output = quantize_multiplier(twice_max / (static_cast<double>(1 << r.left_shift) *
                                              static_cast<double>(output_scale)));
  return r;
}

QuantizedMultiplier mul_multiplier(float input1_scale, float input2_scale, float output_scale) {
  return quantize_multiplier(static_cast<double>(input1_scale) * static_cast<double>(input2_scale) /
                             static_cast<double>(output_scale));
}

int32_t input_radius(int input_integer_bits, int input_left_shift, int total_signed_bits) {
  // ldexp: a negative left shift (tiny scales) must not shift by a negative count.
  const double max_rescaled =
      std::ldexp(static_cast<double>((1 << input_integer_bits) - 1),
                 total_signed_bits - input_integer_bits - input_left_shift);
  // Tiny scales push it past int32 (a float->int cast out of range is
  // undefined): every difference is then within the radius, so saturate.
  return static_cast<int32_t>(std::min(std::floor(max_rescaled), 2147483647.0));
}

SoftmaxRequantization softmax_requantization(float beta, float input_scale) {
  constexpr int kScaledDiffIntegerBits = 5;
  SoftmaxRequantization r;
  const double real = std::min(static_cast<double>(beta) * static_cast<double>(input_scale) *
                                   static_cast<double>(1 << (31 - kScaledDiffIntegerBits)),
                               static_cast<double>((1LL << 31) - 1));
  const QuantizedMultiplier q = quantize_multiplier(real);
  r.input_multiplier = q.multiplier;
  r.input_left_shift = q.shift;
  r.diff_min = -input_radius(kScaledDiffIntegerBits, r.input_left_shift);
  return r;
}

SigmoidRequantization sigmoid_requantization(float input_scale) {
  constexpr int kInputIntegerBits = 4;
  SigmoidRequantization r;
  const double real =
      static_cast<double>(input_scale) * static_cast<double>(1 << (31 - kInputIntegerBits));
  int exponent = 0;
  const double fraction = std::frexp(real, &exponent);
  r.input_multiplier = static_cast<int32_t>(std::round(fraction * static_cast<double>(1LL << 31)));
  r.input_left_shift = exponent;
  r.input_range_radius = input_radius(kInputIntegerBits, r.input_left_shift);
  return r;
}

}  // namespace floe::conv::quant
