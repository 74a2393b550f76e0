// SPDX-License-Identifier: Apache-2.0
// floe::Interpreter runs a validated Model inside one caller-provided arena.
//
//   arena (caller-owned, 16-byte aligned, >= model.arena_size() bytes)
//   +-----------------------------------------------+
//   | planned activations (offsets from the model)  |
//   +-----------------------------------------------+
//   | backend region (XNNPACK operators, packed      |  only when this build runs
//   | weights; 64-aligned, budget from the model)    |  the model's XNNPACK ops
//   +-----------------------------------------------+  (16-aligned)
//   | persistent region: one PreparedOp per op, its  |  size from the model, for
//   | bound operands and params (registry.h)         |  this build's pointer width
//   +-----------------------------------------------+
//
// A model converted with several memory regions (floe-convert
// --memory-regions) takes one arena per region: the activations the converter
// placed in region r live in arena r, and the backend and persistent regions
// follow the activations of Model::persistent_region(). Given one arena, such a
// model lays its regions out in it back to back (Model::arena_size()).
//
// Every offset and size was fixed by the converter. Init() prepares each op
// once; Invoke() calls each op's eval on its prepared record. The interpreter
// allocates nothing and never touches memory outside the arena and the model
// buffer. Not thread-safe; one Invoke() at a time.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "runtime/core/backend.h"
#include "runtime/core/registry.h"
#include "runtime/core/model.h"
#include "runtime/core/parallel.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace floe {

class Interpreter {
 public:
  Interpreter(const Model& model, void* arena, size_t arena_bytes);
  // One arena per memory region, in the model's region order: arenas[r] holds
  // arena_bytes[r] >= model.region_arena_size(r) bytes, 16-byte aligned. The
  // pointer arrays are copied; the arenas must outlive the interpreter.
  Interpreter(const Model& model, void* const* arenas, const size_t* arena_bytes, size_t arena_count);

  // Checks the arena (size, alignment), then prepares every op once: binds
  // its operands, validates its tensors and options, writes its params.
  [[nodiscard]] Status Init();
  // Runs every operator in order on its prepared record; reads nothing of the
  // model's FlatBuffers tables.
  [[nodiscard]] Status Invoke();
  // Puts every variable tensor (the state of SVDF and LSTM ops and resource
  // variables, which carries from one Invoke() to the next) back to its value
  // after Init(): its initial value when the model gives one (a resource
  // variable's initializer), else its zero point when int8, else 0 (TFLite's
  // ResetVariableTensors()).
  [[nodiscard]] Status ResetVariableTensors();

  size_t input_count() const;
  size_t output_count() const;
  // Views of the model's inputs (write before Invoke) and outputs.
  TensorView input(size_t i) const;
  TensorView output(size_t i) const;
  // Typed pointers into an input / output (TFLite's typed_input_tensor):
  // null when i is out of range or the tensor's dtype is not T's.
  template <typename T>
  T* typed_input(size_t i) const { return i < input_count() ? input(i).as<T>() : nullptr; }
  template <typename T>
  const T* typed_output(size_t i) const { return i < output_count() ? output(i).as<const T>() : nullptr; }
  // Scale and zero point of an int8 input/output (channels == 0 for a float
  // one): q = round(real / scale) + zero_point, real = scale * (q - zero_point).
  Quantization input_quantization(size_t i) const;
  Quantization output_quantization(size_t i) const;
  // Index of the input/output whose tensor is `name` ("x" matches "x:0"); -1 if none.
  int input_index(const char* name) const;
  int output_index(const char* name) const;

  // Any tensor (for tools that dump intermediates). Valid after Invoke().
  size_t tensor_count() const { return model_.tensor_count(); }
  TensorView tensor(size_t index) const;

  // Called after each operator when set (profiling, intermediate dumps).
  using OpObserver = void (*)(void* user, size_t op_index, const char* op_name);
  void set_observer(OpObserver observer, void* user) {
    observer_ = observer;
    observer_user_ = user;
  }

  const Error& error() const { return error_; }
  // After Invoke() returned kIndexOutOfRange: which index of error().op's
  // indices was out of range (status.h), as its kernel wrote it in its params
  // block. Otherwise position -1. (Inline: firmware that never asks links none.)
  IndexFault index_fault() const {
    if (error_.status != Status::kIndexOutOfRange || ops_ == nullptr || error_.op < 0) return IndexFault();
    return *static_cast<const IndexFault*>(ops_[error_.op].params);
  }

  // Optional kernel library (runtime/core/backend.h; XNNPACK when built with it).
  // Threads: a caller-owned pthreadpool_t (pthreadpool_create(n)), or null for
  // the caller's thread only (the default). Set it before Init(): XNNPACK tiles
  // the work for the pool when it sets the operators up, and floe's own
  // kernels on the host targets split theirs (runtime/core/parallel.h). Builds
  // without a kernel library run everything on the caller's thread.
  void set_thread_pool(void* pthreadpool) { thread_pool_ = pthreadpool; }
  // After Init(): operators run by the backend, and the arena bytes its
  // persistent region really used (<= the converter's budget, which
  // Model::arena_size() includes).
  size_t backend_op_count() const { return backend_ops_; }
  size_t backend_arena_used() const { return backend_bytes_used_; }
  bool runs_on_backend(size_t op_index) const;
  // After Init(): the persistent region's bytes (records, operands, params),
  // and the arena bytes in use: activations + what XNNPACK took + the
  // persistent region. Equal to Model::arena_size() when no XNNPACK op runs;
  // with XNNPACK the model's budget is an upper bound of what it takes.
  size_t persistent_bytes_used() const { return persistent_used_; }
  size_t arena_used() const;

 private:
  friend struct ControlFlow;
  Status fail(Status status, const char* message, int32_t op = -1);
  Status run_op(size_t i);  // runtime/core/run_op.h
  Status invoke_ops();           // the plain path: every op in order
  static Status invoke_control_flow(Interpreter& self);  // runtime/core/control_flow.cc
  Status invoke_ranges();                                // its body
  Status check_arenas();
  void bind_arenas();
  int find_io(const void* list, const char* name) const;

  const Model& model_;
  uint8_t* arena_;           // the persistent region's arena, once bound
  // As given: one arena (arena_count_ == 0) or one per memory region.
  uint8_t* given_[kMaxMemoryRegions] = {};
  size_t given_bytes_[kMaxMemoryRegions] = {};
  size_t arena_count_ = 0;
  uint8_t* arenas_[kMaxMemoryRegions] = {};  // each region's base
  bool initialized_ = false;
  BackendState* backend_ = nullptr;  // inside the arena, after the activations
  PreparedOp* ops_ = nullptr;        // [op count], in the persistent region
  size_t op_count_ = 0;
  size_t persistent_offset_ = 0;
  size_t persistent_used_ = 0;
  void* thread_pool_ = nullptr;
  OpThreads op_threads_;  // the pool as floe's own kernels see it (after Init)
  size_t backend_ops_ = 0;
  size_t backend_bytes_used_ = 0;
  OpObserver observer_ = nullptr;
  void* observer_user_ = nullptr;
  Error error_;
  // Invoke's run-time loops and taken then-branches, innermost last (Model::Load
  // bounds the nesting).
  // Kept here rather than on Invoke's stack: the deepest kernel call chains
  // run under Invoke and the Cortex-M stack budget counts every byte of it.
  struct LoopFrame {
    uint32_t op : 31;  // the WHILE's or IF's index (< kMaxModelOps)
    uint32_t in_body : 1;
    uint32_t iterations;
  };
  LoopFrame loops_[kMaxLoopNesting] = {};
  bool has_loops_ = false;  // any WHILE or IF: Invoke takes the control-flow path
};

}  // namespace floe
