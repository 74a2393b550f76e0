// SPDX-License-Identifier: Apache-2.0
// Host-only tool code (never built for a device): it may use the heap, the
// standard library and exceptions; the arena-only rule binds runtime/core and kernels.
#include "runtime/tools/model_file.h"

#include <cstring>
#include <fstream>
#include <stdexcept>

namespace floe::tools {

AlignedBytes aligned_bytes(size_t size) {
  const size_t rounded = (size + 15) / 16 * 16 + 16;
  AlignedBytes bytes(static_cast<uint8_t*>(std::aligned_alloc(16, rounded)));
  if (!bytes) throw std::runtime_error("out of memory allocating " + std::to_string(size) + " bytes");
  std::memset(bytes.get(), 0, rounded);
  return bytes;
}

ModelFile read_model_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error(path + ": cannot open");
  const std::streamsize size = in.tellg();
  in.seekg(0);
  ModelFile file;
  file.size = static_cast<size_t>(size);
  file.data = aligned_bytes(file.size);
  if (!in.read(reinterpret_cast<char*>(file.data.get()), size)) {
    throw std::runtime_error(path + ": cannot read");
  }
  return file;
}

}  // namespace floe::tools
