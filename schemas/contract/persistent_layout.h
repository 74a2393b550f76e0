// SPDX-License-Identifier: Apache-2.0
// The size of the runtime's persistent region, in which Interpreter::Init()
// prepares every op once (runtime/core/registry.h: one PreparedOp record per op,
// the op's bound operands, its params block). The converter writes the size for
// 32- and 64-bit pointers into the model (Model.persistent_size_ptr32/64);
// Init() lays the region out in exactly this order and checks it fills the
// stated size. Params blocks are pointer-free with fixed-width fields, so their
// size (the runtime's op_params_bytes()) is the same on every ABI.
#pragma once

#include <stdint.h>

namespace floe {

// Every block of the persistent region starts 8-byte aligned.
constexpr uint64_t kPersistentAlignment = 8;
constexpr uint64_t align_persistent(uint64_t n) {
  return (n + kPersistentAlignment - 1) / kPersistentAlignment * kPersistentAlignment;
}
// sizeof(PreparedOp) and sizeof(TensorView) for a pointer width (the runtime
// static_asserts both for its own).
constexpr uint64_t prepared_record_bytes(uint64_t pointer_bytes) {
  return (3 * pointer_bytes + 8 + pointer_bytes - 1) / pointer_bytes * pointer_bytes;
}
constexpr uint64_t operand_bytes(uint64_t pointer_bytes) { return 6 * pointer_bytes; }
// An op's inputs + outputs fit PreparedOp's 16-bit counts.
constexpr uint64_t kMaxOperands = 0xFFFF;

// The records (one array), then per op its operands and its params block,
// each rounded up to kPersistentAlignment.
struct PersistentLayout {
  uint64_t pointer_bytes;
  uint64_t total;

  PersistentLayout(uint64_t pointer_width, uint64_t op_count)
      : pointer_bytes(pointer_width),
        total(align_persistent(op_count * prepared_record_bytes(pointer_width))) {}
  void add_op(uint64_t operand_count, uint64_t params_bytes) {
    total += align_persistent(operand_count * operand_bytes(pointer_bytes));
    total += align_persistent(params_bytes);
  }
};

}  // namespace floe
