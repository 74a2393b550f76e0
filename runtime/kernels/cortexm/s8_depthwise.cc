// SPDX-License-Identifier: Apache-2.0
// s8_depthwise (s8_microkernels.h) on the DSP extension (M4, M33) and in
// portable C: 4 channels per word; the input offset is added while widening
// (SXTAB16 adds it to both halves); one halfword MAC per product
// (SMLABB/SMLATT: no reduction across channels to pair). Padded taps are
// skipped by clipping each window once per output pixel; a window three taps
// wide whose columns are all inside the input runs unrolled (DSP: inline
// assembly, 10 instructions per tap and 4 channels).
//
// Kernels three taps wide on the DSP build with the short requantization:
// groups of 4 channels outermost, their widened weights and constants
// prepared once (with the input offset's term folded into the bias for
// windows inside the input, and for full-height two-column edge windows); a
// row's inner windows run in one assembly loop, 102 instructions per pixel
// and 4 channels (36 MACs).
//
// The host targets' full requantization goes to their SIMD builds, split
// across the caller's threads by bands of output rows.
#if !defined(FLOE_CORTEXM_S8_MVE)

#include "runtime/kernels/cortexm/s8_microkernels.h"

#include <stddef.h>
#include <string.h>

#include "runtime/kernels/cortexm/s8_arithmetic.h"
#include "runtime/kernels/common/window.h"
#if defined(FLOE_S8_NEON) || defined(FLOE_S8_X86)
#include "runtime/core/parallel.h"
#endif

namespace floe::cortexm {
using namespace s8_detail;  // NOLINT(build/namespaces): the kernels' shared arithmetic
namespace {

struct DepthwiseGeometry {
  const int8_t* filter;
  ptrdiff_t channels, in_row, f_row;  // bytes per input row and per filter row
  ptrdiff_t dil_h;
  ptrdiff_t x_step;   // bytes between horizontal taps: dil_w * channels
  uint32_t offsets;   // the input offset in both halfwords
  int32_t input_offset;
};

inline DepthwiseGeometry depthwise_geometry(const DepthwiseS8Shape& p, const int8_t* filter) {
  DepthwiseGeometry g;
  g.filter = filter;
  g.channels = p.channels;
  g.in_row = static_cast<ptrdiff_t>(p.in_w) * p.channels;
  g.f_row = static_cast<ptrdiff_t>(p.k_w) * p.channels;
  g.dil_h = p.dil_h;
  g.x_step = static_cast<ptrdiff_t>(p.dil_w) * p.channels;
  g.input_offset = p.input_offset;
  g.offsets = (static_cast<uint32_t>(p.input_offset) & 0xFFFFu) * 0x10001u;
  return g;
}

// Four channels c..c+3 of one output pixel over the in-image taps: per tap
// 2 word loads, 4 widenings (the input offset added by SXTAB16) and 4
// halfword MACs (SMLABB / SMLATT: depthwise has no reduction to pair up).
inline void four_channels(const DepthwiseGeometry& g, const int8_t* image, ptrdiff_t origin,
                          kernels::TapRange ty, kernels::TapRange tx, ptrdiff_t c, int32_t sums[4]) {
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (ptrdiff_t ky = ty.begin; ky < ty.end; ++ky) {
    const int8_t* x = image + origin + ky * g.dil_h * g.in_row + tx.begin * g.x_step + c;
    const int8_t* f = g.filter + ky * g.f_row + tx.begin * g.channels + c;
    for (ptrdiff_t kx = tx.begin; kx < tx.end; ++kx, x += g.x_step, f += g.channels) {
      const uint32_t xv = load_word(x), wv = load_word(f);
      // (c, c+2) and (c+1, c+3) as halfword pairs.
      const uint32_t xe = even_lanes_plus(g.offsets, xv), xo = odd_lanes_plus(g.offsets, xv);
      const uint32_t we = even_lanes(wv), wo = odd_lanes(wv);
      s0 = smlabb(xe, we, s0);
      s2 = smlatt(xe, we, s2);
      s1 = smlabb(xo, wo, s1);
      s3 = smlatt(xo, wo, s3);
    }
  }
  sums[0] = s0;
  sums[1] = s1;
  sums[2] = s2;
  sums[3] = s3;
}

// four_channels for windows three taps wide with dilation_w 1 whose columns
// are all inside the input (rows: those ty keeps, dil_h apart): the taps
// unrolled. DSP: 10 instructions per tap in 14 registers.
FLOE_S8_INLINE void four_channels_3wide(const DepthwiseGeometry& g, const int8_t* x, const int8_t* f, ptrdiff_t rows,
                                int32_t sums[4]) {
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#if defined(FLOE_S8_DSP_LOOPS)
  if (rows == 3) {
    // The whole 3x3 window straight: taps read at offsets 0, c, 2c from the
    // row start, then x steps one input row and f one filter row (3c).
    const int32_t x_row = static_cast<int32_t>(g.dil_h * g.in_row);
    const int32_t channels = static_cast<int32_t>(g.channels);
    uint32_t xv, xe, wv, we;
#define FLOE_S8_DW_TAP(x_at, f_at)                    \
  "ldr     %[xv], " x_at "\n\t"                        \
  "ldr     %[wv], " f_at "\n\t"                        \
  "sxtab16 %[xe], %[off], %[xv]\n\t"                   \
  "sxtab16 %[xv], %[off], %[xv], ror #8\n\t"           \
  "sxtb16  %[we], %[wv]\n\t"                           \
  "sxtb16  %[wv], %[wv], ror #8\n\t"                   \
  "smlabb  %[s0], %[xe], %[we], %[s0]\n\t"             \
  "smlatt  %[s2], %[xe], %[we], %[s2]\n\t"             \
  "smlabb  %[s1], %[xv], %[wv], %[s1]\n\t"             \
  "smlatt  %[s3], %[xv], %[wv], %[s3]\n\t"
#define FLOE_S8_DW_ROW                                                       \
  FLOE_S8_DW_TAP("[%[x]]", "[%[f]]")                                         \
  FLOE_S8_DW_TAP("[%[x], %[c]]", "[%[f], %[c]]")                             \
  FLOE_S8_DW_TAP("[%[x], %[c], lsl #1]", "[%[f], %[c], lsl #1]")
#define FLOE_S8_DW_NEXT_ROW        \
  "add     %[x], %[x], %[xr]\n\t"   \
  "add     %[f], %[f], %[c], lsl #1\n\t" \
  "add     %[f], %[f], %[c]\n\t"
    __asm__(FLOE_S8_DW_ROW FLOE_S8_DW_NEXT_ROW FLOE_S8_DW_ROW FLOE_S8_DW_NEXT_ROW FLOE_S8_DW_ROW
            : [x] "+&r"(x), [f] "+&r"(f), [s0] "+&r"(s0), [s1] "+&r"(s1), [s2] "+&r"(s2), [s3] "+&r"(s3),
              [xv] "=&r"(xv), [xe] "=&r"(xe), [wv] "=&r"(wv), [we] "=&r"(we)
            : [c] "r"(channels), [off] "r"(g.offsets), [xr] "r"(x_row)
            : "memory");
#undef FLOE_S8_DW_NEXT_ROW
#undef FLOE_S8_DW_ROW
#undef FLOE_S8_DW_TAP
  } else if (rows > 0) {
    // After a row's taps x and f have advanced by two taps.
    const int32_t x_row_step = static_cast<int32_t>(g.dil_h * g.in_row - 2 * g.channels);
    const int32_t channels = static_cast<int32_t>(g.channels);
    int32_t left = static_cast<int32_t>(rows);
    uint32_t xv, xe, wv, we;
    __asm__(
        "1:\n\t"
        "ldr     %[xv], [%[x]]\n\t"
        "ldr     %[wv], [%[f]]\n\t"
        "sxtab16 %[xe], %[off], %[xv]\n\t"
        "sxtab16 %[xv], %[off], %[xv], ror #8\n\t"
        "sxtb16  %[we], %[wv]\n\t"
        "sxtb16  %[wv], %[wv], ror #8\n\t"
        "smlabb  %[s0], %[xe], %[we], %[s0]\n\t"
        "smlatt  %[s2], %[xe], %[we], %[s2]\n\t"
        "smlabb  %[s1], %[xv], %[wv], %[s1]\n\t"
        "smlatt  %[s3], %[xv], %[wv], %[s3]\n\t"
        "ldr     %[xv], [%[x], %[c]]\n\t"
        "ldr     %[wv], [%[f], %[c]]\n\t"
        "sxtab16 %[xe], %[off], %[xv]\n\t"
        "sxtab16 %[xv], %[off], %[xv], ror #8\n\t"
        "sxtb16  %[we], %[wv]\n\t"
        "sxtb16  %[wv], %[wv], ror #8\n\t"
        "smlabb  %[s0], %[xe], %[we], %[s0]\n\t"
        "smlatt  %[s2], %[xe], %[we], %[s2]\n\t"
        "smlabb  %[s1], %[xv], %[wv], %[s1]\n\t"
        "smlatt  %[s3], %[xv], %[wv], %[s3]\n\t"
        "add     %[x], %[x], %[c], lsl #1\n\t"
        "add     %[f], %[f], %[c], lsl #1\n\t"
        "ldr     %[xv], [%[x]]\n\t"
        "ldr     %[wv], [%[f]]\n\t"
        "sxtab16 %[xe], %[off], %[xv]\n\t"
        "sxtab16 %[xv], %[off], %[xv], ror #8\n\t"
        "sxtb16  %[we], %[wv]\n\t"
        "sxtb16  %[wv], %[wv], ror #8\n\t"
        "smlabb  %[s0], %[xe], %[we], %[s0]\n\t"
        "smlatt  %[s2], %[xe], %[we], %[s2]\n\t"
        "smlabb  %[s1], %[xv], %[wv], %[s1]\n\t"
        "smlatt  %[s3], %[xv], %[wv], %[s3]\n\t"
        "ldr     %[xv], %[xrs]\n\t"
        "add     %[x], %[x], %[xv]\n\t"
        "add     %[f], %[f], %[c]\n\t"
        "subs    %[n], %[n], #1\n\t"
        "bne     1b"
        : [x] "+&r"(x), [f] "+&r"(f), [n] "+&r"(left), [s0] "+&r"(s0), [s1] "+&r"(s1), [s2] "+&r"(s2),
          [s3] "+&r"(s3), [xv] "=&r"(xv), [xe] "=&r"(xe), [wv] "=&r"(wv), [we] "=&r"(we)
        : [c] "r"(channels), [off] "r"(g.offsets), [xrs] "m"(x_row_step)
        : "cc", "memory");
  }
#else
  const ptrdiff_t step = g.x_step;
  for (ptrdiff_t ky = 0; ky < rows; ++ky, x += g.dil_h * g.in_row, f += g.f_row) {
    for (int kx = 0; kx < 3; ++kx) {
      const uint32_t xv = load_word(x + kx * step), wv = load_word(f + kx * g.channels);
      const uint32_t xe = even_lanes_plus(g.offsets, xv), xo = odd_lanes_plus(g.offsets, xv);
      const uint32_t we = even_lanes(wv), wo = odd_lanes(wv);
      s0 = smlabb(xe, we, s0);
      s2 = smlatt(xe, we, s2);
      s1 = smlabb(xo, wo, s1);
      s3 = smlatt(xo, wo, s3);
    }
  }
#endif
  sums[0] = s0;
  sums[1] = s1;
  sums[2] = s2;
  sums[3] = s3;
}

// four_channels for windows one or two taps wide (the edge columns of a
// three-wide kernel) with dilation_w 1: rows taps high (dil_h apart), x and f
// at the window's first tap. DSP: 10 instructions per tap, the row steps read
// from memory (14 registers).
FLOE_S8_INLINE void four_channels_narrow(const DepthwiseGeometry& g, const int8_t* x, const int8_t* f, ptrdiff_t rows,
                                 ptrdiff_t cols, int32_t sums[4]) {
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#if defined(FLOE_S8_DSP_LOOPS)
  if (rows > 0) {
    const int32_t x_row = static_cast<int32_t>(g.dil_h * g.in_row), f_row = static_cast<int32_t>(g.f_row);
    const int32_t channels = static_cast<int32_t>(g.channels);
    int32_t left = static_cast<int32_t>(rows);
    uint32_t xv, xe, wv, we;
#define FLOE_S8_DW_TAP(x_at, f_at)                    \
  "ldr     %[xv], " x_at "\n\t"                        \
  "ldr     %[wv], " f_at "\n\t"                        \
  "sxtab16 %[xe], %[off], %[xv]\n\t"                   \
  "sxtab16 %[xv], %[off], %[xv], ror #8\n\t"           \
  "sxtb16  %[we], %[wv]\n\t"                           \
  "sxtb16  %[wv], %[wv], ror #8\n\t"                   \
  "smlabb  %[s0], %[xe], %[we], %[s0]\n\t"             \
  "smlatt  %[s2], %[xe], %[we], %[s2]\n\t"             \
  "smlabb  %[s1], %[xv], %[wv], %[s1]\n\t"             \
  "smlatt  %[s3], %[xv], %[wv], %[s3]\n\t"
#define FLOE_S8_DW_ROW_END           \
  "ldr     %[xv], %[xr]\n\t"          \
  "add     %[x], %[x], %[xv]\n\t"      \
  "ldr     %[xv], %[fr]\n\t"          \
  "add     %[f], %[f], %[xv]\n\t"      \
  "subs    %[n], %[n], #1\n\t"        \
  "bne     1b"
#define FLOE_S8_DW_NARROW_OPERANDS                                                                        \
  : [x] "+&r"(x), [f] "+&r"(f), [n] "+&r"(left), [s0] "+&r"(s0), [s1] "+&r"(s1), [s2] "+&r"(s2),          \
    [s3] "+&r"(s3), [xv] "=&r"(xv), [xe] "=&r"(xe), [wv] "=&r"(wv), [we] "=&r"(we)                      \
  : [c] "r"(channels), [off] "r"(g.offsets), [xr] "m"(x_row), [fr] "m"(f_row)                            \
  : "cc", "memory"
    if (cols == 2) {
      __asm__("1:\n\t" FLOE_S8_DW_TAP("[%[x]]", "[%[f]]") FLOE_S8_DW_TAP("[%[x], %[c]]", "[%[f], %[c]]")
                  FLOE_S8_DW_ROW_END FLOE_S8_DW_NARROW_OPERANDS);
    } else if (cols == 1) {
      __asm__("1:\n\t" FLOE_S8_DW_TAP("[%[x]]", "[%[f]]") FLOE_S8_DW_ROW_END FLOE_S8_DW_NARROW_OPERANDS);
    }
#undef FLOE_S8_DW_NARROW_OPERANDS
#undef FLOE_S8_DW_ROW_END
#undef FLOE_S8_DW_TAP
  }
#else
  for (ptrdiff_t ky = 0; ky < rows; ++ky, x += g.dil_h * g.in_row, f += g.f_row) {
    for (ptrdiff_t kx = 0; kx < cols; ++kx) {
      const uint32_t xv = load_word(x + kx * g.channels), wv = load_word(f + kx * g.channels);
      const uint32_t xe = even_lanes_plus(g.offsets, xv), xo = odd_lanes_plus(g.offsets, xv);
      const uint32_t we = even_lanes(wv), wo = odd_lanes(wv);
      s0 = smlabb(xe, we, s0);
      s2 = smlatt(xe, we, s2);
      s1 = smlabb(xo, wo, s1);
      s3 = smlatt(xo, wo, s3);
    }
  }
#endif
  sums[0] = s0;
  sums[1] = s1;
  sums[2] = s2;
  sums[3] = s3;
}

inline int32_t one_channel(const DepthwiseGeometry& g, const int8_t* image, ptrdiff_t origin,
                           kernels::TapRange ty, kernels::TapRange tx, ptrdiff_t c) {
  int32_t s = 0;
  for (ptrdiff_t ky = ty.begin; ky < ty.end; ++ky) {
    const int8_t* x = image + origin + ky * g.dil_h * g.in_row + tx.begin * g.x_step + c;
    const int8_t* f = g.filter + ky * g.f_row + tx.begin * g.channels + c;
    for (ptrdiff_t kx = tx.begin; kx < tx.end; ++kx, x += g.x_step, f += g.channels) {
      s += (*x + g.input_offset) * *f;
    }
  }
  return s;
}

}  // namespace

#if defined(FLOE_S8_DSP_LOOPS)
namespace {

// The channel-group-major depthwise for undilated kernels three taps wide (at
// most three rows) on the short requantization: everything a group of four
// channels reuses at every output pixel is prepared once per group, so a
// pixel's taps and requantization read it with LDRD instead of widening the
// weights and deriving the requantization constants again.
struct DepthwiseGroup {
  uint32_t taps[9][2];     // per tap (ky * 3 + kx): weights of (c, c+2) and (c+1, c+3) as halfword pairs
  int32_t channel[4][4];   // per channel c..c+3: doubled bias, multiplier, K, e (s8_microkernels.h)
  // channel with the input offset's whole-window term folded into the
  // doubled bias (+ 2 * input_offset * the channel's 9 weights): a window
  // inside the input then sums raw products. Exact: the same int32 sum.
  int32_t inner[4][4];
  // The same for the two-column windows of full height at the left (kernel
  // columns 1, 2) and right (0, 1) edges: KWS's 5-wide maps have many.
  int32_t left[4][4], right[4][4];
};
static_assert(offsetof(DepthwiseGroup, channel) == 72 && offsetof(DepthwiseGroup, inner) == 136,
              "depthwise_inner_row reads the constants at these offsets");

FLOE_S8_INLINE void prepare_group(const int8_t* filter, ptrdiff_t channels, int32_t k_h, int32_t input_offset,
                                  const S8Requant& rq, int32_t c, DepthwiseGroup* group) {
  for (int32_t t = 0; t < k_h * 3; ++t) {
    const uint32_t w = load_word(filter + t * channels + c);
    group->taps[t][0] = even_lanes(w);
    group->taps[t][1] = odd_lanes(w);
  }
  for (int32_t i = 0; i < 4; ++i) {
    const ShortChannel ch = short_channel(rq, c + i);
    group->channel[i][0] = ch.bias2;
    group->channel[i][1] = ch.multiplier;
    group->channel[i][2] = ch.round_and_offset;
    group->channel[i][3] = ch.right;
    // The weights of kernel column kx over all rows.
    uint32_t column[3] = {0, 0, 0};
    for (int32_t t = 0; t < k_h * 3; ++t) column[t % 3] += static_cast<uint32_t>(filter[t * channels + c + i]);
    const uint32_t offset2 = 2u * static_cast<uint32_t>(input_offset);
    for (int32_t j = 0; j < 4; ++j) {
      group->inner[i][j] = group->channel[i][j];
      group->left[i][j] = group->channel[i][j];
      group->right[i][j] = group->channel[i][j];
    }
    const uint32_t bias2 = static_cast<uint32_t>(ch.bias2);
    group->inner[i][0] = static_cast<int32_t>(bias2 + offset2 * (column[0] + column[1] + column[2]));
    group->left[i][0] = static_cast<int32_t>(bias2 + offset2 * (column[1] + column[2]));
    group->right[i][0] = static_cast<int32_t>(bias2 + offset2 * (column[0] + column[1]));
  }
}

// One tap of four channels: the input word at x_at, the tap's widened
// weights at w_at (8 instructions).
#define FLOE_S8_DWG_TAP(x_at, w_at)                  \
  "ldr     %[xv], " x_at "\n\t"                      \
  "ldrd    %[we], %[wo], " w_at "\n\t"               \
  "sxtab16 %[xe], %[off], %[xv]\n\t"                 \
  "sxtab16 %[xv], %[off], %[xv], ror #8\n\t"         \
  "smlabb  %[s0], %[xe], %[we], %[s0]\n\t"           \
  "smlatt  %[s2], %[xe], %[we], %[s2]\n\t"           \
  "smlabb  %[s1], %[xv], %[wo], %[s1]\n\t"           \
  "smlatt  %[s3], %[xv], %[wo], %[s3]\n\t"

// Sums of channels c..c+3 over the in-image taps of one window: x at its
// first tap (channel c), w at that tap's widened weights; rows taps high
// (x_row apart), cols (1..3) wide.
FLOE_S8_INLINE void group_window(const int8_t* x, const uint32_t* w, int32_t rows, int32_t cols, int32_t channels,
                                 int32_t x_row, uint32_t offsets, int32_t sums[4]) {
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  uint32_t xv, xe, we, wo;
  if (rows == 3 && cols == 3) {
    __asm__(FLOE_S8_DWG_TAP("[%[x]]", "[%[w]]") FLOE_S8_DWG_TAP("[%[x], %[c]]", "[%[w], #8]")
                FLOE_S8_DWG_TAP("[%[x], %[c], lsl #1]", "[%[w], #16]")
            "add     %[x], %[x], %[xr]\n\t"
            FLOE_S8_DWG_TAP("[%[x]]", "[%[w], #24]") FLOE_S8_DWG_TAP("[%[x], %[c]]", "[%[w], #32]")
                FLOE_S8_DWG_TAP("[%[x], %[c], lsl #1]", "[%[w], #40]")
            "add     %[x], %[x], %[xr]\n\t"
            FLOE_S8_DWG_TAP("[%[x]]", "[%[w], #48]") FLOE_S8_DWG_TAP("[%[x], %[c]]", "[%[w], #56]")
                FLOE_S8_DWG_TAP("[%[x], %[c], lsl #1]", "[%[w], #64]")
            : [x] "+&r"(x), [s0] "+&r"(s0), [s1] "+&r"(s1), [s2] "+&r"(s2), [s3] "+&r"(s3), [xv] "=&r"(xv),
              [xe] "=&r"(xe), [we] "=&r"(we), [wo] "=&r"(wo)
            : [w] "r"(w), [c] "r"(channels), [off] "r"(offsets), [xr] "r"(x_row)
            : "memory");
  } else if (rows > 0) {
    // Row by row: x steps x_row, w one kernel row (24 bytes).
    int32_t left = rows;
#define FLOE_S8_DWG_ROW_END                 \
  "ldr     %[xv], %[xr]\n\t"                \
  "add     %[x], %[x], %[xv]\n\t"           \
  "add     %[w], %[w], #24\n\t"             \
  "subs    %[n], %[n], #1\n\t"              \
  "bne     1b"
#define FLOE_S8_DWG_OPERANDS                                                                               \
  : [x] "+&r"(x), [w] "+&r"(w), [n] "+&r"(left), [s0] "+&r"(s0), [s1] "+&r"(s1), [s2] "+&r"(s2),           \
    [s3] "+&r"(s3), [xv] "=&r"(xv), [xe] "=&r"(xe), [we] "=&r"(we), [wo] "=&r"(wo)                        \
  : [c] "r"(channels), [off] "r"(offsets), [xr] "m"(x_row)                                                 \
  : "cc", "memory"
    if (cols == 3) {
      __asm__("1:\n\t" FLOE_S8_DWG_TAP("[%[x]]", "[%[w]]") FLOE_S8_DWG_TAP("[%[x], %[c]]", "[%[w], #8]")
                  FLOE_S8_DWG_TAP("[%[x], %[c], lsl #1]", "[%[w], #16]") FLOE_S8_DWG_ROW_END FLOE_S8_DWG_OPERANDS);
    } else if (cols == 2) {
      __asm__("1:\n\t" FLOE_S8_DWG_TAP("[%[x]]", "[%[w]]") FLOE_S8_DWG_TAP("[%[x], %[c]]", "[%[w], #8]")
                  FLOE_S8_DWG_ROW_END FLOE_S8_DWG_OPERANDS);
    } else if (cols == 1) {
      __asm__("1:\n\t" FLOE_S8_DWG_TAP("[%[x]]", "[%[w]]") FLOE_S8_DWG_ROW_END FLOE_S8_DWG_OPERANDS);
    }
#undef FLOE_S8_DWG_OPERANDS
#undef FLOE_S8_DWG_ROW_END
  }
  sums[0] = s0;
  sums[1] = s1;
  sums[2] = s2;
  sums[3] = s3;
}

// Channels c..c+3 of `count` (>= 1) consecutive output pixels of one row
// whose 3x3 windows lie inside the input (x at the first one's top-left tap,
// channel c; x_step bytes between windows): taps on raw inputs (the group's
// inner constants hold the offset term), requantization, packing, the
// optional clamp and the store, all in one loop (14 registers): 102
// instructions per pixel and 36 MACs, 108 with the clamp.
template <bool kClamp>
FLOE_S8_INLINE void depthwise_inner_row(const int8_t* x, const DepthwiseGroup& group, int32_t channels,
                                        int32_t x_row, int32_t x_step, int32_t count, uint32_t min4, uint32_t max4,
                                        int8_t* o) {
  int32_t s0, s1, s2, s3;
  uint32_t xv, xe, we, wo;
  const uint32_t* w = group.taps[0];
  // After a pixel's taps x is two rows down: the next window's start.
  const int32_t x_next = x_step - 2 * x_row;
#define FLOE_S8_DWI_TAP(x_at, w_at)                  \
  "ldr     %[xv], " x_at "\n\t"                      \
  "ldrd    %[we], %[wo], " w_at "\n\t"               \
  "sxtb16  %[xe], %[xv]\n\t"                         \
  "sxtb16  %[xv], %[xv], ror #8\n\t"                 \
  "smlabb  %[s0], %[xe], %[we], %[s0]\n\t"           \
  "smlatt  %[s2], %[xe], %[we], %[s2]\n\t"           \
  "smlabb  %[s1], %[xv], %[wo], %[s1]\n\t"           \
  "smlatt  %[s3], %[xv], %[wo], %[s3]\n\t"
#define FLOE_S8_DWI_CHANNEL(v, at_bm, at_te)        \
  "ldrd   %[xe], %[we], [%[w], #" at_bm "]\n\t"     \
  "ldrd   %[xv], %[wo], [%[w], #" at_te "]\n\t"     \
  "add    %[" v "], %[xe], %[" v "], lsl #1\n\t"    \
  "add    %[xv], %[xv], %[" v "], asr #31\n\t"      \
  "smmlar %[" v "], %[" v "], %[we], %[xv]\n\t"     \
  "asr    %[" v "], %[" v "], %[wo]\n\t"            \
  "ssat   %[" v "], #8, %[" v "]\n\t"
#define FLOE_S8_DWI_BODY                                                                  \
  "1:\n\t"                                                                                \
  "ldr     %[xv], [%[x]]\n\t"                                                             \
  "ldrd    %[we], %[wo], [%[w]]\n\t"                                                      \
  "sxtb16  %[xe], %[xv]\n\t"                                                              \
  "sxtb16  %[xv], %[xv], ror #8\n\t"                                                      \
  "smulbb  %[s0], %[xe], %[we]\n\t"                                                       \
  "smultt  %[s2], %[xe], %[we]\n\t"                                                       \
  "smulbb  %[s1], %[xv], %[wo]\n\t"                                                       \
  "smultt  %[s3], %[xv], %[wo]\n\t"                                                       \
  FLOE_S8_DWI_TAP("[%[x], %[c]]", "[%[w], #8]")                                           \
  FLOE_S8_DWI_TAP("[%[x], %[c], lsl #1]", "[%[w], #16]")                                  \
  "add     %[x], %[x], %[xr]\n\t"                                                         \
  FLOE_S8_DWI_TAP("[%[x]]", "[%[w], #24]") FLOE_S8_DWI_TAP("[%[x], %[c]]", "[%[w], #32]") \
  FLOE_S8_DWI_TAP("[%[x], %[c], lsl #1]", "[%[w], #40]")                                  \
  "add     %[x], %[x], %[xr]\n\t"                                                         \
  FLOE_S8_DWI_TAP("[%[x]]", "[%[w], #48]") FLOE_S8_DWI_TAP("[%[x], %[c]]", "[%[w], #56]") \
  FLOE_S8_DWI_TAP("[%[x], %[c], lsl #1]", "[%[w], #64]")                                  \
  FLOE_S8_DWI_CHANNEL("s0", "136", "144") FLOE_S8_DWI_CHANNEL("s1", "152", "160")         \
  FLOE_S8_DWI_CHANNEL("s2", "168", "176") FLOE_S8_DWI_CHANNEL("s3", "184", "192")         \
  "bfi    %[s0], %[s1], #8, #8\n\t"                                                       \
  "bfi    %[s0], %[s2], #16, #8\n\t"                                                      \
  "bfi    %[s0], %[s3], #24, #8\n\t"
#define FLOE_S8_DWI_NEXT                 \
  "str    %[s0], [%[o]]\n\t"             \
  "add    %[o], %[o], %[c]\n\t"          \
  "ldr    %[xv], %[xn]\n\t"              \
  "add    %[x], %[x], %[xv]\n\t"         \
  "subs   %[n], %[n], #1\n\t"            \
  "bne    1b"
#define FLOE_S8_DWI_OPERANDS                                                                              \
  : [x] "+&r"(x), [o] "+&r"(o), [n] "+&r"(count), [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2),         \
    [s3] "=&r"(s3), [xv] "=&r"(xv), [xe] "=&r"(xe), [we] "=&r"(we), [wo] "=&r"(wo)                       \
  : [w] "r"(w), [c] "r"(channels), [xr] "r"(x_row), [xn] "m"(x_next), [mn] "m"(min4), [mx] "m"(max4)     \
  : "cc", "memory"
  // volatile: the block's only effect is its stores.
  if (kClamp) {
    __asm__ volatile(FLOE_S8_DWI_BODY
            "ldr    %[xe], %[mn]\n\t"
            "ldr    %[we], %[mx]\n\t"
            "ssub8  %[xv], %[s0], %[xe]\n\t"
            "sel    %[s0], %[s0], %[xe]\n\t"
            "ssub8  %[xv], %[we], %[s0]\n\t"
            "sel    %[s0], %[s0], %[we]\n\t"
            FLOE_S8_DWI_NEXT FLOE_S8_DWI_OPERANDS);
  } else {
    __asm__ volatile(FLOE_S8_DWI_BODY FLOE_S8_DWI_NEXT FLOE_S8_DWI_OPERANDS);
  }
#undef FLOE_S8_DWI_OPERANDS
#undef FLOE_S8_DWI_NEXT
#undef FLOE_S8_DWI_BODY
#undef FLOE_S8_DWI_CHANNEL
#undef FLOE_S8_DWI_TAP
}

#undef FLOE_S8_DWG_TAP

// One window at the input's edge (rows >= 1 taps high, kCols taps wide, x and
// w at its first tap; x_row apart, w one kernel row = 24 bytes apart) of
// channels c..c+3: taps with the input offset (SXTAB16), then the
// requantization from the group's plain constants k, packed, in one block.
template <int kCols>
FLOE_S8_INLINE uint32_t depthwise_edge_window(const int8_t* x, const uint32_t* w, const int32_t* k, int32_t rows,
                                              int32_t channels, int32_t x_row, uint32_t offsets) {
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  uint32_t xv, xe, we, wo;
#define FLOE_S8_DWE_TAP(x_at, w_at)                  \
  "ldr     %[xv], " x_at "\n\t"                      \
  "ldrd    %[we], %[wo], " w_at "\n\t"               \
  "sxtab16 %[xe], %[off], %[xv]\n\t"                 \
  "sxtab16 %[xv], %[off], %[xv], ror #8\n\t"         \
  "smlabb  %[s0], %[xe], %[we], %[s0]\n\t"           \
  "smlatt  %[s2], %[xe], %[we], %[s2]\n\t"           \
  "smlabb  %[s1], %[xv], %[wo], %[s1]\n\t"           \
  "smlatt  %[s3], %[xv], %[wo], %[s3]\n\t"
#define FLOE_S8_DWE_CHANNEL(v, at_bm, at_te)        \
  "ldrd   %[xe], %[we], [%[w], #" at_bm "]\n\t"     \
  "ldrd   %[xv], %[wo], [%[w], #" at_te "]\n\t"     \
  "add    %[" v "], %[xe], %[" v "], lsl #1\n\t"    \
  "add    %[xv], %[xv], %[" v "], asr #31\n\t"      \
  "smmlar %[" v "], %[" v "], %[we], %[xv]\n\t"     \
  "asr    %[" v "], %[" v "], %[wo]\n\t"            \
  "ssat   %[" v "], #8, %[" v "]\n\t"
#define FLOE_S8_DWE_TAIL                                                                  \
  "ldr     %[xv], %[xr]\n\t"                                                              \
  "add     %[x], %[x], %[xv]\n\t"                                                         \
  "add     %[w], %[w], #24\n\t"                                                           \
  "subs    %[n], %[n], #1\n\t"                                                            \
  "bne     1b\n\t"                                                                        \
  "ldr     %[w], %[k]\n\t"                                                                \
  FLOE_S8_DWE_CHANNEL("s0", "0", "8") FLOE_S8_DWE_CHANNEL("s1", "16", "24")               \
  FLOE_S8_DWE_CHANNEL("s2", "32", "40") FLOE_S8_DWE_CHANNEL("s3", "48", "56")             \
  "bfi    %[s0], %[s1], #8, #8\n\t"                                                       \
  "bfi    %[s0], %[s2], #16, #8\n\t"                                                      \
  "bfi    %[s0], %[s3], #24, #8"
#define FLOE_S8_DWE_OPERANDS                                                                              \
  : [x] "+&r"(x), [w] "+&r"(w), [n] "+&r"(rows), [s0] "+&r"(s0), [s1] "+&r"(s1), [s2] "+&r"(s2),           \
    [s3] "+&r"(s3), [xv] "=&r"(xv), [xe] "=&r"(xe), [we] "=&r"(we), [wo] "=&r"(wo)                        \
  : [c] "r"(channels), [off] "r"(offsets), [xr] "m"(x_row), [k] "m"(k)                                     \
  : "cc", "memory"
  if (kCols == 3) {
    __asm__("1:\n\t" FLOE_S8_DWE_TAP("[%[x]]", "[%[w]]") FLOE_S8_DWE_TAP("[%[x], %[c]]", "[%[w], #8]")
                FLOE_S8_DWE_TAP("[%[x], %[c], lsl #1]", "[%[w], #16]") FLOE_S8_DWE_TAIL FLOE_S8_DWE_OPERANDS);
  } else if (kCols == 2) {
    __asm__("1:\n\t" FLOE_S8_DWE_TAP("[%[x]]", "[%[w]]") FLOE_S8_DWE_TAP("[%[x], %[c]]", "[%[w], #8]")
                FLOE_S8_DWE_TAIL FLOE_S8_DWE_OPERANDS);
  } else {
    __asm__("1:\n\t" FLOE_S8_DWE_TAP("[%[x]]", "[%[w]]") FLOE_S8_DWE_TAIL FLOE_S8_DWE_OPERANDS);
  }
#undef FLOE_S8_DWE_OPERANDS
#undef FLOE_S8_DWE_TAIL
#undef FLOE_S8_DWE_CHANNEL
#undef FLOE_S8_DWE_TAP
  return static_cast<uint32_t>(s0);
}

// A two-column window of full height (3 rows; x at its first tap, channel c;
// w at that tap's widened weights) on raw inputs, requantized with the
// offset-folded constants k and packed, in one block: 81 instructions.
FLOE_S8_INLINE uint32_t depthwise_edge_3x2(const int8_t* x, const uint32_t* w, const int32_t* k, int32_t channels,
                                           int32_t x_row) {
  int32_t s0, s1, s2, s3;
  uint32_t xv, xe, we, wo;
#define FLOE_S8_DW2_TAP(x_at, w_at)                  \
  "ldr     %[xv], " x_at "\n\t"                      \
  "ldrd    %[we], %[wo], " w_at "\n\t"               \
  "sxtb16  %[xe], %[xv]\n\t"                         \
  "sxtb16  %[xv], %[xv], ror #8\n\t"                 \
  "smlabb  %[s0], %[xe], %[we], %[s0]\n\t"           \
  "smlatt  %[s2], %[xe], %[we], %[s2]\n\t"           \
  "smlabb  %[s1], %[xv], %[wo], %[s1]\n\t"           \
  "smlatt  %[s3], %[xv], %[wo], %[s3]\n\t"
#define FLOE_S8_DW2_CHANNEL(v, at_bm, at_te)        \
  "ldrd   %[xe], %[we], [%[k], #" at_bm "]\n\t"     \
  "ldrd   %[xv], %[wo], [%[k], #" at_te "]\n\t"     \
  "add    %[" v "], %[xe], %[" v "], lsl #1\n\t"    \
  "add    %[xv], %[xv], %[" v "], asr #31\n\t"      \
  "smmlar %[" v "], %[" v "], %[we], %[xv]\n\t"     \
  "asr    %[" v "], %[" v "], %[wo]\n\t"            \
  "ssat   %[" v "], #8, %[" v "]\n\t"
  __asm__(
      "ldr     %[xv], [%[x]]\n\t"
      "ldrd    %[we], %[wo], [%[w]]\n\t"
      "sxtb16  %[xe], %[xv]\n\t"
      "sxtb16  %[xv], %[xv], ror #8\n\t"
      "smulbb  %[s0], %[xe], %[we]\n\t"
      "smultt  %[s2], %[xe], %[we]\n\t"
      "smulbb  %[s1], %[xv], %[wo]\n\t"
      "smultt  %[s3], %[xv], %[wo]\n\t"
      FLOE_S8_DW2_TAP("[%[x], %[c]]", "[%[w], #8]")
      "add     %[x], %[x], %[xr]\n\t"
      FLOE_S8_DW2_TAP("[%[x]]", "[%[w], #24]") FLOE_S8_DW2_TAP("[%[x], %[c]]", "[%[w], #32]")
      "add     %[x], %[x], %[xr]\n\t"
      FLOE_S8_DW2_TAP("[%[x]]", "[%[w], #48]") FLOE_S8_DW2_TAP("[%[x], %[c]]", "[%[w], #56]")
      FLOE_S8_DW2_CHANNEL("s0", "0", "8") FLOE_S8_DW2_CHANNEL("s1", "16", "24")
      FLOE_S8_DW2_CHANNEL("s2", "32", "40") FLOE_S8_DW2_CHANNEL("s3", "48", "56")
      "bfi    %[s0], %[s1], #8, #8\n\t"
      "bfi    %[s0], %[s2], #16, #8\n\t"
      "bfi    %[s0], %[s3], #24, #8"
      : [x] "+&r"(x), [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3), [xv] "=&r"(xv),
        [xe] "=&r"(xe), [we] "=&r"(we), [wo] "=&r"(wo)
      : [w] "r"(w), [k] "r"(k), [c] "r"(channels), [xr] "r"(x_row)
      : "memory");
#undef FLOE_S8_DW2_CHANNEL
#undef FLOE_S8_DW2_TAP
  return static_cast<uint32_t>(s0);
}

// The short requantization of channels c..c+3 from the group's constants,
// packed into one word (7 instructions per output, then 3 to pack).
FLOE_S8_INLINE uint32_t group_requantize(const int32_t sums[4], const int32_t* k) {
  int32_t v0 = sums[0], v1 = sums[1], v2 = sums[2], v3 = sums[3];
  int32_t b, m, t, e;
#define FLOE_S8_DWG_CHANNEL(v, at_bm, at_te)        \
  "ldrd   %[b], %[m], [%[k], #" at_bm "]\n\t"       \
  "ldrd   %[t], %[e], [%[k], #" at_te "]\n\t"       \
  "add    %[" v "], %[b], %[" v "], lsl #1\n\t"     \
  "add    %[t], %[t], %[" v "], asr #31\n\t"        \
  "smmlar %[" v "], %[" v "], %[m], %[t]\n\t"       \
  "asr    %[" v "], %[" v "], %[e]\n\t"             \
  "ssat   %[" v "], #8, %[" v "]\n\t"
  __asm__(FLOE_S8_DWG_CHANNEL("v0", "0", "8") FLOE_S8_DWG_CHANNEL("v1", "16", "24")
              FLOE_S8_DWG_CHANNEL("v2", "32", "40") FLOE_S8_DWG_CHANNEL("v3", "48", "56")
          "bfi    %[v0], %[v1], #8, #8\n\t"
          "bfi    %[v0], %[v2], #16, #8\n\t"
          "bfi    %[v0], %[v3], #24, #8"
          : [v0] "+&r"(v0), [v1] "+&r"(v1), [v2] "+&r"(v2), [v3] "+&r"(v3), [b] "=&r"(b), [m] "=&r"(m),
            [t] "=&r"(t), [e] "=&r"(e)
          : [k] "r"(k)
          : "memory");
#undef FLOE_S8_DWG_CHANNEL
  return static_cast<uint32_t>(v0);
}

// Every output of channels c..c+3 (c < c4) for an undilated kernel three taps
// wide, k_h <= 3, on the short requantization.
// Not inlined: its group constants would otherwise add to s8_depthwise's frame
// (the worst-case stack depth is checked on every board).
__attribute__((noinline)) void depthwise_groups_3wide(const DepthwiseS8Shape& shape, const int8_t* input,
                                                      const int8_t* filter, const S8Requant& rq_in, int8_t* output) {
  const DepthwiseS8Shape p = shape;
  const S8Requant rq = rq_in;  // local copies: the output stores cannot alias them
  const bool int8_range = rq.act_min == -128 && rq.act_max == 127;
  const DepthwiseGeometry g = depthwise_geometry(p, filter);
  const ptrdiff_t c4 = p.channels & ~static_cast<ptrdiff_t>(3);
  const uint32_t min4 = replicate(rq.act_min), max4 = replicate(rq.act_max);
  const int32_t channels = static_cast<int32_t>(g.channels);
  const int32_t x_row = static_cast<int32_t>(g.dil_h * g.in_row);
  // The output columns whose windows' three columns lie inside the input.
  ptrdiff_t inner_columns_begin = p.out_w, inner_columns_end = p.out_w;
  if (p.in_w >= 3) {
    inner_columns_begin = (p.pad_left + p.stride_w - 1) / p.stride_w;
    inner_columns_end = (p.in_w - 3 + p.pad_left) / p.stride_w + 1;
    if (inner_columns_end > p.out_w) inner_columns_end = p.out_w;
    if (inner_columns_begin > inner_columns_end) inner_columns_begin = inner_columns_end;
  }
  DepthwiseGroup group;
  for (ptrdiff_t c = 0; c < c4; c += 4) {
    prepare_group(g.filter, g.channels, p.k_h, p.input_offset, rq, static_cast<int32_t>(c), &group);
    int8_t* o = output + c;
    for (ptrdiff_t n = 0; n < p.batches; ++n) {
      const int8_t* image = input + n * p.in_h * g.in_row + c;
      for (ptrdiff_t oy = 0; oy < p.out_h; ++oy) {
        const ptrdiff_t y0 = oy * p.stride_h - p.pad_top;
        const kernels::TapRange ty = kernels::unit_tap_range(y0, p.in_h, p.k_h);  // dil_h 1
        const int32_t rows = static_cast<int32_t>(ty.end - ty.begin);
        const int8_t* row = image + (y0 + ty.begin) * g.in_row;
        // Any window: its in-image taps.
        auto edge_pixel = [&](ptrdiff_t ox) __attribute__((always_inline)) {
          const ptrdiff_t x0 = ox * p.stride_w - p.pad_left;
          const kernels::TapRange tx = kernels::unit_tap_range(x0, p.in_w, 3);
          const int32_t cols = static_cast<int32_t>(tx.end - tx.begin);
          const int8_t* x = row + (x0 + tx.begin) * g.channels;
          uint32_t packed;
          if (rows > 0 && cols == 3) {
            packed = depthwise_edge_window<3>(x, group.taps[ty.begin * 3], group.channel[0], rows, channels, x_row,
                                              g.offsets);
          } else if (rows == 3 && cols == 2) {
            packed = depthwise_edge_3x2(x, group.taps[tx.begin], tx.begin == 0 ? group.right[0] : group.left[0],
                                        channels, x_row);
          } else if (rows > 0 && cols == 2) {
            packed = depthwise_edge_window<2>(x, group.taps[ty.begin * 3 + tx.begin], group.channel[0], rows,
                                              channels, x_row, g.offsets);
          } else if (rows > 0 && cols == 1) {
            packed = depthwise_edge_window<1>(x, group.taps[ty.begin * 3 + tx.begin], group.channel[0], rows,
                                              channels, x_row, g.offsets);
          } else {
            // An empty window (all padding) reads nothing: the bias alone.
            const int32_t zeros[4] = {0, 0, 0, 0};
            packed = group_requantize(zeros, group.channel[0]);
          }
          store_word(o + ox * g.channels, int8_range ? packed : clamp4(packed, min4, max4));
        };
        // The pixels whose window lies inside the input: [inner_begin, inner_end).
        const ptrdiff_t inner_begin = rows == 3 ? inner_columns_begin : p.out_w;
        const ptrdiff_t inner_end = rows == 3 ? inner_columns_end : p.out_w;
        ptrdiff_t ox = 0;
        for (; ox < inner_begin; ++ox) edge_pixel(ox);
        if (ox < inner_end) {
          const int8_t* x = row + (ox * p.stride_w - p.pad_left) * g.channels;
          const int32_t x_step = static_cast<int32_t>(p.stride_w * g.channels);
          const int32_t count = static_cast<int32_t>(inner_end - ox);
          if (int8_range) {
            depthwise_inner_row<false>(x, group, channels, x_row, x_step, count, min4, max4, o + ox * g.channels);
          } else {
            depthwise_inner_row<true>(x, group, channels, x_row, x_step, count, min4, max4, o + ox * g.channels);
          }
          ox = inner_end;
        }
        for (; ox < p.out_w; ++ox) edge_pixel(ox);
        o += p.out_w * g.channels;
      }
    }
  }
}

}  // namespace
#endif

namespace {

// The pixel-major depthwise for channels [c_begin, channels): every window
// shape, either requantization. Not inlined, like depthwise_groups_3wide.
__attribute__((noinline)) void depthwise_pixels(const DepthwiseS8Shape& shape, const int8_t* input,
                                                const int8_t* filter, const S8Requant& rq_in, ptrdiff_t c_begin,
                                                int8_t* output) {
  const DepthwiseS8Shape p = shape;
  const S8Requant rq = rq_in;
  const bool int8_range = rq.act_min == -128 && rq.act_max == 127;
  const DepthwiseGeometry g = depthwise_geometry(p, filter);
  const ptrdiff_t c4 = p.channels & ~static_cast<ptrdiff_t>(3);
  const ptrdiff_t c_done = c_begin;
  // A three-wide kernel runs every window unrolled, the edge columns'
  // narrower ones included (any rows).
  const bool three_by_three = p.k_w == 3 && p.dil_w == 1;
  int8_t* o = output;
  for (ptrdiff_t n = 0; n < p.batches; ++n) {
    const int8_t* image = input + n * p.in_h * g.in_row;
    for (ptrdiff_t oy = 0; oy < p.out_h; ++oy) {
      const ptrdiff_t y0 = oy * p.stride_h - p.pad_top;
      const kernels::TapRange ty = p.dil_h == 1 ? kernels::unit_tap_range(y0, p.in_h, p.k_h)
                                                : kernels::tap_range(y0, p.in_h, p.k_h, p.dil_h);
      for (ptrdiff_t ox = 0; ox < p.out_w; ++ox, o += p.channels) {
        const ptrdiff_t x0 = ox * p.stride_w - p.pad_left;
        const kernels::TapRange tx = p.dil_w == 1 ? kernels::unit_tap_range(x0, p.in_w, p.k_w)
                                                  : kernels::tap_range(x0, p.in_w, p.k_w, p.dil_w);
        const ptrdiff_t origin = y0 * g.in_row + x0 * g.channels;  // may lie in the padding
        ptrdiff_t c = c_done;
        if (three_by_three) {
          // The window's first in-image tap, and its extent.
          const int8_t* x = image + origin + ty.begin * g.dil_h * g.in_row + tx.begin * g.channels;
          const int8_t* f = filter + ty.begin * g.f_row + tx.begin * g.channels;
          const ptrdiff_t rows = ty.end - ty.begin, cols = tx.end - tx.begin;
          for (; c < c4; c += 4) {
            int32_t s[4];
            if (cols == 3) {
              four_channels_3wide(g, x + c, f + c, rows, s);
            } else {
              four_channels_narrow(g, x + c, f + c, rows, cols, s);
            }
            finish_4(rq, int8_range, s, static_cast<int32_t>(c), o);
          }
        } else {
          for (; c < c4; c += 4) {
            int32_t s[4];
            four_channels(g, image, origin, ty, tx, c, s);
            finish_4(rq, int8_range, s, static_cast<int32_t>(c), o);
          }
        }
        for (; c < p.channels; ++c) {
          o[c] = finish(rq, one_channel(g, image, origin, ty, tx, c), static_cast<int32_t>(c));
        }
      }
    }
  }
}

}  // namespace

#if defined(FLOE_S8_NEON) || defined(FLOE_S8_X86)
namespace {

// The host targets' SIMD depthwise kernels, split across the op's threads by
// bands of output rows: a band is the same convolution of one image with
// fewer output rows and its top padding moved up by the rows before it.
using HostDepthwise = void (*)(const DepthwiseS8Shape& shape, const int8_t* input, const int8_t* filter,
                               const S8Requant& rq, int8_t* output);

struct DepthwiseBands {
  HostDepthwise depthwise;
  const DepthwiseS8Shape* shape;
  const int8_t* input;
  const int8_t* filter;
  const S8Requant* rq;
  int8_t* output;
  int32_t band;            // output rows per task
  int32_t bands_per_image;
};

void depthwise_band(void* context, size_t task) {
  const DepthwiseBands& d = *static_cast<const DepthwiseBands*>(context);
  const DepthwiseS8Shape& s = *d.shape;
  const int32_t n = static_cast<int32_t>(task) / d.bands_per_image;
  const int32_t first = static_cast<int32_t>(task) % d.bands_per_image * d.band;
  DepthwiseS8Shape band = s;
  band.batches = 1;
  band.out_h = s.out_h - first < d.band ? s.out_h - first : d.band;
  band.pad_top = s.pad_top - first * s.stride_h;
  const ptrdiff_t image = static_cast<ptrdiff_t>(s.in_h) * s.in_w * s.channels;
  const ptrdiff_t out_row = static_cast<ptrdiff_t>(s.out_w) * s.channels;
  d.depthwise(band, d.input + n * image, d.filter, *d.rq,
              d.output + (static_cast<ptrdiff_t>(n) * s.out_h + first) * out_row);
}

void host_depthwise(HostDepthwise depthwise, const DepthwiseS8Shape& shape, const int8_t* input,
                    const int8_t* filter, const S8Requant& rq, int8_t* output) {
  const int32_t threads = static_cast<int32_t>(parallel_threads());
  // An empty output has no band to split (and would divide by zero below).
  if (threads > 1 && shape.batches > 0 && shape.out_h > 0 && (shape.batches > 1 || shape.out_h > 1)) {
    DepthwiseBands d{depthwise, &shape, input, filter, &rq, output, 0, 0};
    // Per image as many bands as threads need, beyond the images themselves.
    const int32_t per_image = shape.batches >= threads ? 1 : (threads + shape.batches - 1) / shape.batches;
    d.band = (shape.out_h + per_image - 1) / per_image;
    d.bands_per_image = (shape.out_h + d.band - 1) / d.band;
    parallel_for(static_cast<size_t>(shape.batches) * static_cast<size_t>(d.bands_per_image), depthwise_band, &d);
    return;
  }
  depthwise(shape, input, filter, rq, output);
}

}  // namespace
#endif

void s8_depthwise(const DepthwiseS8Shape& shape, const int8_t* input, const int8_t* filter,
                  const S8Requant& rq, int8_t* output) {
#if defined(FLOE_S8_NEON)
  if (!rq.short_path) {
    host_depthwise(s8_depthwise_neon, shape, input, filter, rq, output);
    return;
  }
#elif defined(FLOE_S8_X86)
  if (!rq.short_path && s8_x86_avx2_available()) {
    host_depthwise(s8_depthwise_avx2, shape, input, filter, rq, output);
    return;
  }
#endif
  ptrdiff_t c_done = 0;
#if defined(FLOE_S8_DSP_LOOPS)
  // KWS's and MobileNet's depthwise layers: channel groups outermost, when
  // there are enough output pixels to repay a group's preparation (a 3x3 map
  // of 256 channels is faster pixel-major). Built for size (-Os), the
  // pixel-major loop serves every layer: 4.4 KB less code, the same results.
  const int32_t pixels = shape.batches * shape.out_h * shape.out_w;
  if (!kOneClampVariant && shape.k_w == 3 && shape.dil_w == 1 && shape.dil_h == 1 && shape.k_h <= 3 && rq.short_path && pixels >= 32) {
    depthwise_groups_3wide(shape, input, filter, rq, output);
    c_done = shape.channels & ~static_cast<ptrdiff_t>(3);
  }
#endif
  if (c_done < shape.channels) depthwise_pixels(shape, input, filter, rq, c_done, output);
}

}  // namespace floe::cortexm

#endif  // !FLOE_CORTEXM_S8_MVE
