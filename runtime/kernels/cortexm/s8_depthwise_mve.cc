// SPDX-License-Identifier: Apache-2.0
// Helium (MVE, Cortex-M55) s8_depthwise (s8_microkernels.h), built only when
// CMake defines FLOE_CORTEXM_S8_MVE (a Helium core); the DSP and portable one
// is s8_depthwise.cc.
//
// 8 channels per vector in 16-bit lanes (widening VLDRB.S16); VMULLB/VMULLT.S16
// multiply the even and odd channels into two int32x4 accumulators (4
// instructions per 8 MACs where 32-bit lanes need VMUL+VADD per 4). 3x3
// windows (full groups, right shifts only: the models' case) run two pixels at
// a time in assembly, with the input offset folded into the start value
// (offset * sum of the taps); pixels whose window leaves the input read a copy
// of their rows padded with the input zero point, which contributes (zero
// point + offset) * filter = 0, exactly the skipped taps. Everything else goes
// pixel by pixel over the in-bounds taps; requantization: s8_mve_requant.h.
#if defined(FLOE_CORTEXM_S8_MVE)

#include <arm_mve.h>

#include "runtime/kernels/cortexm/s8_microkernels.h"
#include "runtime/kernels/cortexm/s8_mve_requant.h"

namespace floe::cortexm {
using namespace s8_detail;  // NOLINT(build/namespaces): the Helium kernels' shared requantization
namespace {

// The constants of 8 channels c..c+7 split the way VMULLB/VMULLT split the
// channels: even (c, c+2, c+4, c+6) and odd (c+1, c+3, ...).
struct GroupRequant {
  Requant4 even, odd;
  int32x4_t bias_even, bias_odd;
};

// Not inlined: its staging arrays then stay out of the caller's frame.
__attribute__((noinline)) GroupRequant load_group(const S8Requant& rq, int32_t c, int32_t live) {
  // Copied through the stack once per group: the tail group reads no further
  // than the arrays' end, and VLD20/VLD21 then de-interleave.
  int32_t bias[8], multiplier[8], shift[8];
  for (int32_t i = 0; i < 8; ++i) {
    const bool in = i < live;
    bias[i] = in ? rq.bias[c + i] : 0;
    multiplier[i] = in ? rq.multiplier[c + i] : 0;
    shift[i] = in ? rq.shift[c + i] : 0;
  }
  const int32x4x2_t b = vld2q_s32(bias), m = vld2q_s32(multiplier), s = vld2q_s32(shift);
  return {make_requant4(m.val[0], s.val[0]), make_requant4(m.val[1], s.val[1]), b.val[0], b.val[1]};
}

// 8 channels widened to 16-bit lanes; the tail group loads only its live
// channels (inactive lanes read as 0).
template <bool kTail>
inline int16x8_t load8(const int8_t* p, mve_pred16_t pred) {
  if constexpr (kTail) {
    return vldrbq_z_s16(p, pred);
  } else {
    (void)pred;
    return vldrbq_s16(p);
  }
}

inline void mac8(int32x4_t& even, int32x4_t& odd, int16x8_t x, int16x8_t f) {
  even = vaddq_s32(even, vmullbq_int_s16(x, f));
  odd = vaddq_s32(odd, vmulltq_int_s16(x, f));
}

// Requantizes 8 channels and stores them in channel order: the saturating
// narrows put the even channels back in the even 16-bit lanes and the odd
// ones in the odd lanes; saturating to int16 before the clamp to the int8
// activation range gives the clamp's result.
template <bool kTail, bool kRightOnly>
inline void requant_store8(int8_t* out, int32x4_t even, int32x4_t odd, const GroupRequant& g,
                           const S8Requant& rq, mve_pred16_t pred) {
  even = vaddq_n_s32(scale4<kRightOnly>(even, g.even), rq.output_offset);
  odd = vaddq_n_s32(scale4<kRightOnly>(odd, g.odd), rq.output_offset);
  int16x8_t n = vqmovnbq_s32(vuninitializedq_s16(), even);
  n = vqmovntq_s32(n, odd);
  n = vmaxq_s16(n, vdupq_n_s16(static_cast<int16_t>(rq.act_min)));
  n = vminq_s16(n, vdupq_n_s16(static_cast<int16_t>(rq.act_max)));
  if constexpr (kTail) {
    vstrbq_p_s16(out, n, pred);
  } else {
    (void)pred;
    vstrbq_s16(out, n);
  }
}

inline int32_t ceil_div(int32_t a, int32_t b) { return (a + b - 1) / b; }

// The in-bounds taps [first_tap, end_tap) of a window starting at `start`
// (dilation 1, the common case, needs no division).
inline int32_t first_tap(int32_t start, int32_t dil) {
  if (start >= 0) return 0;
  return dil == 1 ? -start : ceil_div(-start, dil);
}
inline int32_t end_tap(int32_t start, int32_t size, int32_t k, int32_t dil) {
  const int32_t room = size - start;
  if (room <= 0) return 0;
  const int32_t end = dil == 1 ? room : ceil_div(room, dil);
  return end < k ? end : k;
}

// Any kernel, stride, dilation and position: only the in-bounds taps, each
// with the input offset added.
template <bool kTail, bool kRightOnly>
__attribute__((noinline)) void general_pixel(const DepthwiseS8Shape& s, const int8_t* in_c,
                                             const int8_t* filter_c, int32_t oy, int32_t ox,
                                             const GroupRequant& g, const S8Requant& rq,
                                             int8_t* out, mve_pred16_t pred) {
  const int32_t iy0 = oy * s.stride_h - s.pad_top, ix0 = ox * s.stride_w - s.pad_left;
  const int32_t ky_lo = first_tap(iy0, s.dil_h);
  const int32_t ky_hi = end_tap(iy0, s.in_h, s.k_h, s.dil_h);
  const int32_t kx_lo = first_tap(ix0, s.dil_w);
  const int32_t kx_hi = end_tap(ix0, s.in_w, s.k_w, s.dil_w);
  const int16_t offset = static_cast<int16_t>(s.input_offset);
  int32x4_t even = g.bias_even, odd = g.bias_odd;
  for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
    const int8_t* row = in_c + (iy0 + ky * s.dil_h) * s.in_w * s.channels;
    const int8_t* taps = filter_c + ky * s.k_w * s.channels;
    for (int32_t kx = kx_lo; kx < kx_hi; ++kx) {
      const int16x8_t x =
          vaddq_n_s16(load8<kTail>(row + (ix0 + kx * s.dil_w) * s.channels, pred), offset);
      mac8(even, odd, x, load8<kTail>(taps + kx * s.channels, pred));
    }
  }
  requant_store8<kTail, kRightOnly>(out, even, odd, g, rq, pred);
}

// The fast path's per-group constants, one base register away from the
// assembly below (immediate offsets).
struct InteriorConstants {
  int32x4_t start_even, start_odd;  // bias + input offset * sum of the taps
  int32x4_t multiplier_even, multiplier_odd;
  int32x4_t right_even, right_odd;  // min(shift, 0), all negative
  int16x8_t act_min, act_max;
  int32_t output_offset;  // at byte 128
};

// `pairs` pairs of horizontally adjacent outputs of 3x3 windows inside the
// input, 8 channels, every shift negative: p points at the first window's
// top-left tap, `step` = stride_w * channels is the distance between
// neighbouring windows, back1/back2 the steps from the third tap of window
// row 0/1 to the first of row 1/2 (in the input: in_w * channels -
// 2 * channels), `taps` the group's filter packed ([9][8], widened by its
// loads), out the first output and `out_step` the distance between outputs.
// Per tap: one filter load shared by the two pixels, and per pixel one input
// load, VMULLB + VMULLT and two adds; then scale4<true>, the output offset,
// the saturating narrow and the clamp. Assembly because GCC 12 hoists the 18
// loads of an unrolled window and spills most of them.
#define FLOE_DW_TAP(offset, advance)              \
  "vldrb.s16 q4, [%[taps], #" #offset "]\n\t"     \
  "vldrb.s16 q5, [%[p0]]\n\t"                     \
  "vmullb.s16 q6, q5, q4\n\t"                     \
  "vadd.i32 q0, q0, q6\n\t"                       \
  "vmullt.s16 q6, q5, q4\n\t"                     \
  "vadd.i32 q1, q1, q6\n\t"                       \
  "vldrb.s16 q5, [%[p1]]\n\t"                     \
  "vmullb.s16 q6, q5, q4\n\t"                     \
  "vadd.i32 q2, q2, q6\n\t"                       \
  "vmullt.s16 q6, q5, q4\n\t"                     \
  "vadd.i32 q3, q3, q6\n\t"                       \
  "add %[p0], %[p0], " advance "\n\t"             \
  "add %[p1], %[p1], " advance "\n\t"

// Not inlined (nor the two below): inlined, the register demand of the
// callers makes GCC 12 find no allocation for the operands.
__attribute__((noinline)) void interior_pairs_3x3(const int8_t* p, int32_t step, int32_t col,
                                                  int32_t back1, int32_t back2,
                                                  const int8_t* taps, const InteriorConstants& k,
                                                  int8_t* out, int32_t out_step, int32_t pairs) {
  const int8_t* p0;
  const int8_t* p1;
  __asm__ volatile(
      "dls lr, %[pairs]\n"
      "1:\n\t"
      "mov %[p0], %[p]\n\t"
      "add %[p1], %[p], %[step]\n\t"
      "vldrw.u32 q0, [%[k]]\n\t"
      "vldrw.u32 q1, [%[k], #16]\n\t"
      "vmov q2, q0\n\t"
      "vmov q3, q1\n\t"
      FLOE_DW_TAP(0, "%[col]")
      FLOE_DW_TAP(8, "%[col]")
      FLOE_DW_TAP(16, "%[back1]")
      FLOE_DW_TAP(24, "%[col]")
      FLOE_DW_TAP(32, "%[col]")
      FLOE_DW_TAP(40, "%[back2]")
      FLOE_DW_TAP(48, "%[col]")
      FLOE_DW_TAP(56, "%[col]")
      FLOE_DW_TAP(64, "#0")
      // scale4<true> on the four accumulators.
      "vldrw.u32 q4, [%[k], #32]\n\t"
      "vqrdmulh.s32 q0, q0, q4\n\t"
      "vqrdmulh.s32 q2, q2, q4\n\t"
      "vldrw.u32 q4, [%[k], #48]\n\t"
      "vqrdmulh.s32 q1, q1, q4\n\t"
      "vqrdmulh.s32 q3, q3, q4\n\t"
      "vshr.s32 q5, q0, #31\n\t"
      "vqadd.s32 q0, q0, q5\n\t"
      "vshr.s32 q5, q1, #31\n\t"
      "vqadd.s32 q1, q1, q5\n\t"
      "vshr.s32 q5, q2, #31\n\t"
      "vqadd.s32 q2, q2, q5\n\t"
      "vshr.s32 q5, q3, #31\n\t"
      "vqadd.s32 q3, q3, q5\n\t"
      "vldrw.u32 q4, [%[k], #64]\n\t"
      "vrshl.s32 q0, q0, q4\n\t"
      "vrshl.s32 q2, q2, q4\n\t"
      "vldrw.u32 q4, [%[k], #80]\n\t"
      "vrshl.s32 q1, q1, q4\n\t"
      "vrshl.s32 q3, q3, q4\n\t"
      // Output offset (int32, wrapping like the reference; read into p1,
      // free by now, as the registers are all taken), narrow, clamp.
      "ldr %[p1], [%[k], #128]\n\t"
      "vadd.i32 q0, q0, %[p1]\n\t"
      "vadd.i32 q1, q1, %[p1]\n\t"
      "vadd.i32 q2, q2, %[p1]\n\t"
      "vadd.i32 q3, q3, %[p1]\n\t"
      "vqmovnb.s32 q4, q0\n\t"
      "vqmovnt.s32 q4, q1\n\t"
      "vqmovnb.s32 q5, q2\n\t"
      "vqmovnt.s32 q5, q3\n\t"
      "vldrw.u32 q6, [%[k], #96]\n\t"
      "vmax.s16 q4, q4, q6\n\t"
      "vmax.s16 q5, q5, q6\n\t"
      "vldrw.u32 q6, [%[k], #112]\n\t"
      "vmin.s16 q4, q4, q6\n\t"
      "vmin.s16 q5, q5, q6\n\t"
      "vstrb.16 q4, [%[out]]\n\t"
      "add %[p0], %[out], %[out_step]\n\t"
      "vstrb.16 q5, [%[p0]]\n\t"
      "add %[out], %[out], %[out_step], lsl #1\n\t"
      "add %[p], %[p], %[step], lsl #1\n\t"
      "le lr, 1b\n"
      // Widening loads and narrowing stores take low registers only ("l").
      : [p0] "=&l"(p0), [p1] "=&l"(p1), [p] "+r"(p), [out] "+l"(out)
      : [step] "r"(step), [col] "r"(col), [back1] "r"(back1), [back2] "r"(back2),
        [taps] "l"(taps), [k] "r"(&k), [out_step] "r"(out_step), [pairs] "r"(pairs)
      : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "lr", "memory");
}

// Two pixels' sums (q0/q1 and q2/q3) requantized with the constants at
// k + 32..127 (TFLM's double rounding), clamped, stored at `out` and
// `out + out_step`; `out` steps two pixels. The interior and packed-row
// loops share it.
#define FLOE_DW_REQUANT_STORE_PAIR \
  "vldrw.u32 q4, [%[k], #32]\n\t" \
  "vqrdmulh.s32 q0, q0, q4\n\t" \
  "vqrdmulh.s32 q2, q2, q4\n\t" \
  "vldrw.u32 q4, [%[k], #48]\n\t" \
  "vqrdmulh.s32 q1, q1, q4\n\t" \
  "vqrdmulh.s32 q3, q3, q4\n\t" \
  "vshr.s32 q5, q0, #31\n\t" \
  "vqadd.s32 q0, q0, q5\n\t" \
  "vshr.s32 q5, q1, #31\n\t" \
  "vqadd.s32 q1, q1, q5\n\t" \
  "vshr.s32 q5, q2, #31\n\t" \
  "vqadd.s32 q2, q2, q5\n\t" \
  "vshr.s32 q5, q3, #31\n\t" \
  "vqadd.s32 q3, q3, q5\n\t" \
  "vldrw.u32 q4, [%[k], #64]\n\t" \
  "vrshl.s32 q0, q0, q4\n\t" \
  "vrshl.s32 q2, q2, q4\n\t" \
  "vldrw.u32 q4, [%[k], #80]\n\t" \
  "vrshl.s32 q1, q1, q4\n\t" \
  "vrshl.s32 q3, q3, q4\n\t" \
  "vadd.i32 q0, q0, %[offset]\n\t" \
  "vadd.i32 q1, q1, %[offset]\n\t" \
  "vadd.i32 q2, q2, %[offset]\n\t" \
  "vadd.i32 q3, q3, %[offset]\n\t" \
  "vqmovnb.s32 q4, q0\n\t" \
  "vqmovnt.s32 q4, q1\n\t" \
  "vqmovnb.s32 q5, q2\n\t" \
  "vqmovnt.s32 q5, q3\n\t" \
  "vldrw.u32 q6, [%[k], #96]\n\t" \
  "vmax.s16 q4, q4, q6\n\t" \
  "vmax.s16 q5, q5, q6\n\t" \
  "vldrw.u32 q6, [%[k], #112]\n\t" \
  "vmin.s16 q4, q4, q6\n\t" \
  "vmin.s16 q5, q5, q6\n\t" \
  "vstrb.16 q4, [%[out]]\n\t" \
  "add %[q], %[out], %[out_step]\n\t" \
  "vstrb.16 q5, [%[q]]\n\t" \
  "add %[out], %[out], %[out_step], lsl #1\n\t"

#undef FLOE_DW_TAP
// interior_pairs_3x3 for stride 1, where the second pixel's tap kx is the
// first one's kx + 1: per row of the window four input loads instead of six
// and four pointer steps instead of six; back1/back2 step from the fourth
// column of a row to the next row.
#define FLOE_DW_MAC(x, f, even, odd) \
  "vmullb.s16 q7, " x ", " f "\n\t"   \
  "vadd.i32 " even ", " even ", q7\n\t" \
  "vmullt.s16 q7, " x ", " f "\n\t"   \
  "vadd.i32 " odd ", " odd ", q7\n\t"
#define FLOE_DW_ROW_S1(f0, f1, f2, back)               \
  "vldrb.s16 q6, [%[q]]\n\t"                            \
  "vldrb.s16 q4, [%[taps], #" #f0 "]\n\t"               \
  FLOE_DW_MAC("q6", "q4", "q0", "q1")                   \
  "add %[q], %[q], %[col]\n\t"                          \
  "vldrb.s16 q6, [%[q]]\n\t"                            \
  "vldrb.s16 q5, [%[taps], #" #f1 "]\n\t"               \
  FLOE_DW_MAC("q6", "q5", "q0", "q1")                   \
  FLOE_DW_MAC("q6", "q4", "q2", "q3")                   \
  "add %[q], %[q], %[col]\n\t"                          \
  "vldrb.s16 q6, [%[q]]\n\t"                            \
  "vldrb.s16 q4, [%[taps], #" #f2 "]\n\t"               \
  FLOE_DW_MAC("q6", "q4", "q0", "q1")                   \
  FLOE_DW_MAC("q6", "q5", "q2", "q3")                   \
  "add %[q], %[q], %[col]\n\t"                          \
  "vldrb.s16 q6, [%[q]]\n\t"                            \
  FLOE_DW_MAC("q6", "q4", "q2", "q3")                   \
  "add %[q], %[q], " back "\n\t"

__attribute__((noinline)) void interior_pairs_3x3_stride1(const int8_t* p, int32_t col,
                                                          int32_t back1, int32_t back2,
                                                          const int8_t* taps,
                                                          const InteriorConstants& k,
                                                          int32_t output_offset, int8_t* out,
                                                          int32_t out_step, int32_t pairs) {
  const int8_t* q;
  __asm__ volatile(
      "dls lr, %[pairs]\n"
      "1:\n\t"
      "mov %[q], %[p]\n\t"
      "vldrw.u32 q0, [%[k]]\n\t"
      "vldrw.u32 q1, [%[k], #16]\n\t"
      "vmov q2, q0\n\t"
      "vmov q3, q1\n\t"
      FLOE_DW_ROW_S1(0, 8, 16, "%[back1]")
      FLOE_DW_ROW_S1(24, 32, 40, "%[back2]")
      FLOE_DW_ROW_S1(48, 56, 64, "#0")
      FLOE_DW_REQUANT_STORE_PAIR
      "add %[p], %[p], %[col], lsl #1\n\t"
      "le lr, 1b\n"
      : [q] "=&l"(q), [p] "+r"(p), [out] "+l"(out)
      : [col] "r"(col), [back1] "r"(back1), [back2] "r"(back2), [taps] "l"(taps), [k] "r"(&k),
        [offset] "r"(output_offset), [out_step] "r"(out_step), [pairs] "r"(pairs)
      : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "lr", "memory");
}

// Stride 1 on a padded copy (8 bytes per column): interior_pairs_3x3_stride1
// with the columns at immediate offsets (no pointer steps within a window
// row); down1/down2 step from a window row's start to the next row's. An odd
// last pixel (`odd`) is done after the pairs, in the same call.
#define FLOE_DW_PACKED_ROW(f0, f1, f2, down)           \
  "vldrb.s16 q6, [%[q]]\n\t"                            \
  "vldrb.s16 q4, [%[taps], #" #f0 "]\n\t"               \
  FLOE_DW_MAC("q6", "q4", "q0", "q1")                   \
  "vldrb.s16 q6, [%[q], #8]\n\t"                        \
  "vldrb.s16 q5, [%[taps], #" #f1 "]\n\t"               \
  FLOE_DW_MAC("q6", "q5", "q0", "q1")                   \
  FLOE_DW_MAC("q6", "q4", "q2", "q3")                   \
  "vldrb.s16 q6, [%[q], #16]\n\t"                       \
  "vldrb.s16 q4, [%[taps], #" #f2 "]\n\t"               \
  FLOE_DW_MAC("q6", "q4", "q0", "q1")                   \
  FLOE_DW_MAC("q6", "q5", "q2", "q3")                   \
  "vldrb.s16 q6, [%[q], #24]\n\t"                       \
  FLOE_DW_MAC("q6", "q4", "q2", "q3")                   \
  "add %[q], %[q], " down "\n\t"
#define FLOE_DW_PACKED_ROW1(f0, f1, f2, down)          \
  "vldrb.s16 q6, [%[q]]\n\t"                            \
  "vldrb.s16 q4, [%[taps], #" #f0 "]\n\t"               \
  FLOE_DW_MAC("q6", "q4", "q0", "q1")                   \
  "vldrb.s16 q6, [%[q], #8]\n\t"                        \
  "vldrb.s16 q4, [%[taps], #" #f1 "]\n\t"               \
  FLOE_DW_MAC("q6", "q4", "q0", "q1")                   \
  "vldrb.s16 q6, [%[q], #16]\n\t"                       \
  "vldrb.s16 q4, [%[taps], #" #f2 "]\n\t"               \
  FLOE_DW_MAC("q6", "q4", "q0", "q1")                   \
  "add %[q], %[q], " down "\n\t"

__attribute__((noinline)) void packed_row_3x3_stride1(const int8_t* p, int32_t down1,
                                                      int32_t down2, const int8_t* taps,
                                                      const InteriorConstants& k, int8_t* out,
                                                      int32_t out_step, int32_t pairs,
                                                      int32_t odd) {
  const int8_t* q;
  int32_t offset;
  __asm__ volatile(
      "ldr %[offset], [%[k], #128]\n\t"
      "wls lr, %[pairs], 2f\n"
      "1:\n\t"
      "mov %[q], %[p]\n\t"
      "vldrw.u32 q0, [%[k]]\n\t"
      "vldrw.u32 q1, [%[k], #16]\n\t"
      "vmov q2, q0\n\t"
      "vmov q3, q1\n\t"
      FLOE_DW_PACKED_ROW(0, 8, 16, "%[down1]")
      FLOE_DW_PACKED_ROW(24, 32, 40, "%[down2]")
      FLOE_DW_PACKED_ROW(48, 56, 64, "#0")
      FLOE_DW_REQUANT_STORE_PAIR
      "add %[p], %[p], #16\n\t"
      "le lr, 1b\n"
      "2:\n\t"
      "cmp %[odd], #0\n\t"
      "beq 3f\n\t"
      "mov %[q], %[p]\n\t"
      "vldrw.u32 q0, [%[k]]\n\t"
      "vldrw.u32 q1, [%[k], #16]\n\t"
      FLOE_DW_PACKED_ROW1(0, 8, 16, "%[down1]")
      FLOE_DW_PACKED_ROW1(24, 32, 40, "%[down2]")
      FLOE_DW_PACKED_ROW1(48, 56, 64, "#0")
      "vldrw.u32 q4, [%[k], #32]\n\t"
      "vqrdmulh.s32 q0, q0, q4\n\t"
      "vldrw.u32 q4, [%[k], #48]\n\t"
      "vqrdmulh.s32 q1, q1, q4\n\t"
      "vshr.s32 q5, q0, #31\n\t"
      "vqadd.s32 q0, q0, q5\n\t"
      "vshr.s32 q5, q1, #31\n\t"
      "vqadd.s32 q1, q1, q5\n\t"
      "vldrw.u32 q4, [%[k], #64]\n\t"
      "vrshl.s32 q0, q0, q4\n\t"
      "vldrw.u32 q4, [%[k], #80]\n\t"
      "vrshl.s32 q1, q1, q4\n\t"
      "vadd.i32 q0, q0, %[offset]\n\t"
      "vadd.i32 q1, q1, %[offset]\n\t"
      "vqmovnb.s32 q4, q0\n\t"
      "vqmovnt.s32 q4, q1\n\t"
      "vldrw.u32 q6, [%[k], #96]\n\t"
      "vmax.s16 q4, q4, q6\n\t"
      "vldrw.u32 q6, [%[k], #112]\n\t"
      "vmin.s16 q4, q4, q6\n\t"
      "vstrb.16 q4, [%[out]]\n"
      "3:\n\t"
      : [q] "=&l"(q), [offset] "=&r"(offset), [p] "+r"(p), [out] "+l"(out)
      : [down1] "r"(down1), [down2] "r"(down2), [taps] "l"(taps), [k] "r"(&k),
        [out_step] "r"(out_step), [pairs] "r"(pairs), [odd] "r"(odd)
      : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "lr", "cc", "memory");
}

#undef FLOE_DW_PACKED_ROW
#undef FLOE_DW_PACKED_ROW1

#undef FLOE_DW_MAC
#undef FLOE_DW_ROW_S1
#undef FLOE_DW_REQUANT_STORE_PAIR

#define FLOE_DW_TAP1(offset, advance)             \
  "vldrb.s16 q4, [%[taps], #" #offset "]\n\t"     \
  "vldrb.s16 q5, [%[p0]]\n\t"                     \
  "vmullb.s16 q6, q5, q4\n\t"                     \
  "vadd.i32 q0, q0, q6\n\t"                       \
  "vmullt.s16 q6, q5, q4\n\t"                     \
  "vadd.i32 q1, q1, q6\n\t"                       \
  "add %[p0], %[p0], " advance "\n\t"

// One output of interior_pairs_3x3 (a row's odd last pixel): half the work.
__attribute__((noinline)) void interior_single_3x3(const int8_t* p0, int32_t col, int32_t back1,
                                                   int32_t back2, const int8_t* taps,
                                                   const InteriorConstants& k,
                                                   int32_t output_offset, int8_t* out) {
  __asm__ volatile(
      "vldrw.u32 q0, [%[k]]\n\t"
      "vldrw.u32 q1, [%[k], #16]\n\t"
      FLOE_DW_TAP1(0, "%[col]")
      FLOE_DW_TAP1(8, "%[col]")
      FLOE_DW_TAP1(16, "%[back1]")
      FLOE_DW_TAP1(24, "%[col]")
      FLOE_DW_TAP1(32, "%[col]")
      FLOE_DW_TAP1(40, "%[back2]")
      FLOE_DW_TAP1(48, "%[col]")
      FLOE_DW_TAP1(56, "%[col]")
      FLOE_DW_TAP1(64, "#0")
      "vldrw.u32 q4, [%[k], #32]\n\t"
      "vqrdmulh.s32 q0, q0, q4\n\t"
      "vldrw.u32 q4, [%[k], #48]\n\t"
      "vqrdmulh.s32 q1, q1, q4\n\t"
      "vshr.s32 q5, q0, #31\n\t"
      "vqadd.s32 q0, q0, q5\n\t"
      "vshr.s32 q5, q1, #31\n\t"
      "vqadd.s32 q1, q1, q5\n\t"
      "vldrw.u32 q4, [%[k], #64]\n\t"
      "vrshl.s32 q0, q0, q4\n\t"
      "vldrw.u32 q4, [%[k], #80]\n\t"
      "vrshl.s32 q1, q1, q4\n\t"
      "vadd.i32 q0, q0, %[offset]\n\t"
      "vadd.i32 q1, q1, %[offset]\n\t"
      "vqmovnb.s32 q4, q0\n\t"
      "vqmovnt.s32 q4, q1\n\t"
      "vldrw.u32 q6, [%[k], #96]\n\t"
      "vmax.s16 q4, q4, q6\n\t"
      "vldrw.u32 q6, [%[k], #112]\n\t"
      "vmin.s16 q4, q4, q6\n\t"
      "vstrb.16 q4, [%[out]]\n\t"
      : [p0] "+l"(p0)
      : [col] "r"(col), [back1] "r"(back1), [back2] "r"(back2), [taps] "l"(taps), [k] "r"(&k),
        [offset] "r"(output_offset), [out] "l"(out)
      : "q0", "q1", "q4", "q5", "q6", "memory");
}

#undef FLOE_DW_TAP1

// Row iy, columns ix_begin..ix_begin+columns-1 of 8 channels (in_c points
// at the group's first channel) to `dst` ([columns][8]), the zero point
// where they leave the input. Scalars only: the int8 stores may alias
// anything reached through a pointer, which GCC would reload.
inline void copy_padded_row(const int8_t* in_c, int32_t iy, int32_t ix_begin, int32_t columns,
                            int32_t in_h, int32_t in_w, int32_t C, int16x8_t zero_point,
                            int8_t* dst) {
  if (iy < 0 || iy >= in_h) {
    for (int32_t j = 0; j < columns; ++j, dst += 8) vstrbq_s16(dst, zero_point);
    return;
  }
  // The columns inside the input: [inside_begin, inside_end).
  const int32_t inside_begin = ix_begin < 0 ? (-ix_begin < columns ? -ix_begin : columns) : 0;
  int32_t inside_end = in_w - ix_begin;
  if (inside_end > columns) inside_end = columns;
  if (inside_end < inside_begin) inside_end = inside_begin;
  const int8_t* src = in_c + (iy * in_w + ix_begin + inside_begin) * C;
  int32_t j = 0;
  for (; j < inside_begin; ++j, dst += 8) vstrbq_s16(dst, zero_point);
  for (; j < inside_end; ++j, dst += 8, src += C) vstrbq_s16(dst, vldrbq_s16(src));
  for (; j < columns; ++j, dst += 8) vstrbq_s16(dst, zero_point);
}

// Any group, any kernel, pixel by pixel: the tail group, groups with a left
// shift, kernels other than 3x3, dilation. Not inlined, like fast_group: the
// variants then cost one stack frame's depth, not the sum.
template <bool kTail, bool kRightOnly>
__attribute__((noinline)) void general_group(const DepthwiseS8Shape& s, const int8_t* input,
                                             const int8_t* filter, const S8Requant& rq,
                                             int8_t* output, int32_t c) {
  const int32_t live = s.channels - c < 8 ? s.channels - c : 8;
  const mve_pred16_t pred = vctp16q(static_cast<uint32_t>(live));
  const GroupRequant g = load_group(rq, c, live);
  const int32_t C = s.channels;
  for (int32_t n = 0; n < s.batches; ++n) {
    const int8_t* in_c = input + n * s.in_h * s.in_w * C + c;
    for (int32_t oy = 0; oy < s.out_h; ++oy) {
      int8_t* out = output + ((n * s.out_h + oy) * s.out_w) * C + c;
      for (int32_t ox = 0; ox < s.out_w; ++ox) {
        general_pixel<kTail, kRightOnly>(s, in_c, filter + c, oy, ox, g, rq, out + ox * C, pred);
      }
    }
  }
}

// The fast path's state for one group, in one place so that the helpers
// below share it by reference (and the stack holds it once).
constexpr int32_t kChunkColumns = 8;  // the padded-row buffer's width
struct FastGroup {
  InteriorConstants k;
  int16x8_t zero_point;  // the input zero point, standing in for taps outside the input
  int32_t channels, stride_w;
  alignas(8) int8_t taps[9 * 8];  // the group's filter, packed
  alignas(8) int8_t chunk[3 * kChunkColumns * 8];  // up to three padded input rows
};

// `count` outputs of one row: p points at the first window's top-left tap,
// `col` is the step between taps of a row, back1/back2 the steps from the
// third tap of window row 0/1 to the first of row 1/2.
__attribute__((noinline)) void run_row(const FastGroup& g, const int8_t* p, int32_t col,
                                       int32_t back1, int32_t back2, int8_t* out, int32_t count) {
  const int32_t step = g.stride_w * col, pairs = count / 2;
  if (col == 8 && g.stride_w == 1) {  // a padded copy: back1/back2 + 16 are its row steps
    packed_row_3x3_stride1(p, back1 + 16, back2 + 16, g.taps, g.k, out, g.channels, pairs,
                           count % 2);
    return;
  }
  if (pairs > 0 && g.stride_w == 1) {
    interior_pairs_3x3_stride1(p, col, back1 - col, back2 - col, g.taps, g.k, g.k.output_offset,
                               out, g.channels, pairs);
  } else if (pairs > 0) {
    interior_pairs_3x3(p, step, col, back1, back2, g.taps, g.k, out, g.channels, pairs);
  }
  if (count % 2 != 0) {
    interior_single_3x3(p + 2 * pairs * step, col, back1, back2, g.taps, g.k, g.k.output_offset,
                        out + 2 * pairs * g.channels);
  }
}

// Outputs [ox_begin, ox_end) of one row (window top row iy0) through a
// padded copy of its three input rows, kChunkColumns columns at a time.
__attribute__((always_inline)) inline void run_chunks(FastGroup& g, const DepthwiseS8Shape& s,
                                          const int8_t* in_c, int32_t iy0, int8_t* out,
                                          int32_t ox_begin, int32_t ox_end) {
  const int32_t chunk_outputs = (kChunkColumns - 3) / s.stride_w + 1;
  for (; ox_begin < ox_end; ox_begin += chunk_outputs) {
    const int32_t end = ox_begin + chunk_outputs < ox_end ? ox_begin + chunk_outputs : ox_end;
    const int32_t columns = (end - ox_begin - 1) * s.stride_w + 3;
    for (int32_t ky = 0; ky < 3; ++ky) {
      copy_padded_row(in_c, iy0 + ky, ox_begin * s.stride_w - s.pad_left, columns, s.in_h, s.in_w,
                      s.channels, g.zero_point, g.chunk + ky * columns * 8);
    }
    run_row(g, g.chunk, 8, columns * 8 - 16, columns * 8 - 16, out + ox_begin * s.channels,
            end - ox_begin);
  }
}

// A full group of 8 channels, every shift negative (the usual case), 3x3
// without dilation: pairs of pixels in assembly. Rows whose windows stay
// inside the input are read in place; border pixels and narrow images run
// on padded copies of their input rows, the input zero point standing in
// for the missing taps: (zero point + input offset) * filter = 0, exactly
// the skipped taps.
__attribute__((noinline)) void fast_group(const DepthwiseS8Shape& s, const int8_t* input,
                                          const int8_t* filter, const S8Requant& rq,
                                          int8_t* output, int32_t c) {
  const int32_t C = s.channels;
  FastGroup g;
  // The packed filter and the constants; the start value is the bias plus
  // the input offset times the sum of the taps.
  int16x8_t sum = vdupq_n_s16(0);
  for (int t = 0; t < 9; ++t) {
    const int16x8_t tap = vldrbq_s16(filter + t * C + c);
    vstrbq_s16(g.taps + 8 * t, tap);
    sum = vaddq_s16(sum, tap);
  }
  const int16x8_t offset = vdupq_n_s16(static_cast<int16_t>(s.input_offset));
  // Field by field: an aggregate would be built on the stack and copied.
  const int32x4x2_t bias = vld2q_s32(rq.bias + c);
  g.k.start_even = vaddq_s32(bias.val[0], vmullbq_int_s16(sum, offset));
  g.k.start_odd = vaddq_s32(bias.val[1], vmulltq_int_s16(sum, offset));
  const int32x4x2_t multiplier = vld2q_s32(rq.multiplier + c);
  g.k.multiplier_even = multiplier.val[0];
  g.k.multiplier_odd = multiplier.val[1];
  const int32x4x2_t shift = vld2q_s32(rq.shift + c);
  g.k.right_even = vminq_s32(shift.val[0], vdupq_n_s32(0));
  g.k.right_odd = vminq_s32(shift.val[1], vdupq_n_s32(0));
  g.k.act_min = vdupq_n_s16(static_cast<int16_t>(rq.act_min));
  g.k.act_max = vdupq_n_s16(static_cast<int16_t>(rq.act_max));
  g.k.output_offset = rq.output_offset;
  g.zero_point = vdupq_n_s16(static_cast<int16_t>(-s.input_offset));
  g.channels = C;
  g.stride_w = s.stride_w;
  const int32_t in_row = s.in_w * C;
  // Narrow images (a padded row fits the buffer): a ring of three padded
  // rows, so each input row is copied once; oldest..newest hold the last
  // three rows copied, the next copy overwrites the oldest.
  const int32_t padded = (s.out_w - 1) * s.stride_w + 3;
  if (padded <= kChunkColumns) {
    for (int32_t n = 0; n < s.batches; ++n) {
      const int8_t* in_c = input + n * s.in_h * in_row + c;
      int8_t* oldest = g.chunk;
      int8_t* middle = g.chunk + padded * 8;
      int8_t* newest = g.chunk + 2 * padded * 8;
      int32_t next_row = -s.pad_top;  // the next input row to copy
      for (int32_t oy = 0; oy < s.out_h; ++oy) {
        const int32_t iy0 = oy * s.stride_h - s.pad_top;
        if (next_row < iy0) next_row = iy0;
        for (; next_row <= iy0 + 2; ++next_row) {
          copy_padded_row(in_c, next_row, -s.pad_left, padded, s.in_h, s.in_w, C, g.zero_point,
                          oldest);
          int8_t* const copied = oldest;
          oldest = middle;
          middle = newest;
          newest = copied;
        }
        run_row(g, oldest, 8, static_cast<int32_t>(middle - oldest) - 16,
                static_cast<int32_t>(newest - middle) - 16,
                output + ((n * s.out_h + oy) * s.out_w) * C + c, s.out_w);
      }
    }
    return;
  }
  // Outputs [ox_lo, ox_hi) have all three columns inside the input.
  const int32_t first = ceil_div(s.pad_left, s.stride_w);
  const int32_t last_end =
      s.in_w - 3 + s.pad_left >= 0 ? (s.in_w - 3 + s.pad_left) / s.stride_w + 1 : 0;
  const int32_t ox_lo = first < s.out_w ? first : s.out_w;
  const int32_t ox_hi = last_end < ox_lo ? ox_lo : (last_end < s.out_w ? last_end : s.out_w);
  for (int32_t n = 0; n < s.batches; ++n) {
    const int8_t* in_c = input + n * s.in_h * in_row + c;
    for (int32_t oy = 0; oy < s.out_h; ++oy) {
      int8_t* out = output + ((n * s.out_h + oy) * s.out_w) * C + c;
      const int32_t iy0 = oy * s.stride_h - s.pad_top;
      const bool row_inside = iy0 >= 0 && iy0 + 3 <= s.in_h;
      if (!row_inside || ox_hi - ox_lo < 2) {
        run_chunks(g, s, in_c, iy0, out, 0, s.out_w);
        continue;
      }
      run_chunks(g, s, in_c, iy0, out, 0, ox_lo);
      const int8_t* p = in_c + iy0 * in_row + (ox_lo * s.stride_w - s.pad_left) * C;
      run_row(g, p, C, in_row - 2 * C, in_row - 2 * C, out + ox_lo * C, ox_hi - ox_lo);
      run_chunks(g, s, in_c, iy0, out, ox_hi, s.out_w);
    }
  }
}

}  // namespace

void s8_depthwise(const DepthwiseS8Shape& shape, const int8_t* input, const int8_t* filter,
                  const S8Requant& rq, int8_t* output) {
  const bool three_by_three =
      shape.k_h == 3 && shape.k_w == 3 && shape.dil_h == 1 && shape.dil_w == 1;
  for (int32_t c = 0; c < shape.channels; c += 8) {
    const int32_t live = shape.channels - c < 8 ? shape.channels - c : 8;
    bool right_only = true;
    for (int32_t i = 0; i < live; ++i) right_only = right_only && rq.shift[c + i] < 0;
    if (live == 8 && right_only && three_by_three) {
      fast_group(shape, input, filter, rq, output, c);
    } else if (live == 8) {
      if (right_only) {
        general_group<false, true>(shape, input, filter, rq, output, c);
      } else {
        general_group<false, false>(shape, input, filter, rq, output, c);
      }
    } else if (right_only) {
      general_group<true, true>(shape, input, filter, rq, output, c);
    } else {
      general_group<true, false>(shape, input, filter, rq, output, c);
    }
  }
}

}  // namespace floe::cortexm

#endif  // FLOE_CORTEXM_S8_MVE
