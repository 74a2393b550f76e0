// SPDX-License-Identifier: Apache-2.0
// Serializes a lowered model into a .floe FlatBuffer: plans the arena (tensor
// lifetimes -> offsets), packs constants 16-byte aligned, writes the schema.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter/ir/lowered.h"

namespace floe::conv {

struct EmitStats {
  uint64_t arena_bytes = 0;     // planned arena (what the runtime needs)
  uint64_t naive_bytes = 0;     // sum of all activation sizes (no reuse), for comparison
  uint64_t constant_bytes = 0;  // constant section incl. alignment padding
  uint64_t parameter_count = 0; // elements in constants
};

std::vector<uint8_t> emit_model(const LoweredModel& model, const std::string& producer,
                                EmitStats* stats = nullptr);

}  // namespace floe::conv
