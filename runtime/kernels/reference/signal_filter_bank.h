// SPDX-License-Identifier: Apache-2.0
// The filter-bank half of TFLite Micro's Signal audio front end:
// SIGNAL_FILTER_BANK, SIGNAL_FILTER_BANK_SQUARE_ROOT,
// SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION, SIGNAL_PCAN and
// SIGNAL_FILTER_BANK_LOG, integer as TFLM's signal/src computes them, bit for
// bit (unsigned sums wrap). The spectrum half is signal_spectrum.h.
#pragma once

#include <stdint.h>

#include "runtime/core/registry.h"
#include "runtime/core/tensor.h"

namespace floe::ref {

// The triangular filter bank's tables (constants of the model), channels + 1
// entries each: entry 0 only starts the first channel's rising side.
struct FilterBankTables {
  const int16_t* weights;
  const int16_t* unweights;
  const int16_t* frequency_starts;
  const int16_t* weight_starts;
  const int16_t* widths;
};

// out[c] = the weighted energy of channel c + 1 plus the unweighted rest of
// channel c, both over the channel's bins, in uint64.
void signal_filter_bank(const uint32_t* energy, const FilterBankTables& tables, int32_t channels, uint64_t* out);

// Rounded integer square roots (TFLM's Sqrt32 / Sqrt64).
uint16_t sqrt32(uint32_t x);
uint32_t sqrt64(uint64_t x);

struct SpectralSubtractionParams {
  uint32_t smoothing, one_minus_smoothing;
  uint32_t alternate_smoothing, alternate_one_minus_smoothing;
  uint32_t smoothing_bits, min_signal_remaining, spectral_subtraction_bits;
  uint32_t clamping;
};

// Updates the running noise estimate of each channel (`noise`, state kept
// across calls) and writes the signal with it subtracted, floored at
// min_signal_remaining of the signal.
void signal_spectral_subtraction(const SpectralSubtractionParams& params, const uint32_t* x, uint32_t* noise,
                                 uint32_t* out, int32_t channels);

// PCAN's gain per channel from its noise estimate (the 125-entry piecewise
// quadratic gain_lut), applied and compressed.
void signal_pcan(const uint32_t* x, const uint32_t* noise, const int16_t* gain_lut, int32_t snr_shift, uint32_t* out,
                 int32_t channels);

// out[i] = min(output_scale * ln(x[i] << correction_bits) in Q16, 32767), 0
// for a shifted input <= 1.
void signal_filter_bank_log(const uint32_t* x, int16_t* out, int32_t channels, int32_t correction_bits,
                            int32_t output_scale);

}  // namespace floe::ref
