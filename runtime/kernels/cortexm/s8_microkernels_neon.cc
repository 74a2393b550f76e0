// SPDX-License-Identifier: Apache-2.0
// s8_gemm's and s8_depthwise's Advanced SIMD build for Cortex-A (aarch64,
// ARMv8.0: no dot product, so the Cortex-A53 runs it): the host targets'
// default int8 path, bit-exact with the reference kernels.
//
// GEMM
// Products: SMULL of 8 int8 pairs into int16 lanes (|a * w| <= 2^14, exact),
// then SADALP adds neighbouring lanes into the int32 sums: 4 instructions per
// 16 multiply-adds and accumulator, with no assumption on the weights (the
// two-product int16 trick of other libraries needs weights above -128).
// Blocks of 4 rows x 4 channels: 8 loads feed 64 arithmetic instructions in
// 16 accumulators (2 x 4 and 1 x 4 for the last rows).
//
// Depthwise: 16 channels of one output pixel at a time over its in-image taps;
// per tap the input plus its offset and the filter are widened to int16
// (|(x + offset) * w| <= 255 * 128 fits) and SMLAL accumulates 4 lanes:
// 10 instructions per 16 multiply-adds.
//
// Requantization, 4 channels at once, is TFLite's double rounding exactly:
//   x = (acc + bias) << left;  SQRDMULH(x, m) is (x * m + 2^30) >> 31 (the
//   multiplier is >= 0, so it never saturates);  then the rounding right shift
//   rounds half away from zero: SRSHL rounds half up, so negative values are
//   first lowered by one (the AND/SSHR fixup; SQADD keeps INT32_MIN).
#include "runtime/kernels/cortexm/s8_microkernels.h"

#if defined(FLOE_S8_NEON)

#include <arm_neon.h>
#include <stddef.h>
#include <string.h>

#include "runtime/kernels/common/window.h"

namespace floe::cortexm {
namespace {

// The blocks are inlined into their loops: a call would move the sums through memory.
#define FLOE_NEON_INLINE __attribute__((always_inline)) inline

// kPairs (weights in [-127, 127]): |a * w| <= 16256, so the two products of
// a lane fit int16 and SMLAL adds them before the widening: 3 instructions.
template <bool kPairs>
FLOE_NEON_INLINE int32x4_t mac16(int32x4_t acc, int8x16_t a, int8x16_t w) {
  if constexpr (kPairs) return vpadalq_s16(acc, vmlal_high_s8(vmull_s8(vget_low_s8(a), vget_low_s8(w)), a, w));
  acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(w)));
  return vpadalq_s16(acc, vmull_high_s8(a, w));
}

inline int32x4_t mac8(int32x4_t acc, int8x8_t a, int8x8_t w) { return vpadalq_s16(acc, vmull_s8(a, w)); }

// Lane j = the sum of acc_j's lanes.
FLOE_NEON_INLINE int32x4_t reduce4(int32x4_t acc0, int32x4_t acc1, int32x4_t acc2, int32x4_t acc3) {
  return vpaddq_s32(vpaddq_s32(acc0, acc1), vpaddq_s32(acc2, acc3));
}

struct Requant4 {
  int32x4_t bias, multiplier, left, neg_right;
};

FLOE_NEON_INLINE Requant4 channels4(const S8Requant& rq, int32_t c) {
  const int32x4_t shift = vld1q_s32(rq.shift + c);
  return {vld1q_s32(rq.bias + c), vld1q_s32(rq.multiplier + c), vmaxq_s32(shift, vdupq_n_s32(0)),
          vminq_s32(shift, vdupq_n_s32(0))};
}

inline Requant4 channel1(const S8Requant& rq, int32_t c) {
  const int32_t shift = rq.shift[c];
  return {vdupq_n_s32(rq.bias[c]), vdupq_n_s32(rq.multiplier[c]), vdupq_n_s32(shift > 0 ? shift : 0),
          vdupq_n_s32(shift < 0 ? shift : 0)};
}

// requantize + output offset + clamp, as int32 lanes in [act_min, act_max].
// kClamp false: the range is all of int8, which narrow()'s saturation gives.
template <bool kClamp = true>
FLOE_NEON_INLINE int32x4_t requantize4(int32x4_t acc, const Requant4& q, int32x4_t offset, int32x4_t lo, int32x4_t hi) {
  int32x4_t x = vshlq_s32(vaddq_s32(acc, q.bias), q.left);
  x = vqrdmulhq_s32(x, q.multiplier);
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(x, q.neg_right), 31);
  x = vrshlq_s32(vqaddq_s32(x, fixup), q.neg_right);
  x = vaddq_s32(x, offset);
  if constexpr (!kClamp) return x;
  return vminq_s32(vmaxq_s32(x, lo), hi);
}

inline bool int8_range(const S8Requant& rq) { return rq.act_min == -128 && rq.act_max == 127; }

FLOE_NEON_INLINE int8x8_t narrow(int32x4_t v0, int32x4_t v1) { return vqmovn_s16(vcombine_s16(vqmovn_s32(v0), vqmovn_s32(v1))); }

// Output rows are byte-aligned: 4-byte stores through memcpy.
inline void store4(int8_t* p, int8x8_t v) {
  const int32_t word = vget_lane_s32(vreinterpret_s32_s8(v), 0);
  memcpy(p, &word, sizeof word);
}

// Sums of row a0 (and a1) against channels w, w + k, w + 2k, w + 3k.
template <bool kPairs>
FLOE_NEON_INLINE void sums_2x4(const int8_t* a0, const int8_t* a1, const int8_t* w, ptrdiff_t k, int32x4_t* s0,
                     int32x4_t* s1) {
  const int8_t* w1 = w + k;
  const int8_t* w2 = w1 + k;
  const int8_t* w3 = w2 + k;
  int32x4_t c00 = vdupq_n_s32(0), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00;
  ptrdiff_t t = 0;
  for (; t + 16 <= k; t += 16) {
    const int8x16_t x0 = vld1q_s8(a0 + t), x1 = vld1q_s8(a1 + t);
    const int8x16_t v0 = vld1q_s8(w + t), v1 = vld1q_s8(w1 + t), v2 = vld1q_s8(w2 + t), v3 = vld1q_s8(w3 + t);
    c00 = mac16<kPairs>(c00, x0, v0);
    c01 = mac16<kPairs>(c01, x0, v1);
    c02 = mac16<kPairs>(c02, x0, v2);
    c03 = mac16<kPairs>(c03, x0, v3);
    c10 = mac16<kPairs>(c10, x1, v0);
    c11 = mac16<kPairs>(c11, x1, v1);
    c12 = mac16<kPairs>(c12, x1, v2);
    c13 = mac16<kPairs>(c13, x1, v3);
  }
  if (t + 8 <= k) {
    const int8x8_t x0 = vld1_s8(a0 + t), x1 = vld1_s8(a1 + t);
    const int8x8_t v0 = vld1_s8(w + t), v1 = vld1_s8(w1 + t), v2 = vld1_s8(w2 + t), v3 = vld1_s8(w3 + t);
    c00 = mac8(c00, x0, v0);
    c01 = mac8(c01, x0, v1);
    c02 = mac8(c02, x0, v2);
    c03 = mac8(c03, x0, v3);
    c10 = mac8(c10, x1, v0);
    c11 = mac8(c11, x1, v1);
    c12 = mac8(c12, x1, v2);
    c13 = mac8(c13, x1, v3);
    t += 8;
  }
  int32x4_t r0 = reduce4(c00, c01, c02, c03), r1 = reduce4(c10, c11, c12, c13);
  if (t < k) {
    int32_t tail0[4] = {0, 0, 0, 0}, tail1[4] = {0, 0, 0, 0};
    const int8_t* ws[4] = {w, w1, w2, w3};
    for (; t < k; ++t) {
      for (int j = 0; j < 4; ++j) {
        tail0[j] += a0[t] * ws[j][t];
        tail1[j] += a1[t] * ws[j][t];
      }
    }
    r0 = vaddq_s32(r0, vld1q_s32(tail0));
    r1 = vaddq_s32(r1, vld1q_s32(tail1));
  }
  *s0 = r0;
  *s1 = r1;
}

// Sums of rows a0..a3 (a_stride apart) against channels w, w + k, w + 2k, w + 3k.
template <bool kPairs>
FLOE_NEON_INLINE void sums_4x4(const int8_t* a0, ptrdiff_t a_stride, const int8_t* w, ptrdiff_t k, int32x4_t s[4]) {
  const int8_t* a1 = a0 + a_stride;
  const int8_t* a2 = a1 + a_stride;
  const int8_t* a3 = a2 + a_stride;
  const int8_t* w1 = w + k;
  const int8_t* w2 = w1 + k;
  const int8_t* w3 = w2 + k;
  const int32x4_t z = vdupq_n_s32(0);
  int32x4_t c00 = z, c01 = z, c02 = z, c03 = z, c10 = z, c11 = z, c12 = z, c13 = z;
  int32x4_t c20 = z, c21 = z, c22 = z, c23 = z, c30 = z, c31 = z, c32 = z, c33 = z;
  ptrdiff_t t = 0;
#define FLOE_NEON_4X4(MAC, LOAD)                                                         \
  {                                                                                      \
    const auto x0 = LOAD(a0 + t), x1 = LOAD(a1 + t), x2 = LOAD(a2 + t), x3 = LOAD(a3 + t); \
    auto v = LOAD(w + t);                                                                \
    c00 = MAC(c00, x0, v), c10 = MAC(c10, x1, v), c20 = MAC(c20, x2, v), c30 = MAC(c30, x3, v); \
    v = LOAD(w1 + t);                                                                    \
    c01 = MAC(c01, x0, v), c11 = MAC(c11, x1, v), c21 = MAC(c21, x2, v), c31 = MAC(c31, x3, v); \
    v = LOAD(w2 + t);                                                                    \
    c02 = MAC(c02, x0, v), c12 = MAC(c12, x1, v), c22 = MAC(c22, x2, v), c32 = MAC(c32, x3, v); \
    v = LOAD(w3 + t);                                                                    \
    c03 = MAC(c03, x0, v), c13 = MAC(c13, x1, v), c23 = MAC(c23, x2, v), c33 = MAC(c33, x3, v); \
  }
  for (; t + 16 <= k; t += 16) FLOE_NEON_4X4(mac16<kPairs>, vld1q_s8)
  if (t + 8 <= k) {
    FLOE_NEON_4X4(mac8, vld1_s8)
    t += 8;
  }
#undef FLOE_NEON_4X4
  s[0] = reduce4(c00, c01, c02, c03);
  s[1] = reduce4(c10, c11, c12, c13);
  s[2] = reduce4(c20, c21, c22, c23);
  s[3] = reduce4(c30, c31, c32, c33);
  if (t < k) {
    const int8_t* as[4] = {a0, a1, a2, a3};
    const int8_t* ws[4] = {w, w1, w2, w3};
    for (int i = 0; i < 4; ++i) {
      int32_t tail[4] = {0, 0, 0, 0};
      for (ptrdiff_t u = t; u < k; ++u) {
        for (int j = 0; j < 4; ++j) tail[j] += as[i][u] * ws[j][u];
      }
      s[i] = vaddq_s32(s[i], vld1q_s32(tail));
    }
  }
}

// The sum of row a against one channel w.
template <bool kPairs>
FLOE_NEON_INLINE int32_t dot(const int8_t* a, const int8_t* w, ptrdiff_t k) {
  int32x4_t acc = vdupq_n_s32(0);
  ptrdiff_t t = 0;
  for (; t + 16 <= k; t += 16) acc = mac16<kPairs>(acc, vld1q_s8(a + t), vld1q_s8(w + t));
  if (t + 8 <= k) {
    acc = mac8(acc, vld1_s8(a + t), vld1_s8(w + t));
    t += 8;
  }
  int32_t s = vaddvq_s32(acc);
  for (; t < k; ++t) s += a[t] * w[t];
  return s;
}

template <bool kPairs, bool kClamp>
void gemm(const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w, int32_t channels, int32_t k_size,
          const S8Requant& rq, int8_t* out, int32_t out_stride) {
  const ptrdiff_t k = k_size;
  const int32x4_t offset = vdupq_n_s32(rq.output_offset);
  const int32x4_t lo = vdupq_n_s32(rq.act_min), hi = vdupq_n_s32(rq.act_max);
  int32_t c = 0;
  // Channels outermost: a block's weights and constants stay in registers
  // and cache while the rows stream past them.
  for (; c + 4 <= channels; c += 4) {
    const Requant4 q = channels4(rq, c);
    const int8_t* wc = w + c * k;
    int32_t r = 0;
    for (; r + 4 <= rows; r += 4) {
      int32x4_t s[4];
      sums_4x4<kPairs>(a + r * static_cast<ptrdiff_t>(a_stride), a_stride, wc, k, s);
      const int8x8_t v01 = narrow(requantize4<kClamp>(s[0], q, offset, lo, hi), requantize4<kClamp>(s[1], q, offset, lo, hi));
      const int8x8_t v23 = narrow(requantize4<kClamp>(s[2], q, offset, lo, hi), requantize4<kClamp>(s[3], q, offset, lo, hi));
      int8_t* o0 = out + r * static_cast<ptrdiff_t>(out_stride) + c;
      store4(o0, v01);
      store4(o0 + out_stride, vext_s8(v01, v01, 4));
      store4(o0 + 2 * static_cast<ptrdiff_t>(out_stride), v23);
      store4(o0 + 3 * static_cast<ptrdiff_t>(out_stride), vext_s8(v23, v23, 4));
    }
    for (; r + 2 <= rows; r += 2) {
      const int8_t* a0 = a + r * static_cast<ptrdiff_t>(a_stride);
      int32x4_t s0, s1;
      sums_2x4<kPairs>(a0, a0 + a_stride, wc, k, &s0, &s1);
      const int8x8_t v = narrow(requantize4<kClamp>(s0, q, offset, lo, hi), requantize4<kClamp>(s1, q, offset, lo, hi));
      int8_t* o0 = out + r * static_cast<ptrdiff_t>(out_stride) + c;
      store4(o0, v);
      store4(o0 + out_stride, vext_s8(v, v, 4));
    }
    if (r < rows) {
      const int8_t* a0 = a + r * static_cast<ptrdiff_t>(a_stride);
      int32x4_t s0, s1;
      sums_2x4<kPairs>(a0, a0, wc, k, &s0, &s1);  // the row twice: one block shape for all
      store4(out + r * static_cast<ptrdiff_t>(out_stride) + c, narrow(requantize4<kClamp>(s0, q, offset, lo, hi), s0));
    }
  }
  for (; c < channels; ++c) {
    const Requant4 q = channel1(rq, c);
    for (int32_t r = 0; r < rows; ++r) {
      const int32_t s = dot<kPairs>(a + r * static_cast<ptrdiff_t>(a_stride), w + c * k, k);
      out[r * static_cast<ptrdiff_t>(out_stride) + c] =
          static_cast<int8_t>(vgetq_lane_s32(requantize4(vdupq_n_s32(s), q, offset, lo, hi), 0));
    }
  }
}

}  // namespace

void s8_gemm_neon(const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w, int32_t channels,
                  int32_t k_size, const S8Requant& rq, int8_t* out, int32_t out_stride) {
  const bool clamp = !int8_range(rq);
  if (rq.narrow_weights) {
    (clamp ? gemm<true, true> : gemm<true, false>)(a, a_stride, rows, w, channels, k_size, rq, out, out_stride);
  } else {
    (clamp ? gemm<false, true> : gemm<false, false>)(a, a_stride, rows, w, channels, k_size, rq, out, out_stride);
  }
}

namespace {

// Sums of `lanes` (16 or 8) channels from c over the taps ty x tx of one
// window; x and f point at the window's tap (0, 0) for channel 0.
template <int kLanes>
inline void depthwise_sums(const int8_t* x, const int8_t* f, ptrdiff_t in_row, ptrdiff_t x_step, ptrdiff_t f_row,
                           ptrdiff_t channels, ptrdiff_t dil_h, kernels::TapRange ty, kernels::TapRange tx,
                           int16x8_t offset, int32x4_t acc[kLanes / 4]) {
  for (int i = 0; i < kLanes / 4; ++i) acc[i] = vdupq_n_s32(0);
  for (ptrdiff_t ky = ty.begin; ky < ty.end; ++ky) {
    const int8_t* xr = x + ky * dil_h * in_row + tx.begin * x_step;
    const int8_t* fr = f + ky * f_row + tx.begin * channels;
    for (ptrdiff_t kx = tx.begin; kx < tx.end; ++kx, xr += x_step, fr += channels) {
      if constexpr (kLanes == 16) {
        const int8x16_t xv = vld1q_s8(xr), wv = vld1q_s8(fr);
        const int16x8_t x0 = vaddw_s8(offset, vget_low_s8(xv)), x1 = vaddw_high_s8(offset, xv);
        const int16x8_t w0 = vmovl_s8(vget_low_s8(wv)), w1 = vmovl_high_s8(wv);
        acc[0] = vmlal_s16(acc[0], vget_low_s16(x0), vget_low_s16(w0));
        acc[1] = vmlal_high_s16(acc[1], x0, w0);
        acc[2] = vmlal_s16(acc[2], vget_low_s16(x1), vget_low_s16(w1));
        acc[3] = vmlal_high_s16(acc[3], x1, w1);
      } else {
        const int16x8_t x0 = vaddw_s8(offset, vld1_s8(xr)), w0 = vmovl_s8(vld1_s8(fr));
        acc[0] = vmlal_s16(acc[0], vget_low_s16(x0), vget_low_s16(w0));
        acc[1] = vmlal_high_s16(acc[1], x0, w0);
      }
    }
  }
}

// 16 channels' outputs from their sums and constants: requantized, stored.
template <bool kClamp>
FLOE_NEON_INLINE void finish16(const int32x4_t acc[4], const Requant4 q[4], int32x4_t out_offset,
                                                    int32x4_t lo, int32x4_t hi, int8_t* o) {
  const int8x8_t v0 = narrow(requantize4<kClamp>(acc[0], q[0], out_offset, lo, hi),
                             requantize4<kClamp>(acc[1], q[1], out_offset, lo, hi));
  const int8x8_t v1 = narrow(requantize4<kClamp>(acc[2], q[2], out_offset, lo, hi),
                             requantize4<kClamp>(acc[3], q[3], out_offset, lo, hi));
  vst1q_s8(o, vcombine_s8(v0, v1));
}

inline void channels16(const S8Requant& rq, int32_t c, Requant4 q[4]) {
  for (int i = 0; i < 4; ++i) q[i] = channels4(rq, c + 4 * i);
}

// One tap of 16 channels whose filter is already widened (w0: channels
// 0..7, w1: 8..15).
#define FLOE_NEON_TAP(ptr, w0, w1)                                              \
  {                                                                             \
    const int8x16_t xv = vld1q_s8(ptr);                                         \
    const int16x8_t x0 = vaddw_s8(offset, vget_low_s8(xv)), x1 = vaddw_high_s8(offset, xv); \
    acc[0] = vmlal_s16(acc[0], vget_low_s16(x0), vget_low_s16(w0));             \
    acc[1] = vmlal_high_s16(acc[1], x0, w0);                                    \
    acc[2] = vmlal_s16(acc[2], vget_low_s16(x1), vget_low_s16(w1));             \
    acc[3] = vmlal_high_s16(acc[3], x1, w1);                                    \
  }

// 3x3 windows, dilation 1, channel groups of 16 outermost: the group's nine
// widened filter taps stay in 18 registers while its pixels stream past, and
// a window wholly inside the input runs its taps unrolled (7 instructions per
// 16 multiply-adds); edge windows take the general loop. Channels [0, c_end).
template <bool kClamp>
void depthwise_3x3_groups(const DepthwiseS8Shape& p, const int8_t* input, const int8_t* filter, const S8Requant& rq,
                          ptrdiff_t c_end, int8_t* output) {
  const ptrdiff_t channels = p.channels, in_row = static_cast<ptrdiff_t>(p.in_w) * channels, f_row = 3 * channels;
  const int16x8_t offset = vdupq_n_s16(static_cast<int16_t>(p.input_offset));
  const int32x4_t out_offset = vdupq_n_s32(rq.output_offset);
  const int32x4_t lo = vdupq_n_s32(rq.act_min), hi = vdupq_n_s32(rq.act_max);
  for (ptrdiff_t c = 0; c < c_end; c += 16) {
    const int8_t* f = filter + c;
    Requant4 q[4];
    channels16(rq, static_cast<int32_t>(c), q);
#define FLOE_NEON_WIDEN(k)                                      \
    const int8x16_t fv##k = vld1q_s8(f + (k / 3) * f_row + (k % 3) * channels); \
    const int16x8_t w##k##a = vmovl_s8(vget_low_s8(fv##k)), w##k##b = vmovl_high_s8(fv##k);
    FLOE_NEON_WIDEN(0) FLOE_NEON_WIDEN(1) FLOE_NEON_WIDEN(2) FLOE_NEON_WIDEN(3) FLOE_NEON_WIDEN(4)
    FLOE_NEON_WIDEN(5) FLOE_NEON_WIDEN(6) FLOE_NEON_WIDEN(7) FLOE_NEON_WIDEN(8)
#undef FLOE_NEON_WIDEN
    for (ptrdiff_t n = 0; n < p.batches; ++n) {
      const int8_t* image = input + n * p.in_h * in_row + c;
      int8_t* o = output + n * p.out_h * p.out_w * channels + c;
      for (ptrdiff_t oy = 0; oy < p.out_h; ++oy) {
        const ptrdiff_t y0 = oy * p.stride_h - p.pad_top;
        const bool rows_inside = y0 >= 0 && y0 + 3 <= p.in_h;
        for (ptrdiff_t ox = 0; ox < p.out_w; ++ox, o += channels) {
          const ptrdiff_t x0 = ox * p.stride_w - p.pad_left;
          const int8_t* window = image + y0 * in_row + x0 * channels;  // tap (0, 0): may lie in the padding
          int32x4_t acc[4];
          if (rows_inside && x0 >= 0 && x0 + 3 <= p.in_w) {
            acc[0] = acc[1] = acc[2] = acc[3] = vdupq_n_s32(0);
            const int8_t* r0 = window;
            const int8_t* r1 = r0 + in_row;
            const int8_t* r2 = r1 + in_row;
            FLOE_NEON_TAP(r0, w0a, w0b) FLOE_NEON_TAP(r0 + channels, w1a, w1b) FLOE_NEON_TAP(r0 + 2 * channels, w2a, w2b)
            FLOE_NEON_TAP(r1, w3a, w3b) FLOE_NEON_TAP(r1 + channels, w4a, w4b) FLOE_NEON_TAP(r1 + 2 * channels, w5a, w5b)
            FLOE_NEON_TAP(r2, w6a, w6b) FLOE_NEON_TAP(r2 + channels, w7a, w7b) FLOE_NEON_TAP(r2 + 2 * channels, w8a, w8b)
          } else {
            depthwise_sums<16>(window, f, in_row, channels, f_row, channels, 1, kernels::unit_tap_range(y0, p.in_h, 3),
                               kernels::unit_tap_range(x0, p.in_w, 3), offset, acc);
          }
          finish16<kClamp>(acc, q, out_offset, lo, hi, o);
        }
      }
    }
  }
}
#undef FLOE_NEON_TAP

// Every window shape, pixel-major, channels [c_begin, channels).
void depthwise_pixels(const DepthwiseS8Shape& p, const int8_t* input, const int8_t* filter, const S8Requant& rq,
                      ptrdiff_t c_begin, int8_t* output) {
  const ptrdiff_t channels = p.channels, in_row = static_cast<ptrdiff_t>(p.in_w) * channels;
  const ptrdiff_t f_row = static_cast<ptrdiff_t>(p.k_w) * channels, x_step = static_cast<ptrdiff_t>(p.dil_w) * channels;
  const int16x8_t offset = vdupq_n_s16(static_cast<int16_t>(p.input_offset));
  const int32x4_t out_offset = vdupq_n_s32(rq.output_offset);
  const int32x4_t lo = vdupq_n_s32(rq.act_min), hi = vdupq_n_s32(rq.act_max);
  int8_t* o = output;
  for (ptrdiff_t n = 0; n < p.batches; ++n) {
    const int8_t* image = input + n * p.in_h * in_row;
    for (ptrdiff_t oy = 0; oy < p.out_h; ++oy) {
      const ptrdiff_t y0 = oy * p.stride_h - p.pad_top;
      const kernels::TapRange ty = kernels::tap_range(y0, p.in_h, p.k_h, p.dil_h);
      for (ptrdiff_t ox = 0; ox < p.out_w; ++ox, o += channels) {
        const ptrdiff_t x0 = ox * p.stride_w - p.pad_left;
        const kernels::TapRange tx = kernels::tap_range(x0, p.in_w, p.k_w, p.dil_w);
        const int8_t* window = image + y0 * in_row + x0 * channels;  // tap (0, 0): may lie in the padding
        ptrdiff_t c = c_begin;
        for (; c + 16 <= channels; c += 16) {
          int32x4_t acc[4];
          depthwise_sums<16>(window + c, filter + c, in_row, x_step, f_row, channels, p.dil_h, ty, tx, offset, acc);
          Requant4 q[4];
          channels16(rq, static_cast<int32_t>(c), q);
          finish16<true>(acc, q, out_offset, lo, hi, o + c);
        }
        for (; c + 8 <= channels; c += 8) {
          int32x4_t acc[2];
          depthwise_sums<8>(window + c, filter + c, in_row, x_step, f_row, channels, p.dil_h, ty, tx, offset, acc);
          const int32_t ci = static_cast<int32_t>(c);
          vst1_s8(o + c, narrow(requantize4(acc[0], channels4(rq, ci), out_offset, lo, hi),
                                requantize4(acc[1], channels4(rq, ci + 4), out_offset, lo, hi)));
        }
        for (; c < channels; ++c) {
          int32_t sum = 0;
          for (ptrdiff_t ky = ty.begin; ky < ty.end; ++ky) {
            for (ptrdiff_t kx = tx.begin; kx < tx.end; ++kx) {
              sum += (window[ky * p.dil_h * in_row + kx * x_step + c] + p.input_offset) * filter[ky * f_row + kx * channels + c];
            }
          }
          o[c] = static_cast<int8_t>(
              vgetq_lane_s32(requantize4(vdupq_n_s32(sum), channel1(rq, static_cast<int32_t>(c)), out_offset, lo, hi), 0));
        }
      }
    }
  }
}

}  // namespace

void s8_depthwise_neon(const DepthwiseS8Shape& p, const int8_t* input, const int8_t* filter, const S8Requant& rq,
                       int8_t* output) {
  ptrdiff_t c_done = 0;
  if (p.k_h == 3 && p.k_w == 3 && p.dil_h == 1 && p.dil_w == 1 && p.channels >= 16) {
    c_done = p.channels & ~ptrdiff_t{15};
    (int8_range(rq) ? depthwise_3x3_groups<false> : depthwise_3x3_groups<true>)(p, input, filter, rq, c_done, output);
  }
  if (c_done < p.channels) depthwise_pixels(p, input, filter, rq, c_done, output);
}

}  // namespace floe::cortexm

#endif  // FLOE_S8_NEON
