// SPDX-License-Identifier: Apache-2.0
// The int8 kernels' host-side preparation helpers (runtime/kernels/reference,
// header-inline) and the converter's (converter/quantize) derive the same
// TFLite integers from float scales: two independent writings of TFLite's
// Prepare arithmetic, compared on random scales.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "converter/quantize/requantization.h"
#include "runtime/kernels/reference/binary.h"
#include "runtime/kernels/reference/quantization.h"
#include "runtime/kernels/reference/softmax.h"
#include "runtime/kernels/reference/unary.h"

namespace floe::ref {
namespace {

constexpr int kDraws = 100000;

float random_scale(std::mt19937& gen, int min_exponent, int max_exponent) {
  const double mantissa = std::uniform_real_distribution<double>(0.5, 1.0)(gen);
  const int exponent = std::uniform_int_distribution<int>(min_exponent, max_exponent)(gen);
  return static_cast<float>(std::ldexp(mantissa, exponent));
}

void expect_same(const conv::quant::QuantizedMultiplier& theirs, int32_t multiplier, int32_t shift) {
  ASSERT_EQ(theirs.multiplier, multiplier);
  ASSERT_EQ(theirs.shift, shift);
}

TEST(Int8PrepareAgreement, KernelHelpersMatchTheConverter) {
  std::mt19937 gen(7);
  for (int i = 0; i < kDraws; ++i) {
    const float s1 = random_scale(gen, -12, 2), s2 = random_scale(gen, -12, 2);
    const float so = random_scale(gen, -12, 2);
    const int32_t zp = std::uniform_int_distribution<int32_t>(-128, 127)(gen);

    const double real = std::ldexp(std::uniform_real_distribution<double>(0.5, 1.0)(gen),
                                   std::uniform_int_distribution<int>(-40, 20)(gen));
    const QuantizedMultiplier q = quantize_multiplier(real);
    expect_same(conv::quant::quantize_multiplier(real), q.multiplier, q.shift);

    const AddS8Params add = prepare_add_s8(s1, zp, s2, zp, so, zp, Activation::kNone);
    const conv::quant::AddSubRequantization theirs_add = conv::quant::add_sub_requantization(s1, s2, so);
    ASSERT_EQ(theirs_add.left_shift, add.left_shift);
    expect_same(theirs_add.input1, add.input1_multiplier, add.input1_shift);
    expect_same(theirs_add.input2, add.input2_multiplier, add.input2_shift);
    expect_same(theirs_add.output, add.output_multiplier, add.output_shift);

    const MulS8Params mul = prepare_mul_s8(s1, zp, s2, zp, so, zp, Activation::kNone);
    expect_same(conv::quant::mul_multiplier(s1, s2, so), mul.output_multiplier, mul.output_shift);

    const float beta = std::uniform_int_distribution<int>(0, 3)(gen) == 0
                           ? static_cast<float>(std::uniform_real_distribution<double>(0.25, 2.0)(gen))
                           : 1.0f;
    const float softmax_scale = random_scale(gen, -9, 0);
    const SoftmaxS8Params sm = prepare_softmax_s8(beta, softmax_scale);
    const conv::quant::SoftmaxRequantization theirs_sm =
        conv::quant::softmax_requantization(beta, softmax_scale);
    ASSERT_EQ(theirs_sm.input_multiplier, sm.input_multiplier);
    ASSERT_EQ(theirs_sm.input_left_shift, sm.input_left_shift);
    ASSERT_EQ(theirs_sm.diff_min, sm.diff_min);

    const FixedPointActivationS8Params lp = prepare_logistic_s8(softmax_scale, zp);
    const conv::quant::SigmoidRequantization theirs_lp = conv::quant::sigmoid_requantization(softmax_scale);
    ASSERT_EQ(theirs_lp.input_multiplier, lp.input_multiplier);
    ASSERT_EQ(theirs_lp.input_left_shift, lp.input_left_shift);
    ASSERT_EQ(theirs_lp.input_range_radius, lp.input_range_radius);

    const Activation acts[] = {Activation::kNone, Activation::kRelu, Activation::kRelu6};
    const conv::quant::FusedActivation theirs_acts[] = {conv::quant::FusedActivation::kNone,
                                                        conv::quant::FusedActivation::kRelu,
                                                        conv::quant::FusedActivation::kRelu6};
    const int a = std::uniform_int_distribution<int>(0, 2)(gen);
    const QuantizedRange r = quantized_activation_range_s8(acts[a], so, zp);
    const conv::quant::IntRange theirs_r = conv::quant::activation_range(theirs_acts[a], so, zp);
    ASSERT_EQ(theirs_r.min, r.min);
    ASSERT_EQ(theirs_r.max, r.max);

    std::vector<float> weight_scales(4);
    for (float& w : weight_scales) w = random_scale(gen, -12, -2);
    int32_t mult[4], shift[4];
    quantize_channel_multipliers(s1, weight_scales.data(), 4, so, mult, shift);
    const auto theirs_channels = conv::quant::channel_multipliers(s1, weight_scales, so);
    ASSERT_EQ(theirs_channels.size(), 4u);
    for (int c = 0; c < 4; ++c) expect_same(theirs_channels[c], mult[c], shift[c]);
  }
}

}  // namespace
}  // namespace floe::ref
