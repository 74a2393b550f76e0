// SPDX-License-Identifier: Apache-2.0
// Cortex-M MATMUL. b not transposed ([K,N], the TF default and every dense
// layer): each output row is computed in column blocks held in registers for
// the whole K loop (FPU: 8 scalars; MVE: 4 vectors = 16 columns, the a(i,k)
// scalar broadcast by VFMA Qd,Qn,Rm; microkernels.h), so each b
// element is loaded once per row and no output is re-read or re-stored inside
// the loop. b transposed ([N,K]):
// dot products, 4 columns at a time sharing each a load (MVE: 4 lanes of k).
// Every column's sum runs over k in order, as in the reference, so the portable
// build is bit-exact with it (MVE's lane-split dot products are not).
#include "runtime/kernels/cortexm/matmul.h"

#include <stddef.h>

#include "runtime/kernels/cortexm/isa.h"
#include "runtime/kernels/cortexm/microkernels.h"
#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/cortexm/s8_adapter.h"
#include "runtime/kernels/cortexm/s8_plans.h"

namespace floe::cortexm {
namespace {

struct Row {
  const float* a;      // a(i, 0)
  ptrdiff_t a_step;    // distance between a(i, k) and a(i, k + 1)
  ptrdiff_t k_size;
  const float* bias;   // null when absent
  Clamp clamp;
  bool clamped;
  float* out;          // output row i
};

inline float finish(const Row& r, float sum, ptrdiff_t j) {
  if (r.bias != nullptr) sum += r.bias[j];
  return r.clamped ? r.clamp(sum) : sum;
}

#if defined(FLOE_CORTEXM_MVE)

inline float32x4_t finish4(const Row& r, float32x4_t sum, ptrdiff_t j, mve_pred16_t lanes) {
  if (r.bias != nullptr) sum = vaddq_f32(sum, vldrwq_z_f32(r.bias + j, lanes));
  if (r.clamped) {
    // Compare-and-select keeps NaN as the reference's clamp does (VMAXNM would not).
    const float32x4_t lo = vdupq_n_f32(r.clamp.lo), hi = vdupq_n_f32(r.clamp.hi);
    sum = vpselq_f32(lo, sum, vcmpltq_f32(sum, lo));
    sum = vpselq_f32(hi, sum, vcmpgtq_f32(sum, hi));
  }
  return sum;
}

// out(i, :) = a(i, :) x b, b is [K, N] with row stride ldb.
void row_times_b(const Row& r, const float* b, ptrdiff_t ldb, ptrdiff_t n) {
  ptrdiff_t j = 0;
  const mve_pred16_t all = vctp32q(4);
  for (; j + 16 <= n; j += 16) {
    float32x4_t c0, c1, c2, c3;
    if (r.a_step == 1) {
      alignas(16) float acc[16] = {};
      mac16(acc, r.a, b + j, ldb, r.k_size);
      c0 = vld1q_f32(acc), c1 = vld1q_f32(acc + 4), c2 = vld1q_f32(acc + 8), c3 = vld1q_f32(acc + 12);
    } else {
      c0 = vdupq_n_f32(0.0f), c1 = c0, c2 = c0, c3 = c0;
      const float* bk = b + j;
      const float* ak = r.a;
      for (ptrdiff_t k = 0; k < r.k_size; ++k, bk += ldb, ak += r.a_step) {
        const float x = *ak;
        c0 = vfmaq_n_f32(c0, vld1q_f32(bk), x);
        c1 = vfmaq_n_f32(c1, vld1q_f32(bk + 4), x);
        c2 = vfmaq_n_f32(c2, vld1q_f32(bk + 8), x);
        c3 = vfmaq_n_f32(c3, vld1q_f32(bk + 12), x);
      }
    }
    vst1q_f32(r.out + j, finish4(r, c0, j, all));
    vst1q_f32(r.out + j + 4, finish4(r, c1, j + 4, all));
    vst1q_f32(r.out + j + 8, finish4(r, c2, j + 8, all));
    vst1q_f32(r.out + j + 12, finish4(r, c3, j + 12, all));
  }
  for (; j < n; j += 4) {
    const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(n - j));
    float32x4_t c = vdupq_n_f32(0.0f);
    const float* bk = b + j;
    const float* ak = r.a;
    for (ptrdiff_t k = 0; k < r.k_size; ++k, bk += ldb, ak += r.a_step) {
      c = vfmaq_n_f32(c, vldrwq_z_f32(bk, lanes), *ak);
    }
    vstrwq_p_f32(r.out + j, finish4(r, c, j, lanes), lanes);
  }
}

inline float lane_sum(float32x4_t v) {
  return (vgetq_lane_f32(v, 0) + vgetq_lane_f32(v, 1)) + (vgetq_lane_f32(v, 2) + vgetq_lane_f32(v, 3));
}

// out(i, :) = a(i, :) x b^T, b is [N, K] with row stride ldb.
void row_times_bt(const Row& r, const float* b, ptrdiff_t ldb, ptrdiff_t n) {
  const ptrdiff_t k_size = r.k_size;
  ptrdiff_t j = 0;
  if (r.a_step != 1) {
    // a transposed as well (rare): a(i, :) is strided, so no vector loads of it.
    for (; j < n; ++j) {
      const float* bj = b + j * ldb;
      float c = 0.0f;
      for (ptrdiff_t k = 0; k < k_size; ++k) c = mac(c, r.a[k * r.a_step], bj[k]);
      r.out[j] = finish(r, c, j);
    }
    return;
  }
  for (; j + 4 <= n; j += 4) {
    const float *b0 = b + j * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
    float32x4_t c0 = vdupq_n_f32(0.0f), c1 = c0, c2 = c0, c3 = c0;
    for (ptrdiff_t k = 0; k < k_size; k += 4) {
      // Lanes past K load as zero and add 0 x 0.
      const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(k_size - k));
      const float32x4_t x = vldrwq_z_f32(r.a + k, lanes);
      c0 = vfmaq_f32(c0, x, vldrwq_z_f32(b0 + k, lanes));
      c1 = vfmaq_f32(c1, x, vldrwq_z_f32(b1 + k, lanes));
      c2 = vfmaq_f32(c2, x, vldrwq_z_f32(b2 + k, lanes));
      c3 = vfmaq_f32(c3, x, vldrwq_z_f32(b3 + k, lanes));
    }
    r.out[j] = finish(r, lane_sum(c0), j);
    r.out[j + 1] = finish(r, lane_sum(c1), j + 1);
    r.out[j + 2] = finish(r, lane_sum(c2), j + 2);
    r.out[j + 3] = finish(r, lane_sum(c3), j + 3);
  }
  for (; j < n; ++j) {
    const float* bj = b + j * ldb;
    float32x4_t c = vdupq_n_f32(0.0f);
    for (ptrdiff_t k = 0; k < k_size; k += 4) {
      const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(k_size - k));
      c = vfmaq_f32(c, vldrwq_z_f32(r.a + k, lanes), vldrwq_z_f32(bj + k, lanes));
    }
    r.out[j] = finish(r, lane_sum(c), j);
  }
}

#else  // FPU or portable: scalar register blocking

void row_times_b(const Row& r, const float* b, ptrdiff_t ldb, ptrdiff_t n) {
  ptrdiff_t j = 0;
  if (r.a_step == 1) {
    for (; j + 8 <= n; j += 8) {
      float acc[8] = {};
      mac8(acc, r.a, b + j, ldb, r.k_size);
      for (int c = 0; c < 8; ++c) r.out[j + c] = finish(r, acc[c], j + c);
    }
  }
  for (; j + 4 <= n; j += 4) {
    float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f;
    const float* bk = b + j;
    const float* ak = r.a;
    for (ptrdiff_t k = 0; k < r.k_size; ++k, bk += ldb, ak += r.a_step) {
      const float x = *ak;
      c0 = mac(c0, x, bk[0]);
      c1 = mac(c1, x, bk[1]);
      c2 = mac(c2, x, bk[2]);
      c3 = mac(c3, x, bk[3]);
    }
    r.out[j] = finish(r, c0, j);
    r.out[j + 1] = finish(r, c1, j + 1);
    r.out[j + 2] = finish(r, c2, j + 2);
    r.out[j + 3] = finish(r, c3, j + 3);
  }
  for (; j < n; ++j) {
    float c = 0.0f;
    const float* bk = b + j;
    const float* ak = r.a;
    for (ptrdiff_t k = 0; k < r.k_size; ++k, bk += ldb, ak += r.a_step) c = mac(c, *ak, *bk);
    r.out[j] = finish(r, c, j);
  }
}

void row_times_bt(const Row& r, const float* b, ptrdiff_t ldb, ptrdiff_t n) {
  ptrdiff_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const float *b0 = b + j * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
    float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f;
    const float* ak = r.a;
    for (ptrdiff_t k = 0; k < r.k_size; ++k, ak += r.a_step) {
      const float x = *ak;
      c0 = mac(c0, x, b0[k]);
      c1 = mac(c1, x, b1[k]);
      c2 = mac(c2, x, b2[k]);
      c3 = mac(c3, x, b3[k]);
    }
    r.out[j] = finish(r, c0, j);
    r.out[j + 1] = finish(r, c1, j + 1);
    r.out[j + 2] = finish(r, c2, j + 2);
    r.out[j + 3] = finish(r, c3, j + 3);
  }
  for (; j < n; ++j) {
    const float* bj = b + j * ldb;
    float c = 0.0f;
    const float* ak = r.a;
    for (ptrdiff_t k = 0; k < r.k_size; ++k, ak += r.a_step) c = mac(c, *ak, bj[k]);
    r.out[j] = finish(r, c, j);
  }
}

#endif

}  // namespace

void matmul_f32(const kernels::MatMulParams& params, const kernels::MatMulOperands& ops) {
  const ptrdiff_t m = ops.output.shape.dims[0];
  const ptrdiff_t n = ops.output.shape.dims[1];
  const ptrdiff_t a_ld = ops.a.shape.dims[1];
  const ptrdiff_t b_ld = ops.b.shape.dims[1];
  Row r;
  r.k_size = params.transpose_a ? ops.a.shape.dims[0] : a_ld;
  r.a_step = params.transpose_a ? a_ld : 1;
  r.bias = ops.bias.data;
  r.clamp = clamp_for(params.activation);
  r.clamped = params.activation != Activation::kNone;
  for (ptrdiff_t i = 0; i < m; ++i) {
    r.a = ops.a.data + (params.transpose_a ? i : i * a_ld);
    r.out = ops.output.data + i * n;
    if (params.transpose_b) {
      row_times_bt(r, ops.b.data, b_ld, n);
    } else {
      row_times_b(r, ops.b.data, b_ld, n);
    }
  }
}

}  // namespace floe::cortexm

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {
namespace {

Status eval_matmul_cortexm(const PreparedOp& ctx) {
  cortexm::matmul_f32(ctx.params_as<kernels::MatMulParams>(), kernels::weighted_f32_operands<kernels::MatMulOperands>(ctx));
  return Status::kOk;
}

const char* prepare_matmul_cortexm(const OpContext& ctx) {
  return kernels::check_matmul_f32(ctx, &ctx.params<kernels::MatMulParams>());
}

// ---- int8 FULLY_CONNECTED (Operator.cortexm_kernel S8_GEMM) ------------------
// a [M, K] rows against weights [N, K], the bias folded by the converter.

Status eval_fully_connected_s8_cortexm(const PreparedOp& ctx) {
  const cortexm::FullyConnectedS8Plan& p = ctx.params_as<cortexm::FullyConnectedS8Plan>();
  cortexm::s8_gemm(static_cast<const int8_t*>(ctx.input(0).data), p.k_size, p.rows,
                   static_cast<const int8_t*>(ctx.input(1).data), p.channels, p.k_size,
                   cortexm::s8_requant(ctx, p.output_offset, p.act_min, p.act_max, p.short_requant, p.narrow_weights),
                   static_cast<int8_t*>(ctx.output(0).data), p.channels);
  return Status::kOk;
}

const char* prepare_fully_connected_s8_cortexm(const OpContext& ctx) {
  if (cortexm::general_kernel(ctx.op->cortexm_kernel()) != schema::CortexMKernel::S8_GEMM) {
    return FLOE_MSG("int8 matmul: not a Cortex-M GEMM kernel");
  }
  if (ctx.input_count() < 2 || ctx.output_count() < 1 || !ctx.has_input(0) || !ctx.has_input(1)) {
    return FLOE_MSG("int8 matmul: missing operands");
  }
  if (const char* err = kernels::check_fully_connected_s8_shapes(ctx)) return err;
  const Shape a = ctx.input(0).shape, b = ctx.input(1).shape;
  cortexm::S8Quantization q;
  if (const char* err = cortexm::prepare_s8_operands(ctx, b.dims[0], 1, &q)) return err;
  ctx.params<cortexm::FullyConnectedS8Plan>() = {a.dims[0], a.dims[1], b.dims[0], q.output_offset, q.act_min,
                                                 q.act_max, cortexm::is_short_requant(ctx.op->cortexm_kernel()),
                                                 cortexm::is_narrow_weights(ctx.op->cortexm_kernel())};
  ctx.set_eval(eval_fully_connected_s8_cortexm);
  return nullptr;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(CORTEX_M, MATMUL, ANY, kernels::MatMulParams, ops::prepare_matmul_cortexm, ops::eval_matmul_cortexm)
FLOE_KERNEL(CORTEX_M, MATMUL, INT8, cortexm::FullyConnectedS8Plan, ops::prepare_fully_connected_s8_cortexm,
            ops::eval_fully_connected_s8_cortexm)
