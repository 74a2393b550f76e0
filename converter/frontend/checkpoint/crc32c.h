// SPDX-License-Identifier: Apache-2.0
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) and the LevelDB/TF
// "mask" applied to every CRC stored in table and bundle files
// (tf-formats.md §11.3). Software table-driven; no CPU feature detection.
#pragma once

#include <cstddef>
#include <cstdint>

namespace floe::conv::ckpt {

// Continues a CRC: `crc` is the value returned for the bytes so far (0 to start).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);

inline uint32_t crc32c(const void* data, size_t size) { return crc32c_extend(0, data, size); }

// Masking keeps a CRC stored inside CRC'd data from cancelling itself out.
constexpr uint32_t kCrcMaskDelta = 0xA282EAD8u;

constexpr uint32_t crc32c_mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kCrcMaskDelta; }

constexpr uint32_t crc32c_unmask(uint32_t masked) {
  const uint32_t rotated = masked - kCrcMaskDelta;
  return (rotated >> 17) | (rotated << 15);
}

}  // namespace floe::conv::ckpt
