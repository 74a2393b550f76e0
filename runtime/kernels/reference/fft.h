// SPDX-License-Identifier: Apache-2.0
// Real FFT of a power-of-two length n = 2m with converter-made tables: the n
// real samples are read as m complex values (even samples real, odd
// imaginary), transformed by an in-place radix-2 complex FFT of length m, and
// split into the n/2 + 1 bins of the real spectrum. The tables come from the
// converter (converter/ops/audio_ops.cc), so nothing is derived at run time:
//   twiddles    n floats: (cos, -sin) of 2*pi*k/n for k < m, i.e. W_n^k
//   bit_reverse m int32: the radix-2 input permutation of the m-point FFT
#pragma once

#include <stdint.h>

namespace floe::ref {

struct RealFftTables {
  const float* twiddles;
  const int32_t* bit_reverse;
  int32_t n;  // a power of two >= 2
};

// In place: `buffer` holds n real samples on entry and m complex values (the
// m-point FFT of the packed samples) on return; `power` receives |X[k]|^2 for
// the m + 1 bins k = 0..m of the n-point spectrum.
void real_fft_power(const RealFftTables& tables, float* buffer, float* power);

}  // namespace floe::ref
