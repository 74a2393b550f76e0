// SPDX-License-Identifier: Apache-2.0
// CUMSUM / CUMPROD along one axis (exclusive, reverse) (see cumulative.h). Formulas follow the TensorFlow CPU kernels'
// documented conventions; code is our own.
#include "runtime/kernels/reference/cumulative.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "runtime/kernels/reference/element_copy.h"
#include "runtime/kernels/common/wrapping.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {
namespace {

template <typename T>
void cumulative_typed(const CumulativeParams& p, In<void> input, Out<void> output) {
  const Shape& s = input.shape;
  const ptrdiff_t outer = static_cast<ptrdiff_t>(s.span(0, p.axis));
  const ptrdiff_t count = s.dims[p.axis];
  const ptrdiff_t inner = static_cast<ptrdiff_t>(s.span(p.axis + 1, s.rank));
  const T* in = static_cast<const T*>(input.data);
  T* out = static_cast<T*>(output.data);
  for (ptrdiff_t o = 0; o < outer; ++o) {
    for (ptrdiff_t i = 0; i < inner; ++i) {
      T acc = p.product ? T(1) : T(0);
      for (ptrdiff_t step = 0; step < count; ++step) {
        const ptrdiff_t k = p.reverse ? count - 1 - step : step;
        const ptrdiff_t at = (o * count + k) * inner + i;
        const T v = in[at];
        if (p.exclusive) {
          out[at] = acc;
          acc = p.product ? wrapping_mul(acc, v) : wrapping_add(acc, v);
        } else {
          acc = p.product ? wrapping_mul(acc, v) : wrapping_add(acc, v);
          out[at] = acc;
        }
      }
    }
  }
}

}  // namespace

bool cumulative_supports(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kInt32 || dtype == DType::kInt64;
}

void cumulative(const CumulativeParams& p, DType dtype, In<void> input, Out<void> output) {
  switch (dtype) {
    case DType::kFloat32: return cumulative_typed<float>(p, input, output);
    case DType::kInt32: return cumulative_typed<int32_t>(p, input, output);
    case DType::kInt64: return cumulative_typed<int64_t>(p, input, output);
    default: return;
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {
namespace {

const char* prepare_cumulative(const OpContext& ctx, bool product) {
  if (!has_io(ctx, 1, 1)) return FLOE_MSG("expects 1 input and 1 output");
  const TensorView in = ctx.input(0), out = ctx.output(0);
  if (in.dtype != out.dtype || !ref::cumulative_supports(in.dtype)) return FLOE_MSG("unsupported dtype");
  if (!dims_equal(in.shape, out.shape)) return FLOE_MSG("output shape differs from input shape");
  const auto* o = ctx.op->options_as_CumulativeOptions();
  const int32_t axis = o->axis();
  if (axis < 0 || axis >= in.shape.rank) return FLOE_MSG("axis out of range");
  ref::CumulativeParams& p = ctx.params<ref::CumulativeParams>();
  p.axis = axis;
  p.exclusive = o->exclusive();
  p.reverse = o->reverse();
  p.product = product;
  return nullptr;
}

Status eval_cumulative(const PreparedOp& ctx) {
  ref::cumulative(ctx.params_as<ref::CumulativeParams>(), ctx.input(0).dtype,
                  in_void(ctx.input(0)), out_void(ctx.output(0)));
  return Status::kOk;
}

}  // namespace

const char* prepare_cumsum(const OpContext& ctx) { return prepare_cumulative(ctx, false); }

Status eval_cumsum(const PreparedOp& ctx) { return eval_cumulative(ctx); }

const char* prepare_cumprod(const OpContext& ctx) { return prepare_cumulative(ctx, true); }

Status eval_cumprod(const PreparedOp& ctx) { return eval_cumulative(ctx); }

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, CUMSUM, ANY, ref::CumulativeParams, ops::prepare_cumsum, ops::eval_cumsum)
FLOE_KERNEL(REFERENCE, CUMPROD, ANY, ref::CumulativeParams, ops::prepare_cumprod, ops::eval_cumprod)
