// SPDX-License-Identifier: Apache-2.0
// BATCH_MATMUL (see batch_matmul.h). Formulas follow the TensorFlow CPU kernels'
// documented conventions; code is our own.
#include "runtime/kernels/reference/batch_matmul.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "runtime/kernels/reference/element_copy.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {

// ---- batch matmul ---------------------------------------------------------------

void batch_matmul_f32(const BatchMatMulParams& p, In<float> x, In<float> y, Out<float> output) {
  const Shape &xs = x.shape, &ys = y.shape, &os = output.shape;
  const int r = os.rank;
  const ptrdiff_t m = os.dims[r - 2], n = os.dims[r - 1];
  const ptrdiff_t k = p.adj_x ? xs.dims[xs.rank - 2] : xs.dims[xs.rank - 1];
  const ptrdiff_t batches = static_cast<ptrdiff_t>(os.span(0, r - 2));
  // Batch index -> operand batch offsets through broadcasting (right-aligned).
  for (ptrdiff_t b = 0; b < batches; ++b) {
    ptrdiff_t rem = b, xb = 0, yb = 0, xmul = 1, ymul = 1;
    for (int d = r - 3; d >= 0; --d) {
      const ptrdiff_t od = os.dims[d];
      const ptrdiff_t i = rem % od;
      rem /= od;
      const int xd = d - (r - xs.rank), yd = d - (r - ys.rank);
      if (xd >= 0) {
        xb += (xs.dims[xd] == 1 ? 0 : i) * xmul;
        xmul *= xs.dims[xd];
      }
      if (yd >= 0) {
        yb += (ys.dims[yd] == 1 ? 0 : i) * ymul;
        ymul *= ys.dims[yd];
      }
    }
    const float* a = x.data + xb * m * k;
    const float* bm = y.data + yb * k * n;
    float* o = output.data + b * m * n;
    for (ptrdiff_t i = 0; i < m; ++i) {
      for (ptrdiff_t j = 0; j < n; ++j) {
        float acc = 0.0f;
        for (ptrdiff_t t = 0; t < k; ++t) {
          const float av = p.adj_x ? a[t * m + i] : a[i * k + t];
          const float bv = p.adj_y ? bm[j * k + t] : bm[t * n + j];
          acc += av * bv;
        }
        o[i * n + j] = acc;
      }
    }
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

const char* prepare_batch_matmul(const OpContext& ctx) {
  if (!has_io(ctx, 2, 1) || !all_f32(ctx)) return FLOE_MSG("expects 2 float32 inputs and 1 output");
  const auto* o = ctx.op->options_as_BatchMatMulOptions();
  const Shape x = ctx.input(0).shape, y = ctx.input(1).shape, out = ctx.output(0).shape;
  if (x.rank < 2 || y.rank < 2 || out.rank != (x.rank > y.rank ? x.rank : y.rank)) {
    return FLOE_MSG("operands must have rank >= 2; output the larger rank");
  }
  const int32_t m = o->adj_x() ? x.dims[x.rank - 1] : x.dims[x.rank - 2];
  const int32_t kx = o->adj_x() ? x.dims[x.rank - 2] : x.dims[x.rank - 1];
  const int32_t ky = o->adj_y() ? y.dims[y.rank - 1] : y.dims[y.rank - 2];
  const int32_t n = o->adj_y() ? y.dims[y.rank - 2] : y.dims[y.rank - 1];
  if (kx != ky) return FLOE_MSG("inner dimensions differ");
  if (out.dims[out.rank - 2] != m || out.dims[out.rank - 1] != n) return FLOE_MSG("output is not [..., M, N]");
  const Shape xb{x.dims, x.rank - 2}, yb{y.dims, y.rank - 2}, ob{out.dims, out.rank - 2};
  const Shape shapes[2] = {xb, yb};
  if (!is_broadcast_of(shapes, 2, ob)) return FLOE_MSG("batch dims do not broadcast to the output's");
  ref::BatchMatMulParams& p = ctx.params<ref::BatchMatMulParams>();
  p.adj_x = o->adj_x();
  p.adj_y = o->adj_y();
  return nullptr;
}

Status eval_batch_matmul(const PreparedOp& ctx) {
  ref::batch_matmul_f32(ctx.params_as<ref::BatchMatMulParams>(), in_as<float>(ctx.input(0)), in_as<float>(ctx.input(1)), out_as<float>(ctx.output(0)));
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, BATCH_MATMUL, ANY, ref::BatchMatMulParams, ops::prepare_batch_matmul, ops::eval_batch_matmul)
