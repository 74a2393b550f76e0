// SPDX-License-Identifier: Apache-2.0
// Cortex-M MATMUL (float32): the contract of ref::matmul_f32
// (runtime/kernels/reference/matmul.h), same params and operands; runs for the
// ops the converter assigned to the CORTEX_M backend. The output must not
// overlap a or b.
#pragma once

#include "runtime/kernels/reference/matmul.h"
#include "runtime/core/dispatch.h"

namespace floe::cortexm {

void matmul_f32(const ref::MatMulParams& params, const ref::MatMulOperands& ops);

}  // namespace floe::cortexm

namespace floe::ops {

// The CORTEX_M variant of the reference adapter's eval (it picks this one at prepare).
Status eval_matmul_cortexm(const PreparedOp& ctx);

// int8 MATMUL (FULLY_CONNECTED) with Operator.cortexm_kernel S8_GEMM: weights
// [N, K], folded bias, per-channel arrays; fills the plan and picks the eval.
const char* prepare_fully_connected_s8_cortexm(const OpContext& ctx);

}  // namespace floe::ops
