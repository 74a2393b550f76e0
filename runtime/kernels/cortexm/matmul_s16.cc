// SPDX-License-Identifier: Apache-2.0
// Cortex-M FULLY_CONNECTED (MATMUL) in int16x8 (Operator.cortexm_kernel
// S16_GEMM): s16_gemm on the batch rows. Its own translation unit, as
// conv2d_s16.cc.
#include "runtime/core/registry.h"
#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/common/params.h"
#include "runtime/kernels/cortexm/s16_adapter.h"

namespace floe::ops {
namespace {

Status eval_fully_connected_s16_cortexm(const PreparedOp& ctx) {
  const cortexm::FullyConnectedS16Plan& p = ctx.params_as<cortexm::FullyConnectedS16Plan>();
  cortexm::s16_gemm(static_cast<const int16_t*>(ctx.input(0).data), p.k_size, p.rows,
                    static_cast<const int8_t*>(ctx.input(1).data), p.channels, p.k_size,
                    cortexm::s16_requant(ctx, p.act_min, p.act_max), static_cast<int16_t*>(ctx.output(0).data),
                    p.channels);
  return Status::kOk;
}

const char* prepare_fully_connected_s16_cortexm(const OpContext& ctx) {
  if (ctx.op->cortexm_kernel() != schema::CortexMKernel::S16_GEMM) {
    return FLOE_MSG("int16 matmul: not a Cortex-M GEMM kernel");
  }
  if (ctx.input_count() < 2 || ctx.output_count() < 1 || !ctx.has_input(0) || !ctx.has_input(1)) {
    return FLOE_MSG("int16 matmul: missing operands");
  }
  if (const char* err = kernels::check_fully_connected_s8_shapes(ctx)) return err;
  const Shape a = ctx.input(0).shape, b = ctx.input(1).shape;
  cortexm::FullyConnectedS16Plan p{a.dims[0], a.dims[1], b.dims[0], 0, 0};
  if (const char* err = cortexm::prepare_s16_operands(ctx, b.dims[0], 1, &p.act_min, &p.act_max)) return err;
  ctx.params<cortexm::FullyConnectedS16Plan>() = p;
  ctx.set_eval(eval_fully_connected_s16_cortexm);
  return nullptr;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(CORTEX_M, MATMUL, INT16, cortexm::FullyConnectedS16Plan, ops::prepare_fully_connected_s16_cortexm,
            ops::eval_fully_connected_s16_cortexm)
