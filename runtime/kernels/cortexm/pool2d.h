// SPDX-License-Identifier: Apache-2.0
// Cortex-M int8 AVG_POOL2D: the contract of the reference's avg_pool2d_s8
// (runtime/kernels/common/params.h: same params and operands).
#pragma once

#include "runtime/core/registry.h"
#include "runtime/kernels/common/params.h"

namespace floe::cortexm {

void avg_pool2d_s8(const kernels::Pool2DS8Params& params, const kernels::Pool2DS8Operands& ops);

}  // namespace floe::cortexm
