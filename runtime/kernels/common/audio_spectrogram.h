// SPDX-License-Identifier: Apache-2.0
// AUDIO_SPECTROGRAM (TF's AudioSpectrogram): windowed frames of the samples,
// each through the real FFT (real_fft.h) into its power or magnitude bins.
// The backends differ only in the FFT's radix-4 pass, so the kernel is a
// template on it and each backend's row instantiates its own (reference:
// kernels::radix4_pass; Cortex-M: its FPU / Helium pass).
#pragma once

#include <math.h>
#include <stddef.h>

#include "runtime/core/registry.h"
#include "runtime/kernels/common/real_fft.h"

namespace floe::kernels {

struct AudioSpectrogramParams {
  int32_t window_size;
  int32_t stride;
  int32_t fft_length;
  int32_t magnitude_squared;  // 0 = magnitude
};

struct AudioSpectrogramOperands {
  In<float> samples;      // [length, channels]
  const float* window;    // [window_size]
  RealFftTables fft;
  float* scratch;         // [fft_length]
  Out<float> output;      // [channels, frames, fft_length/2 + 1]
};

template <Radix4Pass kPass>
void audio_spectrogram_f32(const AudioSpectrogramParams& p, const AudioSpectrogramOperands& ops) {
  const int32_t channels = ops.output.shape.dims[0];
  const int32_t frames = ops.output.shape.dims[1];
  const int32_t bins = ops.output.shape.dims[2];
  float* out = ops.output.data;
  for (int32_t c = 0; c < channels; ++c) {
    for (int32_t f = 0; f < frames; ++f, out += bins) {
      // Windowed sample pairs (x[2j], x[2j+1]) go straight to their bit-reversed
      // slot; samples past the window are the FFT's zero padding.
      const float* x = ops.samples.data + static_cast<ptrdiff_t>(f) * p.stride * channels + c;
      const float* w = ops.window;
      const int32_t* reverse = ops.fft.bit_reverse;
      const int32_t pairs = p.fft_length / 2, full = p.window_size / 2;
      int32_t j = 0;
      for (; j < full; ++j, x += 2 * channels, w += 2) {
        float* slot = ops.scratch + 2 * reverse[j];
        slot[0] = x[0] * w[0];
        slot[1] = x[channels] * w[1];
      }
      if (p.window_size & 1) {  // the last sample pairs with the first zero
        float* slot = ops.scratch + 2 * reverse[j++];
        slot[0] = x[0] * w[0];
        slot[1] = 0.0f;
      }
      for (; j < pairs; ++j) {
        float* slot = ops.scratch + 2 * reverse[j];
        slot[0] = 0.0f;
        slot[1] = 0.0f;
      }
      real_fft_power<kPass>(ops.fft, ops.scratch, out);
      if (!p.magnitude_squared) {
        for (int32_t k = 0; k < bins; ++k) out[k] = sqrtf(out[k]);
      }
    }
  }
}

// Validates an AUDIO_SPECTROGRAM (samples, window, twiddles, bit reversal ->
// spectrogram, scratch) and fills its params block: what every backend's
// prepare does. nullptr = fine, else the reason.
const char* prepare_audio_spectrogram_params(const OpContext& ctx);

// The operands of a prepared AUDIO_SPECTROGRAM.
inline AudioSpectrogramOperands audio_spectrogram_operands(const PreparedOp& op) {
  const auto& p = op.params_as<AudioSpectrogramParams>();
  return {{static_cast<const float*>(op.input(0).data), op.input(0).shape},
          static_cast<const float*>(op.input(1).data),
          {static_cast<const float*>(op.input(2).data), static_cast<const int32_t*>(op.input(3).data), p.fft_length},
          static_cast<float*>(op.output(1).data),
          {static_cast<float*>(op.output(0).data), op.output(0).shape}};
}

}  // namespace floe::kernels
