// SPDX-License-Identifier: Apache-2.0
// s8_gemm_packed (1x1 convolutions whose filter the converter packed,
// s8_microkernels.h): row pairs outermost, the pair widened once onto the
// stack, then every packed channel pair streamed in one assembly loop (DSP:
// 12 instructions per 16 MACs); the same arithmetic in C elsewhere.
#if !defined(FLOE_CORTEXM_S8_MVE)

#include "runtime/kernels/cortexm/s8_microkernels.h"

#include <stddef.h>
#include <string.h>

#include "runtime/kernels/cortexm/s8_arithmetic.h"

namespace floe::cortexm {
using namespace s8_detail;  // NOLINT(build/namespaces): the kernels' shared arithmetic
namespace {

// Rows a0 and a1 (a1 null: a0 alone) against every packed channel pair, in C:
// the portable build's whole kernel, the DSP build's odd last row.
void packed_rows(const int8_t* a0, const int8_t* a1, const int32_t* packed, int32_t channels, int32_t k_size,
                 int32_t act_min, int32_t act_max, int8_t* o0, int8_t* o1) {
  auto finish_packed = [act_min, act_max](int32_t acc, const int32_t* k) {
    const int32_t v = short_requantize_to_s8(acc, ShortChannel{k[0], k[1], k[2], k[3]});
    return static_cast<int8_t>(v < act_min ? act_min : (v > act_max ? act_max : v));
  };
  for (int32_t c = 0; c < channels; c += 2, packed += k_size + 8) {
    int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
    for (int32_t j = 0; j < k_size; j += 4) {
      const uint32_t* w = reinterpret_cast<const uint32_t*>(packed + j);
      const uint32_t x0 = load_word(a0 + j);
      const uint32_t x0e = even_lanes(x0), x0o = odd_lanes(x0);
      s00 = smlad(x0o, w[1], smlad(x0e, w[0], s00));
      s01 = smlad(x0o, w[3], smlad(x0e, w[2], s01));
      if (a1 != nullptr) {
        const uint32_t x1 = load_word(a1 + j);
        const uint32_t x1e = even_lanes(x1), x1o = odd_lanes(x1);
        s10 = smlad(x1o, w[1], smlad(x1e, w[0], s10));
        s11 = smlad(x1o, w[3], smlad(x1e, w[2], s11));
      }
    }
    const int32_t* k0 = packed + k_size;
    o0[c] = finish_packed(s00, k0);
    o0[c + 1] = finish_packed(s01, k0 + 4);
    if (a1 != nullptr) {
      o1[c] = finish_packed(s10, k0);
      o1[c + 1] = finish_packed(s11, k0 + 4);
    }
  }
}

#if defined(FLOE_S8_DSP_LOOPS)

// One row pair, widened (per 4 columns: row 0's even and odd lanes, then row
// 1's; k_size words), against every packed channel pair in one assembly
// loop: per 4 columns 2 LDRD of inputs, 2 of weights and 8 SMLAD (0.75
// instructions per MAC); then the pair's constants follow its weights in the
// same stream. All 14 registers are taken: the rest lives in memory.
// Not inlined: its own frame keeps every memory operand at [sp, #n].
template <bool kClamp>
__attribute__((noinline)) void gemm_packed_row_pair(const uint32_t* xw, int32_t k_size, const int32_t* packed,
                                                    const int32_t* packed_end, int8_t* o, int32_t out_stride,
                                                    uint32_t min4, uint32_t max4) {
  const uint32_t* a = xw;
  const uint32_t* const a_end = xw + k_size;
  const int32_t* w = packed;
  int32_t s00, s01, s10, s11;
  uint32_t x0e, x0o, x1e, x1o, we, wo;
#define FLOE_S8_PK_4COLS(mac00, mac10, mac01, mac11)         \
  "ldrd   %[x0e], %[x0o], [%[a]], #8\n\t"                    \
  "ldrd   %[x1e], %[x1o], [%[a]], #8\n\t"                    \
  "ldrd   %[we], %[wo], [%[w]], #8\n\t"                      \
  mac00 "\n\t"                                               \
  "smlad  %[s00], %[x0o], %[wo], %[s00]\n\t"                 \
  mac10 "\n\t"                                               \
  "smlad  %[s10], %[x1o], %[wo], %[s10]\n\t"                 \
  "ldrd   %[we], %[wo], [%[w]], #8\n\t"                      \
  mac01 "\n\t"                                               \
  "smlad  %[s01], %[x0o], %[wo], %[s01]\n\t"                 \
  mac11 "\n\t"                                               \
  "smlad  %[s11], %[x1o], %[wo], %[s11]\n\t"
#define FLOE_S8_PK_NEXT                                                                            \
  FLOE_S8_PK_4COLS("smlad  %[s00], %[x0e], %[we], %[s00]", "smlad  %[s10], %[x1e], %[we], %[s10]", \
                   "smlad  %[s01], %[x0e], %[we], %[s01]", "smlad  %[s11], %[x1e], %[we], %[s11]")
  // The first 4 columns start the sums (SMUAD: no zeroing).
#define FLOE_S8_PK_FIRST                                                                    \
  FLOE_S8_PK_4COLS("smuad  %[s00], %[x0e], %[we]", "smuad  %[s10], %[x1e], %[we]",        \
                   "smuad  %[s01], %[x0e], %[we]", "smuad  %[s11], %[x1e], %[we]")
#define FLOE_S8_PK_REQUANT(r0, r1)                   \
  "ldrd   %[x0e], %[x0o], [%[w]], #8\n\t"           \
  "ldrd   %[x1e], %[x1o], [%[w]], #8\n\t"           \
  "add    %[" r0 "], %[x0e], %[" r0 "], lsl #1\n\t" \
  "add    %[we], %[x1e], %[" r0 "], asr #31\n\t"    \
  "smmlar %[" r0 "], %[" r0 "], %[x0o], %[we]\n\t"  \
  "asr    %[" r0 "], %[" r0 "], %[x1o]\n\t"         \
  "ssat   %[" r0 "], #8, %[" r0 "]\n\t"             \
  "add    %[" r1 "], %[x0e], %[" r1 "], lsl #1\n\t" \
  "add    %[we], %[x1e], %[" r1 "], asr #31\n\t"    \
  "smmlar %[" r1 "], %[" r1 "], %[x0o], %[we]\n\t"  \
  "asr    %[" r1 "], %[" r1 "], %[x1o]\n\t"         \
  "ssat   %[" r1 "], #8, %[" r1 "]\n\t"
  // A channel pair: the first iteration peeled, then `cols` per iteration.
#define FLOE_S8_PK_HEAD(first_rest, cols)          \
  "2:\n\t" FLOE_S8_PK_FIRST first_rest             \
  "cmp    %[a], %[aend]\n\t"                       \
  "beq    3f\n\t"                                  \
  "1:\n\t" cols                                    \
  "cmp    %[a], %[aend]\n\t"                       \
  "bne    1b\n\t"                                  \
  "3:\n\t"                                         \
  FLOE_S8_PK_REQUANT("s00", "s10")                 \
  FLOE_S8_PK_REQUANT("s01", "s11")                 \
  "bfi    %[s00], %[s01], #8, #8\n\t"              \
  "bfi    %[s00], %[s10], #16, #8\n\t"             \
  "bfi    %[s00], %[s11], #24, #8\n\t"
#define FLOE_S8_PK_CLAMP                          \
  "ldr    %[x0e], %[mn]\n\t"                      \
  "ldr    %[x0o], %[mx]\n\t"                      \
  "ssub8  %[we], %[s00], %[x0e]\n\t"              \
  "sel    %[s00], %[s00], %[x0e]\n\t"             \
  "ssub8  %[we], %[x0o], %[s00]\n\t"              \
  "sel    %[s00], %[s00], %[x0o]\n\t"
  // Row 0's two bytes at o (post-incremented), row 1's out_stride further.
#define FLOE_S8_PK_TAIL                           \
  "ldr    %[x0e], %[os]\n\t"                      \
  "lsr    %[x0o], %[s00], #16\n\t"                \
  "strh   %[x0o], [%[o], %[x0e]]\n\t"             \
  "strh   %[s00], [%[o]], #2\n\t"                 \
  "ldr    %[a], %[abeg]\n\t"                      \
  "ldr    %[x0e], %[wend]\n\t"                    \
  "cmp    %[w], %[x0e]\n\t"                       \
  "bne    2b"
#define FLOE_S8_PK_OPERANDS                                                                                \
  : [a] "+&r"(a), [w] "+&r"(w), [o] "+&r"(o), [s00] "=&r"(s00), [s01] "=&r"(s01), [s10] "=&r"(s10),         \
    [s11] "=&r"(s11), [x0e] "=&r"(x0e), [x0o] "=&r"(x0o), [x1e] "=&r"(x1e), [x1o] "=&r"(x1o), [we] "=&r"(we), \
    [wo] "=&r"(wo)                                                                                         \
  : [aend] "r"(a_end), [os] "m"(out_stride), [abeg] "m"(xw), [wend] "m"(packed_end), [mn] "m"(min4),       \
    [mx] "m"(max4)                                                                                         \
  : "cc", "memory"
#define FLOE_S8_PK_16COLS_HEAD \
  FLOE_S8_PK_HEAD(FLOE_S8_PK_NEXT FLOE_S8_PK_NEXT FLOE_S8_PK_NEXT, FLOE_S8_PK_NEXT FLOE_S8_PK_NEXT FLOE_S8_PK_NEXT FLOE_S8_PK_NEXT)
#define FLOE_S8_PK_8COLS_HEAD FLOE_S8_PK_HEAD(FLOE_S8_PK_NEXT, FLOE_S8_PK_NEXT FLOE_S8_PK_NEXT)
  // volatile: the loop's only effect is its stores.
  if ((k_size & 15) == 0) {
    if (kClamp) {
      __asm__ volatile(FLOE_S8_PK_16COLS_HEAD FLOE_S8_PK_CLAMP FLOE_S8_PK_TAIL FLOE_S8_PK_OPERANDS);
    } else {
      __asm__ volatile(FLOE_S8_PK_16COLS_HEAD FLOE_S8_PK_TAIL FLOE_S8_PK_OPERANDS);
    }
  } else {
    if (kClamp) {
      __asm__ volatile(FLOE_S8_PK_8COLS_HEAD FLOE_S8_PK_CLAMP FLOE_S8_PK_TAIL FLOE_S8_PK_OPERANDS);
    } else {
      __asm__ volatile(FLOE_S8_PK_8COLS_HEAD FLOE_S8_PK_TAIL FLOE_S8_PK_OPERANDS);
    }
  }
#undef FLOE_S8_PK_8COLS_HEAD
#undef FLOE_S8_PK_16COLS_HEAD
#undef FLOE_S8_PK_OPERANDS
#undef FLOE_S8_PK_TAIL
#undef FLOE_S8_PK_CLAMP
#undef FLOE_S8_PK_HEAD
#undef FLOE_S8_PK_REQUANT
#undef FLOE_S8_PK_FIRST
#undef FLOE_S8_PK_NEXT
#undef FLOE_S8_PK_4COLS
}

#endif

}  // namespace

void s8_gemm_packed(const int8_t* a, int32_t a_stride, int32_t rows, const int32_t* packed, int32_t channels,
                    int32_t k_size, int32_t act_min, int32_t act_max, int8_t* out) {
  int32_t r = 0;
#if defined(FLOE_S8_DSP_LOOPS)
  const bool clamp = act_min != -128 || act_max != 127;
  const uint32_t min4 = replicate(act_min), max4 = replicate(act_max);
  const int32_t* const packed_end = packed + s8_packed_gemm_words(channels, k_size);
  uint32_t xw[kPackedGemmMaxK];  // one row pair, widened
  for (; r + 2 <= rows; r += 2) {
    const int8_t* a0 = a + r * static_cast<ptrdiff_t>(a_stride);
    for (int32_t j = 0; j < k_size; j += 4) {
      const uint32_t x0 = load_word(a0 + j), x1 = load_word(a0 + a_stride + j);
      xw[j] = even_lanes(x0);
      xw[j + 1] = odd_lanes(x0);
      xw[j + 2] = even_lanes(x1);
      xw[j + 3] = odd_lanes(x1);
    }
    int8_t* o = out + r * static_cast<ptrdiff_t>(channels);
    if (clamp || kOneClampVariant) {
      gemm_packed_row_pair<true>(xw, k_size, packed, packed_end, o, channels, min4, max4);
    } else {
      gemm_packed_row_pair<false>(xw, k_size, packed, packed_end, o, channels, min4, max4);
    }
  }
#else
  for (; r + 2 <= rows; r += 2) {
    const int8_t* a0 = a + r * static_cast<ptrdiff_t>(a_stride);
    int8_t* o0 = out + r * static_cast<ptrdiff_t>(channels);
    packed_rows(a0, a0 + a_stride, packed, channels, k_size, act_min, act_max, o0, o0 + channels);
  }
#endif
  if (r < rows) {
    packed_rows(a + r * static_cast<ptrdiff_t>(a_stride), nullptr, packed, channels, k_size, act_min, act_max,
                out + r * static_cast<ptrdiff_t>(channels), nullptr);
  }
}

}  // namespace floe::cortexm

#endif  // !FLOE_CORTEXM_S8_MVE
