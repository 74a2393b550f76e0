// SPDX-License-Identifier: Apache-2.0
// Run-time control flow: WHILE and IF, ops whose operands the kernels move but
// whose op ranges (schemas/floe.fbs, WhileOptions / IfOptions) the interpreter
// runs. Everything it takes beyond the plain op loop lives here and is reached
// only through a registry whose rows include WHILE or IF
// (KernelRegistry::control_flow), so firmware whose models have neither links
// none of it.
//   WHILE operands: inputs [n initial values, n next values, condition],
//   outputs [n loop variables]; variable k has the bytes of initial and next
//   value k. IF: input [predicate], no outputs (each branch ends with its own
//   copies into the cond's results).
#pragma once

#include <stdint.h>

#include "runtime/core/registry.h"

namespace floe {

class Model;
class Interpreter;

struct ControlFlow {
  // Model::Load: each WHILE's and IF's ranges lie after it inside the plan, in
  // order, and nest.
  Status (*validate_ranges)(Model& model);
  // The plan check (verify_plan.h): what a loop reads across iterations stays
  // live until its last op. Returns the reason, or nullptr.
  const char* (*check_loop_lifetimes)(const schema::Model& model, int32_t* tensor);
  // Invoke() of a model with WHILE or IF ops (a plain function, so that
  // Invoke() reaches it by a tail call and adds no frame to the kernels').
  Status (*invoke)(Interpreter& interpreter);

  // The one instance (runtime/core/control_flow.cc).
  static const ControlFlow kSupport;
};

// Written once by the WHILE row's prepare; Invoke reads only this.
struct WhileParams {
  uint32_t cond_end;        // condition ops: [op + 1, cond_end)
  uint32_t body_end;        // body ops: [cond_end, body_end)
  uint32_t max_iterations;  // bodies allowed
  uint32_t variables;       // n
};

// Written once by the IF row's prepare; Invoke reads only this.
struct IfParams {
  uint32_t then_end;  // then ops: [op + 1, then_end)
  uint32_t else_end;  // else ops: [then_end, else_end)
};

}  // namespace floe
