// SPDX-License-Identifier: Apache-2.0
// SELECT (see select.h): the three-way broadcast walk over an element type of
// the operands' size.
#include "runtime/kernels/reference/select.h"

#include "runtime/kernels/reference/broadcast.h"
#include "runtime/kernels/reference/element_copy.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {

void select(size_t element_size, const SelectOperands& ops) {
  with_element_type(element_size, [&](auto tag) {
    using U = decltype(tag);
    broadcast_ternary(ops.cond.data, ops.cond.shape, static_cast<const U*>(ops.x.data), ops.x.shape,
                      static_cast<const U*>(ops.y.data), ops.y.shape, static_cast<U*>(ops.output.data),
                      ops.output.shape, [](uint8_t c, U x, U y) { return c != 0 ? x : y; });
  });
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

const char* prepare_select(const OpContext& ctx) {
  if (!has_io(ctx, 3, 1)) return FLOE_MSG("expects cond, x, y and 1 output");
  const TensorView c = ctx.input(0), x = ctx.input(1), y = ctx.input(2), o = ctx.output(0);
  if (c.dtype != DType::kBool) return FLOE_MSG("condition must be bool");
  if (x.dtype != y.dtype || o.dtype != x.dtype) return FLOE_MSG("x, y and output dtypes differ");
  if (dtype_size(o.dtype) == 0) return FLOE_MSG("invalid dtype");
  const Shape shapes[3] = {c.shape, x.shape, y.shape};
  if (!is_broadcast_of(shapes, 3, o.shape)) return FLOE_MSG("output shape is not the broadcast shape");
  return nullptr;
}

Status eval_select(const PreparedOp& ctx) {
  const TensorView &c = ctx.input(0), &o = ctx.output(0);
  ref::select(dtype_size(o.dtype),
              {in_as<uint8_t>(c), in_void(ctx.input(1)), in_void(ctx.input(2)), out_void(o)});
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, SELECT, ANY, NoParams, ops::prepare_select, ops::eval_select)
