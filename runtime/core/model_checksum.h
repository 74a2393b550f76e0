// SPDX-License-Identifier: Apache-2.0
// The model file checksum (schemas/floe.fbs Model.payload_crc32c): where its
// value lives in a buffer and what it covers. Shared by the converter (which
// writes it) and Model::Load (which checks it), so both hash the same bytes.
// Relies on the buffer having passed the FlatBuffers verifier first.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace floe {

// Byte offset of payload_crc32c's 4-byte value inside a verified model
// buffer; false when the field is absent.
bool find_model_checksum_field(const void* verified_buffer, size_t* field_offset);

// CRC32C of buffer[0, size) with the 4 bytes at field_offset read as zero.
// Requires field_offset + 4 <= size.
uint32_t compute_model_checksum(const void* buffer, size_t size, size_t field_offset);

// The little-endian value stored at field_offset.
uint32_t stored_model_checksum(const void* buffer, size_t field_offset);

}  // namespace floe
