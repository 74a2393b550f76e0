// SPDX-License-Identifier: Apache-2.0
// LRN (see lrn.h). Formulas follow the TensorFlow CPU kernels'
// documented conventions; code is our own.
#include "runtime/kernels/reference/lrn.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "runtime/kernels/reference/element_copy.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {

void lrn_f32(const LrnParams& p, In<float> input, Out<float> output) {
  const ptrdiff_t depth = input.shape.dims[input.shape.rank - 1];
  const ptrdiff_t rows = depth > 0 ? static_cast<ptrdiff_t>(input.shape.num_elements()) / depth : 0;
  for (ptrdiff_t r = 0; r < rows; ++r) {
    const float* x = input.data + r * depth;
    float* o = output.data + r * depth;
    for (ptrdiff_t c = 0; c < depth; ++c) {
      const ptrdiff_t lo = c - p.depth_radius < 0 ? 0 : c - p.depth_radius;
      const ptrdiff_t hi = c + p.depth_radius >= depth ? depth - 1 : c + p.depth_radius;
      float sum = 0.0f;
      for (ptrdiff_t j = lo; j <= hi; ++j) sum += x[j] * x[j];
      o[c] = x[c] / powf(p.bias + p.alpha * sum, p.beta);
    }
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

const char* prepare_lrn(const OpContext& ctx) {
  if (const char* err = prepare_last_axis_f32(ctx)) return err;
  const auto* o = ctx.op->options_as_LrnOptions();
  if (o->depth_radius() < 0) return FLOE_MSG("depth_radius must be >= 0");
  ref::LrnParams& p = ctx.params<ref::LrnParams>();
  p.depth_radius = o->depth_radius();
  p.bias = o->bias();
  p.alpha = o->alpha();
  p.beta = o->beta();
  return nullptr;
}

Status eval_lrn(const PreparedOp& ctx) {
  ref::lrn_f32(ctx.params_as<ref::LrnParams>(), in_as<float>(ctx.input(0)), out_as<float>(ctx.output(0)));
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, LRN, ANY, ref::LrnParams, ops::prepare_lrn, ops::eval_lrn)
