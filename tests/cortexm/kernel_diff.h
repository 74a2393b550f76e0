// SPDX-License-Identifier: Apache-2.0
// Differential test of the Cortex-M kernels (runtime/kernels/cortexm) against
// the reference kernels, linked into one binary. Freestanding (static buffers,
// no heap, no I/O but a log callback) so the same cases run as a host gtest
// and as firmware on each QEMU board (tests/cortexm/CMakeLists.txt).
#pragma once

#include <stdint.h>

namespace floe::testing {

using DiffLog = void (*)(const char* line);

struct DiffReport {
  int cases = 0;
  int failures = 0;
  bool exact = false;  // bit-exactness was required (the portable variant)
};

// Seeded cases around the kernels' block sizes (8 / 16 columns or channels and
// their tails), every transpose, stride, dilation and padding kind, with and
// without bias, each fused activation. The portable variant must match the
// reference bit for bit; the FPU and Helium variants (fused multiply-add,
// lane-split sums) within the dot-product bound |opt - ref| <= (terms + 2) *
// 2^-23 * sum|products| per element. Each failure is logged with the seed.
DiffReport run_cortexm_kernel_diff(uint32_t seed, DiffLog log);

}  // namespace floe::testing
