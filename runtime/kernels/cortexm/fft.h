// SPDX-License-Identifier: Apache-2.0
// The FFT's radix-4 pass on the CORTEX_M backend (its AUDIO_SPECTROGRAM row,
// audio_spectrogram.cc, runs the common kernel with it,
// runtime/kernels/common/audio_spectrogram.h): on Helium two complex values per
// vector (VCMUL/VCMLA complex multiplies, VCADD for the +-i rotations); on an
// FPU fused multiply-adds; elsewhere (the host's portable build) the portable
// pass itself.
#pragma once

#include <stdint.h>

#include "runtime/kernels/cortexm/isa.h"
#include "runtime/kernels/common/real_fft.h"

namespace floe::cortexm {

#if defined(FLOE_CORTEXM_MVE)

// z: interleaved complex; consecutive j (even s) fill one vector.
inline void radix4_pass(float* z, int32_t m, int32_t s, const float* w) {
  const float* w1 = w;
  const float* w2 = w + 2 * s;
  const float* w3 = w + 4 * s;
  for (int32_t j = 0; j < s; j += 2) {
    const float32x4_t t1 = vld1q_f32(w1 + 2 * j), t2 = vld1q_f32(w2 + 2 * j), t3 = vld1q_f32(w3 + 2 * j);
    for (int32_t base = j; base < m; base += 4 * s) {
      float* a0 = z + 2 * base;
      float* a1 = a0 + 2 * s;
      float* a2 = a1 + 2 * s;
      float* a3 = a2 + 2 * s;
      const float32x4_t x0 = vld1q_f32(a0), x1 = vld1q_f32(a1), x2 = vld1q_f32(a2), x3 = vld1q_f32(a3);
      const float32x4_t b1 = vcmlaq_rot90_f32(vcmulq_f32(x1, t2), x1, t2);
      const float32x4_t b2 = vcmlaq_rot90_f32(vcmulq_f32(x2, t1), x2, t1);
      const float32x4_t b3 = vcmlaq_rot90_f32(vcmulq_f32(x3, t3), x3, t3);
      const float32x4_t y0 = vaddq_f32(x0, b1), y1 = vsubq_f32(x0, b1);
      const float32x4_t p = vaddq_f32(b2, b3), q = vsubq_f32(b2, b3);
      vst1q_f32(a0, vaddq_f32(y0, p));
      vst1q_f32(a2, vsubq_f32(y0, p));
      vst1q_f32(a1, vcaddq_rot270_f32(y1, q));  // y1 - i q
      vst1q_f32(a3, vcaddq_rot90_f32(y1, q));   // y1 + i q
    }
  }
}

#elif defined(FLOE_CORTEXM_FPU)

// The reference pass with each complex multiply as two products and two
// fused multiply-adds (VFMA, VFMS).
inline void radix4_pass(float* z, int32_t m, int32_t s, const float* w) {
  for (int32_t j = 0; j < s; ++j) {
    const float w1r = w[2 * j], w1i = w[2 * j + 1];
    const float w2r = w[2 * (s + j)], w2i = w[2 * (s + j) + 1];
    const float w3r = w[2 * (2 * s + j)], w3i = w[2 * (2 * s + j) + 1];
    for (int32_t base = j; base < m; base += 4 * s) {
      float* a0 = z + 2 * base;
      float* a1 = a0 + 2 * s;
      float* a2 = a1 + 2 * s;
      float* a3 = a2 + 2 * s;
      const float b1r = mac(a1[0] * w2r, -a1[1], w2i), b1i = mac(a1[0] * w2i, a1[1], w2r);
      const float b2r = mac(a2[0] * w1r, -a2[1], w1i), b2i = mac(a2[0] * w1i, a2[1], w1r);
      const float b3r = mac(a3[0] * w3r, -a3[1], w3i), b3i = mac(a3[0] * w3i, a3[1], w3r);
      const float y0r = a0[0] + b1r, y0i = a0[1] + b1i, y1r = a0[0] - b1r, y1i = a0[1] - b1i;
      const float pr = b2r + b3r, pi = b2i + b3i, qr = b2r - b3r, qi = b2i - b3i;
      a0[0] = y0r + pr;
      a0[1] = y0i + pi;
      a2[0] = y0r - pr;
      a2[1] = y0i - pi;
      a1[0] = y1r + qi;
      a1[1] = y1i - qr;
      a3[0] = y1r - qi;
      a3[1] = y1i + qr;
    }
  }
}

#else

inline void radix4_pass(float* z, int32_t m, int32_t s, const float* w) { kernels::radix4_pass(z, m, s, w); }

#endif

}  // namespace floe::cortexm
