// SPDX-License-Identifier: Apache-2.0
// WAV reader harness (runtime/tools/wav.cc, floe-run's --input NAME=file.wav):
// the bytes are parsed as a RIFF/WAVE file; a std::runtime_error (the reason a
// file is refused) is the clean outcome. An accepted file must hold exactly
// frames * channels samples in [-1, 1), and padding or truncating it to a
// model's input length (fit_frames) must keep the samples it has.
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include "runtime/tools/wav.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  floe::tools::WavAudio audio;
  try {
    audio = floe::tools::parse_wav(data, size);
  } catch (const std::runtime_error&) {
    return 0;
  }
  if (audio.channels <= 0 || audio.sample_rate <= 0 || audio.samples.size() != audio.frames * audio.channels) {
    std::abort();
  }
  for (float s : audio.samples) {
    if (!(s >= -1.0f && s < 1.0f)) std::abort();
  }
  for (size_t frames : {size_t{0}, audio.frames / 2, audio.frames, audio.frames + 3}) {
    const std::vector<float> fitted = floe::tools::fit_frames(audio, frames);
    if (fitted.size() != frames * static_cast<size_t>(audio.channels)) std::abort();
    for (size_t i = 0; i < fitted.size(); ++i) {
      const float want = i < audio.samples.size() ? audio.samples[i] : 0.0f;
      if (fitted[i] != want) std::abort();
    }
  }
  return 0;
}
