// SPDX-License-Identifier: Apache-2.0
// IF's prepare (see if_cond.h).
#include "runtime/kernels/reference/if_cond.h"

#include "runtime/core/op_adapter.h"
#include "schemas/floe_generated.h"

namespace floe::ops {

const char* prepare_if(const OpContext& ctx) {
  if (ctx.input_count() != 1 || ctx.output_count() != 0) return FLOE_MSG("if takes one input (the predicate) and no outputs");
  const TensorView pred = ctx.input(0);
  if (!ctx.has_input(0) || pred.dtype != DType::kBool || pred.bytes != 1) {
    return FLOE_MSG("if: the predicate must be one BOOL");
  }
  // The op ranges were checked against the plan by Model::Load.
  const auto* options = ctx.op->options_as_IfOptions();
  if (ctx.prepared != nullptr) {
    IfParams& p = ctx.params<IfParams>();
    p.then_end = static_cast<uint32_t>(options->then_end());
    p.else_end = static_cast<uint32_t>(options->else_end());
  }
  return nullptr;
}

Status eval_if(const PreparedOp&) { return Status::kOk; }

}  // namespace floe::ops
