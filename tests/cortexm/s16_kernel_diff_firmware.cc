// SPDX-License-Identifier: Apache-2.0
// Board: the int16x8 Cortex-M kernels this board compiles (DSP on M4/M33,
// Helium on M55) bit-exact with the reference kernels on 1,000 seeded cases
// per kernel; exit status 0 only then (ctest runs this under QEMU).
#include "runtime/platform.h"
#include "tests/cortexm/s16_kernel_diff.h"

namespace {

void print(const char* line) {
  floe::platform::log(line);
  floe::platform::log("\n");
}

}  // namespace

int main() {
  floe::platform::init();
  const floe::testing::S16DiffReport report = floe::testing::run_s16_kernel_diff(1u, 1000, print);
  const bool pass = report.failures == 0 && report.gemm_cases == 1000 && report.conv_cases == 1000 &&
                    report.depthwise_cases == 1000 && report.long_gemm_cases == 100;
  print(pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
