// SPDX-License-Identifier: Apache-2.0
// The reference backend's dispatch table (expanded from runtime/ops.def): for
// each opcode, the options type it expects, a prepare step that validates the
// op's tensors once at Init(), and an eval step that binds pointers and calls
// the kernel.
#pragma once

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "schemas/floe_generated.h"

namespace floe {

class Model;

// What a kernel adapter sees of one operator.
struct OpContext {
  const schema::Operator* op;
  const Model* model;
  uint8_t* arena;

  int input_count() const { return static_cast<int>(op->inputs()->size()); }
  int output_count() const { return static_cast<int>(op->outputs()->size()); }
  bool has_input(int i) const { return i < input_count() && op->inputs()->Get(i) >= 0; }
  // Bound views (data points into the arena or the model's constants). An
  // absent optional input yields a view with data == nullptr.
  TensorView input(int i) const;
  TensorView output(int i) const;
};

using PrepareFn = const char* (*)(const OpContext&);  // nullptr = ok, else the reason
using EvalFn = Status (*)(const OpContext&);

struct OpKernel {
  schema::OpCode opcode;
  schema::OpOptions options;
  const char* name;
  PrepareFn prepare;
  EvalFn eval;
};

// nullptr when this runtime has no kernel for `code`.
const OpKernel* find_kernel(schema::OpCode code);

// Binds a tensor of the model to memory (arena or constants).
TensorView bind_tensor(const Model& model, uint8_t* arena, int32_t index);

}  // namespace floe
