// SPDX-License-Identifier: Apache-2.0
// The kernel registry, and the prepared-op contract between the interpreter
// and the kernels.
//
// A kernel row maps (op, dtype, backend) to the prepare and eval functions
// that run it. Each backend defines its own rows beside its kernels
// (FLOE_KERNEL, below, in runtime/kernels/<backend>/<op>.cc) and lists them in
// its kernels.def; backends never include each other, and the core knows
// nothing of them but this interface. The converter records each operator's
// backend (Operator.backend) and, through its tensors, the dtype: the runtime
// takes exactly that row.
//
// A program links one registry, kKernelRegistry: the rows its models use
// (written from the models by `floe-embed kernels`, which floe_add_model() runs
// for every target that embeds a model), or, when it names none, every row
// (runtime/kernels/all_kernels.cc, a member of the floe_runtime library that the
// linker takes only when nothing else defines the registry). The linker keeps
// the kernels of the listed rows and nothing else: TFLM's
// MicroMutableOpResolver, decided from the models instead of by hand.
//
// Prepare once, run lean (as TFLM's Prepare/Eval, but sized ahead of time):
// Interpreter::Init() gives every operator a PreparedOp record in the arena's
// persistent region, binds its operands (data pointer, shape, dtype) and calls
// its row's prepare, which validates the op once and writes everything its eval
// needs (options, derived values, kernel variant) into the op's params block.
// Invoke() then calls record.eval(record) for each op: it reads no FlatBuffers
// table and derives nothing.
//
// The persistent region's size is decided by the converter (Model's
// persistent_size_ptr32/64) from the op list alone (schemas/contract/ops.def:
// each op's params block size, which every backend's params fit in) and the
// pointer width: params blocks are pointer-free with fixed-width fields, so
// their size is the same on every ABI floe targets.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "schemas/contract/op_traits.h"
#include "schemas/contract/persistent_layout.h"
#include "schemas/floe_generated.h"

namespace floe {

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
  static constexpr TensorView kAbsent{};

  int input_count() const { return inputs; }
  int output_count() const { return outputs; }
  // Kernels ask for operands their prepare checked: i >= 0.
  bool has_input(int i) const { return i < inputs && operands[i].dtype != DType::kInvalid; }
  // An absent optional input (or one past the op's inputs) is an empty view.
  const TensorView& input(int i) const { return i < inputs ? operands[i] : kAbsent; }
  const TensorView& output(int i) const { return operands[inputs + i]; }
  template <typename T>
  const T& params_as() const { return *static_cast<const T*>(params); }
};

// What a prepare step sees of one operator at Init(): its FlatBuffers table
// (options, backend, requantization, Cortex-M kernel), its record with the
// operands bound and the params block zeroed, and the quantization of its
// tensors. Not the model: a kernel knows its operator only.
struct OpContext {
  const schema::Operator* op;
  PreparedOp* prepared;
  // The model's tensor records, for the quantization of the op's tensors
  // (input_quantization() / output_quantization(); validated by Model::Load).
  const flatbuffers::Vector<flatbuffers::Offset<schema::Tensor>>* tensors;

  int input_count() const { return prepared->inputs; }
  int output_count() const { return prepared->outputs; }
  bool has_input(int i) const { return i >= 0 && prepared->has_input(i); }
  // Bound views (data points into the arena or the model's constants). An
  // absent optional input, or an operand past the op's own (or before them),
  // is an empty view with data == nullptr: a prepare may read a dtype before
  // it checks counts.
  const TensorView& input(int i) const { return i >= 0 ? prepared->input(i) : PreparedOp::kAbsent; }
  const TensorView& output(int i) const {
    return i >= 0 && i < prepared->outputs ? prepared->output(i) : PreparedOp::kAbsent;
  }
  // runtime/core/quantization.h (a kernel that asks includes it).
  Quantization input_quantization(int i) const;
  // Whether input i is state kept across Invoke(): a variable tensor recorded
  // without a lifetime, so the memory plan check holds it live throughout
  // (runtime/core/verify_plan.h; defined in runtime/core/quantization.h).
  bool input_is_state(int i) const;
  bool output_is_state(int i) const;  // the same for output i (ASSIGN_VARIABLE's variable)
  // Whether input i is a constant of the model (its data readable at Init()).
  bool input_is_constant(int i) const;
  Quantization output_quantization(int i) const;
  // The op's params block, sized by its row of schemas/contract/ops.def.
  template <typename T>
  T& params() const { return *static_cast<T*>(prepared->params); }
  // Picks the kernel variant Invoke() will call.
  void set_eval(EvalFn eval) const { prepared->eval = eval; }
};

using PrepareFn = const char* (*)(const OpContext&);  // nullptr = ok, else the reason

// The dtype column of a row: one dtype, or ANY (every dtype no other row of
// the same op and backend names). An operator's dtype is that of its first
// present input, else of its first output (Model::kernel_dtype()).
namespace kernel_dtype_of {
constexpr DType ANY = DType::kInvalid;
constexpr DType FLOAT32 = DType::kFloat32;
constexpr DType INT8 = DType::kInt8;
constexpr DType INT16 = DType::kInt16;
constexpr DType INT32 = DType::kInt32;
}  // namespace kernel_dtype_of

struct KernelRow {
  schema::OpCode opcode;
  schema::Backend backend;
  DType dtype;        // kInvalid: ANY
  // The op's traits (schemas/contract/ops.def) that Model::Load and Init()
  // check, copied into each row at compile time: a program links the rows it
  // uses, not the table of every op.
  schema::OpOptions options;
  uint8_t max_inputs;
  uint8_t backends;       // backend_bit()s of the backends that implement the op
  uint16_t params_bytes;  // the op's params block
  PrepareFn prepare;  // validates the op, writes its params block, may pick another eval
  EvalFn eval;        // the eval unless prepare picks another
  const char* name;   // the op's name (profiles, observers)
};

// Run-time control flow (WHILE, IF): Model::Load's range checks, the plan
// check of what a loop reads across iterations, and Invoke's path through op
// ranges. A registry points at it only when its rows include WHILE or IF, so
// firmware without run-time control flow links none of it
// (runtime/core/control_flow.cc).
struct ControlFlow;

struct KernelRegistry {
  const KernelRow* const* rows;
  uint32_t count;
  const ControlFlow* control_flow;  // null: no WHILE or IF row
};

// The program's registry (see the top of this file).
extern const KernelRegistry kKernelRegistry;

// The row that runs (code, backend, dtype): that backend's row for the dtype,
// else its ANY row. XNNPACK operators are prepared by the REFERENCE row: it
// validates them, and runs them when this build has no XNNPACK (the XNNPACK
// backend, runtime/core/backend.h, creates and runs them when it has).
// nullptr when no such row is linked: the model asks a backend for a kernel it
// lacks, or the program's kernel selection left it out.
const KernelRow* find_kernel(const KernelRegistry& registry, schema::OpCode code, schema::Backend backend,
                             DType dtype);
inline const KernelRow* find_kernel(schema::OpCode code, schema::Backend backend, DType dtype) {
  return find_kernel(kKernelRegistry, code, backend, dtype);
}

// The name of `code` from the registry's rows ("?" when no row has it).
const char* kernel_op_name(schema::OpCode code);

// The params block of a row's kernels: NoParams when it has none.
struct NoParams {};
template <typename T>
constexpr size_t params_block_bytes() {
  return sizeof(T);
}
template <>
constexpr size_t params_block_bytes<NoParams>() {
  return 0;
}

// The persistent region's layout is shared with the converter:
// schemas/contract/persistent_layout.h.
static_assert(sizeof(PreparedOp) == prepared_record_bytes(sizeof(void*)), "PreparedOp layout");
static_assert(sizeof(TensorView) == operand_bytes(sizeof(void*)), "TensorView layout");

}  // namespace floe

// Defines the row floe::kernels::<backend>_<op>_<dtype> (at namespace scope,
// outside any namespace), whose kernels keep their params in `params` (or
// NoParams). `prepare` and `eval` are named from namespace floe.
#define FLOE_KERNEL(backend, op, dtype, params, prepare, eval)                                                   \
  static_assert(::floe::params_block_bytes<::floe::params>() <=                                                 \
                    ::floe::op_traits(::floe::schema::OpCode::op).params_bytes,                                 \
                "a kernel's params must fit its op's block (schemas/contract/ops.def)");                        \
  static_assert(alignof(::floe::params) <= ::floe::kPersistentAlignment, "params blocks are 8-byte aligned");  \
  namespace floe::kernels {                                                                                      \
  extern const KernelRow backend##_##op##_##dtype;                                                               \
  const KernelRow backend##_##op##_##dtype = {                                                                   \
      schema::OpCode::op,                                                                                        \
      schema::Backend::backend,                                                                                  \
      kernel_dtype_of::dtype,                                                                                    \
      op_traits(schema::OpCode::op).options,                                                                     \
      op_traits(schema::OpCode::op).max_inputs,                                                                  \
      op_traits(schema::OpCode::op).backends,                                                                    \
      op_traits(schema::OpCode::op).params_bytes,                                                                \
      prepare,                                                                                                   \
      eval,                                                                                                      \
      #op};                                                                                                      \
  }
