// SPDX-License-Identifier: Apache-2.0
// Host: the portable variant of the Cortex-M kernels is bit-exact with the
// reference kernels on every case of kernel_diff.cc, for several seeds.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/cortexm/kernel_diff.h"

namespace {

void print(const char* line) { std::printf("%s\n", line); }

TEST(CortexmKernels, MatchReferenceBitExactOnHost) {
  for (uint32_t seed : {1u, 2u, 20240601u}) {
    const floe::testing::DiffReport report = floe::testing::run_cortexm_kernel_diff(seed, print);
    EXPECT_TRUE(report.exact) << "the host build must compile the portable variant";
    EXPECT_GT(report.cases, 300);
    EXPECT_EQ(report.failures, 0) << "seed " << seed;
  }
}

}  // namespace
