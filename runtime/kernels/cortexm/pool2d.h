// SPDX-License-Identifier: Apache-2.0
// Cortex-M int8 AVG_POOL2D: the contract of ref::avg_pool2d_s8
// (runtime/kernels/reference/pool2d.h), same params and operands; runs for the
// int8 average poolings the converter assigned to the CORTEX_M backend.
#pragma once

#include "runtime/kernels/reference/pool2d.h"
#include "runtime/core/dispatch.h"

namespace floe::cortexm {

void avg_pool2d_s8(const ref::Pool2DS8Params& params, const ref::Pool2DS8Operands& ops);

}  // namespace floe::cortexm

namespace floe::ops {

// The CORTEX_M variant of the reference adapter's int8 eval (its prepare
// picks this one for an AVG_POOL2D on the CORTEX_M backend).
Status eval_avg_pool2d_s8_cortexm(const PreparedOp& ctx);

}  // namespace floe::ops
