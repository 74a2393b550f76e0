// SPDX-License-Identifier: Apache-2.0
// Locating and computing the model checksum. The field is found through the
// root table's vtable, which the FlatBuffers verifier has already bounds-checked;
// a corrupted vtable can only move or hide the field, which the comparison (or
// its absence) then reports.
#include "runtime/core/model_checksum.h"

#include "runtime/core/crc32c.h"
#include "schemas/floe_generated.h"

namespace floe {

bool find_model_checksum_field(const void* verified_buffer, size_t* field_offset) {
  const schema::Model* model = schema::GetModel(verified_buffer);
  // schema::Model privately derives from flatbuffers::Table (same object).
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(model);
  const uint8_t* field = table->GetAddressOf(schema::Model::VT_PAYLOAD_CRC32C);
  if (field == nullptr) return false;
  *field_offset = static_cast<size_t>(field - static_cast<const uint8_t*>(verified_buffer));
  return true;
}

uint32_t compute_model_checksum(const void* buffer, size_t size, size_t field_offset) {
  const uint8_t* bytes = static_cast<const uint8_t*>(buffer);
  static constexpr uint8_t kZero[4] = {0, 0, 0, 0};
  uint32_t crc = crc32c_extend(0, bytes, field_offset);
  crc = crc32c_extend(crc, kZero, sizeof(kZero));
  return crc32c_extend(crc, bytes + field_offset + 4, size - field_offset - 4);
}

uint32_t stored_model_checksum(const void* buffer, size_t field_offset) {
  const uint8_t* p = static_cast<const uint8_t*>(buffer) + field_offset;
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace floe
