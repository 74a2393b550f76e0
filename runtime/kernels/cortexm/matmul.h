// SPDX-License-Identifier: Apache-2.0
// Cortex-M MATMUL (float32): the contract of ref::matmul_f32
// (runtime/kernels/reference/matmul.h), same params and operands; runs for the
// ops the converter assigned to the CORTEX_M backend. The output must not
// overlap a or b.
#pragma once

#include "runtime/kernels/reference/matmul.h"

namespace floe::cortexm {

void matmul_f32(const ref::MatMulParams& params, const ref::MatMulOperands& ops);

}  // namespace floe::cortexm
