// SPDX-License-Identifier: Apache-2.0
// Serializes a lowered model and its finished arena plan (made by the
// pipeline with plan/arena_plan.h) into a .floe FlatBuffer: packs constants
// 16-byte aligned, writes the schema, seals the checksum.
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


// Refuses (ConvertError) a model over the format's limits (op count, constant
// bytes): checked before planning, and again by emit_model.
void check_model_limits(const LoweredModel& model);

// What the plan must leave around the activations for the regions that
// follow them in the arena (XNNPACK's reads past an operand, the XNNPACK and
// prepared-op regions when `memory_regions` split the arena).
RegionRequest arena_request(const LoweredModel& model, const std::vector<MemoryRegion>& memory_regions);

// `plan` is plan_model_arena(model, ..., arena_request(model, memory_regions));
// `memory_regions` (fastest first): one region is a capacity to check; with
// several the tensors are split among them and the model carries one arena
// size per region (format version 2). stats->plan_milliseconds is the caller's.
std::vector<uint8_t> emit_model(const LoweredModel& model, const ArenaPlan& plan, const std::string& producer,
                                EmitStats* stats = nullptr, const std::vector<MemoryRegion>& memory_regions = {});

// Writes payload_crc32c into a finished model buffer (which must already hold
// the field): CRC32C of the whole buffer with the field's 4 bytes read as zero.
// Tools that edit a model's bytes call it again afterwards.
void seal_model(std::vector<uint8_t>* bytes);

}  // namespace floe::conv
