// SPDX-License-Identifier: Apache-2.0
// floe::Model: a validated view of a .floe buffer. Load() is the trust boundary:
// it checks the FlatBuffers structure (verify_buffer.h, the generated verifier's
// rules in ~0.7 KB of Cortex-M code), then every index, offset, size and shape product
// (overflow-safe) and the memory plan, so nothing after it needs to. The buffer is
// used in place and must outlive the Model; constants are never copied.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "schemas/contract/limits.h"

namespace floe {

namespace schema {
struct Model;
struct Tensor;
}  // namespace schema
struct KernelRow;

// The newest format version this runtime understands (schemas/floe.fbs).
// Version 2: several memory regions (Model.region_sizes, Tensor.region).
constexpr uint32_t kSchemaVersion = 2;

// What Model::Load checks beyond the structural and semantic validation that
// always runs (and that alone keeps every read and write inside the model
// buffer and the arena).
struct LoadOptions {
  // Recompute the CRC32C of the whole buffer and compare it with the model's
  // payload_crc32c (absent = mismatch). Off by default, like TFLite Micro's
  // loads: a model linked into a verified firmware image is trusted and need
  // not be hashed at every boot. Turn it on for models read from disk or
  // received over the air: it catches corruption that still validates (a
  // flipped weight bit). Cost: one pass over the buffer (~2 table lookups/byte),
  // and ~400 B of code (Cortex-M) linked only by callers of this overload.
  // Validation itself is never optional: it alone guards memory safety.
  bool verify_checksum = false;
};

class Model {
 public:
  Model() = default;

  // Validates `data` (which must be 16-byte aligned and stay alive). The
  // first form is Load(data, size, LoadOptions()) without linking the
  // checksum code.
  [[nodiscard]] Status Load(const void* data, size_t size);
  [[nodiscard]] Status Load(const void* data, size_t size, const LoadOptions& options);

  bool loaded() const { return model_ != nullptr; }
  const schema::Model* schema() const { return model_; }
  // Bytes of arena Interpreter::Init() needs on this runtime build: the planned
  // activations, plus, when this build runs the model's XNNPACK operators
  // (runtime/core/backend.h), the converter's budget for their state, plus the
  // persistent region of the prepared ops (runtime/core/registry.h). For a
  // model with several memory regions: the bytes of one arena holding every
  // region back to back, each at a 16-byte boundary (the one-arena form of
  // Interpreter).
  uint64_t arena_size() const { return single_arena_size_; }
  // Memory regions (floe-convert --memory-regions): 1 for a one-arena model.
  // Region r's arena must hold region_arena_size(r) bytes: its activations,
  // plus, for persistent_region(), the XNNPACK and persistent regions above.
  uint32_t region_count() const { return region_count_; }
  uint32_t persistent_region() const { return persistent_region_; }
  uint64_t region_arena_size(uint32_t region) const {
    return region == persistent_region_ ? total_arena_size_
                                        : region < region_count_ ? region_activations_[region] : 0;
  }
  // Region r's name from the model ("" when unnamed or out of range); writes
  // at most `capacity` bytes, NUL included.
  void region_name(uint32_t region, char* out, size_t capacity) const;
  // Where the persistent region starts (16-byte aligned) and its bytes for
  // this build's pointer width.
  uint64_t persistent_offset() const { return persistent_offset_; }
  uint64_t persistent_size() const { return persistent_size_; }
  // The planned activations alone of the persistent region's arena; every
  // arena tensor of that region lies below this.
  uint64_t activation_arena_size() const { return arena_size_; }
  size_t tensor_count() const { return tensor_count_; }
  size_t operator_count() const { return operator_count_; }

  // Describes tensor `index` (data = nullptr for arena tensors; the
  // interpreter binds those).
  TensorView tensor(size_t index) const;
  // Tensor `index`'s quantization (channels == 0 when it has none, or when its
  // record breaks the format's rules).
  Quantization quantization(size_t index) const;
  bool is_constant(size_t index) const;
  // The dtype that, with its opcode and backend, selects operator `op`'s
  // kernel: its first present input's, else its first output's (an int8
  // CONV2D is INT8, a QUANTIZE from float FLOAT32, a DEQUANTIZE to float INT8).
  DType kernel_dtype(size_t op) const;
  // The registry row that runs operator `op` (runtime/core/registry.h);
  // nullptr when this program links none.
  const KernelRow* kernel(size_t op) const;
  uint64_t tensor_offset(size_t index) const;
  // The memory region an arena tensor lives in (0 in a one-arena model).
  uint32_t tensor_region(size_t index) const;

  const Error& error() const { return error_; }

 private:
  friend struct ControlFlow;
  using ChecksumStep = Status (*)(Model& model, size_t size);
  Status load(const void* data, size_t size, ChecksumStep checksum);
  Status fail(Status status, const char* message, int32_t op = -1, int32_t tensor = -1);
  Status read_regions();
  Status validate_tensors();
  Status validate_operators();
  Status validate_io();
  static Status validate_loops(Model& model);  // runtime/core/control_flow.cc
  Status validate_ranges();                    // its body
  Status check_indices(const void* list, int32_t lowest, bool written, int32_t op,
                       const char* out_of_range, const char* constant);
  Status verify_checksum(size_t size);

  const schema::Model* model_ = nullptr;
  const uint8_t* buffer_ = nullptr;
  const uint8_t* constants_ = nullptr;
  uint64_t constants_size_ = 0;
  uint64_t arena_size_ = 0;
  uint64_t total_arena_size_ = 0;   // the persistent region's arena
  uint64_t single_arena_size_ = 0;  // every region in one arena
  uint32_t region_count_ = 1;
  uint32_t persistent_region_ = 0;
  uint64_t region_activations_[kMaxMemoryRegions] = {};
  uint64_t persistent_offset_ = 0;
  uint64_t persistent_size_ = 0;
  size_t tensor_count_ = 0;
  size_t operator_count_ = 0;
  Error error_;
};

// Binds tensor `index` of `model` to memory: its region's arena
// (arenas[region]) or the model's constants. An index < 0 is an empty view.
TensorView bind_tensor(const Model& model, uint8_t* const* arenas, int32_t index);

}  // namespace floe
