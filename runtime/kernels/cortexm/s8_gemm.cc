// SPDX-License-Identifier: Apache-2.0
// s8_gemm (s8_microkernels.h) on the DSP extension (M4, M33) and in portable
// C, with one blocking so the host tests exercise the board's loop structure:
// 2 rows x 2 channels per block (4 accumulators). Each int8 word is split by
// SXTB16 / SXTB16 ROR 8 into its even and odd halfword pairs and SMLAD
// multiplies a row's and a channel's halves: per 4 columns 4 word loads, 8
// SXTB16, 8 SMLAD for 16 MACs. DSP: 16 columns per iteration (8 when k % 16
// >= 8) in inline assembly (14 registers: the second row and channel are read
// at a fixed distance from the first, post-indexed), ~1.30 instructions/MAC.
// Odd rows/channels and k % 8 run narrower blocks of the same arithmetic.
//
// With the short requantization, k a multiple of 8 (or rows whose stride
// leaves room to read k rounded up to 8, s8_gemm_row_stride), the DSP build
// runs channel pairs outermost: a pair's requantization constants are
// prepared once and, up to 64 columns, its weights widened once to halfword
// pairs on the stack, so a 2x2 block takes 16 instructions per 16 MACs and
// every row pair of the pair runs in one assembly loop with the
// requantization (~1.25 per MAC at k = 64).
//
// The host targets' full requantization goes to their SIMD builds
// (s8_microkernels_x86.cc, s8_microkernels_neon.cc), split across the
// caller's threads.
#if !defined(FLOE_CORTEXM_S8_MVE)

#include "runtime/kernels/cortexm/s8_microkernels.h"

#include <stddef.h>
#include <string.h>

#include "runtime/kernels/cortexm/s8_arithmetic.h"
#if defined(FLOE_S8_NEON) || defined(FLOE_S8_X86)
#include "runtime/core/parallel.h"
#endif

namespace floe::cortexm {
using namespace s8_detail;  // NOLINT(build/namespaces): the kernels' shared arithmetic
namespace {

#if defined(FLOE_S8_DSP_LOOPS)
// 4 columns of two rows by two channels: row 1 and channel 1 are read at a
// fixed distance from row 0 and channel 0 (post-incremented loads); the
// 2x2 blocks below and the short-requantization block share it.
#define FLOE_S8_GEMM_4COLS                        \
  "ldr    %[x0], [%[a]], #4\n\t"                  \
  "ldr    %[x1], [%[a], %[ag]]\n\t"               \
  "ldr    %[v], [%[w]], #4\n\t"                   \
  "sxtb16 %[x0e], %[x0]\n\t"                      \
  "sxtb16 %[x0], %[x0], ror #8\n\t"               \
  "sxtb16 %[x1e], %[x1]\n\t"                      \
  "sxtb16 %[x1], %[x1], ror #8\n\t"               \
  "sxtb16 %[ve], %[v]\n\t"                        \
  "sxtb16 %[v], %[v], ror #8\n\t"                 \
  "smlad  %[s00], %[x0e], %[ve], %[s00]\n\t"      \
  "smlad  %[s00], %[x0], %[v], %[s00]\n\t"        \
  "smlad  %[s10], %[x1e], %[ve], %[s10]\n\t"      \
  "smlad  %[s10], %[x1], %[v], %[s10]\n\t"        \
  "ldr    %[v], [%[w], %[wg]]\n\t"                \
  "sxtb16 %[ve], %[v]\n\t"                        \
  "sxtb16 %[v], %[v], ror #8\n\t"                 \
  "smlad  %[s01], %[x0e], %[ve], %[s01]\n\t"      \
  "smlad  %[s01], %[x0], %[v], %[s01]\n\t"        \
  "smlad  %[s11], %[x1e], %[ve], %[s11]\n\t"      \
  "smlad  %[s11], %[x1], %[v], %[s11]\n\t"
#endif

// Two rows by two channels.
inline void block_2x2(const int8_t* a0, const int8_t* a1, const int8_t* w0, const int8_t* w1, int32_t k,
                      int32_t sums[4]) {
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
#if defined(FLOE_S8_DSP_LOOPS)
#define FLOE_S8_GEMM_OPERANDS                                                                          \
  : [a] "+&r"(a0), [w] "+&r"(w0), [s00] "+&r"(s00), [s01] "+&r"(s01), [s10] "+&r"(s10), [s11] "+&r"(s11), \
    [x0e] "=&r"(x0e), [x0] "=&r"(x0), [x1e] "=&r"(x1e), [x1] "=&r"(x1), [ve] "=&r"(ve), [v] "=&r"(v)
  if (k >= 8) {
    const int32_t row_gap = static_cast<int32_t>(a1 - a0) - 4, channel_gap = static_cast<int32_t>(w1 - w0) - 4;
    uint32_t x0e, x0, x1e, x1, ve, v;
    // One loop per block (two asm statements would cost register shuffles
    // between them): 16 columns per iteration when that covers every whole
    // 8 columns, else 8. The loop end stays in memory.
    if (k >= 16 && (k & 8) == 0) {
      const int8_t* const end16 = a0 + (k & ~15);
      __asm__("1:\n\t" FLOE_S8_GEMM_4COLS FLOE_S8_GEMM_4COLS FLOE_S8_GEMM_4COLS FLOE_S8_GEMM_4COLS
              "ldr    %[v], %[end]\n\t"
              "cmp    %[a], %[v]\n\t"
              "bne    1b"
              FLOE_S8_GEMM_OPERANDS
              : [ag] "r"(row_gap), [wg] "r"(channel_gap), [end] "m"(end16)
              : "cc", "memory");
    } else {
      const int8_t* const end8 = a0 + (k & ~7);
      __asm__("1:\n\t" FLOE_S8_GEMM_4COLS FLOE_S8_GEMM_4COLS
              "ldr    %[v], %[end]\n\t"
              "cmp    %[a], %[v]\n\t"
              "bne    1b"
              FLOE_S8_GEMM_OPERANDS
              : [ag] "r"(row_gap), [wg] "r"(channel_gap), [end] "m"(end8)
              : "cc", "memory");
    }
    a1 = a0 + row_gap + 4;
    w1 = w0 + channel_gap + 4;
    k &= 7;
  }
#undef FLOE_S8_GEMM_OPERANDS
#endif
  const int8_t* const end4 = a0 + (k & ~3);
  while (a0 != end4) {
    const uint32_t x0 = load_word(a0), x1 = load_word(a1);
    const uint32_t x0e = even_lanes(x0), x0o = odd_lanes(x0);
    const uint32_t x1e = even_lanes(x1), x1o = odd_lanes(x1);
    const uint32_t v0 = load_word(w0);
    const uint32_t v0e = even_lanes(v0), v0o = odd_lanes(v0);
    s00 = smlad(x0e, v0e, s00);
    s00 = smlad(x0o, v0o, s00);
    s10 = smlad(x1e, v0e, s10);
    s10 = smlad(x1o, v0o, s10);
    const uint32_t v1 = load_word(w1);
    const uint32_t v1e = even_lanes(v1), v1o = odd_lanes(v1);
    s01 = smlad(x0e, v1e, s01);
    s01 = smlad(x0o, v1o, s01);
    s11 = smlad(x1e, v1e, s11);
    s11 = smlad(x1o, v1o, s11);
    a0 += 4;
    a1 += 4;
    w0 += 4;
    w1 += 4;
  }
  for (int32_t t = 0; t < (k & 3); ++t) {
    s00 += a0[t] * w0[t];
    s01 += a0[t] * w1[t];
    s10 += a1[t] * w0[t];
    s11 += a1[t] * w1[t];
  }
  sums[0] = s00;
  sums[1] = s01;
  sums[2] = s10;
  sums[3] = s11;
}

// One row by two channels.
inline void block_1x2(const int8_t* a0, const int8_t* w0, const int8_t* w1, int32_t k, int32_t sums[2]) {
  int32_t s0 = 0, s1 = 0;
  const int8_t* const end4 = a0 + (k & ~3);
  while (a0 != end4) {
    const uint32_t x = load_word(a0);
    const uint32_t xe = even_lanes(x), xo = odd_lanes(x);
    const uint32_t v0 = load_word(w0), v1 = load_word(w1);
    s0 = smlad(xe, even_lanes(v0), s0);
    s0 = smlad(xo, odd_lanes(v0), s0);
    s1 = smlad(xe, even_lanes(v1), s1);
    s1 = smlad(xo, odd_lanes(v1), s1);
    a0 += 4;
    w0 += 4;
    w1 += 4;
  }
  for (int32_t t = 0; t < (k & 3); ++t) {
    s0 += a0[t] * w0[t];
    s1 += a0[t] * w1[t];
  }
  sums[0] = s0;
  sums[1] = s1;
}

// One row by one channel (rows x 1 uses it per row, too).
inline int32_t dot(const int8_t* a0, const int8_t* w0, int32_t k) {
  int32_t s = 0;
  const int8_t* const end4 = a0 + (k & ~3);
  while (a0 != end4) {
    const uint32_t x = load_word(a0), v = load_word(w0);
    s = smlad(even_lanes(x), even_lanes(v), s);
    s = smlad(odd_lanes(x), odd_lanes(v), s);
    a0 += 4;
    w0 += 4;
  }
  for (int32_t t = 0; t < (k & 3); ++t) s += a0[t] * w0[t];
  return s;
}

#if defined(FLOE_S8_DSP_LOOPS)

// The short requantization constants of a channel pair, prepared once per
// pair: doubled bias, multiplier, K, e of c, then of c + 1 (8 words).
constexpr int32_t kPairConstants = 8;

// A 2x2 block (rows a0, a0 + row_gap + 4; channels w0, w0 + channel_gap + 4)
// over k (a multiple of 8) columns, requantized on the short path and packed:
// bytes (r0, c), (r0, c+1), (r1, c), (r1, c+1). One assembly block, the sums
// never leave their registers (the constants' address is read from memory
// once the loop has freed a register).
FLOE_S8_INLINE uint32_t block_2x2_short(const int8_t* a0, const int8_t* w0, int32_t k, int32_t row_gap,
                                        int32_t channel_gap, const int32_t* pair) {
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
  uint32_t x0e, x0, x1e, x1, ve, v;
  const int8_t* const end = a0 + k;
  // One channel's constants (b, m, K, e in x0e, x0, x1e, x1) on both rows.
#define FLOE_S8_GEMM_REQUANT(at, r0, r1)             \
  "ldrd   %[x0e], %[x0], [%[v], #" at "]\n\t"       \
  "ldrd   %[x1e], %[x1], [%[v], #" at " + 8]\n\t"   \
  "add    %[" r0 "], %[x0e], %[" r0 "], lsl #1\n\t" \
  "add    %[ve], %[x1e], %[" r0 "], asr #31\n\t"    \
  "smmlar %[" r0 "], %[" r0 "], %[x0], %[ve]\n\t"   \
  "asr    %[" r0 "], %[" r0 "], %[x1]\n\t"          \
  "ssat   %[" r0 "], #8, %[" r0 "]\n\t"             \
  "add    %[" r1 "], %[x0e], %[" r1 "], lsl #1\n\t" \
  "add    %[ve], %[x1e], %[" r1 "], asr #31\n\t"    \
  "smmlar %[" r1 "], %[" r1 "], %[x0], %[ve]\n\t"   \
  "asr    %[" r1 "], %[" r1 "], %[x1]\n\t"          \
  "ssat   %[" r1 "], #8, %[" r1 "]\n\t"
#define FLOE_S8_GEMM_TAIL                          \
  "ldr    %[v], %[end]\n\t"                        \
  "cmp    %[a], %[v]\n\t"                          \
  "bne    1b\n\t"                                  \
  "ldr    %[v], %[pair]\n\t"                       \
  FLOE_S8_GEMM_REQUANT("0", "s00", "s10")          \
  FLOE_S8_GEMM_REQUANT("16", "s01", "s11")         \
  "bfi    %[s00], %[s01], #8, #8\n\t"              \
  "bfi    %[s00], %[s10], #16, #8\n\t"             \
  "bfi    %[s00], %[s11], #24, #8"
#define FLOE_S8_GEMM_OPERANDS                                                                           \
  : [a] "+&r"(a0), [w] "+&r"(w0), [s00] "+&r"(s00), [s01] "+&r"(s01), [s10] "+&r"(s10), [s11] "+&r"(s11), \
    [x0e] "=&r"(x0e), [x0] "=&r"(x0), [x1e] "=&r"(x1e), [x1] "=&r"(x1), [ve] "=&r"(ve), [v] "=&r"(v)     \
  : [ag] "r"(row_gap), [wg] "r"(channel_gap), [end] "m"(end), [pair] "m"(pair)                          \
  : "cc", "memory"
  if ((k & 15) == 0) {
    __asm__("1:\n\t" FLOE_S8_GEMM_4COLS FLOE_S8_GEMM_4COLS FLOE_S8_GEMM_4COLS FLOE_S8_GEMM_4COLS
                FLOE_S8_GEMM_TAIL FLOE_S8_GEMM_OPERANDS);
  } else {
    __asm__("1:\n\t" FLOE_S8_GEMM_4COLS FLOE_S8_GEMM_4COLS FLOE_S8_GEMM_TAIL FLOE_S8_GEMM_OPERANDS);
  }
#undef FLOE_S8_GEMM_OPERANDS
#undef FLOE_S8_GEMM_TAIL
#undef FLOE_S8_GEMM_REQUANT
#undef FLOE_S8_GEMM_4COLS
  return static_cast<uint32_t>(s00);
}

// The weights of a channel pair widened once for block_2x2_short_widened
// (k <= kWidenedColumns): per 4 columns the halfword pairs of c's even and
// odd lanes, then c+1's; the pair's constants follow the last column.
constexpr int32_t kWidenedColumns = 64;

// Every row pair of a widened channel pair (rows a0 + 2j * a_stride and the
// next, j < row_pairs; outputs o0 + 2j * out_stride and the next) in one
// assembly loop: per 4 columns 2 input loads, 4 SXTB16, 2 LDRD of the
// prepared weights and 8 SMLAD (1 instruction per MAC), 16 columns per
// iteration when k is a multiple of 16 (else 8), the first iteration peeled
// (SMUAD starts the sums); the column loop ends where the pair's constants
// start, read next; the row-pair state lives in memory (all 14 registers are
// taken).
// Not inlined: its own frame keeps every memory operand at [sp, #n].
template <bool kClamp>
__attribute__((noinline)) void gemm_widened_rows(const int8_t* a0, int32_t a_stride, int32_t row_pairs, int32_t k_size,
                                      const uint32_t* wide, int8_t* o0, int32_t out_stride, uint32_t min4,
                                      uint32_t max4) {
  int32_t s00, s01, s10, s11;
  uint32_t x0e, x0, x1e, x1, ve, v;
  const uint32_t* const wide_end = wide + k_size;
  const int32_t row_gap = a_stride - 4;
  const int32_t a_next = 2 * a_stride - k_size;  // after a row pair's columns
  const int32_t wide_bytes = 4 * k_size;
  int32_t left = row_pairs;
  int8_t* o = o0;
#define FLOE_S8_GEMM_4COLS_WIDE                   \
  "ldr    %[x0], [%[a]], #4\n\t"                  \
  "ldr    %[x1], [%[a], %[ag]]\n\t"               \
  "ldrd   %[ve], %[v], [%[w]], #8\n\t"            \
  "sxtb16 %[x0e], %[x0]\n\t"                      \
  "sxtb16 %[x0], %[x0], ror #8\n\t"               \
  "sxtb16 %[x1e], %[x1]\n\t"                      \
  "sxtb16 %[x1], %[x1], ror #8\n\t"               \
  "smlad  %[s00], %[x0e], %[ve], %[s00]\n\t"      \
  "smlad  %[s00], %[x0], %[v], %[s00]\n\t"        \
  "smlad  %[s10], %[x1e], %[ve], %[s10]\n\t"      \
  "smlad  %[s10], %[x1], %[v], %[s10]\n\t"        \
  "ldrd   %[ve], %[v], [%[w]], #8\n\t"            \
  "smlad  %[s01], %[x0e], %[ve], %[s01]\n\t"      \
  "smlad  %[s01], %[x0], %[v], %[s01]\n\t"        \
  "smlad  %[s11], %[x1e], %[ve], %[s11]\n\t"      \
  "smlad  %[s11], %[x1], %[v], %[s11]\n\t"
#define FLOE_S8_GEMM_REQUANT(at, r0, r1)             \
  "ldrd   %[x0e], %[x0], [%[w], #" at "]\n\t"       \
  "ldrd   %[x1e], %[x1], [%[w], #" at " + 8]\n\t"   \
  "add    %[" r0 "], %[x0e], %[" r0 "], lsl #1\n\t" \
  "add    %[ve], %[x1e], %[" r0 "], asr #31\n\t"    \
  "smmlar %[" r0 "], %[" r0 "], %[x0], %[ve]\n\t"   \
  "asr    %[" r0 "], %[" r0 "], %[x1]\n\t"          \
  "ssat   %[" r0 "], #8, %[" r0 "]\n\t"             \
  "add    %[" r1 "], %[x0e], %[" r1 "], lsl #1\n\t" \
  "add    %[ve], %[x1e], %[" r1 "], asr #31\n\t"    \
  "smmlar %[" r1 "], %[" r1 "], %[x0], %[ve]\n\t"   \
  "asr    %[" r1 "], %[" r1 "], %[x1]\n\t"          \
  "ssat   %[" r1 "], #8, %[" r1 "]\n\t"
  // The first 4 columns start the sums (SMUAD: no zeroing).
#define FLOE_S8_GEMM_4COLS_FIRST                  \
  "ldr    %[x0], [%[a]], #4\n\t"                  \
  "ldr    %[x1], [%[a], %[ag]]\n\t"               \
  "ldrd   %[ve], %[v], [%[w]], #8\n\t"            \
  "sxtb16 %[x0e], %[x0]\n\t"                      \
  "sxtb16 %[x0], %[x0], ror #8\n\t"               \
  "sxtb16 %[x1e], %[x1]\n\t"                      \
  "sxtb16 %[x1], %[x1], ror #8\n\t"               \
  "smuad  %[s00], %[x0e], %[ve]\n\t"              \
  "smlad  %[s00], %[x0], %[v], %[s00]\n\t"        \
  "smuad  %[s10], %[x1e], %[ve]\n\t"              \
  "smlad  %[s10], %[x1], %[v], %[s10]\n\t"        \
  "ldrd   %[ve], %[v], [%[w]], #8\n\t"            \
  "smuad  %[s01], %[x0e], %[ve]\n\t"              \
  "smlad  %[s01], %[x0], %[v], %[s01]\n\t"        \
  "smuad  %[s11], %[x1e], %[ve]\n\t"              \
  "smlad  %[s11], %[x1], %[v], %[s11]\n\t"
  // A row pair's columns: the first iteration peeled, then `cols` (8 or 16
  // columns) per iteration.
#define FLOE_S8_GEMM_8COLS FLOE_S8_GEMM_4COLS_WIDE FLOE_S8_GEMM_4COLS_WIDE
#define FLOE_S8_GEMM_ROWS_HEAD(first_rest, cols)  \
  "2:\n\t" FLOE_S8_GEMM_4COLS_FIRST first_rest    \
  "cmp    %[w], %[wend]\n\t"                      \
  "beq    3f\n\t"                                 \
  "1:\n\t" cols                                   \
  "cmp    %[w], %[wend]\n\t"                      \
  "bne    1b\n\t"                                 \
  "3:\n\t"                                        \
  FLOE_S8_GEMM_REQUANT("0", "s00", "s10")         \
  FLOE_S8_GEMM_REQUANT("16", "s01", "s11")        \
  "bfi    %[s00], %[s01], #8, #8\n\t"             \
  "bfi    %[s00], %[s10], #16, #8\n\t"            \
  "bfi    %[s00], %[s11], #24, #8\n\t"
#define FLOE_S8_GEMM_ROWS_TAIL                    \
  "ldr    %[v], %[o]\n\t"                         \
  "ldr    %[x0], %[os]\n\t"                       \
  "strh   %[s00], [%[v]]\n\t"                     \
  "lsr    %[s00], %[s00], #16\n\t"                \
  "strh   %[s00], [%[v], %[x0]]\n\t"              \
  "add    %[v], %[v], %[x0], lsl #1\n\t"          \
  "str    %[v], %[o]\n\t"                         \
  "ldr    %[v], %[an]\n\t"                        \
  "add    %[a], %[a], %[v]\n\t"                   \
  "ldr    %[v], %[wb]\n\t"                        \
  "sub    %[w], %[wend], %[v]\n\t"                \
  "ldr    %[v], %[n]\n\t"                         \
  "subs   %[v], %[v], #1\n\t"                     \
  "str    %[v], %[n]\n\t"                         \
  "bne    2b"
#define FLOE_S8_GEMM_ROWS_OPERANDS                                                                          \
  : [a] "+&r"(a0), [w] "+&r"(wide), [s00] "=&r"(s00), [s01] "=&r"(s01), [s10] "=&r"(s10), [s11] "=&r"(s11), \
    [x0e] "=&r"(x0e), [x0] "=&r"(x0), [x1e] "=&r"(x1e), [x1] "=&r"(x1), [ve] "=&r"(ve), [v] "=&r"(v),       \
    [o] "+m"(o), [n] "+m"(left)                                                                           \
  : [ag] "r"(row_gap), [wend] "r"(wide_end), [os] "m"(out_stride), [an] "m"(a_next), [wb] "m"(wide_bytes), \
    [mn] "m"(min4), [mx] "m"(max4)                                                                        \
  : "cc", "memory"
  // volatile: the loop's only effect is its stores.
#define FLOE_S8_GEMM_CLAMP                        \
  "ldr    %[x0e], %[mn]\n\t"                      \
  "ldr    %[x0], %[mx]\n\t"                       \
  "ssub8  %[ve], %[s00], %[x0e]\n\t"              \
  "sel    %[s00], %[s00], %[x0e]\n\t"             \
  "ssub8  %[ve], %[x0], %[s00]\n\t"               \
  "sel    %[s00], %[s00], %[x0]\n\t"
#define FLOE_S8_GEMM_16COLS_HEAD \
  FLOE_S8_GEMM_ROWS_HEAD(FLOE_S8_GEMM_4COLS_WIDE FLOE_S8_GEMM_8COLS, FLOE_S8_GEMM_8COLS FLOE_S8_GEMM_8COLS)
#define FLOE_S8_GEMM_8COLS_HEAD FLOE_S8_GEMM_ROWS_HEAD(FLOE_S8_GEMM_4COLS_WIDE, FLOE_S8_GEMM_8COLS)
  if ((k_size & 15) == 0) {
    if (kClamp) {
      __asm__ volatile(FLOE_S8_GEMM_16COLS_HEAD FLOE_S8_GEMM_CLAMP FLOE_S8_GEMM_ROWS_TAIL FLOE_S8_GEMM_ROWS_OPERANDS);
    } else {
      __asm__ volatile(FLOE_S8_GEMM_16COLS_HEAD FLOE_S8_GEMM_ROWS_TAIL FLOE_S8_GEMM_ROWS_OPERANDS);
    }
  } else {
    if (kClamp) {
      __asm__ volatile(FLOE_S8_GEMM_8COLS_HEAD FLOE_S8_GEMM_CLAMP FLOE_S8_GEMM_ROWS_TAIL FLOE_S8_GEMM_ROWS_OPERANDS);
    } else {
      __asm__ volatile(FLOE_S8_GEMM_8COLS_HEAD FLOE_S8_GEMM_ROWS_TAIL FLOE_S8_GEMM_ROWS_OPERANDS);
    }
  }
#undef FLOE_S8_GEMM_8COLS_HEAD
#undef FLOE_S8_GEMM_16COLS_HEAD
#undef FLOE_S8_GEMM_CLAMP
#undef FLOE_S8_GEMM_ROWS_OPERANDS
#undef FLOE_S8_GEMM_ROWS_TAIL
#undef FLOE_S8_GEMM_ROWS_HEAD
#undef FLOE_S8_GEMM_8COLS
#undef FLOE_S8_GEMM_4COLS_FIRST
#undef FLOE_S8_GEMM_REQUANT
#undef FLOE_S8_GEMM_4COLS_WIDE
}

// s8_gemm on the short requantization with k a multiple of 8: channel pairs
// outermost, so that a pair's constants are prepared once and every row pair
// runs block_2x2_short. Not inlined, like depthwise_groups_3wide.
__attribute__((noinline)) void s8_gemm_short_pairs(const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w, int32_t channels,
                         int32_t k_size, const S8Requant& rq, bool int8_range, int8_t* out, int32_t out_stride) {
  const ptrdiff_t k = k_size;
  const uint32_t min4 = replicate(rq.act_min), max4 = replicate(rq.act_max);
  const int32_t row_gap = a_stride - 4, channel_gap = k_size - 4;
  const int32_t row_pairs = rows / 2;
  // Up to 64 columns the pair's weights are widened once (on the stack,
  // within the worst-case depth budget), zero past k_size up to a multiple of
  // 8 (the rows' stride leaves those input bytes readable: s8_gemm's
  // condition); wider rows (k a multiple of 8) widen as they go.
  const int32_t k8 = (k_size + 7) & ~7;
  const bool widened = k8 <= kWidenedColumns && a_stride >= k8;
  uint32_t wide[kWidenedColumns + kPairConstants];
  int32_t* const pair = reinterpret_cast<int32_t*>(wide + (widened ? k8 : 0));
  int32_t c = 0;
  for (; c + 2 <= channels; c += 2) {
    for (int32_t i = 0; i < 2; ++i) {
      const ShortChannel ch = short_channel(rq, c + i);
      pair[4 * i] = ch.bias2;
      pair[4 * i + 1] = ch.multiplier;
      pair[4 * i + 2] = ch.round_and_offset;
      pair[4 * i + 3] = ch.right;
    }
    const int8_t* w0 = w + c * k;
    const int8_t* a0 = a;
    int8_t* o0 = out + c;
    const ptrdiff_t a_step = 2 * static_cast<ptrdiff_t>(a_stride), o_step = 2 * static_cast<ptrdiff_t>(out_stride);
    if (widened) {
      for (int32_t j = 0; j < k8; j += 4) {
        uint32_t v0 = 0, v1 = 0;
        if (j + 4 <= k_size) {
          v0 = load_word(w0 + j);
          v1 = load_word(w0 + k + j);
        } else {
          for (int32_t b = 0; b < 4 && j + b < k_size; ++b) {
            v0 |= static_cast<uint32_t>(static_cast<uint8_t>(w0[j + b])) << (8 * b);
            v1 |= static_cast<uint32_t>(static_cast<uint8_t>(w0[k + j + b])) << (8 * b);
          }
        }
        wide[j] = even_lanes(v0);
        wide[j + 1] = odd_lanes(v0);
        wide[j + 2] = even_lanes(v1);
        wide[j + 3] = odd_lanes(v1);
      }
      if (row_pairs > 0) {
        if (int8_range && !kOneClampVariant) {
          gemm_widened_rows<false>(a0, a_stride, row_pairs, k8, wide, o0, out_stride, min4, max4);
        } else {
          gemm_widened_rows<true>(a0, a_stride, row_pairs, k8, wide, o0, out_stride, min4, max4);
        }
        a0 += row_pairs * a_step;
        o0 += row_pairs * o_step;
      }
    } else {
      for (int32_t r = 0; r < row_pairs; ++r, a0 += a_step, o0 += o_step) {
        uint32_t packed = block_2x2_short(a0, w0, k_size, row_gap, channel_gap, pair);
        if (!int8_range) packed = clamp4(packed, min4, max4);
        store_half(o0, packed);
        store_half(o0 + out_stride, packed >> 16);
      }
    }
    if (rows & 1) {
      int32_t s[2];
      block_1x2(a0, w0, w0 + k, k_size, s);
      o0[0] = finish(rq, s[0], c);
      o0[1] = finish(rq, s[1], c + 1);
    }
  }
  if (c < channels) {
    const int8_t* w0 = w + c * k;
    int32_t r = 0;
    for (; r + 2 <= rows; r += 2) {
      const int8_t* a0 = a + r * static_cast<ptrdiff_t>(a_stride);
      int32_t s[2];
      // Two rows against one channel: the 1x2 block with the rows' roles swapped.
      block_1x2(w0, a0, a0 + a_stride, k_size, s);
      out[r * static_cast<ptrdiff_t>(out_stride) + c] = finish(rq, s[0], c);
      out[(r + 1) * static_cast<ptrdiff_t>(out_stride) + c] = finish(rq, s[1], c);
    }
    if (r < rows) {
      out[r * static_cast<ptrdiff_t>(out_stride) + c] =
          finish(rq, dot(a + r * static_cast<ptrdiff_t>(a_stride), w0, k_size), c);
    }
  }
}

#endif

}  // namespace

namespace {

// s8_gemm's row-pair-major blocking (any k, either requantization). Not
// inlined, like s8_gemm_short_pairs: s8_gemm's frame stays the larger of the two.
__attribute__((noinline)) void s8_gemm_row_pairs(const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w,
                                                 int32_t channels, int32_t k_size, const S8Requant& rq_in,
                                                 bool int8_range, int8_t* out, int32_t out_stride) {
  const S8Requant rq = rq_in;  // a local copy: the output stores cannot alias it
  const ptrdiff_t k = k_size;
  int32_t r = 0;
  for (; r + 2 <= rows; r += 2) {
    const int8_t* a0 = a + r * static_cast<ptrdiff_t>(a_stride);
    const int8_t* a1 = a0 + a_stride;
    int8_t* o0 = out + r * static_cast<ptrdiff_t>(out_stride);
    int8_t* o1 = o0 + out_stride;
    int32_t c = 0;
    for (; c + 2 <= channels; c += 2) {
      int32_t s[4];
      const int8_t* w0 = w + c * k;
      block_2x2(a0, a1, w0, w0 + k, k_size, s);
      finish_2x2(rq, int8_range, s, c, o0, o1);
    }
    if (c < channels) {
      int32_t s[2];
      const int8_t* w0 = w + c * k;
      // Two rows against one channel: the 1x2 block with the rows' roles swapped.
      block_1x2(w0, a0, a1, k_size, s);
      o0[c] = finish(rq, s[0], c);
      o1[c] = finish(rq, s[1], c);
    }
  }
  if (r < rows) {
    const int8_t* a0 = a + r * static_cast<ptrdiff_t>(a_stride);
    int8_t* o0 = out + r * static_cast<ptrdiff_t>(out_stride);
    int32_t c = 0;
    for (; c + 2 <= channels; c += 2) {
      int32_t s[2];
      const int8_t* w0 = w + c * k;
      block_1x2(a0, w0, w0 + k, k_size, s);
      o0[c] = finish(rq, s[0], c);
      o0[c + 1] = finish(rq, s[1], c + 1);
    }
    if (c < channels) o0[c] = finish(rq, dot(a0, w + c * k, k_size), c);
  }
}

}  // namespace

#if defined(FLOE_S8_NEON) || defined(FLOE_S8_X86)
namespace {

// The host targets' SIMD GEMMs, and their split across the op's threads
// (runtime/core/parallel.h): each task takes a band of rows, or, for a single
// row (a FULLY_CONNECTED at batch 1), a band of channels, in whole register
// blocks (4 rows, 16 channels).
using HostGemm = void (*)(const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w, int32_t channels,
                          int32_t k_size, const S8Requant& rq, int8_t* out, int32_t out_stride);

struct GemmBands {
  HostGemm gemm;
  const int8_t* a;
  const int8_t* w;
  const S8Requant* rq;
  int8_t* out;
  int32_t a_stride, rows, channels, k_size, out_stride;
  int32_t band;  // rows (by_rows) or channels per task
  bool by_rows;
};

void gemm_band(void* context, size_t task) {
  const GemmBands& g = *static_cast<const GemmBands*>(context);
  const int32_t begin = static_cast<int32_t>(task) * g.band;
  if (g.by_rows) {
    const int32_t rows = g.rows - begin < g.band ? g.rows - begin : g.band;
    g.gemm(g.a + static_cast<ptrdiff_t>(begin) * g.a_stride, g.a_stride, rows, g.w, g.channels, g.k_size, *g.rq,
           g.out + static_cast<ptrdiff_t>(begin) * g.out_stride, g.out_stride);
    return;
  }
  const int32_t channels = g.channels - begin < g.band ? g.channels - begin : g.band;
  S8Requant rq = *g.rq;  // channel `begin`'s constants first
  rq.bias += begin;
  rq.multiplier += begin;
  rq.shift += begin;
#if defined(FLOE_S8_X86)
  if (rq.bias_unsigned != nullptr) rq.bias_unsigned += begin;
#endif
  g.gemm(g.a, g.a_stride, g.rows, g.w + static_cast<ptrdiff_t>(begin) * g.k_size, channels, g.k_size, rq,
         g.out + begin, g.out_stride);
}

void host_gemm(HostGemm gemm, const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w, int32_t channels,
               int32_t k_size, const S8Requant& rq, int8_t* out, int32_t out_stride) {
  const int32_t threads = static_cast<int32_t>(parallel_threads());
  const bool by_rows = rows >= 8;
  const int32_t extent = by_rows ? rows : channels;
  if (threads > 1 && extent > 0) {  // nothing to split (and no band of 0) without channels
    GemmBands g{gemm, a, w, &rq, out, a_stride, rows, channels, k_size, out_stride, 0, by_rows};
    const int32_t block = g.by_rows ? 4 : 16;
    g.band = ((extent + threads - 1) / threads + block - 1) / block * block;
    const int32_t tasks = (extent + g.band - 1) / g.band;
    if (tasks > 1) {
      parallel_for(static_cast<size_t>(tasks), gemm_band, &g);
      return;
    }
  }
  gemm(a, a_stride, rows, w, channels, k_size, rq, out, out_stride);
}

}  // namespace
#endif

void s8_gemm(const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w, int32_t channels,
             int32_t k_size, const S8Requant& rq, int8_t* out, int32_t out_stride) {
#if defined(FLOE_S8_NEON)
  if (!rq.short_path) {
    host_gemm(s8_gemm_neon, a, a_stride, rows, w, channels, k_size, rq, out, out_stride);
    return;
  }
#elif defined(FLOE_S8_X86)
  if (!rq.short_path && s8_x86_avx2_available()) {
    host_gemm(s8_x86_vnni_available() ? s8_gemm_vnni : s8_gemm_avx2, a, a_stride, rows, w, channels, k_size, rq,
              out, out_stride);
    return;
  }
#endif
  const bool int8_range = rq.act_min == -128 && rq.act_max == 127;
#if defined(FLOE_S8_DSP_LOOPS)
  // The models' layers: 1x1 convolutions and im2col rows of a multiple of 8
  // columns, or rows whose stride leaves room to read them as one (a single
  // row, as a FULLY_CONNECTED's, has no row pairs to prepare a pair for).
  const int32_t k8 = (k_size + 7) & ~7;
  if (rq.short_path && rows >= 2 && k_size >= 1 &&
      ((k_size & 7) == 0 || (k8 <= kWidenedColumns && a_stride >= k8))) {
    s8_gemm_short_pairs(a, a_stride, rows, w, channels, k_size, rq, int8_range, out, out_stride);
    return;
  }
#endif
  s8_gemm_row_pairs(a, a_stride, rows, w, channels, k_size, rq, int8_range, out, out_stride);
}

}  // namespace floe::cortexm

#endif  // !FLOE_CORTEXM_S8_MVE
