// SPDX-License-Identifier: Apache-2.0
// Board: the int8 Cortex-M kernels this board compiles (DSP on M4/M33, the
// M55's own) bit-exact with the int8 reference kernels on 1,000 seeded cases
// per kernel; exit status 0 only then (ctest runs this under QEMU).
#include "runtime/platform.h"
#include "tests/cortexm/s8_kernel_diff.h"

namespace {

void print(const char* line) {
  floe::platform::log(line);
  floe::platform::log("\n");
}

}  // namespace

int main() {
  floe::platform::init();
  const floe::testing::S8DiffReport report = floe::testing::run_s8_kernel_diff(1u, 1000, print);
#if defined(FLOE_CORTEXM_S8_MVE)
  // Helium builds im2col rows by byte gathers where the window allows it:
  // the cases must have reached that path, not only the per-tap copy.
  const bool paths_covered = report.gather_conv_cases > 0;
  if (!paths_covered) print("no convolution case took the gather im2col");
#else
  const bool paths_covered = report.gather_conv_cases == 0;
#endif
  const bool pass = report.failures == 0 && paths_covered;
  print(pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
