// SPDX-License-Identifier: Apache-2.0
// WHILE's prepare and copies (see while_loop.h).
#include "runtime/kernels/reference/while_loop.h"

#include <string.h>

#include "runtime/core/op_adapter.h"
#include "schemas/floe_generated.h"

namespace floe::ops {

const char* prepare_while(const OpContext& ctx) {
  const int n = ctx.output_count();
  if (ctx.input_count() != 2 * n + 1) {
    return FLOE_MSG("while takes 2n + 1 inputs (initial values, next values, condition) for n variables");
  }
  for (int k = 0; k < n; ++k) {
    const TensorView var = ctx.output(k), init = ctx.input(k), next = ctx.input(n + k);
    if (!ctx.has_input(k) || !ctx.has_input(n + k) || init.dtype != var.dtype || next.dtype != var.dtype ||
        init.bytes != var.bytes || next.bytes != var.bytes) {
      return FLOE_MSG("while: a loop variable differs from its initial or next value in dtype or size");
    }
  }
  const TensorView cond = ctx.input(2 * n);
  if (!ctx.has_input(2 * n) || cond.dtype != DType::kBool || cond.bytes != 1) {
    return FLOE_MSG("while: the condition must be one BOOL");
  }
  // The op ranges were checked against the plan by Model::Load.
  const auto* options = ctx.op->options_as_WhileOptions();
  if (ctx.prepared != nullptr) {
    WhileParams& p = ctx.params<WhileParams>();
    p.cond_end = static_cast<uint32_t>(options->cond_end());
    p.body_end = static_cast<uint32_t>(options->body_end());
    p.max_iterations = options->max_iterations();
    p.variables = static_cast<uint32_t>(n);
  }
  return nullptr;
}

Status eval_while(const PreparedOp& op) {
  const int n = op.output_count();
  for (int k = 0; k < n; ++k) {
    const TensorView& var = op.output(k);
    if (op.input(k).data != var.data) memmove(var.data, op.input(k).data, var.bytes);
  }
  return Status::kOk;
}

void while_take_next_values(const PreparedOp& op) {
  const int n = op.output_count();
  for (int k = 0; k < n; ++k) {
    const TensorView& var = op.output(k);
    if (op.input(n + k).data != var.data) memmove(var.data, op.input(n + k).data, var.bytes);
  }
}

}  // namespace floe::ops
