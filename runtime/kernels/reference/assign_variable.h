// SPDX-License-Identifier: Apache-2.0
// ASSIGN_VARIABLE: a resource variable's assignment, the value's bytes copied
// into the variable tensor. The op owns the variable's reset, as SVDF owns its
// state: its prepare (at Init()) sets the variable to the initial value (input
// 1, a constant: what TFLite's CALL_ONCE initializer assigned) or, without
// one, to its zero point, as TFLM's ASSIGN_VARIABLE prepare does; the
// interpreter's ResetVariableTensors() does the same. Reads of the variable
// are RESHAPE copies (a snapshot: a later assignment does not change them).
#pragma once

#include "runtime/core/registry.h"

namespace floe::ops {

const char* prepare_assign_variable(const OpContext& ctx);
Status eval_assign_variable(const PreparedOp& ctx);

}  // namespace floe::ops
