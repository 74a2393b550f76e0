// SPDX-License-Identifier: Apache-2.0
// Tests for RANDOM_UNIFORM's generator (random_uniform.h): Philox4x32-10
// against the known-answer vectors Random123 (the generator's reference
// implementation, by its authors) publishes; the counter's carries; the
// words-to-values conversions of TF's float32 and float64 draws; and that a skip equals drawing and discarding. TF's own values
// are checked end to end in tests/converter/ops/random_ops_test.cc.
#include "runtime/kernels/reference/random_uniform.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace floe::ref {
namespace {

std::vector<uint32_t> words_at(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1) {
  Philox4x32 s{{k0, k1}, {c0, c1, c2, c3}};
  uint32_t out[4];
  philox_next(s, out);
  return {out[0], out[1], out[2], out[3]};
}

TEST(RandomUniform, PhiloxMatchesRandom123KnownAnswers) {
  EXPECT_EQ(words_at(0, 0, 0, 0, 0, 0), (std::vector<uint32_t>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(words_at(~0u, ~0u, ~0u, ~0u, ~0u, ~0u),
            (std::vector<uint32_t>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(words_at(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u),
            (std::vector<uint32_t>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(RandomUniform, SeedsFillKeyAndCounterAsTfDoes) {
  const Philox4x32 s = philox_seeded(0x0123456789abcdefull, 0xfedcba9876543210ull);
  EXPECT_EQ(s.key[0], 0x89abcdefu);
  EXPECT_EQ(s.key[1], 0x01234567u);
  EXPECT_EQ(s.counter[0], 0u);
  EXPECT_EQ(s.counter[1], 0u);
  EXPECT_EQ(s.counter[2], 0x76543210u);
  EXPECT_EQ(s.counter[3], 0xfedcba98u);
}

TEST(RandomUniform, SkipCarriesThroughAll128Bits) {
  Philox4x32 s{{0, 0}, {0xffffffffu, 0xffffffffu, 0xffffffffu, 7}};
  philox_skip(s, 1);
  EXPECT_EQ(s.counter[0], 0u);
  EXPECT_EQ(s.counter[1], 0u);
  EXPECT_EQ(s.counter[2], 0u);
  EXPECT_EQ(s.counter[3], 8u);
  Philox4x32 t{{0, 0}, {0xfffffff0u, 5, 0, 0}};
  philox_skip(t, (uint64_t{3} << 32) | 0x20u);  // low word carries into the high count
  EXPECT_EQ(t.counter[0], 0x10u);
  EXPECT_EQ(t.counter[1], 9u);
  EXPECT_EQ(t.counter[2], 0u);
}

TEST(RandomUniform, SkippingEqualsDrawingAndDiscarding) {
  Philox4x32 drawn = philox_seeded(1, 14), skipped = philox_seeded(1, 14);
  uint32_t words[4];
  for (int i = 0; i < 300; ++i) philox_next(drawn, words);
  philox_skip(skipped, 300);
  uint32_t a[4], b[4];
  philox_next(drawn, a);
  philox_next(skipped, b);
  EXPECT_EQ(std::vector<uint32_t>(a, a + 4), std::vector<uint32_t>(b, b + 4));
}

// Values lie in [0, 1): a float32 value is (1 + m / 2^23) - 1 for the low 23
// bits m of its word; four per counter, in word order. The float64 draw uses
// 52 bits of two words, two values per counter.
TEST(RandomUniform, ValuesComeFromTheWordsInOrder) {
  Philox4x32 s = philox_seeded(1, 14), copy = s;
  uint32_t w[4];
  philox_next(copy, w);
  float values[6];
  random_uniform(s, false, values, 6);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(values[k], static_cast<float>(w[k] & 0x7fffffu) / 8388608.0f) << k;
  }
  EXPECT_EQ(s.counter[0], 2u);  // 6 values took two counters
  Philox4x32 d = philox_seeded(1, 14);
  float doubles[2];
  random_uniform(d, true, doubles, 2);
  const double first = (static_cast<double>(w[0] & 0xfffffu) * 4294967296.0 + w[1]) / 4503599627370496.0;
  EXPECT_EQ(doubles[0], static_cast<float>(first));
  EXPECT_EQ(d.counter[0], 1u);
  // 40,000 values, each in [0, 1), average within 0.005 of 1/2 (5 standard errors).
  Philox4x32 many = philox_seeded(5, 0);
  std::vector<float> draws(40000);
  random_uniform(many, false, draws.data(), draws.size());
  double sum = 0;
  for (float x : draws) {
    ASSERT_GE(x, 0.0f);
    ASSERT_LT(x, 1.0f);
    sum += x;
  }
  EXPECT_NEAR(sum / static_cast<double>(draws.size()), 0.5, 0.005);
}

}  // namespace
}  // namespace floe::ref
