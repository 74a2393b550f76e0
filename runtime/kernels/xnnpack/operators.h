// SPDX-License-Identifier: Apache-2.0
// One place per op for the XNNPACK backend: turns a floe operator (options,
// bound tensors) into an XNNPACK operator, created and set up once at Init()
// with the arena pointers the converter planned, so Invoke() only runs it.
// Relies on Model::Load and the reference prepare step having validated the
// op's shapes; re-checks what XNNPACK additionally assumes (constant weights,
// output geometry) and reports it instead of guessing.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <xnnpack.h>

#include "runtime/core/model.h"
#include "runtime/core/status.h"
#include "schemas/floe_generated.h"
#include "runtime/kernels/xnnpack/arena_allocator.h"

namespace floe::xnnpack {

// One operator as the XNNPACK backend sees it while it creates the operators
// at Init(): the backend is part of the interpreter's core (it takes the whole
// model at once, for its weights and the budget replay), so it reads operands
// through the Model.
struct XnnOpContext {
  const schema::Operator* op;
  const Model* model;
  uint8_t* const* arenas;  // one base per memory region

  int input_count() const { return static_cast<int>(op->inputs()->size()); }
  int output_count() const { return static_cast<int>(op->outputs()->size()); }
  bool has_input(int i) const { return i >= 0 && i < input_count() && op->inputs()->Get(i) >= 0; }
  TensorView input(int i) const { return has_input(i) ? bind_tensor(*model, arenas, op->inputs()->Get(i)) : TensorView(); }
  TensorView output(int i) const {
    return i >= 0 && i < output_count() ? bind_tensor(*model, arenas, op->outputs()->Get(i)) : TensorView();
  }
};

struct CreateArgs {
  const XnnOpContext* ctx;
  ArenaRegion* region;          // persistent allocations (XNNPACK's allocator)
  uint8_t* activations;         // Init-time scratch: the planned activations
  size_t activation_bytes;      //   (no tensor is live during Init)
  pthreadpool_t thread_pool;    // setup tiles the work for this pool
};

// Creates and sets up the XNNPACK operator for ctx->op. On failure returns a
// status and sets *why (a static message).
Status create_operator(const CreateArgs& args, xnn_operator_t* out, const char** why);

}  // namespace floe::xnnpack
