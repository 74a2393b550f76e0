// SPDX-License-Identifier: Apache-2.0
// IF: a cond the interpreter runs over op ranges the converter wrote
// (schemas/floe.fbs, IfOptions). The op itself moves no data (each branch
// ends with its own copies into the cond's results); the control (which
// branch runs) is the interpreter's (runtime/core/interpreter.cc).
// Operands: input [predicate], no outputs.
#pragma once

#include <stdint.h>

#include "runtime/core/dispatch.h"
#include "runtime/core/tensor.h"

namespace floe::ops {

// Written once by prepare_if; Invoke reads only this.
struct IfParams {
  uint32_t then_end;  // then ops: [op + 1, then_end)
  uint32_t else_end;  // else ops: [then_end, else_end)
};

const char* prepare_if(const OpContext& ctx);
Status eval_if(const PreparedOp& op);
// The predicate, as the ops before the IF computed it.
inline bool if_predicate(const PreparedOp& op) { return *static_cast<const uint8_t*>(op.input(0).data) != 0; }

}  // namespace floe::ops
