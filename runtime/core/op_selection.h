// SPDX-License-Identifier: Apache-2.0
// Op selection. A firmware build compiles in only the ops its models use:
// FLOE_OP_SELECTION_HEADER (generated on the host from the embedded models, see
// ports/cortex-m/CMakeLists.txt) lists them; a floe_runtime source sees
// op_selected() true for those only (every op without the header). The
// dispatch table drops the other rows, so Model::Load refuses those ops, and
// code that only a dropped op needs (run-time control flow: WHILE, IF) folds away.
#pragma once

#include "schemas/floe_generated.h"
#if defined(FLOE_OP_SELECTION_HEADER)
#include FLOE_OP_SELECTION_HEADER  // namespace floe: constexpr schema::OpCode kSelectedOps[]
#endif

namespace floe {
namespace {  // internal linkage: the answer depends on the including target's build

#if defined(FLOE_OP_SELECTION_HEADER)
constexpr bool op_selected(schema::OpCode code) {
  for (schema::OpCode selected : kSelectedOps) {
    if (selected == code) return true;
  }
  return false;
}
#else
constexpr bool op_selected(schema::OpCode) { return true; }
#endif

// Invoke's control-flow path and Model::Load's range checks serve these two.
constexpr bool control_flow_selected() {
  return op_selected(schema::OpCode::WHILE) || op_selected(schema::OpCode::IF);
}

}  // namespace
}  // namespace floe
