// SPDX-License-Identifier: Apache-2.0
// How TFLite's int8 scheme turns float scales into the integers its kernels
// use (tensorflow/lite/kernels/internal/quantization_util.cc and the TFLM
// prepare functions of each op), computed once on the host. Every value here
// is what TFLM derives at its Prepare(), bit for bit, so a floe int8 kernel
// fed with them reproduces TFLM's outputs exactly.
#pragma once

#include <cstdint>
#include <vector>

namespace floe::conv::quant {

// real ~= multiplier * 2^(shift - 31), multiplier in [2^30, 2^31) (or 0);
// shift > 0 is a left shift. TFLite's QuantizeMultiplier: frexp, round half
// away from zero, a rounding that reaches 2^31 halves it, shift < -31 is 0.
struct QuantizedMultiplier {
  int32_t multiplier = 0;
  int32_t shift = 0;
};
QuantizedMultiplier quantize_multiplier(double real);

// One per output channel (or one): input_scale * weight_scale[c] / output_scale
// in double, as TFLite's PopulateConvolutionQuantizationParams (CONV_2D,
// DEPTHWISE_CONV_2D, per-channel FULLY_CONNECTED).
std::vector<QuantizedMultiplier> channel_multipliers(float input_scale,
                                                     const std::vector<float>& weight_scales,
                                                     float output_scale);

// Per-tensor FULLY_CONNECTED: TFLM multiplies the two float scales in float
// before widening (GetQuantizedConvolutionMultipler), which can differ from
// the double product in the last bit of the multiplier.
QuantizedMultiplier fully_connected_multiplier(float input_scale, float weight_scale,
                                               float output_scale);

// Clamp range of a fused activation (0 none, 1 relu, 2 relu6, 3 relu_n1_to_1)
// in the integers of an output with `scale` and `zero_point` whose dtype
// holds `bounds` (int8 by default; int16 for 16x8 ops).
struct IntRange {
  int32_t min = -128;
  int32_t max = 127;
};
enum class FusedActivation { kNone, kRelu, kRelu6, kReluN1To1 };
IntRange activation_range(FusedActivation act, float scale, int32_t zero_point, IntRange bounds = {});

// ADD and SUB: both inputs shifted left by `left_shift` bits (TFLM: 20 for
// int8, 15 for int16) and rescaled onto twice the larger input scale, the sum
// rescaled onto the output.
struct AddSubRequantization {
  int32_t left_shift = 20;
  QuantizedMultiplier input1, input2, output;
};
AddSubRequantization add_sub_requantization(float input1_scale, float input2_scale,
                                            float output_scale, int32_t left_shift = 20);

// MUL: (q1 - zp1) * (q2 - zp2) rescaled once by s1 * s2 / s_out.
QuantizedMultiplier mul_multiplier(float input1_scale, float input2_scale, float output_scale);

// SOFTMAX (int8 in, output 1/256 with zero point -128): beta * input_scale in
// Q5.26 fixed point, and the most negative difference from the row maximum
// that still contributes.
struct SoftmaxRequantization {
  int32_t input_multiplier = 0;
  int32_t input_left_shift = 0;
  int32_t diff_min = 0;
};
SoftmaxRequantization softmax_requantization(float beta, float input_scale);

// LOGISTIC and TANH: the input rescaled to Q4.27; inputs farther than
// input_range_radius from the zero point saturate.
struct SigmoidRequantization {
  int32_t input_multiplier = 0;
  int32_t input_left_shift = 0;
  int32_t input_range_radius = 0;
};
SigmoidRequantization sigmoid_requantization(float input_scale);

// The largest |rescaled input| TFLite's fixed-point exp/logistic accepts
// (CalculateInputRadius).
int32_t input_radius(int input_integer_bits, int input_left_shift, int total_signed_bits = 31);

// round(value / scale) + zero_point, clamped to `bounds` (int8 by default),
// with TFLite's rounding (half away from zero) of the float quotient.
int32_t quantize_value(float value, float scale, int32_t zero_point, IntRange bounds = {});

}  // namespace floe::conv::quant
