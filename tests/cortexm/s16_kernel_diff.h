// SPDX-License-Identifier: Apache-2.0
// Differential test of the int16x8 Cortex-M kernels (s16_gemm, the CONV2D
// driver over it with and without im2col, s16_depthwise) against the int16x8
// reference kernels, which they must match bit for bit on every ISA.
// Freestanding (static buffers, a log callback) so the same seeded cases run
// as a host gtest (portable variant) and as firmware on each QEMU board (DSP
// on M4/M33, Helium on M55).
#pragma once

#include <stdint.h>

namespace floe::testing {

struct S16DiffReport {
  int gemm_cases = 0, conv_cases = 0, depthwise_cases = 0;
  int long_gemm_cases = 0;  // k over 490: several 32-bit partial-sum blocks
  int failures = 0;
};

using S16DiffLog = void (*)(const char* line);

// `cases` random shapes per kernel (and cases / 10 GEMMs with long rows): odd row/channel counts, k around the DSP
// kernel's 4 and Helium's 8 columns, channel tails of the depthwise blocks,
// strides, padding, dilation, batches; activations and weights at their
// extremes (-32768 x -128) as often as random, int64 biases up to 2^40 (and
// near 2^62, where the 64-bit arithmetic wraps), per-channel multipliers
// (capped ones included) with shifts from -31 to 7, every clamp kind.
S16DiffReport run_s16_kernel_diff(uint32_t seed, int cases, S16DiffLog log);

}  // namespace floe::testing
