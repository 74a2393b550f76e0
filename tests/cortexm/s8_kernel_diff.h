// SPDX-License-Identifier: Apache-2.0
// Differential test of the int8 Cortex-M kernels (s8_gemm, the CONV2D driver
// over it with and without im2col, s8_depthwise, avg_pool2d_s8) against the int8 reference
// kernels, which they must match bit for bit on every ISA. Freestanding
// (static buffers, a log callback) so the same seeded cases run as a host gtest
// (portable variant) and as firmware on each QEMU board (DSP variant on M4/M33,
// the M55's own variant there).
#pragma once

#include <stdint.h>

namespace floe::testing {

struct S8DiffReport {
  int gemm_cases = 0, conv_cases = 0, depthwise_cases = 0, avg_pool_cases = 0;
  // The same cases on the short requantization (S8Requant::short_path), and
  // its edge checks: DSP and portable builds (not the M55's Helium kernels).
  int short_gemm_cases = 0, short_conv_cases = 0, short_depthwise_cases = 0, short_edge_checks = 0;
  // Fixed GEMM shapes at the edges of the channel-pair paths (k beyond 64,
  // rows laid wider than k).
  int short_strided_gemm_cases = 0;
  // Convolution cases whose im2col ran on Helium byte gathers
  // (Conv2DS8Plan::gather_im2col): 0 on the other builds.
  int gather_conv_cases = 0;
  // The packed-pair GEMM (s8_gemm_packed): random row counts (odd ones
  // included), even channel counts, k every multiple of 8 up to 64.
  int packed_gemm_cases = 0;
  // GEMM and convolution cases with weights in [-127, 127] and
  // S8Requant::narrow_weights (the host targets' *_NARROW_WEIGHTS kernels).
  int narrow_gemm_cases = 0, narrow_conv_cases = 0;
  // x86-64 with AVX512-VNNI: GEMM and convolution cases again with the
  // unsigned-input bias (S8Requant::bias_unsigned); 0 elsewhere.
  int unsigned_gemm_cases = 0, unsigned_conv_cases = 0;
  // The host targets' SIMD builds: GEMM, convolution and depthwise cases
  // split across 2-4 threads (runtime/core/parallel.h); 0 on the boards.
  int split_cases = 0;
  int failures = 0;
};

using S8DiffLog = void (*)(const char* line);

// `cases` random shapes per kernel: odd row/channel counts, k % 4 != 0,
// strides, padding, dilation, batches, input zero points including -128 and
// 127, per-channel multipliers with left and right shifts, every clamp kind;
// then (not on Helium) the same case kinds on the short requantization with
// shifts in [-22, -1] and the converter's doubled bias, and its rounding edges.
S8DiffReport run_s8_kernel_diff(uint32_t seed, int cases, S8DiffLog log);

}  // namespace floe::testing
