// SPDX-License-Identifier: Apache-2.0
// Host-only tool code (never built for a device): it may use the heap, the
// standard library and exceptions; the arena-only rule binds runtime/core and kernels.
#include "runtime/tools/wav.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "schemas/floe_generated.h"

namespace floe::tools {

namespace {

uint32_t u32_at(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}
uint16_t u16_at(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

[[noreturn]] void bad(const std::string& why) { throw std::runtime_error(why); }

}  // namespace

bool looks_like_wav(const uint8_t* data, size_t size) {
  return size >= 12 && std::memcmp(data, "RIFF", 4) == 0 && std::memcmp(data + 8, "WAVE", 4) == 0;
}

WavAudio parse_wav(const uint8_t* data, size_t size) {
  if (!looks_like_wav(data, size)) bad("not a WAV file (no RIFF/WAVE header)");
  WavAudio audio;
  bool have_format = false;
  size_t pos = 12;
  while (true) {
    if (size - pos < 8) bad(have_format ? "truncated: no \"data\" chunk" : "truncated: no \"fmt \" chunk");
    const uint8_t* chunk = data + pos;
    const uint32_t chunk_size = u32_at(chunk + 4);
    const size_t body = pos + 8;
    if (chunk_size > size - body) {
      bad("truncated: chunk \"" + std::string(reinterpret_cast<const char*>(chunk), 4) + "\" declares " +
          std::to_string(chunk_size) + " bytes, " + std::to_string(size - body) + " remain");
    }
    if (std::memcmp(chunk, "fmt ", 4) == 0) {
      if (chunk_size < 16) bad("\"fmt \" chunk of " + std::to_string(chunk_size) + " bytes (at least 16 needed)");
      const uint16_t format = u16_at(data + body);
      const uint16_t channels = u16_at(data + body + 2);
      const uint32_t rate = u32_at(data + body + 4);
      const uint32_t byte_rate = u32_at(data + body + 8);
      const uint16_t block_align = u16_at(data + body + 12);
      const uint16_t bits = u16_at(data + body + 14);
      if (format != 1) bad("format " + std::to_string(format) + " is not PCM (1): only 16-bit PCM is read");
      if (bits != 16) bad(std::to_string(bits) + "-bit samples: only 16-bit PCM is read");
      if (channels == 0) bad("zero channels");
      if (rate == 0 || rate > 0x7FFFFFFFu) bad("sample rate " + std::to_string(rate) + " is not valid");
      if (block_align != 2u * channels || byte_rate != static_cast<uint64_t>(rate) * block_align) {
        bad("block align " + std::to_string(block_align) + " / byte rate " + std::to_string(byte_rate) +
            " disagree with " + std::to_string(channels) + " channel(s) of 16 bits at " + std::to_string(rate) + " Hz");
      }
      audio.channels = channels;
      audio.sample_rate = static_cast<int>(rate);
      have_format = true;
    } else if (std::memcmp(chunk, "data", 4) == 0) {
      if (!have_format) bad("\"data\" chunk before the \"fmt \" chunk");
      const size_t frame_bytes = 2u * static_cast<size_t>(audio.channels);
      if (chunk_size % frame_bytes != 0) {
        bad("data chunk of " + std::to_string(chunk_size) + " bytes is not whole frames of " +
            std::to_string(frame_bytes) + " bytes");
      }
      audio.frames = chunk_size / frame_bytes;
      audio.samples.resize(chunk_size / 2);
      for (size_t i = 0; i < audio.samples.size(); ++i) {
        audio.samples[i] = static_cast<float>(static_cast<int16_t>(u16_at(data + body + 2 * i))) / 32768.0f;
      }
      return audio;
    }
    pos = body + chunk_size + (chunk_size & 1u);  // chunks are padded to even sizes
    if (pos > size) bad("truncated: chunk padding runs past the end");
  }
}

std::vector<float> fit_frames(const WavAudio& audio, size_t frames) {
  std::vector<float> out(frames * static_cast<size_t>(audio.channels), 0.0f);
  const size_t n = std::min(out.size(), audio.samples.size());
  std::copy(audio.samples.begin(), audio.samples.begin() + static_cast<std::ptrdiff_t>(n), out.begin());
  return out;
}

int model_sample_rate(const floe::Model& model) {
  for (const auto* op : *model.schema()->operators()) {
    if (op->opcode() != floe::schema::OpCode::MFCC) continue;
    if (const auto* o = op->options_as_MfccOptions()) return o->sample_rate();
  }
  return 0;
}

std::vector<float> wav_as_input(const WavAudio& wav, const std::string& path, const floe::TensorView& input,
                                int sample_rate, std::string* note) {
  note->clear();
  const std::string name = input.name ? input.name : "?";
  if (input.dtype != floe::DType::kFloat32 || input.shape.rank != 2) {
    throw std::runtime_error(path + ": a WAV file feeds a float32 [samples, channels] input; '" + name + "' is not one");
  }
  if (wav.channels != input.shape.dims[1]) {
    throw std::runtime_error(path + ": " + std::to_string(wav.channels) + " channel(s); input '" + name + "' takes " +
                             std::to_string(input.shape.dims[1]));
  }
  if (sample_rate != 0 && wav.sample_rate != sample_rate) {
    throw std::runtime_error(path + ": sample rate " + std::to_string(wav.sample_rate) +
                             " Hz; the model's front end was built for " + std::to_string(sample_rate) +
                             " Hz (the sample rate fixed at conversion)");
  }
  const size_t frames = static_cast<size_t>(input.shape.dims[0]);
  if (wav.frames != frames) {
    *note = path + ": " + std::to_string(wav.frames) + " samples " + (wav.frames < frames ? "zero-padded" : "truncated") +
            " to the input's " + std::to_string(frames);
  }
  return fit_frames(wav, frames);
}

std::vector<int16_t> wav_as_pcm16(const WavAudio& wav, const std::string& path, size_t count, std::string* note) {
  note->clear();
  if (wav.channels != 1) {
    throw std::runtime_error(path + ": " + std::to_string(wav.channels) + " channels; an int16 input takes mono samples");
  }
  if (wav.frames != count) {
    *note = path + ": " + std::to_string(wav.frames) + " samples " + (wav.frames < count ? "zero-padded" : "truncated") +
            " to " + std::to_string(count);
  }
  std::vector<int16_t> pcm(count, 0);
  // The decoded sample is pcm / 32768 exactly: this is the file's integer.
  for (size_t i = 0; i < count && i < wav.frames; ++i) pcm[i] = static_cast<int16_t>(wav.samples[i] * 32768.0f);
  return pcm;
}

std::vector<uint8_t> wav_input_bytes(const WavAudio& wav, const std::string& path, const floe::TensorView& input,
                                     int sample_rate, std::string* note) {
  std::vector<uint8_t> bytes(input.bytes);
  if (input.dtype == floe::DType::kInt16) {
    const std::vector<int16_t> pcm = wav_as_pcm16(wav, path, static_cast<size_t>(input.shape.num_elements()), note);
    std::memcpy(bytes.data(), pcm.data(), bytes.size());
  } else {
    const std::vector<float> samples = wav_as_input(wav, path, input, sample_rate, note);
    std::memcpy(bytes.data(), samples.data(), bytes.size());
  }
  return bytes;
}

WavAudio read_wav(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open for reading");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return parse_wav(bytes.data(), bytes.size());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

}  // namespace floe::tools
