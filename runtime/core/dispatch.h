// SPDX-License-Identifier: Apache-2.0
// The reference backend's dispatch table (expanded from runtime/ops.def) and
// the prepared-op contract.
//
// Prepare once, run lean (as TFLM's Prepare/Eval, but sized ahead of time):
// Interpreter::Init() gives every operator a PreparedOp record in the arena's
// persistent region, binds its operands (data pointer, shape, dtype) and calls
// the op's prepare step, which validates the op once and writes everything its
// eval needs (options, derived values, kernel variant) into the op's params
// block. Invoke() then calls record.eval(record) for each op: it reads no
// FlatBuffers table and derives nothing.
//
// The persistent region's size is decided by the converter (Model's
// persistent_size_ptr32/64) from persistent_bytes() below, which depends only
// on the opcodes, the operand counts and the pointer width: params blocks are
// pointer-free and use fixed-width fields, so their size is the same on every
// ABI floe targets.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "schemas/contract/persistent_layout.h"
#include "schemas/floe_generated.h"

namespace floe {

class Model;
struct PreparedOp;

using EvalFn = Status (*)(const PreparedOp&);

// One operator as Invoke() runs it. Lives in the arena's persistent region.
struct PreparedOp {
  EvalFn eval;
  void* params;            // the op's params block (null when it has none)
  TensorView* operands;    // inputs, then outputs; an absent input has dtype kInvalid
  uint16_t inputs;
  uint16_t outputs;
  uint16_t opcode;         // schema::OpCode (profiles only)
  uint16_t flags;          // kOnBackend, kUseThreadPool

  static constexpr uint16_t kOnBackend = 1;      // run by the kernel library (XNNPACK)
  static constexpr uint16_t kUseThreadPool = 2;  // with the caller's pool, if any
  static constexpr uint16_t kLoop = 4;           // a WHILE: the interpreter runs its op ranges
  static constexpr uint16_t kIf = 8;             // an IF: the interpreter picks one of its op ranges
  static const TensorView kAbsent;

  int input_count() const { return inputs; }
  int output_count() const { return outputs; }
  bool has_input(int i) const { return i < inputs && operands[i].dtype != DType::kInvalid; }
  // An absent optional input (or one past the op's inputs) is an empty view.
  const TensorView& input(int i) const { return i < inputs ? operands[i] : kAbsent; }
  const TensorView& output(int i) const { return operands[inputs + i]; }
  template <typename T>
  const T& params_as() const { return *static_cast<const T*>(params); }
};

// What a prepare step sees of one operator at Init(): the model's operator
// (options, backend choice) and its record, whose operands are already bound.
struct OpContext {
  const schema::Operator* op;
  const Model* model;
  uint8_t* const* arenas;          // one base per memory region (Model::region_count())
  PreparedOp* prepared = nullptr;  // null when only validating (XNNPACK set-up)

  int input_count() const { return static_cast<int>(op->inputs()->size()); }
  int output_count() const { return static_cast<int>(op->outputs()->size()); }
  bool has_input(int i) const { return i >= 0 && i < input_count() && op->inputs()->Get(i) >= 0; }
  // Bound views (data points into the arena or the model's constants). An
  // absent optional input yields a view with data == nullptr.
  TensorView input(int i) const;
  TensorView output(int i) const;
  // The op's params block, sized by its ops.def row (valid when prepared != null).
  template <typename T>
  T& params() const { return *static_cast<T*>(prepared->params); }
  // Picks the kernel variant Invoke() will call.
  void set_eval(EvalFn eval) const { prepared->eval = eval; }
};

using PrepareFn = const char* (*)(const OpContext&);  // nullptr = ok, else the reason

struct OpKernel {
  schema::OpCode opcode;
  schema::OpOptions options;
  const char* name;
  PrepareFn prepare;
  EvalFn eval;
  uint16_t params_bytes;  // sizeof the op's params block (0 = none)
  // From the op's traits (schemas/contract/op_traits.h), checked by Model::Load:
  uint8_t max_inputs;     // most input slots
  uint8_t backends;       // backend_bit()s of the backends that implement it
};

// nullptr when this runtime has no kernel for `code`.
const OpKernel* find_kernel(schema::OpCode code);

// Bytes of the params block of `code` (the same on every ABI); 0 if unknown.
size_t op_params_bytes(schema::OpCode code);

// The persistent region's layout is shared with the converter:
// schemas/contract/persistent_layout.h.
static_assert(sizeof(PreparedOp) == prepared_record_bytes(sizeof(void*)), "PreparedOp layout");
static_assert(sizeof(TensorView) == operand_bytes(sizeof(void*)), "TensorView layout");

// Binds a tensor of the model to memory (its region's arena, or constants).
TensorView bind_tensor(const Model& model, uint8_t* const* arenas, int32_t index);

}  // namespace floe
