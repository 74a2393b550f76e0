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
  const int failures = floe::testing::run_s8_kernel_diff(1u, 1000, print).failures;
  print(failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
