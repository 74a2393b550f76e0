// SPDX-License-Identifier: Apache-2.0
// Host: the portable variant of the int8 Cortex-M kernels (the same blocking
// as the DSP one) is bit-exact with the int8 reference kernels.
#include <gtest/gtest.h>

#include <cstdio>

#include "runtime/kernels/cortexm/s8_microkernels.h"
#include "tests/cortexm/s8_kernel_diff.h"

namespace {

void print(const char* line) { std::printf("%s\n", line); }

TEST(CortexmS8Kernels, MatchReferenceBitExact) {
  for (uint32_t seed : {1u, 7u, 20261126u}) {
    const floe::testing::S8DiffReport report = floe::testing::run_s8_kernel_diff(seed, 1000, print);
    EXPECT_EQ(report.gemm_cases, 1000);
    EXPECT_EQ(report.conv_cases, 1000);
    EXPECT_EQ(report.narrow_gemm_cases, 1000);
    EXPECT_EQ(report.narrow_conv_cases, 1000);
    EXPECT_EQ(report.depthwise_cases, 1000);
    EXPECT_EQ(report.avg_pool_cases, 1000);
    EXPECT_EQ(report.short_gemm_cases, 1000);
    EXPECT_EQ(report.short_conv_cases, 1000);
    EXPECT_EQ(report.short_depthwise_cases, 1000);
    EXPECT_EQ(report.short_strided_gemm_cases, 7 * 3 * 2);
    EXPECT_EQ(report.packed_gemm_cases, 1000);
    EXPECT_GT(report.short_edge_checks, 22 * 4 * 2049);
    EXPECT_EQ(report.gather_conv_cases, 0);  // a Helium-only path
#if defined(FLOE_S8_X86) || defined(FLOE_S8_NEON)
    EXPECT_EQ(report.split_cases, 1000);
#endif
#if defined(FLOE_S8_X86)
    if (floe::cortexm::s8_x86_vnni_available()) {
      // The GEMM, narrow-weight and split cases of each.
      EXPECT_EQ(report.unsigned_gemm_cases, 3000);
      EXPECT_EQ(report.unsigned_conv_cases, 3000);
    } else {
      std::printf("no AVX512-VNNI on this CPU: the unsigned-input GEMM is not exercised\n");
    }
#endif
    EXPECT_EQ(report.failures, 0) << "seed " << seed;
  }
}

}  // namespace
