// SPDX-License-Identifier: Apache-2.0
// Reshape / Squeeze / ExpandDims: the row-major bytes are unchanged, so the op is
// a copy. The converter gives the output its input's bytes when the input dies
// at the reshape (converter/plan/arena_plan.h); prepare then picks an eval that
// does nothing. Otherwise the two never share a byte: Model::Load's plan check
// (runtime/core/verify_plan.h) allows an input and output to overlap only at
// exactly the same bytes, so a memcpy suffices.
#include "runtime/kernels/reference/reshape.h"

#include <string.h>
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {

void reshape(const void* input, void* output, size_t bytes) {
  if (input == output || bytes == 0) return;
  memcpy(output, input, bytes);
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

// ---- shape ops -----------------------------------------------------------

const char* prepare_reshape(const OpContext& ctx) {
  if (ctx.input_count() != 1 || ctx.output_count() != 1 || !ctx.has_input(0)) {
    return FLOE_MSG("reshape takes one input and one output");
  }
  const TensorView input = ctx.input(0), output = ctx.output(0);
  if (input.dtype != output.dtype || input.bytes != output.bytes) {
    return FLOE_MSG("reshape changes the dtype or the byte size");
  }
  if (input.data == output.data && ctx.prepared != nullptr) ctx.set_eval(eval_reshape_in_place);
  return nullptr;
}

Status eval_reshape_in_place(const PreparedOp&) { return Status::kOk; }

Status eval_reshape(const PreparedOp& ctx) {
  const TensorView input = ctx.input(0), output = ctx.output(0);
  ref::reshape(input.data, output.data, output.bytes);
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, RESHAPE, ANY, NoParams, ops::prepare_reshape, ops::eval_reshape)
