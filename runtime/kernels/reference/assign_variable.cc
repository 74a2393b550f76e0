// SPDX-License-Identifier: Apache-2.0
// ASSIGN_VARIABLE (see assign_variable.h).
#include "runtime/kernels/reference/assign_variable.h"

#include <string.h>

#include "runtime/core/quantization.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ops {

const char* prepare_assign_variable(const OpContext& ctx) {
  if (ctx.input_count() < 1 || ctx.input_count() > 2 || ctx.output_count() != 1 || !ctx.has_input(0) ||
      !ctx.output_is_state(0)) {
    return FLOE_MSG("assign_variable takes a value and an optional initial value to a variable tensor");
  }
  const TensorView value = ctx.input(0), variable = ctx.output(0);
  if (value.dtype != variable.dtype || value.bytes != variable.bytes) {
    return FLOE_MSG("assign_variable changes the dtype or the byte size");
  }
  if (ctx.has_input(1)) {
    const TensorView initial = ctx.input(1);
    if (!ctx.input_is_constant(1) || initial.dtype != variable.dtype || initial.bytes != variable.bytes) {
      return FLOE_MSG("assign_variable's initial value is not a constant of the variable's dtype and size");
    }
    memcpy(variable.data, initial.data, variable.bytes);
  } else {
    reset_variable(variable, ctx.output_quantization(0).zero_point);
  }
  return nullptr;
}

Status eval_assign_variable(const PreparedOp& ctx) {
  const TensorView value = ctx.input(0), variable = ctx.output(0);
  if (value.data != variable.data) memcpy(variable.data, value.data, variable.bytes);
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, ASSIGN_VARIABLE, ANY, NoParams, ops::prepare_assign_variable, ops::eval_assign_variable)
