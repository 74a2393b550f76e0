// SPDX-License-Identifier: Apache-2.0
// CRC32C (Castagnoli, reflected polynomial 0x82F63B78): the model file checksum
// (schemas/floe.fbs Model.payload_crc32c). Freestanding: a 16-entry nibble
// table in flash (64 bytes), no heap, no library calls, any buffer alignment.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace floe {

// Continues a CRC32C: `crc` is the value returned for the preceding bytes
// (0 for none), so crc32c_extend(crc32c(a), b) == crc32c(a ++ b).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);

inline uint32_t crc32c(const void* data, size_t size) { return crc32c_extend(0, data, size); }

}  // namespace floe
