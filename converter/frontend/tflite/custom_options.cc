// SPDX-License-Identifier: Apache-2.0
#include "converter/frontend/tflite/custom_options.h"

#include <flatbuffers/flexbuffers.h>

#include <cmath>
#include <stdexcept>

namespace floe::conv {

CustomOptions::CustomOptions(const uint8_t* data, size_t size) : bytes_(data, data + size) {
  if (size == 0) throw std::runtime_error("custom options are empty (expected a FlexBuffer map)");
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE || !flexbuffers::VerifyBuffer(bytes_.data(), bytes_.size())) {
    throw std::runtime_error("custom options (" + std::to_string(size) +
                             " bytes) are not a valid FlexBuffer: truncated or corrupt");
  }
  if (!flexbuffers::GetRoot(bytes_.data(), bytes_.size()).IsMap()) {
    throw std::runtime_error("custom options are a FlexBuffer but not a map of attributes");
  }
}

namespace {

flexbuffers::Reference find(const std::vector<uint8_t>& bytes, const std::string& key) {
  return flexbuffers::GetRoot(bytes.data(), bytes.size()).AsMap()[key];
}

}  // namespace

bool CustomOptions::has(const std::string& key) const { return !find(bytes_, key).IsNull(); }

int64_t CustomOptions::integer(const std::string& key) const {
  const flexbuffers::Reference r = find(bytes_, key);
  if (r.IsNull()) throw std::runtime_error("custom options lack attribute '" + key + "'");
  if (!r.IsInt() && !r.IsUInt() && !r.IsBool()) {
    throw std::runtime_error("custom option '" + key + "' is not an integer");
  }
  return r.AsInt64();
}

bool CustomOptions::boolean(const std::string& key) const { return integer(key) != 0; }

namespace {

// KISS_FFT_COS / KISS_FFT_SIN for 16-bit samples: floor(0.5 + 32767 * f(phase)).
void push_q15_phase(std::vector<int16_t>& out, double phase) {
  out.push_back(static_cast<int16_t>(std::floor(0.5 + 32767.0 * std::cos(phase))));
  out.push_back(static_cast<int16_t>(std::floor(0.5 + 32767.0 * std::sin(phase))));
}

}  // namespace

std::vector<int16_t> kissfft_twiddles(int32_t fft_length) {
  const int32_t n = fft_length / 2;
  // kissfft's own literal for pi, and its order of evaluation.
  const double pi = 3.141592653589793238462643383279502884197169399375105820974944;
  std::vector<int16_t> out;
  for (int32_t i = 0; i < n; ++i) push_q15_phase(out, -2 * pi * i / n);
  return out;
}

std::vector<int16_t> kissfft_super_twiddles(int32_t fft_length) {
  const int32_t n = fft_length / 2;
  std::vector<int16_t> out;
  for (int32_t i = 0; i < n / 2; ++i) {
    push_q15_phase(out, -3.14159265358979323846264338327 * (static_cast<double>(i + 1) / n + .5));
  }
  return out;
}

}  // namespace floe::conv
