// SPDX-License-Identifier: Apache-2.0
// The custom options of a TFLite custom operator: a FlexBuffer map of the TF
// op's attributes (what TFLite's converter writes and TFLite Micro's
// FlexbufferWrapper reads). The bytes are verified before anything is read,
// so a truncated or corrupt map is one error, never a read outside them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace floe::conv {

class CustomOptions {
 public:
  // Throws std::runtime_error(reason) unless `bytes` is a valid FlexBuffer map.
  CustomOptions(const uint8_t* data, size_t size);

  bool has(const std::string& key) const;
  // The integer (or bool) attribute `key`; throws std::runtime_error naming
  // the key when it is absent or not a number.
  int64_t integer(const std::string& key) const;
  bool boolean(const std::string& key) const;

 private:
  std::vector<uint8_t> bytes_;
};

// kissfft's fixed-point (Q15) tables for a real FFT of fft_length points, as
// kiss_fftr_alloc builds them (cos / sin in double, rounded half up): the
// twiddles of the fft_length / 2-point complex FFT, then the super-twiddles
// that split its result into real-input bins; (re, im) pairs.
std::vector<int16_t> kissfft_twiddles(int32_t fft_length);
std::vector<int16_t> kissfft_super_twiddles(int32_t fft_length);

}  // namespace floe::conv
