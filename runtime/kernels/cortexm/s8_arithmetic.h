// SPDX-License-Identifier: Apache-2.0
// What the DSP-extension (M4, M33) and portable builds of the int8 kernels
// (s8_gemm.cc, s8_gemm_packed.cc, s8_depthwise.cc; s8_microkernels.h) share:
// the requantization (full and short), the DSP's SIMD primitives or their
// portable equivalents on plain integers, and the packed clamp and stores.
// Internal to those files (namespace s8_detail): inline functions, so a helper
// the compiler keeps out of line (a size build's) is linked once for all three.
// Helium builds (FLOE_CORTEXM_S8_MVE) use none of it.
//
// Requantization is fused into the blocks' output stores (DSP: ~18
// instructions per output on the general path, 5 on the short one plus the
// channel's constants, then the clamp on four packed bytes).
#pragma once

#if !defined(FLOE_CORTEXM_S8_MVE)

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "runtime/kernels/cortexm/s8_microkernels.h"

#if defined(__ARM_FEATURE_DSP) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define FLOE_S8_DSP 1
// The inner loops in assembly take 13 and 14 registers: only an optimizing
// build leaves that many (at -O0, r7 is the frame pointer); other builds run
// the same arithmetic through the intrinsic-style C loops.
#if defined(__OPTIMIZE__)
#define FLOE_S8_DSP_LOOPS 1
#endif
#endif

// The blocks' helpers are inlined into their loops: a call would move the
// four sums through memory and spill the loop's pointers around it.
#define FLOE_S8_INLINE inline __attribute__((always_inline))

namespace floe::cortexm {
namespace s8_detail {

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

// Size builds keep it out of line, one copy for the GEMM and depthwise tails
// (inlined into the depthwise's only call it costs 112 bytes there).
#if defined(__OPTIMIZE_SIZE__)
__attribute__((noinline))
#endif
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

}  // namespace s8_detail
}  // namespace floe::cortexm

#endif  // !FLOE_CORTEXM_S8_MVE
