// SPDX-License-Identifier: Apache-2.0
// The host-side derivation of int8 multipliers, shifts and ranges. The fixed
// expectations come from outside floe: the SOFTMAX and ADD cases of
// ../shared/corpus/int8_kernels state the values TFLite's prepare produced
// (softmax: beta 1, input scale 1/255; add: equal input scales, output scale
// twice theirs), restated here as numbers.
#include "converter/quantize/requantization.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

namespace floe::conv::quant {
namespace {

double value_of(QuantizedMultiplier q) {
  return std::ldexp(static_cast<double>(q.multiplier), q.shift - 31);
}

TEST(Requantization, QuantizeMultiplierEdges) {
  EXPECT_EQ(quantize_multiplier(0.0).multiplier, 0);
  EXPECT_EQ(quantize_multiplier(0.5).multiplier, 1 << 30);
  EXPECT_EQ(quantize_multiplier(0.5).shift, 0);
  EXPECT_EQ(quantize_multiplier(1.0).multiplier, 1 << 30);
  EXPECT_EQ(quantize_multiplier(1.0).shift, 1);
  // Rounds up to 2^31: halved, exponent raised.
  const QuantizedMultiplier almost_one = quantize_multiplier(1.0 - std::ldexp(1.0, -40));
  EXPECT_EQ(almost_one.multiplier, 1 << 30);
  EXPECT_EQ(almost_one.shift, 1);
  // Below 2^-32 TFLite stores zero.
  EXPECT_EQ(quantize_multiplier(std::ldexp(1.0, -33)).multiplier, 0);
  EXPECT_EQ(quantize_multiplier(std::ldexp(1.0, -33)).shift, 0);
  EXPECT_EQ(quantize_multiplier(std::ldexp(1.0, -32)).shift, -31);
}

TEST(Requantization, QuantizeMultiplierIsCloseOnRandomScales) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-30.0, 8.0);
  for (int i = 0; i < 100000; ++i) {
    const double real = std::pow(2.0, exponent(rng));
    const QuantizedMultiplier q = quantize_multiplier(real);
    ASSERT_GE(q.multiplier, 1 << 30) << real;
    ASSERT_LE(std::fabs(value_of(q) - real), std::ldexp(real, -31)) << real;
  }
}

TEST(Requantization, SoftmaxMatchesTfliteCase) {
  const SoftmaxRequantization r = softmax_requantization(1.0f, 1.0f / 255.0f);
  EXPECT_EQ(r.input_multiplier, 1077952640);
  EXPECT_EQ(r.input_left_shift, 19);
  EXPECT_EQ(r.diff_min, -3968);
}

TEST(Requantization, AddMatchesTfliteCase) {
  const float s = 0.0078125f;
  const AddSubRequantization r = add_sub_requantization(s, s, 2 * s);
  EXPECT_EQ(r.left_shift, 20);
  EXPECT_EQ(r.input1.multiplier, 1073741824);
  EXPECT_EQ(r.input1.shift, 0);
  EXPECT_EQ(r.input2.multiplier, 1073741824);
  EXPECT_EQ(r.input2.shift, 0);
  EXPECT_EQ(r.output.multiplier, 1073741824);
  EXPECT_EQ(r.output.shift, -19);
}

TEST(Requantization, AddRescalesTheSmallerInputBelowOneHalf) {
  const float s1 = 0.02f, s2 = 0.05f, so = 0.1f;
  const AddSubRequantization r = add_sub_requantization(s1, s2, so);
  const double twice_max = 2.0 * static_cast<double>(s2);
  EXPECT_NEAR(value_of(r.input1), s1 / twice_max, 1e-9);
  EXPECT_NEAR(value_of(r.input2), 0.5, 1e-9);
  EXPECT_NEAR(value_of(r.output), twice_max / (1 << 20) / so, 1e-15);
}

TEST(Requantization, ActivationRanges) {
  // Output scale 0.05, zero point -10: 0.0 -> -10, 6.0 -> 110, +-1 -> 10 / -30.
  EXPECT_EQ(activation_range(FusedActivation::kNone, 0.05f, -10).min, -128);
  EXPECT_EQ(activation_range(FusedActivation::kNone, 0.05f, -10).max, 127);
  EXPECT_EQ(activation_range(FusedActivation::kRelu, 0.05f, -10).min, -10);
  EXPECT_EQ(activation_range(FusedActivation::kRelu, 0.05f, -10).max, 127);
  EXPECT_EQ(activation_range(FusedActivation::kRelu6, 0.05f, -10).max, 110);
  EXPECT_EQ(activation_range(FusedActivation::kReluN1To1, 0.05f, -10).min, -30);
  EXPECT_EQ(activation_range(FusedActivation::kReluN1To1, 0.05f, -10).max, 10);
  // A range wider than int8 stays at the int8 limits.
  EXPECT_EQ(activation_range(FusedActivation::kRelu6, 0.01f, 0).max, 127);
  EXPECT_EQ(activation_range(FusedActivation::kRelu, 0.01f, -128).min, -128);
}

TEST(Requantization, ConvChannelsUseDoubleAndFullyConnectedUsesFloatProduct) {
  const float in = 0.584703f, out = 0.1f;
  const std::vector<float> w = {0.001332f, 0.0007f};
  const std::vector<QuantizedMultiplier> m = channel_multipliers(in, w, out);
  ASSERT_EQ(m.size(), 2u);
  for (size_t c = 0; c < w.size(); ++c) {
    EXPECT_EQ(m[c].multiplier, quantize_multiplier(static_cast<double>(in) * w[c] / out).multiplier);
  }
  const QuantizedMultiplier fc = fully_connected_multiplier(in, w[0], out);
  EXPECT_EQ(fc.multiplier, quantize_multiplier(static_cast<double>(in * w[0]) / out).multiplier);
}

TEST(Requantization, SigmoidRadius) {
  // Input scale 0.1: 0.1 * 2^27 = 13421772.8 = 0.8 * 2^24 -> shift 24,
  // radius = floor(15 * 2^27 / 2^24) = 120.
  const SigmoidRequantization r = sigmoid_requantization(0.1f);
  EXPECT_EQ(r.input_left_shift, 24);
  EXPECT_EQ(r.input_range_radius, 120);
  EXPECT_NEAR(std::ldexp(r.input_multiplier, r.input_left_shift - 31), 0.1 * (1 << 27), 1.0);
}

}  // namespace
}  // namespace floe::conv::quant
