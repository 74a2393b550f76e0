// SPDX-License-Identifier: Apache-2.0
// The last stage before a model leaves the converter: the runtime's own
// Model::Load validation (checksum included) and Interpreter::Init in a
// scratch arena on this host, run on the exact bytes about to be written or
// returned. A refusal is a converter bug: an internal ConvertError naming the
// op, so floe-convert exits 2 and writes nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace floe::conv {

// Arenas above this are validated by Load only (Init would need the memory).
constexpr uint64_t kMaxValidationArena = uint64_t{1} << 30;

struct ValidationReport {
  bool initialized = false;  // Init ran (false: the arena is over kMaxValidationArena)
  uint64_t arena_bytes = 0;
};

// `source`: the input file, for the message. Throws ConvertError (internal).
ValidationReport validate_emitted_model(const std::vector<uint8_t>& bytes, const std::string& source);

}  // namespace floe::conv
