// SPDX-License-Identifier: Apache-2.0
// Host-only tool code (never built for a device): it may use the heap, the
// standard library and exceptions; the arena-only rule binds runtime/core and kernels.
// RIFF/WAVE files of 16-bit PCM samples, decoded as TensorFlow's DecodeWav
// decodes them: sample / 32768 as float in [-1, 1), shaped [frames, channels]
// (interleaved). Anything else is rejected with a reason, never guessed at:
// not RIFF/WAVE, no "fmt " or "data" chunk, a format other than PCM (1), other
// than 16 bits per sample, zero channels or sample rate, a block align or byte
// rate that disagree with them, a chunk running past the end of the file
// (truncated), or a data size that is not whole frames.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/model.h"

namespace floe::tools {

struct WavAudio {
  int channels = 0;
  int sample_rate = 0;
  size_t frames = 0;
  std::vector<float> samples;  // frames * channels, interleaved
};

// Throws std::runtime_error(reason) on malformed input.
WavAudio parse_wav(const uint8_t* data, size_t size);
// Throws std::runtime_error("<path>: <reason>").
WavAudio read_wav(const std::string& path);
// The samples as [frames, channels], zero-padded or truncated to `frames`, as
// DecodeWav's desired_samples does.
std::vector<float> fit_frames(const WavAudio& audio, size_t frames);
// The sample rate the model's MFCC constants were computed for (0: no MFCC).
int model_sample_rate(const floe::Model& model);

// `wav` (read from `path`) as the float32 [samples, channels] input `input` of
// a model whose front end expects `sample_rate` Hz (0: any): the channel count
// and rate must match, else std::runtime_error("<path>: <reason>"); the
// samples are padded or truncated to the input's length, saying so in *note
// (empty when the length matched).
std::vector<float> wav_as_input(const WavAudio& wav, const std::string& path, const floe::TensorView& input,
                                int sample_rate, std::string* note);

// The mono samples as the 16-bit integers the file holds, for an int16 input
// (an integer front end such as TFLite Micro's audio preprocessor): padded
// with zeros or truncated to `count`, saying so in *note.
std::vector<int16_t> wav_as_pcm16(const WavAudio& wav, const std::string& path, size_t count, std::string* note);

// The bytes `input` takes from `wav`: the file's 16-bit samples for an int16
// input (wav_as_pcm16), else float samples (wav_as_input); throws as those do.
std::vector<uint8_t> wav_input_bytes(const WavAudio& wav, const std::string& path, const floe::TensorView& input,
                                     int sample_rate, std::string* note);

// True when the bytes start like a RIFF/WAVE file (for sniffing an input file).
bool looks_like_wav(const uint8_t* data, size_t size);

}  // namespace floe::tools
