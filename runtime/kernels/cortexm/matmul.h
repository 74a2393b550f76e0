// SPDX-License-Identifier: Apache-2.0
// Cortex-M MATMUL (float32): the contract of the reference's matmul_f32
// (runtime/kernels/common/params.h: same params and operands); runs for the ops
// the converter assigned to the CORTEX_M backend.
#pragma once

#include "runtime/core/registry.h"
#include "runtime/kernels/common/params.h"

namespace floe::cortexm {

void matmul_f32(const kernels::MatMulParams& params, const kernels::MatMulOperands& ops);

}  // namespace floe::cortexm
