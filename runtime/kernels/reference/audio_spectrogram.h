// SPDX-License-Identifier: Apache-2.0
// AUDIO_SPECTROGRAM (TensorFlow's AudioSpectrogram): per channel of the
// samples [length, channels], frames start every `stride` samples while a
// whole window fits (frames = 1 + (length - window_size) / stride, or 0);
// each frame is multiplied by the window, zero-padded to fft_length and
// transformed; the output [channels, frames, fft_length/2 + 1] is |X|^2 or |X|.
// The window (TF: periodic Hann) and the FFT tables (fft.h) are constant inputs.
#pragma once

#include "runtime/core/dispatch.h"
#include "runtime/core/tensor.h"
#include "runtime/kernels/reference/fft.h"

namespace floe::ref {

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

// `pass`: the FFT's radix-4 passes, the reference's or the Cortex-M backend's.
void audio_spectrogram_f32(const AudioSpectrogramParams& params, const AudioSpectrogramOperands& ops,
                           FftPass pass = FftPass::kReference);

}  // namespace floe::ref

// The op's adapter (runtime/ops.def names it; runtime/core/dispatch.h).
namespace floe::ops {

const char* prepare_audio_spectrogram(const OpContext& ctx);
Status eval_audio_spectrogram(const PreparedOp& ctx);
// The operands of a prepared AUDIO_SPECTROGRAM (for the backends' evals).
ref::AudioSpectrogramOperands audio_spectrogram_operands(const PreparedOp& ctx);

}  // namespace floe::ops
