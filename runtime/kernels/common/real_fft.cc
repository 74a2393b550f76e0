// SPDX-License-Identifier: Apache-2.0
#include "runtime/kernels/common/real_fft.h"

namespace floe::kernels {

// Spans 1 -> 2: every twiddle is 1.
void radix2_pass(float* z, int32_t m) {
  for (int32_t j = 0; j < m; j += 2) {
    float* a = z + 2 * j;
    const float re = a[2], im = a[3];
    a[2] = a[0] - re;
    a[3] = a[1] - im;
    a[0] += re;
    a[1] += im;
  }
}

// One radix-4 pass: blocks of 4S from four transformed blocks of S. With
// b1 = W_2S^j a1, b2 = W_4S^j a2, b3 = W_4S^3j a3: the outputs are
// (a0 + b1) +- (b2 + b3) and (a0 - b1) -+ i (b2 - b3), i.e. two radix-2
// stages with one complex multiply fewer and half the loads and stores.
void radix4_pass(float* z, int32_t m, int32_t s, const float* w) {
  for (int32_t j = 0; j < s; ++j) {
    const float w1r = w[2 * j], w1i = w[2 * j + 1];
    const float w2r = w[2 * (s + j)], w2i = w[2 * (s + j) + 1];
    const float w3r = w[2 * (2 * s + j)], w3i = w[2 * (2 * s + j) + 1];
    for (int32_t base = j; base < m; base += 4 * s) {
      float* a0 = z + 2 * base;
      float* a1 = a0 + 2 * s;
      float* a2 = a1 + 2 * s;
      float* a3 = a2 + 2 * s;
      const float b1r = a1[0] * w2r - a1[1] * w2i, b1i = a1[0] * w2i + a1[1] * w2r;
      const float b2r = a2[0] * w1r - a2[1] * w1i, b2i = a2[0] * w1i + a2[1] * w1r;
      const float b3r = a3[0] * w3r - a3[1] * w3i, b3i = a3[0] * w3i + a3[1] * w3r;
      const float y0r = a0[0] + b1r, y0i = a0[1] + b1i, y1r = a0[0] - b1r, y1i = a0[1] - b1i;
      const float pr = b2r + b3r, pi = b2i + b3i, qr = b2r - b3r, qi = b2i - b3i;
      a0[0] = y0r + pr;
      a0[1] = y0i + pi;
      a2[0] = y0r - pr;
      a2[1] = y0i - pi;
      a1[0] = y1r + qi;  // y1 - i q
      a1[1] = y1i - qr;
      a3[0] = y1r - qi;  // y1 + i q
      a3[1] = y1i + qr;
    }
  }
}

// The first radix-4 pass when it has quarter-span 1: twiddles 1, no multiplies.
void radix4_first_pass(float* z, int32_t m) {
  for (int32_t base = 0; base < m; base += 4) {
    float* a = z + 2 * base;
    const float y0r = a[0] + a[2], y0i = a[1] + a[3], y1r = a[0] - a[2], y1i = a[1] - a[3];
    const float pr = a[4] + a[6], pi = a[5] + a[7], qr = a[4] - a[6], qi = a[5] - a[7];
    a[0] = y0r + pr;
    a[1] = y0i + pi;
    a[4] = y0r - pr;
    a[5] = y0i - pi;
    a[2] = y1r + qi;
    a[3] = y1i - qr;
    a[6] = y1r - qi;
    a[7] = y1i + qr;
  }
}

void real_fft_split_power(const float* z, int32_t m, const float* w, float* power) {
  // Bins 0 and m are real: the sum and difference of Z[0]'s parts.
  const float dc = z[0] + z[1], nyquist = z[0] - z[1];
  power[0] = dc * dc;
  power[m] = nyquist * nyquist;
  // X[k] = E + W^k O and X[m-k] = conj(E - W^k O), with E = (Z[k] + conj Z[m-k]) / 2
  // the even samples' spectrum and O = -i (Z[k] - conj Z[m-k]) / 2 the odd samples'.
  for (int32_t k = 1; 2 * k <= m; ++k) {
    const float ar = z[2 * k], ai = z[2 * k + 1];
    const float br = z[2 * (m - k)], bi = -z[2 * (m - k) + 1];
    const float er = 0.5f * (ar + br), ei = 0.5f * (ai + bi);
    const float or_ = 0.5f * (ai - bi), oi = -0.5f * (ar - br);
    const float wr = w[2 * k], wi = w[2 * k + 1];
    const float tr = wr * or_ - wi * oi, ti = wr * oi + wi * or_;
    const float xr = er + tr, xi = ei + ti;
    power[k] = xr * xr + xi * xi;
    const float yr = er - tr, yi = ei - ti;
    power[m - k] = yr * yr + yi * yi;
  }
}

}  // namespace floe::kernels
