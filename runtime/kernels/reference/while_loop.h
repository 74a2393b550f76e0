// SPDX-License-Identifier: Apache-2.0
// WHILE: a loop the interpreter runs over op ranges the converter wrote
// (schemas/floe.fbs, WhileOptions). This file holds its data movement; the
// control (which ops run next) is the interpreter's (runtime/core/interpreter.cc).
// Operands: inputs [n initial values, n next values, condition], outputs
// [n loop variables]; variable k has the bytes of initial and next value k.
#pragma once

#include <stdint.h>

#include "runtime/core/dispatch.h"
#include "runtime/core/tensor.h"

namespace floe::ops {

// Written once by prepare_while; Invoke reads only this.
struct WhileParams {
  uint32_t cond_end;        // condition ops: [op + 1, cond_end)
  uint32_t body_end;        // body ops: [cond_end, body_end)
  uint32_t max_iterations;  // bodies allowed
  uint32_t variables;       // n
};

const char* prepare_while(const OpContext& ctx);
// Copies the initial values into the loop variables (the loop's entry).
Status eval_while(const PreparedOp& op);
// Copies the next values into the loop variables (the end of one body).
void while_take_next_values(const PreparedOp& op);
// The condition the condition ops just computed.
inline bool while_condition(const PreparedOp& op) {
  return *static_cast<const uint8_t*>(op.input(op.input_count() - 1).data) != 0;
}

}  // namespace floe::ops
