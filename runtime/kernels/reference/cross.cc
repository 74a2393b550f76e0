// SPDX-License-Identifier: Apache-2.0
// CROSS (see cross.h).
#include "runtime/kernels/reference/cross.h"

#include <stddef.h>

#include "runtime/core/registry.h"
#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/common/wrapping.h"

namespace floe::ref {
namespace {

template <typename T>
void cross_typed(In<void> a, In<void> b, Out<void> output) {
  const T* u = static_cast<const T*>(a.data);
  const T* v = static_cast<const T*>(b.data);
  T* o = static_cast<T*>(output.data);
  const ptrdiff_t vectors = static_cast<ptrdiff_t>(a.shape.span(0, a.shape.rank)) / 3;
  for (ptrdiff_t i = 0; i < vectors; ++i, u += 3, v += 3, o += 3) {
    o[0] = wrapping_sub(wrapping_mul(u[1], v[2]), wrapping_mul(u[2], v[1]));
    o[1] = wrapping_sub(wrapping_mul(u[2], v[0]), wrapping_mul(u[0], v[2]));
    o[2] = wrapping_sub(wrapping_mul(u[0], v[1]), wrapping_mul(u[1], v[0]));
  }
}

}  // namespace

bool cross_supports(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kInt32 || dtype == DType::kInt64;
}

void cross(DType dtype, In<void> a, In<void> b, Out<void> output) {
  switch (dtype) {
    case DType::kFloat32: return cross_typed<float>(a, b, output);
    case DType::kInt32: return cross_typed<int32_t>(a, b, output);
    case DType::kInt64: return cross_typed<int64_t>(a, b, output);
    default: return;
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init(); eval runs the kernel
// on the bound operands (runtime/core/registry.h).
namespace floe::ops {
namespace {

const char* prepare_cross(const OpContext& ctx) {
  if (!has_io(ctx, 2, 1)) return FLOE_MSG("expects 2 inputs and 1 output");
  const TensorView a = ctx.input(0), b = ctx.input(1), out = ctx.output(0);
  if (a.dtype != b.dtype || a.dtype != out.dtype || !ref::cross_supports(a.dtype)) {
    return FLOE_MSG("inputs and output must share one dtype: float32, int32 or int64");
  }
  if (!dims_equal(a.shape, b.shape) || !dims_equal(a.shape, out.shape)) {
    return FLOE_MSG("inputs and output must have one shape");
  }
  if (a.shape.rank < 1 || a.shape.dims[a.shape.rank - 1] != 3) return FLOE_MSG("the last dimension must be 3");
  return nullptr;
}

Status eval_cross(const PreparedOp& ctx) {
  ref::cross(ctx.input(0).dtype, in_void(ctx.input(0)), in_void(ctx.input(1)), out_void(ctx.output(0)));
  return Status::kOk;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, CROSS, ANY, NoParams, ops::prepare_cross, ops::eval_cross)
