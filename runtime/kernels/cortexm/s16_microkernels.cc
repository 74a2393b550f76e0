// SPDX-License-Identifier: Apache-2.0
// The int16x8 inner kernels (s16_microkernels.h), one per instruction set:
// s16_gemm, blocks of 2 rows x 2 channels (each row and weight read feeds two
// sums), summed in 32 bits over kSumBlock columns at a time (exact) and
// added into 64-bit sums, so no operand range is assumed:
//   DSP: an assembly loop, per 4 columns two halfword-pair loads per row
//     re-paired by PKHBT / PKHTB into (even, odd) columns, the weights
//     widened by SXTB16 (even and odd bytes), 8 SMLAD: 24 instructions per
//     16 MACs;
//   Helium: 8 columns per vector (VLDRH, VLDRB.S16 widening), VMLADAVA, the
//     k % 8 tail predicated: 8 instructions per 32 MACs.
// s16_depthwise, 32-bit sums (the converter's proof), blocks of 4 channels:
//   DSP: SXTB16 widening and SMLABB / SMLATB / SMLABT / SMLATT, 9 instructions
//   per 4 MACs; Helium: 8 channels per vector, VMULLB / VMULLT and two adds,
//   6 instructions per 8 MACs.
#include "runtime/kernels/cortexm/s16_microkernels.h"

#include <stddef.h>
#include <string.h>

#include "runtime/kernels/common/window.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define FLOE_S16_MVE 1
#include <arm_mve.h>
#elif defined(__ARM_FEATURE_DSP) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define FLOE_S16_DSP 1
#include <arm_acle.h>
// The 2x2 block's assembly loop takes 14 registers: only an optimizing build
// leaves that many (at -O0, r7 is the frame pointer).
#if defined(__OPTIMIZE__)
#define FLOE_S16_DSP_LOOP 1
#endif
#endif

namespace floe::cortexm {
namespace {

// The reference's requantize_channel for the wide scheme, from the folded
// offset (s16_microkernels.h): (sum * multiplier + offset) >> right in
// wrapping 64-bit arithmetic, truncated to 32 bits, then clamped.
inline int16_t clamp16(int32_t v, const S16Requant& rq) {
  v = v < rq.act_min ? rq.act_min : v;
  v = v > rq.act_max ? rq.act_max : v;
  return static_cast<int16_t>(v);
}

inline int16_t requantize(int64_t sum, int32_t c, const S16Requant& rq) {
  const uint64_t p = static_cast<uint64_t>(sum) * static_cast<uint64_t>(static_cast<int64_t>(rq.multiplier[c])) +
                     static_cast<uint64_t>(rq.offset[c]);
  return clamp16(static_cast<int32_t>(static_cast<int64_t>(p) >> rq.right_shift[c]), rq);
}

// One channel's constants, read once for the outputs of a row pair.
struct S16Channel {
  int64_t offset;
  int32_t multiplier, right;
};
inline S16Channel channel(const S16Requant& rq, int32_t c) { return {rq.offset[c], rq.multiplier[c], rq.right_shift[c]}; }

// A 32-bit sum (one block: every k up to kSumBlock): the product is exact in
// 64 bits, and the addition one SMLAL.
inline int16_t requantize32(int32_t sum, const S16Channel& ch, const S16Requant& rq) {
  const int64_t p =
      static_cast<int64_t>(static_cast<uint64_t>(ch.offset) + static_cast<uint64_t>(int64_t{sum} * ch.multiplier));
  // The scaled form (right 32): the high word.
  return clamp16(static_cast<int32_t>(ch.right == 32 ? p >> 32 : p >> ch.right), rq);
}

#if defined(FLOE_S16_DSP)

inline uint32_t load32(const void* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
// (lo of a, lo of b) and (hi of a, hi of b): columns (0, 2) and (1, 3) of a
// row's four halfwords read as the words a = (0, 1), b = (2, 3).
inline uint32_t pair_low(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
inline uint32_t pair_high(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__("pkhtb %0, %2, %1, asr #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
// Bytes 0 and 2, and 1 and 3, of four weights as halfword pairs.
inline uint32_t even_bytes(uint32_t w) { return static_cast<uint32_t>(__sxtb16(static_cast<int32_t>(w))); }
inline uint32_t odd_bytes(uint32_t w) {
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(w));
  return r;
}

#endif

// Columns per 32-bit partial sum: a product is at most 2^22 in magnitude
// (-32768 * -128), so 504 of them stay below 2^31 and the partial sums are
// exact; they are added into the 64-bit sums block by block. A multiple of 4
// and 8 (the DSP and Helium steps), so only the last block has a tail.
constexpr int32_t kSumBlock = 504;

#if defined(FLOE_S16_MVE)

// Rows a0, a1 against weight rows w0, w1 over columns [0, n): 8 columns per
// step, the n % 8 tail predicated.
inline void block_2x2(const int16_t* a0, const int16_t* a1, const int8_t* w0, const int8_t* w1, int32_t n,
                      int32_t s[4]) {
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
  int32_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const int16x8_t x0 = vld1q_s16(a0 + j), x1 = vld1q_s16(a1 + j);
    const int16x8_t v0 = vldrbq_s16(w0 + j), v1 = vldrbq_s16(w1 + j);
    s00 = vmladavaq_s16(s00, x0, v0);
    s01 = vmladavaq_s16(s01, x0, v1);
    s10 = vmladavaq_s16(s10, x1, v0);
    s11 = vmladavaq_s16(s11, x1, v1);
  }
  if (j < n) {
    const mve_pred16_t p = vctp16q(static_cast<uint32_t>(n - j));
    const int16x8_t x0 = vld1q_z_s16(a0 + j, p), x1 = vld1q_z_s16(a1 + j, p);
    const int16x8_t v0 = vldrbq_z_s16(w0 + j, p), v1 = vldrbq_z_s16(w1 + j, p);
    s00 = vmladavaq_s16(s00, x0, v0);
    s01 = vmladavaq_s16(s01, x0, v1);
    s10 = vmladavaq_s16(s10, x1, v0);
    s11 = vmladavaq_s16(s11, x1, v1);
  }
  s[0] = s00, s[1] = s01, s[2] = s10, s[3] = s11;
}

inline int32_t block_1x1(const int16_t* a, const int8_t* w, int32_t n) {
  int32_t sum = 0;
  int32_t j = 0;
  for (; j + 8 <= n; j += 8) sum = vmladavaq_s16(sum, vld1q_s16(a + j), vldrbq_s16(w + j));
  if (j < n) {
    const mve_pred16_t p = vctp16q(static_cast<uint32_t>(n - j));
    sum = vmladavaq_s16(sum, vld1q_z_s16(a + j, p), vldrbq_z_s16(w + j, p));
  }
  return sum;
}

#else

#if defined(FLOE_S16_DSP_LOOP)
// The DSP block's loop over n4 columns (a multiple of 4, > 0) of rows a0 and
// a0 + k and weight rows w0 and w0 + k, adding to s: 4 columns of both rows
// and channels per 24 instructions. The second row and channel are reached
// by register offsets (k, and 2k through the shift), so the loop fits in the
// 14 allocatable registers: 4 sums, 4 pointers and counts, 6 temporaries.
inline void block_2x2_loop(const int16_t* a0, const int8_t* w0, int32_t k, int32_t n4, int32_t s[4]) {
  int32_t s00 = s[0], s01 = s[1], s10 = s[2], s11 = s[3];
  const int8_t* end = w0 + n4;
  uint32_t x0e, x0o, x1e, x1o, t, u;
  __asm__ volatile(
      "1:\n\t"
      "ldr    %[x1e], [%[a], %[k], lsl #1]\n\t"
      "ldr    %[x0e], [%[a]], #4\n\t"
      "ldr    %[x1o], [%[a], %[k], lsl #1]\n\t"
      "ldr    %[x0o], [%[a]], #4\n\t"
      // Each row's halfwords (0, 1), (2, 3) as (0, 2) and (1, 3): row 0 in
      // t and x0o, row 1 in x0e and x1o.
      "pkhbt  %[t], %[x0e], %[x0o], lsl #16\n\t"
      "pkhtb  %[x0o], %[x0o], %[x0e], asr #16\n\t"
      "pkhbt  %[x0e], %[x1e], %[x1o], lsl #16\n\t"
      "pkhtb  %[x1o], %[x1o], %[x1e], asr #16\n\t"
      // Channel 1, then channel 0 (whose load advances w): bytes (0, 2) and
      // (1, 3) widened.
      "ldr    %[u], [%[w], %[k]]\n\t"
      "sxtb16 %[x1e], %[u], ror #8\n\t"
      "sxtb16 %[u], %[u]\n\t"
      "smlad  %[s01], %[t], %[u], %[s01]\n\t"
      "smlad  %[s01], %[x0o], %[x1e], %[s01]\n\t"
      "smlad  %[s11], %[x0e], %[u], %[s11]\n\t"
      "smlad  %[s11], %[x1o], %[x1e], %[s11]\n\t"
      "ldr    %[u], [%[w]], #4\n\t"
      "sxtb16 %[x1e], %[u], ror #8\n\t"
      "sxtb16 %[u], %[u]\n\t"
      "smlad  %[s00], %[t], %[u], %[s00]\n\t"
      "smlad  %[s00], %[x0o], %[x1e], %[s00]\n\t"
      "smlad  %[s10], %[x0e], %[u], %[s10]\n\t"
      "smlad  %[s10], %[x1o], %[x1e], %[s10]\n\t"
      "cmp    %[w], %[end]\n\t"
      "bne    1b"
      : [a] "+&r"(a0), [w] "+&r"(w0), [s00] "+&r"(s00), [s01] "+&r"(s01), [s10] "+&r"(s10), [s11] "+&r"(s11),
        [x0e] "=&r"(x0e), [x0o] "=&r"(x0o), [x1e] "=&r"(x1e), [x1o] "=&r"(x1o), [t] "=&r"(t), [u] "=&r"(u)
      : [k] "r"(k), [end] "r"(end)
      : "cc", "memory");
  s[0] = s00, s[1] = s01, s[2] = s10, s[3] = s11;
}
#endif

inline void block_2x2(const int16_t* a0, const int16_t* a1, const int8_t* w0, const int8_t* w1, int32_t n,
                      int32_t s[4]) {
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
  int32_t j = 0;
#if defined(FLOE_S16_DSP_LOOP)
  // Rows and weight rows k apart (every caller's layout: im2col rows, pixels
  // of a 1x1 convolution, FULLY_CONNECTED rows).
  if (n >= 4 && a1 == a0 + (w1 - w0)) {
    int32_t b[4] = {0, 0, 0, 0};
    j = n & ~3;
    block_2x2_loop(a0, w0, static_cast<int32_t>(w1 - w0), j, b);
    s00 = b[0], s01 = b[1], s10 = b[2], s11 = b[3];
  }
#elif defined(FLOE_S16_DSP)
  for (; j + 4 <= n; j += 4) {
    const uint32_t v0 = load32(w0 + j), v1 = load32(w1 + j);
    const int32_t v0e = static_cast<int32_t>(even_bytes(v0)), v0o = static_cast<int32_t>(odd_bytes(v0));
    const int32_t v1e = static_cast<int32_t>(even_bytes(v1)), v1o = static_cast<int32_t>(odd_bytes(v1));
    uint32_t lo = load32(a0 + j), hi = load32(a0 + j + 2);
    int32_t xe = static_cast<int32_t>(pair_low(lo, hi)), xo = static_cast<int32_t>(pair_high(lo, hi));
    s00 = __smlad(xo, v0o, __smlad(xe, v0e, s00));
    s01 = __smlad(xo, v1o, __smlad(xe, v1e, s01));
    lo = load32(a1 + j), hi = load32(a1 + j + 2);
    xe = static_cast<int32_t>(pair_low(lo, hi)), xo = static_cast<int32_t>(pair_high(lo, hi));
    s10 = __smlad(xo, v0o, __smlad(xe, v0e, s10));
    s11 = __smlad(xo, v1o, __smlad(xe, v1e, s11));
  }
#endif
  for (; j < n; ++j) {
    const int32_t x0 = a0[j], x1 = a1[j], v0 = w0[j], v1 = w1[j];
    s00 += x0 * v0;
    s01 += x0 * v1;
    s10 += x1 * v0;
    s11 += x1 * v1;
  }
  s[0] = s00, s[1] = s01, s[2] = s10, s[3] = s11;
}

inline int32_t block_1x1(const int16_t* a, const int8_t* w, int32_t n) {
  int32_t sum = 0;
  int32_t j = 0;
#if defined(FLOE_S16_DSP)
  for (; j + 4 <= n; j += 4) {
    const uint32_t lo = load32(a + j), hi = load32(a + j + 2), v = load32(w + j);
    sum = __smlad(static_cast<int32_t>(pair_high(lo, hi)), static_cast<int32_t>(odd_bytes(v)),
                  __smlad(static_cast<int32_t>(pair_low(lo, hi)), static_cast<int32_t>(even_bytes(v)), sum));
  }
#endif
  for (; j < n; ++j) sum += int32_t{a[j]} * w[j];
  return sum;
}

#endif

// The 64-bit sums of the 2x2 block and of one row and channel, over every
// column, from the 32-bit sums of kSumBlock-column blocks (k > kSumBlock).
inline void dot_2x2(const int16_t* a0, const int16_t* a1, const int8_t* w0, const int8_t* w1, int32_t k,
                    int64_t s[4]) {
  s[0] = s[1] = s[2] = s[3] = 0;
  for (int32_t j = 0; j < k; j += kSumBlock) {
    const int32_t n = k - j < kSumBlock ? k - j : kSumBlock;
    int32_t b[4];
    block_2x2(a0 + j, a1 + j, w0 + j, w1 + j, n, b);
    for (int i = 0; i < 4; ++i) s[i] += b[i];
  }
}

inline int64_t dot_1x1(const int16_t* a, const int8_t* w, int32_t k) {
  int64_t sum = 0;
  for (int32_t j = 0; j < k; j += kSumBlock) sum += block_1x1(a + j, w + j, k - j < kSumBlock ? k - j : kSumBlock);
  return sum;
}

// s16_gemm for k_size <= kSumBlock (kOneBlock: 32-bit sums throughout) or any k.
template <bool kOneBlock>
void gemm(const int16_t* a, int32_t a_stride, int32_t rows, const int8_t* w, int32_t channels, int32_t k_size,
          const S16Requant& rq, int16_t* out, int32_t out_stride) {
  int32_t r = 0;
  for (; r + 2 <= rows; r += 2) {
    const int16_t* a0 = a + static_cast<ptrdiff_t>(r) * a_stride;
    const int16_t* a1 = a0 + a_stride;
    int16_t* o0 = out + static_cast<ptrdiff_t>(r) * out_stride;
    int16_t* o1 = o0 + out_stride;
    int32_t c = 0;
    for (; c + 2 <= channels; c += 2) {
      const int8_t* w0 = w + static_cast<ptrdiff_t>(c) * k_size;
      if constexpr (kOneBlock) {
        int32_t s[4];
        block_2x2(a0, a1, w0, w0 + k_size, k_size, s);
        const S16Channel c0 = channel(rq, c), c1 = channel(rq, c + 1);
        o0[c] = requantize32(s[0], c0, rq);
        o1[c] = requantize32(s[2], c0, rq);
        o0[c + 1] = requantize32(s[1], c1, rq);
        o1[c + 1] = requantize32(s[3], c1, rq);
      } else {
        int64_t s[4];
        dot_2x2(a0, a1, w0, w0 + k_size, k_size, s);
        o0[c] = requantize(s[0], c, rq);
        o0[c + 1] = requantize(s[1], c + 1, rq);
        o1[c] = requantize(s[2], c, rq);
        o1[c + 1] = requantize(s[3], c + 1, rq);
      }
    }
    if (c < channels) {
      const int8_t* wc = w + static_cast<ptrdiff_t>(c) * k_size;
      o0[c] = requantize(dot_1x1(a0, wc, k_size), c, rq);
      o1[c] = requantize(dot_1x1(a1, wc, k_size), c, rq);
    }
  }
  if (r < rows) {
    const int16_t* a0 = a + static_cast<ptrdiff_t>(r) * a_stride;
    int16_t* o0 = out + static_cast<ptrdiff_t>(r) * out_stride;
    for (int32_t c = 0; c < channels; ++c) {
      o0[c] = requantize(dot_1x1(a0, w + static_cast<ptrdiff_t>(c) * k_size, k_size), c, rq);
    }
  }
}

}  // namespace

void s16_gemm(const int16_t* a, int32_t a_stride, int32_t rows, const int8_t* w, int32_t channels,
              int32_t k_size, const S16Requant& rq, int16_t* out, int32_t out_stride) {
  if (k_size <= kSumBlock) {
    gemm<true>(a, a_stride, rows, w, channels, k_size, rq, out, out_stride);
  } else {
    gemm<false>(a, a_stride, rows, w, channels, k_size, rq, out, out_stride);
  }
}

namespace {

// Channels per depthwise block: Helium's 8 halfword lanes, else 4.
#if defined(FLOE_S16_MVE)
constexpr int32_t kDepthwiseBlock = 8;
#else
constexpr int32_t kDepthwiseBlock = 4;
#endif

// Sums of channels [c, c + kDepthwiseBlock) (fewer at the end: `lanes`) over
// the window's in-bounds taps; `x` points at the window's first in-bounds
// pixel, channel c.
inline void depthwise_sums(const int16_t* x, const int8_t* f, int32_t channels, ptrdiff_t taps_y, ptrdiff_t taps_x,
                           ptrdiff_t in_step_y, ptrdiff_t in_step_x, ptrdiff_t f_step_y, int32_t lanes,
                           int32_t s[kDepthwiseBlock]) {
#if defined(FLOE_S16_MVE)
  // VMULLB / VMULLT widen the even and odd lanes' products: channel 2i sums
  // in lane i of `even`, channel 2i + 1 in lane i of `odd`.
  const mve_pred16_t p = vctp16q(static_cast<uint32_t>(lanes));
  int32x4_t even = vdupq_n_s32(0), odd = vdupq_n_s32(0);
  for (ptrdiff_t ky = 0; ky < taps_y; ++ky, x += in_step_y, f += f_step_y) {
    const int16_t* xr = x;
    const int8_t* fr = f;
    for (ptrdiff_t kx = 0; kx < taps_x; ++kx, xr += in_step_x, fr += channels) {
      const int16x8_t xv = vld1q_z_s16(xr, p), fv = vldrbq_z_s16(fr, p);
      even = vaddq_s32(even, vmullbq_int_s16(xv, fv));
      odd = vaddq_s32(odd, vmulltq_int_s16(xv, fv));
    }
  }
  int32_t e[4], d[4];
  vst1q_s32(e, even);
  vst1q_s32(d, odd);
  for (int i = 0; i < 4; ++i) s[2 * i] = e[i], s[2 * i + 1] = d[i];
#else
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (ptrdiff_t ky = 0; ky < taps_y; ++ky, x += in_step_y, f += f_step_y) {
    const int16_t* xr = x;
    const int8_t* fr = f;
    for (ptrdiff_t kx = 0; kx < taps_x; ++kx, xr += in_step_x, fr += channels) {
#if defined(FLOE_S16_DSP)
      if (lanes == 4) {
        const uint32_t x01 = load32(xr), x23 = load32(xr + 2), v = load32(fr);
        const int32_t v02 = static_cast<int32_t>(even_bytes(v)), v13 = static_cast<int32_t>(odd_bytes(v));
        s0 = __smlabb(static_cast<int32_t>(x01), v02, s0);
        s1 = __smlatb(static_cast<int32_t>(x01), v13, s1);
        s2 = __smlabt(static_cast<int32_t>(x23), v02, s2);
        s3 = __smlatt(static_cast<int32_t>(x23), v13, s3);
        continue;
      }
#endif
      s0 += int32_t{xr[0]} * fr[0];
      if (lanes > 1) s1 += int32_t{xr[1]} * fr[1];
      if (lanes > 2) s2 += int32_t{xr[2]} * fr[2];
      if (lanes > 3) s3 += int32_t{xr[3]} * fr[3];
    }
  }
  s[0] = s0, s[1] = s1, s[2] = s2, s[3] = s3;
#endif
}

}  // namespace

void s16_depthwise(const DepthwiseS16Shape& sh, const int16_t* input, const int8_t* filter, const S16Requant& rq,
                   int16_t* output) {
  const ptrdiff_t channels = sh.channels;
  const ptrdiff_t in_row = static_cast<ptrdiff_t>(sh.in_w) * channels;
  const ptrdiff_t f_row = static_cast<ptrdiff_t>(sh.k_w) * channels;
  int16_t* o = output;
  for (int32_t n = 0; n < sh.batches; ++n) {
    const int16_t* image = input + static_cast<ptrdiff_t>(n) * sh.in_h * in_row;
    for (int32_t oy = 0; oy < sh.out_h; ++oy) {
      const ptrdiff_t y0 = static_cast<ptrdiff_t>(oy) * sh.stride_h - sh.pad_top;
      const kernels::TapRange ty = kernels::tap_range(y0, sh.in_h, sh.k_h, sh.dil_h);
      for (int32_t ox = 0; ox < sh.out_w; ++ox, o += channels) {
        const ptrdiff_t x0 = static_cast<ptrdiff_t>(ox) * sh.stride_w - sh.pad_left;
        const kernels::TapRange tx = kernels::tap_range(x0, sh.in_w, sh.k_w, sh.dil_w);
        const ptrdiff_t taps_y = ty.end > ty.begin ? ty.end - ty.begin : 0;
        const ptrdiff_t taps_x = tx.end > tx.begin ? tx.end - tx.begin : 0;
        const bool any = taps_y > 0 && taps_x > 0;  // else every sum is 0
        const int16_t* first =
            any ? image + (y0 + ty.begin * sh.dil_h) * in_row + (x0 + tx.begin * sh.dil_w) * channels : image;
        const int8_t* f_first = any ? filter + ty.begin * f_row + tx.begin * channels : filter;
        for (ptrdiff_t c = 0; c < channels; c += kDepthwiseBlock) {
          const int32_t lanes =
              channels - c < kDepthwiseBlock ? static_cast<int32_t>(channels - c) : kDepthwiseBlock;
          int32_t s[kDepthwiseBlock];
          depthwise_sums(first + c, f_first + c, static_cast<int32_t>(channels), any ? taps_y : 0, taps_x,
                         in_row * sh.dil_h, channels * sh.dil_w, f_row, lanes, s);
          for (int32_t i = 0; i < lanes; ++i) {
            o[c + i] = requantize32(s[i], channel(rq, static_cast<int32_t>(c) + i), rq);
          }
        }
      }
    }
  }
}

}  // namespace floe::cortexm
