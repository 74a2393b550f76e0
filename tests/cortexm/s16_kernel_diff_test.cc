// SPDX-License-Identifier: Apache-2.0
// Host: the portable variant of the int16x8 Cortex-M kernels (the same
// blocking as the DSP and Helium ones) is bit-exact with the reference kernels.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/cortexm/s16_kernel_diff.h"

namespace {

void print(const char* line) { std::printf("%s\n", line); }

TEST(CortexmS16Kernels, MatchReferenceBitExact) {
  for (uint32_t seed : {1u, 7u, 20261129u}) {
    const floe::testing::S16DiffReport report = floe::testing::run_s16_kernel_diff(seed, 1000, print);
    EXPECT_EQ(report.gemm_cases, 1000);
    EXPECT_EQ(report.conv_cases, 1000);
    EXPECT_EQ(report.depthwise_cases, 1000);
    EXPECT_EQ(report.long_gemm_cases, 100);
    EXPECT_EQ(report.failures, 0) << "seed " << seed;
  }
}

}  // namespace
