// SPDX-License-Identifier: Apache-2.0
// The two int8 inner kernels behind the Cortex-M CONV2D, FULLY_CONNECTED
// (MATMUL) and DEPTHWISE_CONV2D: one declaration, one implementation per
// instruction set, chosen by the compiler's target macros (isa.h):
//   DSP (M4, M33, and the fallback on any Arm M-profile core): SMLAD/SXTB16
//     (s8_gemm.cc, s8_gemm_packed.cc, s8_depthwise.cc over s8_arithmetic.h);
//   Helium (M55): VMLADAVA and friends (s8_gemm_mve.cc, s8_depthwise_mve.cc);
//   portable C (the x86-64 host build), bit-exact with the reference, so the
//   host tests exercise the same blocking and requantization;
//   Advanced SIMD (aarch64: the Cortex-A targets' default int8 GEMM).
// Every implementation is bit-exact with the int8 reference kernels
// (runtime/kernels/reference): TFLite's double-rounding requantization
// (ref::multiply_by_quantized_multiplier), then the output zero point, then
// the clamp.
//
// What the converter guarantees (converter/lower/backend_cortexm.cc), so that
// nothing here is derived at run time:
//   - per-channel arrays always: a per-tensor multiplier/shift is written as
//     [channels] copies;
//   - GEMM weights are [n][k] rows (CONV2D filters OHWI, FULLY_CONNECTED
//     [N, K]) and the bias is folded: bias'[c] = bias[c] - input_zero_point *
//     sum_k w[c][k], so the GEMM sums raw int8 products; a convolution's
//     padded taps must therefore read the input zero point (im2col fills them
//     with it), never be skipped;
//   - depthwise keeps the raw bias (absent = zeros written) and adds the input
//     offset itself, so padded taps may be skipped.
#pragma once

#include <stdint.h>

namespace floe::cortexm {

// One output channel c's requantization:
//   out = clamp(multiply_by_quantized_multiplier(acc + bias[c], multiplier[c],
//               shift[c]) + output_offset, act_min, act_max)
// bias, multiplier and shift are the model's constant arrays, [channels].
//
// short_path (the *_SHORT_REQUANT kernels; DSP and portable builds only): the
// converter proved multiplier[c] in [2^30, 2^31), shift[c] = -e with e in
// [1, 22] and |acc + bias| < 2^30, and wrote bias[c] doubled. Then, with
// x2 = 2 * (acc + bias) and K = (2 * output_offset + 1) << (e - 1),
//   out = (SMMLAR(x2, multiplier, K - [x2 < 0])) >> e
// is exactly the double rounding plus the output offset: SMMLAR's rounded high
// word of x2 * m is (x * m + 2^30) >> 31 (never saturating: |x| < 2^30), and
// (y - [y < 0] + 2^(e-1)) >> e rounds half away from zero; x's sign may stand
// for y's because y = 0 gives the same result either way when e >= 1.
struct S8Requant {
  const int32_t* bias;
  const int32_t* multiplier;
  const int32_t* shift;  // positive = left shift
  int32_t output_offset;
  int32_t act_min, act_max;
  bool short_path = false;
  // GEMM weights all in [-127, 127] (the *_NARROW_WEIGHTS kernels): a pair of
  // products fits int16. Only the aarch64 build uses it.
  bool narrow_weights = false;
#if defined(__x86_64__)
  // GEMM only, when the model gives it: bias[c] - 128 * sum_k w[c][k], the
  // bias for inputs read as unsigned bytes (a + 128), which AVX512-VNNI's
  // VPDPBUSD multiplies four at a time (s8_gemm_vnni). Null: not given.
  const int32_t* bias_unsigned = nullptr;
#endif
};

// out[r * out_stride + c] = requant_c(sum_k a[r * a_stride + k] * w[c * k_size + k])
// for r < rows, c < channels. Uses: 1x1 convolutions (a = the input pixels),
// other convolutions (a = im2col rows), FULLY_CONNECTED (a = the batch rows).
// No alignment is assumed for any pointer or stride. a spans rows * a_stride
// readable bytes (a_stride >= k_size): the DSP kernel may read a row's bytes
// past k_size (up to a_stride), which it multiplies by zero weights.
void s8_gemm(const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w, int32_t channels,
             int32_t k_size, const S8Requant& rq, int8_t* out, int32_t out_stride);

// The host targets' builds of s8_gemm's full-requantization case, which
// s8_gemm hands them (s8_depthwise likewise, below): Cortex-A's Advanced SIMD
// (s8_microkernels_neon.cc) and x86-64's AVX2 when the CPU has it
// (s8_microkernels_x86.cc).
#if defined(__aarch64__) && defined(__ARM_NEON)
#define FLOE_S8_NEON 1
void s8_gemm_neon(const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w, int32_t channels,
                  int32_t k_size, const S8Requant& rq, int8_t* out, int32_t out_stride);
#elif defined(__x86_64__)
#define FLOE_S8_X86 1
bool s8_x86_avx2_available();
bool s8_x86_vnni_available();  // AVX512-VNNI (+ VL, BW): s8_gemm_vnni
void s8_gemm_avx2(const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w, int32_t channels,
                  int32_t k_size, const S8Requant& rq, int8_t* out, int32_t out_stride);
void s8_gemm_vnni(const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w, int32_t channels,
                  int32_t k_size, const S8Requant& rq, int8_t* out, int32_t out_stride);
#endif

// The row stride an im2col buffer of k-column rows best gives s8_gemm: on
// the DSP build with the short requantization, k rounded up to 8 while that
// fits the kernel's widened weights (64 columns: person_detect's first layer,
// k = 9, then runs 8 columns per loop instead of a scalar tail); k elsewhere.
inline int32_t s8_gemm_row_stride(int32_t k_size, bool short_path) {
#if defined(FLOE_CORTEXM_S8_MVE)
  (void)short_path;
  return k_size;
#else
  const int32_t k8 = (k_size + 7) & ~7;
  return short_path && k8 <= 64 ? k8 : k_size;
#endif
}

// The packed-pair GEMM (CONV2D 1x1 on the short requantization, k a
// multiple of 8 up to kPackedGemmMaxK, an even channel count): the converter
// writes, per channel pair (c, c+1), k + 8 words (s8_pack_gemm_pair):
//   per 4 columns j..j+3: c's even lanes (w[j], w[j+2]) and odd lanes
//     (w[j+1], w[j+3]) as int16 halfword pairs, then c+1's;
//   then c's doubled bias, multiplier, K and right shift e, then c+1's
//     (S8Requant's short path).
// So the kernel widens no weight and derives no constant: per row pair it
// widens the two input rows once and streams every channel pair's words.
constexpr int32_t kPackedGemmMaxK = 64;

inline int32_t s8_packed_gemm_words(int32_t channels, int32_t k_size) { return channels / 2 * (k_size + 8); }

// One channel pair's words (k + 8) from OHWI rows w0 (channel c) and w1
// (c+1) and the short path's per-channel constants.
inline void s8_pack_gemm_pair(const int8_t* w0, const int8_t* w1, int32_t k_size, const int32_t bias2[2],
                              const int32_t multiplier[2], const int32_t shift[2], int32_t output_offset,
                              int32_t* words) {
  auto halves = [](int32_t lo, int32_t hi) {
    return static_cast<int32_t>((static_cast<uint32_t>(lo) & 0xFFFFu) | (static_cast<uint32_t>(hi) << 16));
  };
  for (int32_t j = 0; j < k_size; j += 4, words += 4) {
    words[0] = halves(w0[j], w0[j + 2]);
    words[1] = halves(w0[j + 1], w0[j + 3]);
    words[2] = halves(w1[j], w1[j + 2]);
    words[3] = halves(w1[j + 1], w1[j + 3]);
  }
  for (int32_t i = 0; i < 2; ++i, words += 4) {
    const int32_t right = -shift[i];
    words[0] = bias2[i];
    words[1] = multiplier[i];
    words[2] = static_cast<int32_t>(static_cast<uint32_t>(2 * output_offset + 1) << (right - 1));
    words[3] = right;
  }
}

// out[r * channels + c] = the short requantization of sum_k a[r * a_stride +
// k'] * w[c][k'], clamped to [act_min, act_max], from the packed words (4-byte
// aligned) of s8_pack_gemm_pair. k_size % 8 == 0, k_size <= kPackedGemmMaxK,
// channels even; a_stride >= k_size (1x1 convolutions: k_size; im2col rows).
void s8_gemm_packed(const int8_t* a, int32_t a_stride, int32_t rows, const int32_t* packed, int32_t channels,
                    int32_t k_size, int32_t act_min, int32_t act_max, int8_t* out);

// A depthwise convolution with channel multiplier 1, NHWC, filter
// [k_h][k_w][channels] (TFLite's layout without its leading 1):
//   out[n][oy][ox][c] = requant_c(sum over in-bounds taps of
//       (in[n][oy * stride_h - pad_top + ky * dil_h][ox * stride_w - pad_left + kx * dil_w][c]
//        + input_offset) * filter[ky][kx][c])
// Taps outside the input are skipped (the reference kernels' semantics).
struct DepthwiseS8Shape {
  int32_t batches, in_h, in_w, channels;
  int32_t k_h, k_w, out_h, out_w;
  int32_t stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
  int32_t input_offset;  // minus the input zero point
};

void s8_depthwise(const DepthwiseS8Shape& shape, const int8_t* input, const int8_t* filter,
                  const S8Requant& rq, int8_t* output);

// Whether this build's GEMM reads S8Requant::narrow_weights (aarch64 only):
// elsewhere the flag folds away, so Cortex-M firmware carries none of it.
#if defined(FLOE_S8_NEON)
constexpr bool kS8NarrowWeightsUsed = true;
#else
constexpr bool kS8NarrowWeightsUsed = false;
#endif

#if defined(FLOE_S8_NEON)
void s8_depthwise_neon(const DepthwiseS8Shape& shape, const int8_t* input, const int8_t* filter,
                       const S8Requant& rq, int8_t* output);
#elif defined(FLOE_S8_X86)
void s8_depthwise_avx2(const DepthwiseS8Shape& shape, const int8_t* input, const int8_t* filter,
                       const S8Requant& rq, int8_t* output);
#endif

}  // namespace floe::cortexm
