// SPDX-License-Identifier: Apache-2.0
// The model checksum (Model.payload_crc32c): CRC32C (Castagnoli, as in TF
// checkpoints, unmasked) of the whole file with the field's 4 bytes read as
// zero. The converter seals models with it, the runtime checks it when asked.
// Header-only and freestanding; CRC32C four bits at a time, so its table is 64
// bytes of Cortex-M flash (two lookups per byte; a model is checked once).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "schemas/floe_generated.h"

namespace floe {
namespace checksum_detail {

constexpr uint32_t kPolynomial = 0x82F63B78u;  // reflected Castagnoli

struct NibbleTable {
  uint32_t entry[16];
};

constexpr NibbleTable make_table() {
  NibbleTable t{};
  for (uint32_t n = 0; n < 16; ++n) {
    uint32_t c = n;
    for (int bit = 0; bit < 4; ++bit) c = (c & 1u) ? (c >> 1) ^ kPolynomial : c >> 1;
    t.entry[n] = c;
  }
  return t;
}

inline constexpr NibbleTable kTable = make_table();

}  // namespace checksum_detail

inline uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  for (size_t i = 0; i < size; ++i) {
    c ^= p[i];
    c = (c >> 4) ^ checksum_detail::kTable.entry[c & 0xFu];
    c = (c >> 4) ^ checksum_detail::kTable.entry[c & 0xFu];
  }
  return ~c;
}

inline uint32_t crc32c(const void* data, size_t size) { return crc32c_extend(0, data, size); }

// The payload_crc32c field's byte offset in a buffer that passed the
// FlatBuffers structure check; false when the field is absent. A corrupted
// vtable can only move or hide the field, which the comparison then reports.
inline bool find_model_checksum_field(const void* verified_buffer, size_t* field_offset) {
  const schema::Model* model = schema::GetModel(verified_buffer);
  // schema::Model privately derives from flatbuffers::Table (same object).
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(model);
  const uint8_t* field = table->GetAddressOf(schema::Model::VT_PAYLOAD_CRC32C);
  if (field == nullptr) return false;
  *field_offset = static_cast<size_t>(field - static_cast<const uint8_t*>(verified_buffer));
  return true;
}

inline uint32_t compute_model_checksum(const void* buffer, size_t size, size_t field_offset) {
  const uint8_t* bytes = static_cast<const uint8_t*>(buffer);
  static constexpr uint8_t kZero[4] = {0, 0, 0, 0};
  uint32_t crc = crc32c_extend(0, bytes, field_offset);
  crc = crc32c_extend(crc, kZero, sizeof(kZero));
  return crc32c_extend(crc, bytes + field_offset + 4, size - field_offset - 4);
}

inline uint32_t stored_model_checksum(const void* buffer, size_t field_offset) {
  const uint8_t* p = static_cast<const uint8_t*>(buffer) + field_offset;
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace floe
