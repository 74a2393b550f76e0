// SPDX-License-Identifier: Apache-2.0
// Shared by the fuzz harnesses: a guarded copy of the model buffer and arena
// (ASan reports any byte read or written past them), a per-process scratch
// directory for the files the converter reads, and the check every converter
// harness ends with: a model the converter emits must pass the runtime's
// validation (with its checksum) and run. Failing that check aborts: it is a
// bug, never a "clean error".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "converter/proto/tf_subset.pb.h"

namespace floe::fuzz {

// Heap buffer of exactly `size` usable bytes, 16-byte aligned; the bytes after
// it are poisoned (ASan) so any overrun is reported at the faulting access.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t size, const void* contents = nullptr);
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Largest arena a harness will allocate; models asking for more are skipped
// after Load (their validation still ran).
constexpr uint64_t kMaxFuzzArena = 16u << 20;

// Load (both with and without the checksum) -> Init -> Invoke on zeroed
// inputs with the model and arena in guarded buffers. Returns true when the
// model loaded and initialised (its outputs were then read in full).
bool run_model_bytes(const uint8_t* data, size_t size);

// Converter harness end check: `model` must load with verify_checksum on,
// Init and Invoke; otherwise prints why and aborts.
void require_valid_converted_model(const std::vector<uint8_t>& model);

// Unconsumed nodes that compute something (at most 3), as a user would list
// --outputs; a graph of only consumed nodes gives its last node.
std::vector<std::string> pick_outputs(const tfproto::GraphDef& graph);
// The example checkpoint (conv_seed, mnist_mlp) whose keys name one of the
// graph's nodes, or "".
std::string matching_checkpoint(const tfproto::GraphDef& graph);

// A directory private to this process (created once, reused), e.g. /tmp/floe-fuzz-1234.
const std::string& scratch_dir();
void write_file(const std::string& path, const uint8_t* data, size_t size);
std::string read_file(const std::string& path);

// The repository root (compiled in), for the example models used as fixed inputs.
std::string source_path(const std::string& relative);

}  // namespace floe::fuzz
