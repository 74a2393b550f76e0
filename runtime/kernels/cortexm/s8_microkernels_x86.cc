// SPDX-License-Identifier: Apache-2.0
// s8_gemm's and s8_depthwise's AVX2 build for x86-64 hosts: the host target's
// default int8 path, bit-exact with the reference kernels. Compiled with the
// AVX2 target attribute and taken only when the CPU has AVX2
// (s8_x86_avx2_available); older CPUs run the portable C.
//
// GEMM: int8 widened to int16 (VPMOVSXBW), VPMADDWD multiplies 16 pairs and
// adds neighbours into 8 int32 lanes, exactly. Blocks of 2 rows x 4 channels
// (8 accumulators, 11 registers of 16); on CPUs with AVX512-VNNI, 4 x 4 with
// VPDPWSSD (multiply-add-accumulate in one) in AVX-512's 32 registers.
// Depthwise: 16 channels per step (then 8); (x + offset) * w fits int16 (255 * 128), so
// VPMULLW is exact, then the products are widened and added.
// Requantization, 4 channels at once, is TFLite's double rounding:
//   x = (acc + bias) << left; high = (x * m + 2^30) >> 31 (from two 64-bit
//   VPMULDQ halves: the multiplier is >= 0, so nothing saturates); then
//   RoundingDivideByPOT: (high >> e) + [remainder > (mask >> 1) + (high < 0)].
#include "runtime/kernels/cortexm/s8_microkernels.h"

#if defined(FLOE_S8_X86)

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#include "runtime/kernels/common/window.h"

#define FLOE_AVX2 __attribute__((target("avx2"), always_inline)) inline

namespace floe::cortexm {

bool s8_x86_avx2_available() { return __builtin_cpu_supports("avx2"); }

bool s8_x86_vnni_available() {
  return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx2");
}

namespace {

struct Requant4 {
  __m128i bias, multiplier, left, right;
};

FLOE_AVX2 Requant4 channels4(const S8Requant& rq, int32_t c) {
  const __m128i shift = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rq.shift + c));
  const __m128i zero = _mm_setzero_si128();
  return {_mm_loadu_si128(reinterpret_cast<const __m128i*>(rq.bias + c)),
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(rq.multiplier + c)), _mm_max_epi32(shift, zero),
          _mm_sub_epi32(zero, _mm_min_epi32(shift, zero))};
}

FLOE_AVX2 Requant4 channel1(const S8Requant& rq, int32_t c) {
  const int32_t shift = rq.shift[c];
  return {_mm_set1_epi32(rq.bias[c]), _mm_set1_epi32(rq.multiplier[c]), _mm_set1_epi32(shift > 0 ? shift : 0),
          _mm_set1_epi32(shift < 0 ? -shift : 0)};
}

// requantize + output offset + clamp, 4 int32 lanes in [act_min, act_max].
FLOE_AVX2 __m128i requantize4(__m128i acc, const Requant4& q, __m128i offset, __m128i lo, __m128i hi) {
  const __m128i x = _mm_sllv_epi32(_mm_add_epi32(acc, q.bias), q.left);
  const __m128i nudge = _mm_set1_epi64x(int64_t{1} << 30);
  // Lanes 0 and 2, then 1 and 3, as 64-bit products; bits 31..62 are the result.
  const __m128i even = _mm_srli_epi64(_mm_add_epi64(_mm_mul_epi32(x, q.multiplier), nudge), 31);
  const __m128i odd = _mm_srli_epi64(
      _mm_add_epi64(_mm_mul_epi32(_mm_srli_epi64(x, 32), _mm_srli_epi64(q.multiplier, 32)), nudge), 31);
  const __m128i high = _mm_blend_epi16(even, _mm_slli_epi64(odd, 32), 0xCC);
  const __m128i one = _mm_set1_epi32(1);
  const __m128i mask = _mm_sub_epi32(_mm_sllv_epi32(one, q.right), one);
  const __m128i remainder = _mm_and_si128(high, mask);
  const __m128i threshold =
      _mm_sub_epi32(_mm_srai_epi32(mask, 1), _mm_cmpgt_epi32(_mm_setzero_si128(), high));  // + 1 where negative
  __m128i v = _mm_srav_epi32(high, q.right);
  v = _mm_sub_epi32(v, _mm_cmpgt_epi32(remainder, threshold));
  v = _mm_add_epi32(v, offset);
  return _mm_min_epi32(_mm_max_epi32(v, lo), hi);
}

// 8 channels' constants (two channel sets of 4 side by side), with what
// requantize8 would otherwise derive per call: the odd lanes' multipliers
// and the rounding mask and its half.
struct Requant8 {
  __m256i bias, multiplier, multiplier_odd, left, right, mask, half;
};

FLOE_AVX2 Requant8 requant8(const Requant4& a, const Requant4& b) {
  Requant8 q;
  q.bias = _mm256_set_m128i(b.bias, a.bias);
  q.multiplier = _mm256_set_m128i(b.multiplier, a.multiplier);
  q.multiplier_odd = _mm256_srli_epi64(q.multiplier, 32);
  q.left = _mm256_set_m128i(b.left, a.left);
  q.right = _mm256_set_m128i(b.right, a.right);
  const __m256i one = _mm256_set1_epi32(1);
  q.mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, q.right), one);
  q.half = _mm256_srai_epi32(q.mask, 1);
  return q;
}

// requantize4 on 8 lanes.
FLOE_AVX2 __m256i requantize8(__m256i acc, const Requant8& q, __m256i offset, __m256i lo, __m256i hi) {
  const __m256i x = _mm256_sllv_epi32(_mm256_add_epi32(acc, q.bias), q.left);
  const __m256i nudge = _mm256_set1_epi64x(int64_t{1} << 30);
  const __m256i even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(x, q.multiplier), nudge), 31);
  const __m256i odd =
      _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), q.multiplier_odd), nudge);  // bits 31..62 wanted
  const __m256i high = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 1), 0xAA);
  const __m256i remainder = _mm256_and_si256(high, q.mask);
  const __m256i threshold = _mm256_sub_epi32(q.half, _mm256_cmpgt_epi32(_mm256_setzero_si256(), high));
  __m256i v = _mm256_srav_epi32(high, q.right);
  v = _mm256_sub_epi32(v, _mm256_cmpgt_epi32(remainder, threshold));
  v = _mm256_add_epi32(v, offset);
  return _mm256_min_epi32(_mm256_max_epi32(v, lo), hi);
}

// 8 requantized lanes as 8 int8 in the low half.
FLOE_AVX2 __m128i narrow8(__m256i v) {
  const __m128i h = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  return _mm_packs_epi16(h, h);
}

// Two requantized 4-lane vectors as 8 int8 in the low half.
FLOE_AVX2 __m128i narrow(__m128i v0, __m128i v1) {
  const __m128i h = _mm_packs_epi32(v0, v1);
  return _mm_packs_epi16(h, h);
}

// Output rows are byte-aligned: 4-byte stores through memcpy.
FLOE_AVX2 void store4(int8_t* p, __m128i v) {
  const int32_t word = _mm_cvtsi128_si32(v);
  memcpy(p, &word, sizeof word);
}
FLOE_AVX2 void store4_upper(int8_t* p, __m128i v) {
  const int32_t word = _mm_extract_epi32(v, 1);
  memcpy(p, &word, sizeof word);
}

FLOE_AVX2 __m256i widen16(const int8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// 8 int8 widened into the low half (the high half zero: VPMADDWD adds nothing).
FLOE_AVX2 __m256i widen8(const int8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

// Lane j = the sum of acc_j's 8 lanes.
FLOE_AVX2 __m128i reduce4(__m256i a0, __m256i a1, __m256i a2, __m256i a3) {
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(a0, a1), _mm256_hadd_epi32(a2, a3));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

// Sums of rows a0 and a1 against channels w, w + k, w + 2k, w + 3k.
FLOE_AVX2 void sums_2x4(const int8_t* a0, const int8_t* a1, const int8_t* w, ptrdiff_t k, __m128i* s0, __m128i* s1) {
  const int8_t* w1 = w + k;
  const int8_t* w2 = w1 + k;
  const int8_t* w3 = w2 + k;
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00;
  ptrdiff_t t = 0;
#define FLOE_AVX2_2X4(WIDEN)                                \
  {                                                         \
    const __m256i x0 = WIDEN(a0 + t), x1 = WIDEN(a1 + t);   \
    __m256i v = WIDEN(w + t);                               \
    c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(x0, v));  \
    c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(x1, v));  \
    v = WIDEN(w1 + t);                                      \
    c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(x0, v));  \
    c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(x1, v));  \
    v = WIDEN(w2 + t);                                      \
    c02 = _mm256_add_epi32(c02, _mm256_madd_epi16(x0, v));  \
    c12 = _mm256_add_epi32(c12, _mm256_madd_epi16(x1, v));  \
    v = WIDEN(w3 + t);                                      \
    c03 = _mm256_add_epi32(c03, _mm256_madd_epi16(x0, v));  \
    c13 = _mm256_add_epi32(c13, _mm256_madd_epi16(x1, v));  \
  }
  for (; t + 16 <= k; t += 16) FLOE_AVX2_2X4(widen16)
  if (t + 8 <= k) {
    FLOE_AVX2_2X4(widen8)
    t += 8;
  }
#undef FLOE_AVX2_2X4
  __m128i r0 = reduce4(c00, c01, c02, c03), r1 = reduce4(c10, c11, c12, c13);
  if (t < k) {
    alignas(16) int32_t tail0[4] = {0, 0, 0, 0}, tail1[4] = {0, 0, 0, 0};
    const int8_t* ws[4] = {w, w1, w2, w3};
    for (; t < k; ++t) {
      for (int j = 0; j < 4; ++j) {
        tail0[j] += a0[t] * ws[j][t];
        tail1[j] += a1[t] * ws[j][t];
      }
    }
    r0 = _mm_add_epi32(r0, _mm_load_si128(reinterpret_cast<const __m128i*>(tail0)));
    r1 = _mm_add_epi32(r1, _mm_load_si128(reinterpret_cast<const __m128i*>(tail1)));
  }
  *s0 = r0;
  *s1 = r1;
}

FLOE_AVX2 int32_t dot(const int8_t* a, const int8_t* w, ptrdiff_t k) {
  __m256i acc = _mm256_setzero_si256();
  ptrdiff_t t = 0;
  for (; t + 16 <= k; t += 16) acc = _mm256_add_epi32(acc, _mm256_madd_epi16(widen16(a + t), widen16(w + t)));
  if (t + 8 <= k) {
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(widen8(a + t), widen8(w + t)));
    t += 8;
  }
  const __m128i h = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  const __m128i h2 = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
  int32_t s = _mm_cvtsi128_si32(_mm_add_epi32(h2, _mm_shuffle_epi32(h2, 0xB1)));
  for (; t < k; ++t) s += a[t] * w[t];
  return s;
}

#define FLOE_VNNI_TARGET target("avx2,avx512f,avx512vl,avx512bw,avx512vnni")

// Sums of rows a0..a3 (a_stride apart) against channels w .. w + 3k with
// AVX512-VNNI on 256-bit registers (the multiply-add and the accumulation in
// one instruction; 16 accumulators fit the 32 registers AVX-512 gives):
//   signed rows: VPDPWSSD on widened int16 pairs, 16 columns at a time;
//   kUnsignedRows: VPDPBUSD, four byte products per lane, 32 columns at a
//   time, the rows read as unsigned bytes (a + 128, by flipping the sign bit)
//   against the signed weights, so each sum exceeds the signed one by
//   128 * sum_k w[c][k], which the converter's unsigned-input bias takes
//   back. A last part of fewer than 32 columns is loaded masked: its missing
//   weights are zero and add nothing.
template <bool kUnsignedRows>
__attribute__((FLOE_VNNI_TARGET, always_inline)) inline void sums_4x4_vnni(const int8_t* a0, ptrdiff_t a_stride,
                                                                          const int8_t* w, ptrdiff_t k,
                                                                          __m128i s[4]) {
  const int8_t* a1 = a0 + a_stride;
  const int8_t* a2 = a1 + a_stride;
  const int8_t* a3 = a2 + a_stride;
  const int8_t* w1 = w + k;
  const int8_t* w2 = w1 + k;
  const int8_t* w3 = w2 + k;
  const __m256i z = _mm256_setzero_si256(), flip = _mm256_set1_epi8(-128);
  __m256i c00 = z, c01 = z, c02 = z, c03 = z, c10 = z, c11 = z, c12 = z, c13 = z;
  __m256i c20 = z, c21 = z, c22 = z, c23 = z, c30 = z, c31 = z, c32 = z, c33 = z;
  ptrdiff_t t = 0;
  // One step: every row against every channel's WEIGHT(..) with DOT.
#define FLOE_VNNI_4X4(ROW, WEIGHT, DOT)                                                             \
  {                                                                                                 \
    const __m256i x0 = ROW(a0 + t), x1 = ROW(a1 + t), x2 = ROW(a2 + t), x3 = ROW(a3 + t);           \
    __m256i v = WEIGHT(w + t);                                                                      \
    c00 = DOT(c00, x0, v), c10 = DOT(c10, x1, v), c20 = DOT(c20, x2, v), c30 = DOT(c30, x3, v);     \
    v = WEIGHT(w1 + t);                                                                             \
    c01 = DOT(c01, x0, v), c11 = DOT(c11, x1, v), c21 = DOT(c21, x2, v), c31 = DOT(c31, x3, v);     \
    v = WEIGHT(w2 + t);                                                                             \
    c02 = DOT(c02, x0, v), c12 = DOT(c12, x1, v), c22 = DOT(c22, x2, v), c32 = DOT(c32, x3, v);     \
    v = WEIGHT(w3 + t);                                                                             \
    c03 = DOT(c03, x0, v), c13 = DOT(c13, x1, v), c23 = DOT(c23, x2, v), c33 = DOT(c33, x3, v);     \
  }
  if constexpr (kUnsignedRows) {
#define FLOE_BYTES32(p) _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))
#define FLOE_FLIPPED32(p) _mm256_xor_si256(FLOE_BYTES32(p), flip)
#define FLOE_BYTES_PART(p) _mm256_maskz_loadu_epi8(part, p)
#define FLOE_FLIPPED_PART(p) _mm256_xor_si256(FLOE_BYTES_PART(p), flip)
    for (; t + 32 <= k; t += 32) FLOE_VNNI_4X4(FLOE_FLIPPED32, FLOE_BYTES32, _mm256_dpbusd_epi32)
    if (t < k) {
      const __mmask32 part = static_cast<__mmask32>((uint64_t{1} << (k - t)) - 1);
      FLOE_VNNI_4X4(FLOE_FLIPPED_PART, FLOE_BYTES_PART, _mm256_dpbusd_epi32)
    }
#undef FLOE_FLIPPED_PART
#undef FLOE_BYTES_PART
#undef FLOE_FLIPPED32
#undef FLOE_BYTES32
  } else {
    for (; t + 16 <= k; t += 16) FLOE_VNNI_4X4(widen16, widen16, _mm256_dpwssd_epi32)
    if (t + 8 <= k) {
      FLOE_VNNI_4X4(widen8, widen8, _mm256_dpwssd_epi32)
      t += 8;
    }
  }
#undef FLOE_VNNI_4X4
  s[0] = reduce4(c00, c01, c02, c03);
  s[1] = reduce4(c10, c11, c12, c13);
  s[2] = reduce4(c20, c21, c22, c23);
  s[3] = reduce4(c30, c31, c32, c33);
  if (!kUnsignedRows && t < k) {  // signed rows: the last k % 8 columns
    const int8_t* as[4] = {a0, a1, a2, a3};
    const int8_t* ws[4] = {w, w1, w2, w3};
    for (int i = 0; i < 4; ++i) {
      alignas(16) int32_t tail[4] = {0, 0, 0, 0};
      for (ptrdiff_t u = t; u < k; ++u) {
        for (int j = 0; j < 4; ++j) tail[j] += as[i][u] * ws[j][u];
      }
      s[i] = _mm_add_epi32(s[i], _mm_load_si128(reinterpret_cast<const __m128i*>(tail)));
    }
  }
}

// The output constants every GEMM block shares.
struct GemmOut {
  __m256i offset, lo, hi;
  int8_t* out;
  int32_t out_stride;
};

FLOE_AVX2 GemmOut gemm_out(const S8Requant& rq, int8_t* out, int32_t out_stride) {
  return {_mm256_set1_epi32(rq.output_offset), _mm256_set1_epi32(rq.act_min), _mm256_set1_epi32(rq.act_max), out,
          out_stride};
}

// Rows [r, rows) of the 4-channel block c (weights wc), two at a time; a last
// odd row runs as a pair with itself.
FLOE_AVX2 void gemm_rows(const int8_t* a, int32_t a_stride, int32_t r, int32_t rows, const int8_t* wc, ptrdiff_t k,
                         int32_t c, const Requant8& q8, const GemmOut& g) {
  for (; r < rows; r += 2) {
    const int8_t* a0 = a + r * static_cast<ptrdiff_t>(a_stride);
    const bool pair = r + 1 < rows;
    __m128i s0, s1;
    sums_2x4(a0, pair ? a0 + a_stride : a0, wc, k, &s0, &s1);
    const __m128i v = narrow8(requantize8(_mm256_set_m128i(s1, s0), q8, g.offset, g.lo, g.hi));
    int8_t* o0 = g.out + r * static_cast<ptrdiff_t>(g.out_stride) + c;
    store4(o0, v);
    if (pair) store4_upper(o0 + g.out_stride, v);
  }
}

// Channels [c, channels) one at a time (fewer than 4 left).
FLOE_AVX2 void gemm_channel_tail(const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w, int32_t c,
                                 int32_t channels, ptrdiff_t k, const S8Requant& rq, const GemmOut& g) {
  const __m128i offset = _mm256_castsi256_si128(g.offset), lo = _mm256_castsi256_si128(g.lo),
                hi = _mm256_castsi256_si128(g.hi);
  for (; c < channels; ++c) {
    const Requant4 q = channel1(rq, c);
    for (int32_t r = 0; r < rows; ++r) {
      const int32_t s = dot(a + r * static_cast<ptrdiff_t>(a_stride), w + c * k, k);
      g.out[r * static_cast<ptrdiff_t>(g.out_stride) + c] =
          static_cast<int8_t>(_mm_cvtsi128_si32(requantize4(_mm_set1_epi32(s), q, offset, lo, hi)));
    }
  }
}

}  // namespace

// Channels outermost: a block's weights and constants stay in cache while the
// rows stream past them.
__attribute__((FLOE_VNNI_TARGET)) void s8_gemm_vnni(const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w,
                                                    int32_t channels, int32_t k_size, const S8Requant& rq, int8_t* out,
                                                    int32_t out_stride) {
  const ptrdiff_t k = k_size;
  const GemmOut g = gemm_out(rq, out, out_stride);
  // With the unsigned-input bias the 4-row blocks multiply bytes four at a
  // time; the last rows keep the signed sums and the model's bias.
  S8Requant rq_unsigned = rq;
  if (rq.bias_unsigned != nullptr) rq_unsigned.bias = rq.bias_unsigned;
  int32_t c = 0;
  for (; c + 4 <= channels; c += 4) {
    const Requant4 q = channels4(rq, c);
    const Requant8 q8 = requant8(q, q);  // both rows of a pair
    const Requant4 q_blocks = channels4(rq_unsigned, c);
    const Requant8 q8_blocks = requant8(q_blocks, q_blocks);
    const int8_t* wc = w + c * k;
    int32_t r = 0;
    for (; r + 4 <= rows; r += 4) {
      __m128i s4[4];
      if (rq.bias_unsigned != nullptr) {
        sums_4x4_vnni<true>(a + r * static_cast<ptrdiff_t>(a_stride), a_stride, wc, k, s4);
      } else {
        sums_4x4_vnni<false>(a + r * static_cast<ptrdiff_t>(a_stride), a_stride, wc, k, s4);
      }
      const __m128i v01 = narrow8(requantize8(_mm256_set_m128i(s4[1], s4[0]), q8_blocks, g.offset, g.lo, g.hi));
      const __m128i v23 = narrow8(requantize8(_mm256_set_m128i(s4[3], s4[2]), q8_blocks, g.offset, g.lo, g.hi));
      int8_t* o0 = out + r * static_cast<ptrdiff_t>(out_stride) + c;
      store4(o0, v01);
      store4_upper(o0 + out_stride, v01);
      store4(o0 + 2 * static_cast<ptrdiff_t>(out_stride), v23);
      store4_upper(o0 + 3 * static_cast<ptrdiff_t>(out_stride), v23);
    }
    gemm_rows(a, a_stride, r, rows, wc, k, c, q8, g);
  }
  gemm_channel_tail(a, a_stride, rows, w, c, channels, k, rq, g);
}

__attribute__((target("avx2"))) void s8_gemm_avx2(const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w,
                                                  int32_t channels, int32_t k_size, const S8Requant& rq, int8_t* out,
                                                  int32_t out_stride) {
  const ptrdiff_t k = k_size;
  const GemmOut g = gemm_out(rq, out, out_stride);
  int32_t c = 0;
  for (; c + 4 <= channels; c += 4) {
    const Requant4 q = channels4(rq, c);
    gemm_rows(a, a_stride, 0, rows, w + c * k, k, c, requant8(q, q), g);
  }
  gemm_channel_tail(a, a_stride, rows, w, c, channels, k, rq, g);
}

namespace {

// 16 channels' sums over the in-image taps ty x tx of one window (x, f at tap
// (0, 0) of channel 0): acc0 = channels 0..7, acc1 = 8..15.
__attribute__((target("avx2"), always_inline)) inline void sums16(const int8_t* x, const int8_t* f, ptrdiff_t in_row,
                                                                 ptrdiff_t x_step, ptrdiff_t f_row, ptrdiff_t channels,
                                                                 ptrdiff_t dil_h, kernels::TapRange ty,
                                                                 kernels::TapRange tx, __m256i input_offset,
                                                                 __m256i* acc0, __m256i* acc1) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0;
  for (ptrdiff_t ky = ty.begin; ky < ty.end; ++ky) {
    const int8_t* xr = x + ky * dil_h * in_row + tx.begin * x_step;
    const int8_t* fr = f + ky * f_row + tx.begin * channels;
    for (ptrdiff_t kx = tx.begin; kx < tx.end; ++kx, xr += x_step, fr += channels) {
      const __m256i product = _mm256_mullo_epi16(_mm256_add_epi16(widen16(xr), input_offset), widen16(fr));
      a0 = _mm256_add_epi32(a0, _mm256_cvtepi16_epi32(_mm256_castsi256_si128(product)));
      a1 = _mm256_add_epi32(a1, _mm256_cvtepi16_epi32(_mm256_extracti128_si256(product, 1)));
    }
  }
  *acc0 = a0;
  *acc1 = a1;
}

// 16 channels' constants for finish16.
__attribute__((target("avx2"), always_inline)) inline void channels16(const S8Requant& rq, int32_t c, Requant8 q[2]) {
  q[0] = requant8(channels4(rq, c), channels4(rq, c + 4));
  q[1] = requant8(channels4(rq, c + 8), channels4(rq, c + 12));
}

// 16 channels' outputs: requantized with their constants, stored.
__attribute__((target("avx2"), always_inline)) inline void finish16(__m256i acc0, __m256i acc1, const Requant8 q[2],
                                                                   __m256i offset, __m256i lo, __m256i hi,
                                                                   int8_t* o) {
  const __m128i v0 = narrow8(requantize8(acc0, q[0], offset, lo, hi));
  const __m128i v1 = narrow8(requantize8(acc1, q[1], offset, lo, hi));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_unpacklo_epi64(v0, v1));
}

// Two taps of 16 channels as VPMADDWD pairs: (x_a, x_b) interleaved against
// the filter pairs (w_a, w_b) interleaved the same way; per 128-bit lane the
// low unpack holds channels 0..3 (8..11), the high 4..7 (12..15). The input
// offset is not added per tap: a window whose taps are all in the input adds
// offset * (the sum of its taps' weights) once, as its sums' start.
#define FLOE_AVX2_TAP_PAIR(pa, pb, wl, wh)                                                \
  {                                                                                       \
    const __m256i xa = widen16(pa), xb = widen16(pb);                                     \
    acc_lo = _mm256_add_epi32(acc_lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(xa, xb), wl)); \
    acc_hi = _mm256_add_epi32(acc_hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(xa, xb), wh)); \
  }

// offset * sum16 (16 channels' int16 weight sums) as the starts of acc_lo and
// acc_hi (the unpack layout above).
__attribute__((target("avx2"), always_inline)) inline void offset_starts(__m256i sum16, __m256i offset32,
                                                                        __m256i start[2]) {
  const __m256i t0 = _mm256_mullo_epi32(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(sum16)), offset32);
  const __m256i t1 = _mm256_mullo_epi32(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(sum16, 1)), offset32);
  start[0] = _mm256_permute2x128_si256(t0, t1, 0x20);  // channels 0..3, 8..11
  start[1] = _mm256_permute2x128_si256(t0, t1, 0x31);  // 4..7, 12..15
}

// 3x3 windows, dilation 1, channel groups of 16 outermost: the group's nine
// widened filter taps, interleaved in pairs, stay in registers while its
// pixels stream past; windows wholly inside the input run 4 instructions per
// tap, as do those one column past the left or right edge; other edge
// windows take sums16. Channels [0, c_end).
__attribute__((target("avx2"))) void depthwise_3x3_groups(const DepthwiseS8Shape& p, const int8_t* input,
                                                          const int8_t* filter, const S8Requant& rq, ptrdiff_t c_end,
                                                          int8_t* output) {
  const ptrdiff_t channels = p.channels, in_row = static_cast<ptrdiff_t>(p.in_w) * channels, f_row = 3 * channels;
  const __m256i input_offset = _mm256_set1_epi16(static_cast<int16_t>(p.input_offset));
  const __m256i offset32 = _mm256_set1_epi32(p.input_offset);
  const __m256i offset8 = _mm256_set1_epi32(rq.output_offset);
  const __m256i lo8 = _mm256_set1_epi32(rq.act_min), hi8 = _mm256_set1_epi32(rq.act_max);
  const __m256i zero = _mm256_setzero_si256();
  for (ptrdiff_t c = 0; c < c_end; c += 16) {
    const int8_t* f = filter + c;
    __m256i w[9];
    for (int t = 0; t < 9; ++t) w[t] = widen16(f + (t / 3) * f_row + (t % 3) * channels);
    const __m256i w01l = _mm256_unpacklo_epi16(w[0], w[1]), w01h = _mm256_unpackhi_epi16(w[0], w[1]);
    const __m256i w23l = _mm256_unpacklo_epi16(w[2], w[3]), w23h = _mm256_unpackhi_epi16(w[2], w[3]);
    const __m256i w45l = _mm256_unpacklo_epi16(w[4], w[5]), w45h = _mm256_unpackhi_epi16(w[4], w[5]);
    const __m256i w67l = _mm256_unpacklo_epi16(w[6], w[7]), w67h = _mm256_unpackhi_epi16(w[6], w[7]);
    const __m256i w8l = _mm256_unpacklo_epi16(w[8], zero), w8h = _mm256_unpackhi_epi16(w[8], zero);
    // Windows one column past the left or right edge (rows inside): six
    // taps, three pairs each; the pairs the interior lacks wait in memory.
    const __m256i edge_pairs[6] = {_mm256_unpacklo_epi16(w[1], w[2]), _mm256_unpackhi_epi16(w[1], w[2]),
                                   _mm256_unpacklo_epi16(w[3], w[4]), _mm256_unpackhi_epi16(w[3], w[4]),
                                   _mm256_unpacklo_epi16(w[7], w[8]), _mm256_unpackhi_epi16(w[7], w[8])};
    // The offset terms of the whole window, the left-edge one (columns 1, 2)
    // and the right-edge one (columns 0, 1): |sum| <= 9 * 128 fits int16.
    const __m256i middle = _mm256_add_epi16(_mm256_add_epi16(w[1], w[4]), w[7]);
    const __m256i left_column = _mm256_add_epi16(_mm256_add_epi16(w[0], w[3]), w[6]);
    const __m256i right_column = _mm256_add_epi16(_mm256_add_epi16(w[2], w[5]), w[8]);
    __m256i whole[2], left[2], right[2];
    offset_starts(_mm256_add_epi16(_mm256_add_epi16(left_column, middle), right_column), offset32, whole);
    offset_starts(_mm256_add_epi16(middle, right_column), offset32, left);
    offset_starts(_mm256_add_epi16(left_column, middle), offset32, right);
    Requant8 q[2];
    channels16(rq, static_cast<int32_t>(c), q);
    for (ptrdiff_t n = 0; n < p.batches; ++n) {
      const int8_t* image = input + n * p.in_h * in_row + c;
      int8_t* o = output + n * p.out_h * p.out_w * channels + c;
      for (ptrdiff_t oy = 0; oy < p.out_h; ++oy) {
        const ptrdiff_t y0 = oy * p.stride_h - p.pad_top;
        const bool rows_inside = y0 >= 0 && y0 + 3 <= p.in_h;
        for (ptrdiff_t ox = 0; ox < p.out_w; ++ox, o += channels) {
          const ptrdiff_t x0 = ox * p.stride_w - p.pad_left;
          const int8_t* window = image + y0 * in_row + x0 * channels;  // tap (0, 0): may lie in the padding
          __m256i acc0, acc1;
          if (rows_inside && x0 >= 0 && x0 + 3 <= p.in_w) {
            const int8_t* r0 = window;
            const int8_t* r1 = r0 + in_row;
            const int8_t* r2 = r1 + in_row;
            __m256i acc_lo = whole[0], acc_hi = whole[1];
            FLOE_AVX2_TAP_PAIR(r0, r0 + channels, w01l, w01h)
            FLOE_AVX2_TAP_PAIR(r0 + 2 * channels, r1, w23l, w23h)
            FLOE_AVX2_TAP_PAIR(r1 + channels, r1 + 2 * channels, w45l, w45h)
            FLOE_AVX2_TAP_PAIR(r2, r2 + channels, w67l, w67h)
            {
              const __m256i xa = widen16(r2 + 2 * channels);
              acc_lo = _mm256_add_epi32(acc_lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(xa, zero), w8l));
              acc_hi = _mm256_add_epi32(acc_hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(xa, zero), w8h));
            }
            acc0 = _mm256_permute2x128_si256(acc_lo, acc_hi, 0x20);  // channels 0..3, 4..7
            acc1 = _mm256_permute2x128_si256(acc_lo, acc_hi, 0x31);  // 8..11, 12..15
          } else if (rows_inside && x0 == -1 && p.in_w >= 2) {  // columns 1, 2 on input columns 0, 1
            const int8_t* r0 = window + channels;
            const int8_t* r1 = r0 + in_row;
            const int8_t* r2 = r1 + in_row;
            __m256i acc_lo = left[0], acc_hi = left[1];
            FLOE_AVX2_TAP_PAIR(r0, r0 + channels, edge_pairs[0], edge_pairs[1])
            FLOE_AVX2_TAP_PAIR(r1, r1 + channels, w45l, w45h)
            FLOE_AVX2_TAP_PAIR(r2, r2 + channels, edge_pairs[4], edge_pairs[5])
            acc0 = _mm256_permute2x128_si256(acc_lo, acc_hi, 0x20);
            acc1 = _mm256_permute2x128_si256(acc_lo, acc_hi, 0x31);
          } else if (rows_inside && x0 >= 0 && x0 + 2 == p.in_w) {  // columns 0, 1 on the last two
            const int8_t* r0 = window;
            const int8_t* r1 = r0 + in_row;
            const int8_t* r2 = r1 + in_row;
            __m256i acc_lo = right[0], acc_hi = right[1];
            FLOE_AVX2_TAP_PAIR(r0, r0 + channels, w01l, w01h)
            FLOE_AVX2_TAP_PAIR(r1, r1 + channels, edge_pairs[2], edge_pairs[3])
            FLOE_AVX2_TAP_PAIR(r2, r2 + channels, w67l, w67h)
            acc0 = _mm256_permute2x128_si256(acc_lo, acc_hi, 0x20);
            acc1 = _mm256_permute2x128_si256(acc_lo, acc_hi, 0x31);
          } else {
            sums16(window, f, in_row, channels, f_row, channels, 1, kernels::unit_tap_range(y0, p.in_h, 3),
                   kernels::unit_tap_range(x0, p.in_w, 3), input_offset, &acc0, &acc1);
          }
          finish16(acc0, acc1, q, offset8, lo8, hi8, o);
        }
      }
    }
  }
}
#undef FLOE_AVX2_TAP_PAIR

// Every window shape, pixel-major, channels [c_begin, channels).
__attribute__((target("avx2"))) void depthwise_pixels(const DepthwiseS8Shape& p, const int8_t* input,
                                                      const int8_t* filter, const S8Requant& rq, ptrdiff_t c_begin,
                                                      int8_t* output) {
  const ptrdiff_t channels = p.channels, in_row = static_cast<ptrdiff_t>(p.in_w) * channels;
  const ptrdiff_t f_row = static_cast<ptrdiff_t>(p.k_w) * channels, x_step = static_cast<ptrdiff_t>(p.dil_w) * channels;
  const __m256i input_offset = _mm256_set1_epi16(static_cast<int16_t>(p.input_offset));
  const __m128i offset = _mm_set1_epi32(rq.output_offset);
  const __m128i lo = _mm_set1_epi32(rq.act_min), hi = _mm_set1_epi32(rq.act_max);
  const __m256i offset8 = _mm256_set1_epi32(rq.output_offset);
  const __m256i lo8 = _mm256_set1_epi32(rq.act_min), hi8 = _mm256_set1_epi32(rq.act_max);
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
          __m256i acc0, acc1;
          sums16(window + c, filter + c, in_row, x_step, f_row, channels, p.dil_h, ty, tx, input_offset, &acc0, &acc1);
          Requant8 q[2];
          channels16(rq, static_cast<int32_t>(c), q);
          finish16(acc0, acc1, q, offset8, lo8, hi8, o + c);
        }
        if (c + 8 <= channels) {  // 8 channels: the same with the high half zero
          __m256i acc = _mm256_setzero_si256();
          for (ptrdiff_t ky = ty.begin; ky < ty.end; ++ky) {
            const int8_t* xr = window + c + ky * p.dil_h * in_row + tx.begin * x_step;
            const int8_t* fr = filter + c + ky * f_row + tx.begin * channels;
            for (ptrdiff_t kx = tx.begin; kx < tx.end; ++kx, xr += x_step, fr += channels) {
              const __m256i product = _mm256_mullo_epi16(_mm256_add_epi16(widen8(xr), input_offset), widen8(fr));
              acc = _mm256_add_epi32(acc, _mm256_cvtepi16_epi32(_mm256_castsi256_si128(product)));
            }
          }
          const int32_t ci = static_cast<int32_t>(c);
          const __m128i v = narrow(requantize4(_mm256_castsi256_si128(acc), channels4(rq, ci), offset, lo, hi),
                                   requantize4(_mm256_extracti128_si256(acc, 1), channels4(rq, ci + 4), offset, lo, hi));
          _mm_storel_epi64(reinterpret_cast<__m128i*>(o + c), v);
          c += 8;
        }
        for (; c < channels; ++c) {
          int32_t sum = 0;
          for (ptrdiff_t ky = ty.begin; ky < ty.end; ++ky) {
            for (ptrdiff_t kx = tx.begin; kx < tx.end; ++kx) {
              sum += (window[ky * p.dil_h * in_row + kx * x_step + c] + p.input_offset) *
                     filter[ky * f_row + kx * channels + c];
            }
          }
          o[c] = static_cast<int8_t>(_mm_cvtsi128_si32(
              requantize4(_mm_set1_epi32(sum), channel1(rq, static_cast<int32_t>(c)), offset, lo, hi)));
        }
      }
    }
  }
}


}  // namespace

__attribute__((target("avx2"))) void s8_depthwise_avx2(const DepthwiseS8Shape& p, const int8_t* input,
                                                       const int8_t* filter, const S8Requant& rq, int8_t* output) {
  ptrdiff_t c_done = 0;
  if (p.k_h == 3 && p.k_w == 3 && p.dil_h == 1 && p.dil_w == 1 && p.channels >= 16) {
    c_done = p.channels & ~ptrdiff_t{15};
    depthwise_3x3_groups(p, input, filter, rq, c_done, output);
  }
  if (c_done < p.channels) depthwise_pixels(p, input, filter, rq, c_done, output);
}

}  // namespace floe::cortexm

#endif  // FLOE_S8_X86
