// SPDX-License-Identifier: Apache-2.0
// The int16x8 inner kernels behind the Cortex-M CONV2D, FULLY_CONNECTED
// (MATMUL) and DEPTHWISE_CONV2D: int16 activations, int8 weights, int64 biases,
// zero offsets (TFLite's 16x8 scheme). One declaration, one implementation per
// instruction set (s16_microkernels.cc):
//   DSP (M4, M33): SMLALD on halfword pairs into 64-bit sums;
//   Helium (M55): VMLALDAV on eight lanes into 64-bit sums;
//   portable C (the host build and other cores).
// Every implementation is bit-exact with the reference kernels
// (runtime/kernels/reference, TFLM's arithmetic): the 64-bit sum plus the
// bias, TFLM's 64-bit requantization, then the clamp.
//
// What the converter guarantees (converter/lower/backend_cortexm.cc), so that
// nothing here is derived at run time:
//   - per-channel arrays always: S16Requant's offset (the int64 bias folded
//     in), Q15 multiplier and right shift;
//   - GEMM weights are [n][k] rows (CONV2D filters OHWI, FULLY_CONNECTED
//     [N, K]); a convolution's padded taps are zeros (im2col writes them);
//   - s16_depthwise's 32-bit sums cannot overflow (see S16_DEPTHWISE in
//     schemas/floe.fbs).
#pragma once

#include <stdint.h>

namespace floe::cortexm {

// One output channel c's requantization: TFLM's
// MultiplyByQuantizedMultiplier(int64_t, ...) of sum + bias[c] with its
// reduction done and the bias and the rounding folded into one offset,
//   out = clamp((sum * multiplier[c] + offset[c]) >> right_shift[c])
//   offset[c] = bias[c] * multiplier[c] + 2^(right_shift[c] - 1)
// in wrapping 64-bit arithmetic (the reference wraps the same sums: equal
// modulo 2^64, so equal), the shift arithmetic, the result truncated to 32
// bits, then clamped to [act_min, act_max]. With a 32-bit sum, one SMLAL.
// A channel whose right shift r is in [16, 32) is written scaled to r = 32:
// multiplier << (32 - r) (below 2^31) and offset << (32 - r) (modulo 2^64).
// Bits [r, r + 32) of a 64-bit value are bits [32, 64) of it shifted left by
// 32 - r, so the result is then the high word of the 64-bit sum: one SMLAL,
// no shift.
struct S16Requant {
  const int64_t* offset;
  const int32_t* multiplier;   // in [0, 2^31): Q15, or Q15 << (32 - r)
  const int32_t* right_shift;  // in [8, 46]
  int32_t act_min, act_max;
};

// The converter's reduction of a channel's Q31 multiplier and shift (shift in
// [-31, 7], TFLite's range for the 16x8 scheme) to S16Requant's.
inline int32_t s16_reduced_multiplier(int32_t multiplier) {
  return multiplier < 0x7FFF0000 ? static_cast<int32_t>((int64_t{multiplier} + (1 << 15)) >> 16) : 0x7FFF;
}
inline int32_t s16_right_shift(int32_t shift) { return 15 - shift; }
inline int64_t s16_offset(int64_t bias, int32_t reduced_multiplier, int32_t right_shift) {
  return static_cast<int64_t>(static_cast<uint64_t>(bias) * static_cast<uint64_t>(int64_t{reduced_multiplier}) +
                              (uint64_t{1} << (right_shift - 1)));
}
// One channel's S16Requant entries from its bias, Q31 multiplier and shift.
inline void s16_channel_requantization(int64_t bias, int32_t multiplier, int32_t shift, int64_t* offset,
                                       int32_t* s16_multiplier, int32_t* right_shift) {
  int32_t m = s16_reduced_multiplier(multiplier), r = s16_right_shift(shift);
  uint64_t o = static_cast<uint64_t>(s16_offset(bias, m, r));
  if (r >= 16 && r < 32) {
    m = static_cast<int32_t>(static_cast<uint32_t>(m) << (32 - r));
    o <<= 32 - r;
    r = 32;
  }
  *offset = static_cast<int64_t>(o);
  *s16_multiplier = m;
  *right_shift = r;
}

// out[r * out_stride + c] = requant_c(sum_k a[r * a_stride + k] * w[c * k_size + k])
// for r < rows, c < channels. Uses: 1x1 convolutions (a = the input pixels),
// other convolutions (a = im2col rows), FULLY_CONNECTED (a = the batch rows).
// Strides in elements; no alignment is assumed beyond the element's own.
void s16_gemm(const int16_t* a, int32_t a_stride, int32_t rows, const int8_t* w, int32_t channels,
              int32_t k_size, const S16Requant& rq, int16_t* out, int32_t out_stride);

// The im2col rows the converter gives a convolution of k-column rows and
// `rows` output pixels: an even count of at least 2 within 512 bytes (the
// GEMM takes rows in pairs; more rows save only a call per chunk, and the
// scratch is arena), at most `rows`.
inline int32_t s16_im2col_rows(int32_t k_size, int32_t rows) {
  int32_t chunk = 512 / (2 * k_size) / 2 * 2;
  if (chunk < 2) chunk = 2;
  return chunk < rows ? chunk : rows;
}

// A depthwise convolution with channel multiplier 1, NHWC, filter
// [k_h][k_w][channels]:
//   out[n][oy][ox][c] = requant_c(sum over in-bounds taps of
//       in[n][oy * stride_h - pad_top + ky * dil_h][ox * stride_w - pad_left + kx * dil_w][c]
//       * filter[ky][kx][c])
// Taps outside the input are skipped (the reference kernels' semantics).
struct DepthwiseS16Shape {
  int32_t batches, in_h, in_w, channels;
  int32_t k_h, k_w, out_h, out_w;
  int32_t stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
};

void s16_depthwise(const DepthwiseS16Shape& shape, const int16_t* input, const int8_t* filter,
                   const S16Requant& rq, int16_t* output);

// Whether s16_depthwise's 32-bit sums hold every channel of `filter`
// ([taps][channels]): 2^15 * sum_taps |w[c]| < 2^31. The converter proves it
// before it chooses the kernel; the prepare checks it again.
inline bool s16_depthwise_sums_fit(const int8_t* filter, int32_t taps, int32_t channels) {
  for (int32_t c = 0; c < channels; ++c) {
    int32_t sum = 0;
    for (int32_t t = 0; t < taps; ++t) {
      const int32_t w = filter[t * channels + c];
      sum += w < 0 ? -w : w;
      if (sum >= 65536) return false;
    }
  }
  return true;
}

}  // namespace floe::cortexm
