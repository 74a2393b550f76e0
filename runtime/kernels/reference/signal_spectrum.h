// SPDX-License-Identifier: Apache-2.0
// The spectrum half of TFLite Micro's Signal audio front end (its
// micro_speech preprocessor): SIGNAL_WINDOW, SIGNAL_FFT_AUTO_SCALE,
// SIGNAL_RFFT and SIGNAL_ENERGY, integer as TFLM's signal/src computes them,
// bit for bit (its narrowing stores wrap, its shifts are arithmetic). The
// filter-bank half is signal_filter_bank.h.
#pragma once

#include <stdint.h>

#include "runtime/core/registry.h"
#include "runtime/core/tensor.h"

namespace floe::ref {

// Significant bits of x (32 - leading zeros); 32 for 0, as TFLM's GCC build
// computes it.
inline int32_t msb32(uint32_t x) {
  int32_t bits = 32;
  if (x == 0) return bits;
  while ((x & 0x80000000u) == 0) {
    x <<= 1;
    --bits;
  }
  return bits;
}

// y = saturate16((x * w) >> shift) per element; `rows` rows of n samples,
// the same n weights for each.
void signal_window(const int16_t* x, const int16_t* weights, int16_t* y, int64_t rows, int32_t n, int32_t shift);

// y = x << bits, where bits brings the largest magnitude to 14 bits (0 when
// it has 15 or the input is silent); returns bits. TFLM's max-magnitude walk
// is kept as it is, quirk included (a -32768 sample counts as 0x8000, which
// later samples then replace).
int32_t signal_fft_auto_scale(const int16_t* x, int16_t* y, int32_t n);

struct RfftParams {
  int32_t fft_length;    // a power of two >= 4
  int32_t input_length;  // samples per row, <= fft_length (zero-padded)
  int32_t rows;
};

// kissfft's fixed-point kiss_fftr (16-bit samples): the fft_length / 2-point
// complex FFT of the row read as (even, odd) pairs, radix-4 stages (and one
// radix-2 when log2(fft_length / 2) is odd), each scaling by 1/4 (1/2) with
// kissfft's rounding, then the split into fft_length / 2 + 1 real-input bins.
// `twiddles` [fft_length / 2] and `super_twiddles` [fft_length / 4] are
// (re, im) pairs as kiss_fftr_alloc computes them (the converter does).
// out: per row, fft_length + 2 int16 = the bins' (re, im).
void signal_rfft(const RfftParams& params, const int16_t* x, const int16_t* twiddles, const int16_t* super_twiddles,
                 int16_t* out);

// energy[i] = re^2 + im^2 of bin i for i in [start, end), 0 for the others
// (TFLM leaves those unwritten; its graphs overwrite them).
void signal_energy(const int16_t* spectrum, uint32_t* energy, int32_t bins, int32_t start, int32_t end);

}  // namespace floe::ref
