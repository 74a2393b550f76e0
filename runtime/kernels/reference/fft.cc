// SPDX-License-Identifier: Apache-2.0
#include "runtime/kernels/reference/fft.h"

namespace floe::ref {

namespace {

// The m-point complex FFT, decimation in time: bit-reversal permutation, then
// log2(m) stages of butterflies. A stage of span `len` uses W_len^j = W_n^(j*n/len).
void complex_fft(const RealFftTables& t, float* z, int32_t m) {
  for (int32_t j = 0; j < m; ++j) {
    const int32_t r = t.bit_reverse[j];
    if (j < r) {
      const float re = z[2 * j], im = z[2 * j + 1];
      z[2 * j] = z[2 * r];
      z[2 * j + 1] = z[2 * r + 1];
      z[2 * r] = re;
      z[2 * r + 1] = im;
    }
  }
  // Span 2: every twiddle is 1.
  for (int32_t j = 0; j + 1 < m; j += 2) {
    float* a = z + 2 * j;
    const float re = a[2], im = a[3];
    a[2] = a[0] - re;
    a[3] = a[1] - im;
    a[0] += re;
    a[1] += im;
  }
  for (int32_t len = 4; len <= m; len *= 2) {
    const int32_t half = len / 2;
    const int32_t step = 2 * (t.n / len);  // floats between consecutive twiddles
    for (int32_t j = 0; j < half; ++j) {
      const float wr = t.twiddles[j * step], wi = t.twiddles[j * step + 1];
      for (int32_t base = j; base < m; base += len) {
        float* a = z + 2 * base;
        float* b = a + 2 * half;
        const float br = b[0] * wr - b[1] * wi;
        const float bi = b[0] * wi + b[1] * wr;
        b[0] = a[0] - br;
        b[1] = a[1] - bi;
        a[0] += br;
        a[1] += bi;
      }
    }
  }
}

}  // namespace

void real_fft_power(const RealFftTables& t, float* z, float* power) {
  const int32_t m = t.n / 2;
  complex_fft(t, z, m);
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
    const float wr = t.twiddles[2 * k], wi = t.twiddles[2 * k + 1];
    const float tr = wr * or_ - wi * oi, ti = wr * oi + wi * or_;
    const float xr = er + tr, xi = ei + ti;
    power[k] = xr * xr + xi * xi;
    const float yr = er - tr, yi = ei - ti;
    power[m - k] = yr * yr + yi * yi;
  }
}

}  // namespace floe::ref
