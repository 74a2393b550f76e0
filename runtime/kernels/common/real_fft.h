// SPDX-License-Identifier: Apache-2.0
// Real FFT of a power-of-two length n = 2m with converter-made tables: the n
// real samples are read as m complex values z[j] = x[2j] + i x[2j+1], placed
// in bit-reversed order by the caller (it does so while windowing, so the
// permutation costs no pass of its own), transformed in place by an m-point
// complex FFT (decimation in time: one radix-2 pass when log2(m) is odd, then
// radix-4 passes), and split into the m + 1 bins of the real spectrum.
// Tables (converter/ops/audio_ops.cc makes them; nothing is derived at run time):
//   bit_reverse  m int32: the m-point FFT's input permutation
//   twiddles     real_fft_twiddle_floats(n) floats, in the order the passes read
//                them: for each radix-4 pass of quarter-span S (1 or 2, then
//                x4 while 4S <= m), the arrays W_4S^j, W_4S^2j and W_4S^3j for
//                j < S (so consecutive j are adjacent, for vector loads); then
//                W_n^k for k = 0..m/2 for the split. W_N^k = (cos, -sin)(2 pi k / N).
#pragma once

#include <stdint.h>

namespace floe::kernels {

// The quarter-span of the first radix-4 pass for an m-point FFT: 2 after the
// radix-2 pass that an odd log2(m) needs, else 1.
constexpr int32_t fft_first_quarter_span(int32_t m) {
  int32_t stages = 0;
  while ((int32_t{1} << stages) < m) ++stages;
  return (stages & 1) ? 2 : 1;
}

// Floats in the twiddle table of an n-point real FFT (n a power of two >= 2).
constexpr int64_t real_fft_twiddle_floats(int32_t n) {
  const int32_t m = n / 2;
  int64_t floats = 2 * (m / 2 + 1);  // the split's W_n^k, k = 0..m/2
  for (int32_t s = fft_first_quarter_span(m); 4 * s <= m; s *= 4) floats += 6 * static_cast<int64_t>(s);
  return floats;
}

struct RealFftTables {
  const float* twiddles;
  const int32_t* bit_reverse;
  int32_t n;  // a power of two >= 2
};

// One radix-4 pass of quarter-span s >= 2 over the m complex values z, with
// its twiddle arrays w (3 * s complex values, as above): the portable pass,
// which the reference kernels run and a backend may replace.
void radix4_pass(float* z, int32_t m, int32_t s, const float* w);
using Radix4Pass = void (*)(float* z, int32_t m, int32_t s, const float* w);

// The passes every backend shares (real_fft.cc).
void radix2_pass(float* z, int32_t m);        // spans 1 -> 2: every twiddle is 1
void radix4_first_pass(float* z, int32_t m);  // quarter-span 1: twiddles 1, no multiplies
// The split of the m-point FFT in z into the m + 1 power bins, with the
// split's twiddles w (what follows the passes' arrays).
void real_fft_split_power(const float* z, int32_t m, const float* w, float* power);

// `z` holds m complex values in bit-reversed order on entry (see above) and
// their m-point FFT on return; `power` receives |X[k]|^2 for the m + 1 bins
// k = 0..m of the n-point spectrum. kPass runs the radix-4 passes of
// quarter-span >= 2 (a template argument, so every call stays direct: the
// stack-depth check follows direct calls only).
template <Radix4Pass kPass>
void real_fft_power(const RealFftTables& t, float* z, float* power) {
  const int32_t m = t.n / 2;
  const float* w = t.twiddles;
  int32_t s = fft_first_quarter_span(m);
  if (s == 2 && m >= 2) radix2_pass(z, m);
  for (; 4 * s <= m; s *= 4) {
    if (s == 1) {
      radix4_first_pass(z, m);
    } else {
      kPass(z, m, s, w);
    }
    w += 6 * s;
  }
  real_fft_split_power(z, m, w, power);
}

}  // namespace floe::kernels
