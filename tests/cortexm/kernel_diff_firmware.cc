// SPDX-License-Identifier: Apache-2.0
// Board: the FPU (M4, M33) or Helium (M55) variant of the Cortex-M kernels
// within the stated bound of the reference kernels on every case of
// kernel_diff.cc; exit status 0 only then (ctest runs this under QEMU).
#include "runtime/platform.h"
#include "tests/cortexm/kernel_diff.h"

namespace {

void print(const char* line) {
  floe::platform::log(line);
  floe::platform::log("\n");
}

}  // namespace

int main() {
  floe::platform::init();
  int failures = 0;
  constexpr uint32_t kSeeds[] = {1u, 2u};
  for (uint32_t seed : kSeeds) failures += floe::testing::run_cortexm_kernel_diff(seed, print).failures;
  print(failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
