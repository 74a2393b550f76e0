// SPDX-License-Identifier: Apache-2.0
// Serializes a lowered model into a .floe FlatBuffer: takes its arena plan
// (plan/arena_plan.h), packs constants 16-byte aligned, writes the schema.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter/ir/lowered.h"
#include "converter/plan/arena_plan.h"

namespace floe::conv {

struct EmitStats {
  uint64_t arena_bytes = 0;     // planned arena (what the runtime needs)
  uint64_t naive_bytes = 0;     // sum of all activation sizes (no reuse), for comparison
  // Largest sum of live activation bytes at one op of the emitted order (no
  // plan without aliases goes under it), reshapes sharing their input's bytes,
  // whether the plan is proven minimal, and how long planning took.
  uint64_t arena_lower_bound = 0;
  int aliased_values = 0;
  bool arena_optimal = false;
  double plan_milliseconds = 0;
  uint64_t constant_bytes = 0;  // constant section incl. alignment padding
  uint64_t parameter_count = 0; // elements in constants
  uint64_t xnnpack_arena_bytes = 0;  // XNNPACK persistent budget (Model.xnnpack_arena_size)
  // The prepared ops' persistent region (Model.persistent_size_ptr32 / _ptr64).
  uint64_t persistent_bytes_ptr32 = 0;
  uint64_t persistent_bytes_ptr64 = 0;
  // --memory-regions: the regions asked for and, with several, each one's
  // planned activation bytes (arena_bytes is their sum).
  std::vector<MemoryRegion> regions;
  std::vector<uint64_t> region_sizes;
};


// `memory_regions` (fastest first): one region is a capacity to check; with
// several the tensors are split among them (plan/arena_plan.h) and the model
// carries one arena size per region (format version 2).
std::vector<uint8_t> emit_model(const LoweredModel& model, const std::string& producer,
                                EmitStats* stats = nullptr, const std::vector<MemoryRegion>& memory_regions = {});

// Writes payload_crc32c into a finished model buffer (which must already hold
// the field): CRC32C of the whole buffer with the field's 4 bytes read as zero.
// Tools that edit a model's bytes call it again afterwards.
void seal_model(std::vector<uint8_t>* bytes);

}  // namespace floe::conv
