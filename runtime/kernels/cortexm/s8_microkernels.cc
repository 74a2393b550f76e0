// SPDX-License-Identifier: Apache-2.0
// The DSP-extension (M4, M33; M55 until its Helium file is built) and portable
// implementations of s8_microkernels.h. Both share one blocking so the host
// tests exercise the board's loop structure:
//   s8_gemm: 2 rows x 2 channels per block (4 accumulators). Each int8 word
//     is split by SXTB16 / SXTB16 ROR 8 into its even and odd halfword pairs
//     and SMLAD multiplies a row's and a channel's halves: per 4 columns 4 word
//     loads, 8 SXTB16, 8 SMLAD for 16 MACs. DSP: 16 columns per iteration
//     (8 when k % 16 >= 8) in inline assembly (14 registers: the second row
//     and channel are read at a fixed distance from the first, post-indexed),
//     ~1.30 instructions/MAC.
//     Odd rows/channels and k % 8 run narrower blocks of the same arithmetic.
//   s8_depthwise: 4 channels per word; the input offset is added while
//     widening (SXTAB16 adds it to both halves); one halfword MAC per product
//     (SMLABB/SMLATT: no reduction across channels to pair). Padded taps are
//     skipped by clipping each window once per output pixel; a window three
//     taps wide whose columns are all inside the input runs unrolled (DSP:
//     inline assembly, 10 instructions per tap and 4 channels).
// Requantization is fused into the block's output stores (DSP: ~18
// instructions per output on the general path, 5 on the short one plus the
// channel's constants, then the clamp on four packed bytes).
//
// The models' layers take channel-major paths on the DSP build with the short
// requantization (the portable build keeps the pixel/row-major ones above):
//   s8_gemm, k a multiple of 8 (or rows whose stride leaves room to read k
//     rounded up to 8, s8_gemm_row_stride): channel pairs outermost; a pair's
//     requantization constants are prepared once and, up to 64 columns, its
//     weights widened once to halfword pairs on the stack, so a 2x2 block
//     takes 16 instructions per 16 MACs and every row pair of the pair runs
//     in one assembly loop with the requantization (~1.25 per MAC at k = 64).
//   s8_depthwise, kernels three taps wide: groups of 4 channels outermost,
//     their widened weights and constants prepared once (with the input
//     offset's term folded into the bias for windows inside the input, and
//     for full-height two-column edge windows); a row's inner windows run in
//     one assembly loop, 102 instructions per pixel and 4 channels (36 MACs).
// s8_gemm_packed (1x1 convolutions whose filter the converter packed): row
//   pairs outermost, the pair widened once onto the stack, then every packed
//   channel pair streamed in one assembly loop (12 instructions per 16 MACs).
#if !defined(FLOE_CORTEXM_S8_MVE)

#include "runtime/kernels/cortexm/s8_microkernels.h"

#include <stddef.h>
#include <string.h>

#include "runtime/kernels/common/window.h"
#if defined(FLOE_S8_NEON) || defined(FLOE_S8_X86)
#include "runtime/core/parallel.h"
#endif

#if defined(__ARM_FEATURE_DSP) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define FLOE_S8_DSP 1
// The two inner loops in assembly take 13 and 14 registers: only an optimizing
// build leaves that many (at -O0, r7 is the frame pointer); other builds run
// the same arithmetic through the intrinsic-style C loops.
#if defined(__OPTIMIZE__)
#define FLOE_S8_DSP_LOOPS 1
#endif
#endif

namespace floe::cortexm {
namespace {

// The blocks' helpers are inlined into their loops: a call would move the
// four sums through memory and spill the loop's pointers around it.
#define FLOE_S8_INLINE inline __attribute__((always_inline))

// ---- the arithmetic -------------------------------------------------------

// ref::multiply_by_quantized_multiplier for a multiplier >= 0 (the converter
// guarantees it): the doubling high multiply's nudge makes both signs round
// half up, i.e. (x * m + 2^30) >> 31; then the rounding right shift rounds half
// away from zero, here as (high + 2^(right-1) - [high < 0]) >> right, whose sum
// can pass INT32_MAX only for a large positive high: then it is shifted as
// the unsigned value it is.
inline int32_t requantize(int32_t acc, int32_t multiplier, int32_t shift) {
#if defined(FLOE_S8_DSP)
  // The same steps without branches: USAT gives the left shift, SMLAL the
  // nudged 64-bit product, and the overflow flag of the rounding add picks
  // the unsigned shift.
  int32_t x = acc, lo, hi, t, right;
  __asm__(
      "usat   %[t], #5, %[sh]\n\t"
      "sub    %[r], %[t], %[sh]\n\t"
      "lsl    %[x], %[x], %[t]\n\t"
      "mov    %[lo], #0x40000000\n\t"
      "mov    %[hi], #0\n\t"
      "smlal  %[lo], %[hi], %[x], %[m]\n\t"
      "lsr    %[lo], %[lo], #31\n\t"
      "orr    %[x], %[lo], %[hi], lsl #1\n\t"
      "mov    %[t], #1\n\t"
      "lsl    %[t], %[t], %[r]\n\t"
      "sub    %[t], %[t], %[x], lsr #31\n\t"
      "adds   %[x], %[x], %[t], lsr #1\n\t"
      "ite    vs\n\t"
      "lsrvs  %[x], %[x], %[r]\n\t"
      "asrvc  %[x], %[x], %[r]"
      : [x] "+&r"(x), [lo] "=&r"(lo), [hi] "=&r"(hi), [t] "=&r"(t), [r] "=&r"(right)
      : [m] "r"(multiplier), [sh] "r"(shift)
      : "cc");
  return x;
#else
  const int32_t left = shift > 0 ? shift : 0;
  const int32_t right = left - shift;
  const int32_t x = static_cast<int32_t>(static_cast<uint32_t>(acc) << left);
  const int64_t product = static_cast<int64_t>(x) * multiplier + (int64_t{1} << 30);
  const int32_t high = static_cast<int32_t>(product >> 31);
  const uint32_t nudge = ((uint32_t{1} << right) - (static_cast<uint32_t>(high) >> 31)) >> 1;
  const uint32_t sum = static_cast<uint32_t>(high) + nudge;
  if (high >= 0 && static_cast<int32_t>(sum) < 0) return static_cast<int32_t>(sum >> right);
  return static_cast<int32_t>(sum) >> right;
#endif
}

// The short path's per-channel constants (s8_microkernels.h): the right
// shift e and K = (2 * output_offset + 1) << (e - 1), the rounding half plus
// the output offset moved above the shift.
struct ShortChannel {
  int32_t bias2, multiplier, round_and_offset, right;
};

inline ShortChannel short_channel(const S8Requant& rq, int32_t c) {
  const int32_t right = -rq.shift[c];
  const uint32_t offset_and_half = static_cast<uint32_t>(2 * rq.output_offset + 1);
  return {rq.bias[c], rq.multiplier[c], static_cast<int32_t>(offset_and_half << (right - 1)), right};
}

// The short path's output before the clamp, saturated to int8.
inline int32_t short_requantize_to_s8(int32_t acc, const ShortChannel& ch) {
#if defined(FLOE_S8_DSP)
  int32_t x, t;
  __asm__(
      "add    %[x], %[b], %[acc], lsl #1\n\t"
      "add    %[t], %[k], %[x], asr #31\n\t"
      "smmlar %[x], %[x], %[m], %[t]\n\t"
      "asr    %[x], %[x], %[e]\n\t"
      "ssat   %[x], #8, %[x]"
      : [x] "=&r"(x), [t] "=&r"(t)
      : [acc] "r"(acc), [b] "r"(ch.bias2), [m] "r"(ch.multiplier), [k] "r"(ch.round_and_offset), [e] "r"(ch.right));
  return x;
#else
  const int32_t x2 = static_cast<int32_t>(static_cast<uint32_t>(acc) * 2u + static_cast<uint32_t>(ch.bias2));
  const int64_t addend = static_cast<int64_t>(ch.round_and_offset) - (x2 < 0 ? 1 : 0);
  // SMMLAR: (addend * 2^32 + x2 * m + 2^31) >> 32.
  const int64_t sum = addend * (int64_t{1} << 32) + static_cast<int64_t>(x2) * ch.multiplier + (int64_t{1} << 31);
  const int32_t v = static_cast<int32_t>(sum >> 32) >> ch.right;
  return v < -128 ? -128 : (v > 127 ? 127 : v);
#endif
}

inline int8_t finish(const S8Requant& rq, int32_t acc, int32_t c) {
  int32_t v;
  if (rq.short_path) {
    v = short_requantize_to_s8(acc, short_channel(rq, c));
  } else {
    // The bias wraps as in the reference (wrapping_add).
    acc = static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(rq.bias[c]));
    // Wrapping, as the reference (a left-shifted extreme can reach INT32_MIN).
    v = static_cast<int32_t>(static_cast<uint32_t>(requantize(acc, rq.multiplier[c], rq.shift[c])) +
                             static_cast<uint32_t>(rq.output_offset));
  }
  v = v < rq.act_min ? rq.act_min : v;
  v = v > rq.act_max ? rq.act_max : v;
  return static_cast<int8_t>(v);
}

#if defined(FLOE_S8_DSP)

// requantize(acc + bias) + output_offset saturated to int8, in one block: the
// clamp to [act_min, act_max] (inside int8) then runs on four packed bytes.
inline int32_t requantize_to_s8(int32_t acc, int32_t bias, int32_t multiplier, int32_t shift, int32_t offset) {
  int32_t x = acc, lo, hi, t, left, right;
  __asm__(
      "add    %[x], %[x], %[b]\n\t"
      "usat   %[left], #5, %[sh]\n\t"
      "sub    %[right], %[left], %[sh]\n\t"
      "lsl    %[x], %[x], %[left]\n\t"
      "mov    %[lo], #0x40000000\n\t"
      "mov    %[hi], #0\n\t"
      "smlal  %[lo], %[hi], %[x], %[m]\n\t"
      "lsr    %[lo], %[lo], #31\n\t"
      "orr    %[x], %[lo], %[hi], lsl #1\n\t"
      "mov    %[t], #1\n\t"
      "lsl    %[t], %[t], %[right]\n\t"
      "sub    %[t], %[t], %[x], lsr #31\n\t"
      "adds   %[x], %[x], %[t], lsr #1\n\t"
      "ite    vs\n\t"
      "lsrvs  %[x], %[x], %[right]\n\t"
      "asrvc  %[x], %[x], %[right]\n\t"
      "add    %[x], %[x], %[zp]\n\t"
      "ssat   %[x], #8, %[x]"
      : [x] "+&r"(x), [lo] "=&r"(lo), [hi] "=&r"(hi), [t] "=&r"(t), [left] "=&r"(left), [right] "=&r"(right)
      : [b] "r"(bias), [m] "r"(multiplier), [sh] "r"(shift), [zp] "r"(offset)
      : "cc");
  return x;
}

// Four int8 values (low bytes of a, b, c, d) as one word, clamped bytewise to
// [min, max] (each replicated in the four bytes of min4 / max4).
inline uint32_t pack_clamp4(int32_t a, int32_t b, int32_t c, int32_t d, uint32_t min4, uint32_t max4) {
  uint32_t w = static_cast<uint32_t>(a), t;
  __asm__(
      "bfi    %[w], %[b], #8, #8\n\t"
      "bfi    %[w], %[c], #16, #8\n\t"
      "bfi    %[w], %[d], #24, #8\n\t"
      "ssub8  %[t], %[w], %[lo]\n\t"
      "sel    %[w], %[w], %[lo]\n\t"
      "ssub8  %[t], %[hi], %[w]\n\t"
      "sel    %[w], %[w], %[hi]"
      : [w] "+&r"(w), [t] "=&r"(t)
      : [b] "r"(b), [c] "r"(c), [d] "r"(d), [lo] "r"(min4), [hi] "r"(max4)
      : "cc");
  return w;
}

// Four packed int8 values clamped bytewise to [min, max] (as pack_clamp4).
inline uint32_t clamp4(uint32_t w, uint32_t min4, uint32_t max4) {
  uint32_t t;
  __asm__(
      "ssub8  %[t], %[w], %[lo]\n\t"
      "sel    %[w], %[w], %[lo]\n\t"
      "ssub8  %[t], %[hi], %[w]\n\t"
      "sel    %[w], %[w], %[hi]"
      : [w] "+&r"(w), [t] "=&r"(t)
      : [lo] "r"(min4), [hi] "r"(max4)
      : "cc");
  return w;
}

// Four int8 values (low bytes of a, b, c, d) as one word.
inline uint32_t pack4(int32_t a, int32_t b, int32_t c, int32_t d) {
  uint32_t w = static_cast<uint32_t>(a);
  __asm__(
      "bfi    %[w], %[b], #8, #8\n\t"
      "bfi    %[w], %[c], #16, #8\n\t"
      "bfi    %[w], %[d], #24, #8"
      : [w] "+&r"(w)
      : [b] "r"(b), [c] "r"(c), [d] "r"(d));
  return w;
}

inline uint32_t replicate(int32_t v) { return (static_cast<uint32_t>(v) & 0xFFu) * 0x01010101u; }

inline void store_word(int8_t* p, uint32_t w) { memcpy(p, &w, sizeof w); }
inline void store_half(int8_t* p, uint32_t w) {
  const uint16_t h = static_cast<uint16_t>(w);
  memcpy(p, &h, sizeof h);
}

#endif

// Outputs (r0, c), (r0, c+1), (r1, c), (r1, c+1) of a 2x2 GEMM block.
// int8_range: [act_min, act_max] is [-128, 127] (no clamp after saturating).
FLOE_S8_INLINE void finish_2x2(const S8Requant& rq, bool int8_range, const int32_t s[4], int32_t c, int8_t* o0,
                       int8_t* o1) {
#if defined(FLOE_S8_DSP)
  if (rq.short_path) {
    // The two channels' constants serve both rows.
    const ShortChannel k0 = short_channel(rq, c), k1 = short_channel(rq, c + 1);
    const int32_t v00 = short_requantize_to_s8(s[0], k0), v01 = short_requantize_to_s8(s[1], k1);
    const int32_t v10 = short_requantize_to_s8(s[2], k0), v11 = short_requantize_to_s8(s[3], k1);
    // SSAT already gave the int8 range: clamp only a narrower one.
    const uint32_t w = int8_range ? pack4(v00, v01, v10, v11)
                                  : pack_clamp4(v00, v01, v10, v11, replicate(rq.act_min), replicate(rq.act_max));
    store_half(o0 + c, w);
    store_half(o1 + c, w >> 16);
    return;
  }
  const int32_t b0 = rq.bias[c], m0 = rq.multiplier[c], sh0 = rq.shift[c];
  const int32_t b1 = rq.bias[c + 1], m1 = rq.multiplier[c + 1], sh1 = rq.shift[c + 1];
  const int32_t v00 = requantize_to_s8(s[0], b0, m0, sh0, rq.output_offset);
  const int32_t v01 = requantize_to_s8(s[1], b1, m1, sh1, rq.output_offset);
  const int32_t v10 = requantize_to_s8(s[2], b0, m0, sh0, rq.output_offset);
  const int32_t v11 = requantize_to_s8(s[3], b1, m1, sh1, rq.output_offset);
  const uint32_t w = pack_clamp4(v00, v01, v10, v11, replicate(rq.act_min), replicate(rq.act_max));
  store_half(o0 + c, w);
  store_half(o1 + c, w >> 16);
#else
  (void)int8_range;  // finish() clamps every output
  o0[c] = finish(rq, s[0], c);
  o0[c + 1] = finish(rq, s[1], c + 1);
  o1[c] = finish(rq, s[2], c);
  o1[c + 1] = finish(rq, s[3], c + 1);
#endif
}

// Channels c..c+3 of one depthwise output pixel.
FLOE_S8_INLINE void finish_4(const S8Requant& rq, bool int8_range, const int32_t s[4], int32_t c, int8_t* o) {
#if defined(FLOE_S8_DSP)
  if (rq.short_path) {
#if defined(FLOE_S8_DSP_LOOPS)
    // The four channels' constants streamed from the arrays in one block
    // (12 registers): 11 instructions per output, no spills.
    int32_t v0 = s[0], v1 = s[1], v2 = s[2], v3 = s[3];
    const int32_t* pb = rq.bias + c;
    const int32_t* pm = rq.multiplier + c;
    const int32_t* ps = rq.shift + c;
    const int32_t offset_and_half = 2 * rq.output_offset + 1;
    int32_t b, m, t, e;
#define FLOE_S8_SHORT_CHANNEL(v)          \
  "ldr    %[b], [%[pb]], #4\n\t"           \
  "ldr    %[m], [%[pm]], #4\n\t"           \
  "ldr    %[e], [%[ps]], #4\n\t"           \
  "mvn    %[t], %[e]\n\t"                  \
  "lsl    %[t], %[zh], %[t]\n\t"           \
  "add    %[" v "], %[b], %[" v "], lsl #1\n\t" \
  "add    %[t], %[t], %[" v "], asr #31\n\t"   \
  "smmlar %[" v "], %[" v "], %[m], %[t]\n\t"  \
  "rsb    %[e], %[e], #0\n\t"              \
  "asr    %[" v "], %[" v "], %[e]\n\t"        \
  "ssat   %[" v "], #8, %[" v "]\n\t"
    __asm__(FLOE_S8_SHORT_CHANNEL("v0") FLOE_S8_SHORT_CHANNEL("v1") FLOE_S8_SHORT_CHANNEL("v2")
                FLOE_S8_SHORT_CHANNEL("v3")
            : [v0] "+&r"(v0), [v1] "+&r"(v1), [v2] "+&r"(v2), [v3] "+&r"(v3), [pb] "+&r"(pb), [pm] "+&r"(pm),
              [ps] "+&r"(ps), [b] "=&r"(b), [m] "=&r"(m), [t] "=&r"(t), [e] "=&r"(e)
            : [zh] "r"(offset_and_half)
            : "memory");
#undef FLOE_S8_SHORT_CHANNEL
#else
    const int32_t v0 = short_requantize_to_s8(s[0], short_channel(rq, c));
    const int32_t v1 = short_requantize_to_s8(s[1], short_channel(rq, c + 1));
    const int32_t v2 = short_requantize_to_s8(s[2], short_channel(rq, c + 2));
    const int32_t v3 = short_requantize_to_s8(s[3], short_channel(rq, c + 3));
#endif
    const uint32_t w = int8_range ? pack4(v0, v1, v2, v3)
                                  : pack_clamp4(v0, v1, v2, v3, replicate(rq.act_min), replicate(rq.act_max));
    store_word(o + c, w);
    return;
  }
  const int32_t v0 = requantize_to_s8(s[0], rq.bias[c], rq.multiplier[c], rq.shift[c], rq.output_offset);
  const int32_t v1 = requantize_to_s8(s[1], rq.bias[c + 1], rq.multiplier[c + 1], rq.shift[c + 1], rq.output_offset);
  const int32_t v2 = requantize_to_s8(s[2], rq.bias[c + 2], rq.multiplier[c + 2], rq.shift[c + 2], rq.output_offset);
  const int32_t v3 = requantize_to_s8(s[3], rq.bias[c + 3], rq.multiplier[c + 3], rq.shift[c + 3], rq.output_offset);
  store_word(o + c, pack_clamp4(v0, v1, v2, v3, replicate(rq.act_min), replicate(rq.act_max)));
#else
  (void)int8_range;
  for (int i = 0; i < 4; ++i) o[c + i] = finish(rq, s[i], c + i);
#endif
}

inline uint32_t load_word(const int8_t* p) {
  uint32_t w;
  memcpy(&w, p, sizeof w);  // one LDR: M4/M33 allow unaligned word loads
  return w;
}

#if defined(FLOE_S8_DSP)

// The even (bytes 0, 2) and odd (bytes 1, 3) int8 lanes as halfword pairs.
inline uint32_t even_lanes(uint32_t w) {
  uint32_t r;
  __asm__("sxtb16 %0, %1" : "=r"(r) : "r"(w));
  return r;
}
inline uint32_t odd_lanes(uint32_t w) {
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(w));
  return r;
}
// offset + even / odd lanes, per halfword (the offsets' halves are equal).
inline uint32_t even_lanes_plus(uint32_t offsets, uint32_t w) {
  uint32_t r;
  __asm__("sxtab16 %0, %1, %2" : "=r"(r) : "r"(offsets), "r"(w));
  return r;
}
inline uint32_t odd_lanes_plus(uint32_t offsets, uint32_t w) {
  uint32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(offsets), "r"(w));
  return r;
}
// acc + a.lo * b.lo + a.hi * b.hi.
inline int32_t smlad(uint32_t a, uint32_t b, int32_t acc) {
  int32_t r;
  __asm__("smlad %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(acc));
  return r;
}
// acc + a.lo * b.lo, and acc + a.hi * b.hi.
inline int32_t smlabb(uint32_t a, uint32_t b, int32_t acc) {
  int32_t r;
  __asm__("smlabb %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(acc));
  return r;
}
inline int32_t smlatt(uint32_t a, uint32_t b, int32_t acc) {
  int32_t r;
  __asm__("smlatt %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(acc));
  return r;
}

#else  // portable: the same operations on plain integers

inline uint32_t halves(int32_t lo, int32_t hi) {
  return (static_cast<uint32_t>(lo) & 0xFFFFu) | (static_cast<uint32_t>(hi) << 16);
}
inline int32_t lo16(uint32_t w) { return static_cast<int16_t>(w & 0xFFFFu); }
inline int32_t hi16(uint32_t w) { return static_cast<int16_t>(w >> 16); }
inline int32_t byte_at(uint32_t w, int i) { return static_cast<int8_t>((w >> (8 * i)) & 0xFFu); }
inline uint32_t even_lanes(uint32_t w) { return halves(byte_at(w, 0), byte_at(w, 2)); }
inline uint32_t odd_lanes(uint32_t w) { return halves(byte_at(w, 1), byte_at(w, 3)); }
inline uint32_t even_lanes_plus(uint32_t offsets, uint32_t w) {
  return halves(lo16(offsets) + byte_at(w, 0), hi16(offsets) + byte_at(w, 2));
}
inline uint32_t odd_lanes_plus(uint32_t offsets, uint32_t w) {
  return halves(lo16(offsets) + byte_at(w, 1), hi16(offsets) + byte_at(w, 3));
}
inline int32_t smlad(uint32_t a, uint32_t b, int32_t acc) {
  const uint32_t sum = static_cast<uint32_t>(lo16(a) * lo16(b)) + static_cast<uint32_t>(hi16(a) * hi16(b));
  return static_cast<int32_t>(static_cast<uint32_t>(acc) + sum);
}
inline int32_t smlabb(uint32_t a, uint32_t b, int32_t acc) {
  return static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(lo16(a) * lo16(b)));
}
inline int32_t smlatt(uint32_t a, uint32_t b, int32_t acc) {
  return static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(hi16(a) * hi16(b)));
}

#endif

// ---- s8_gemm blocks ---------------------------------------------------------

// Two rows by two channels.
inline void block_2x2(const int8_t* a0, const int8_t* a1, const int8_t* w0, const int8_t* w1, int32_t k,
                      int32_t sums[4]) {
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
#if defined(FLOE_S8_DSP_LOOPS)
  // 4 columns: row 1 and channel 1 are read at a fixed distance from row 0
  // and channel 0 (post-incremented loads); 14 registers in all.
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
#undef FLOE_S8_GEMM_4COLS
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

// Built for size (-Os, which defines __OPTIMIZE_SIZE__): the clamping copy of
// a kernel also serves outputs whose range is all of int8 (clamping to it
// changes no value, so results are the same) and the unclamped copy (about
// 1 KB each) is not linked; the depthwise channel-group kernel is left out
// too (s8_depthwise). Speed builds (-O2, floe's presets) keep them all.
#if defined(__OPTIMIZE_SIZE__)
constexpr bool kOneClampVariant = true;
#else
constexpr bool kOneClampVariant = false;
#endif

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
  if (threads > 1) {
    GemmBands g{gemm, a, w, &rq, out, a_stride, rows, channels, k_size, out_stride, 0, rows >= 8};
    const int32_t extent = g.by_rows ? rows : channels, block = g.by_rows ? 4 : 16;
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

// ---- s8_gemm_packed ---------------------------------------------------------

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

// ---- s8_depthwise -----------------------------------------------------------

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
  if (threads > 1 && (shape.batches > 1 || shape.out_h > 1)) {
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
