// SPDX-License-Identifier: Apache-2.0
// Host-only tool code (never built for a device): it may use the heap, the
// standard library and exceptions; the arena-only rule binds runtime/core and kernels.
// Host helper: a .floe file read into a 16-byte-aligned heap buffer (the
// runtime reads constants in place and requires the alignment). Host tools and
// tests only; firmware embeds the model as an aligned const array instead.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace floe::tools {

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<uint8_t, AlignedFree>;

// `size` bytes (at least 16), 16-byte aligned, zero-filled.
AlignedBytes aligned_bytes(size_t size);

struct ModelFile {
  AlignedBytes data;
  size_t size = 0;
};

// Throws std::runtime_error naming the file on failure.
ModelFile read_model_file(const std::string& path);

}  // namespace floe::tools
