// SPDX-License-Identifier: Apache-2.0
// MFCC (TensorFlow's Mfcc) of a power spectrogram [channels, frames, bins]:
// per frame, the mel filterbank sums sqrt(power) of bins [first_bin,
// first_bin + used) under triangles (bin i adds weight[i] * s to channel
// band[i] and (1 - weight[i]) * s to channel band[i] + 1), takes
// log(max(energy, 1e-12)), and applies a DCT-II matrix [coefficients,
// filterbank channels]. Weights, bands and the DCT matrix are constant inputs
// the converter computed from the sample rate.
#pragma once

#include "runtime/core/registry.h"
#include "runtime/core/tensor.h"

namespace floe::ref {

struct MfccParams {
  int32_t first_bin;
  int32_t used_bins;
  int32_t filterbank_channels;
  int32_t coefficients;
};

struct MfccOperands {
  In<float> spectrogram;  // [channels, frames, bins]
  const float* weights;   // [used_bins]
  const int32_t* band;    // [used_bins], each in [-1, filterbank_channels)
  const float* dct;       // [coefficients, filterbank_channels]
  float* energies;        // scratch [filterbank_channels]
  Out<float> output;      // [channels, frames, coefficients]
};

void mfcc_f32(const MfccParams& params, const MfccOperands& ops);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_mfcc(const OpContext& ctx);
Status eval_mfcc(const PreparedOp& ctx);

}  // namespace floe::ops
