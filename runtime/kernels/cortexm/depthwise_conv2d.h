// SPDX-License-Identifier: Apache-2.0
// Cortex-M DEPTHWISE_CONV2D (float32, depth multiplier 1): the contract of the
// reference's depthwise_conv2d_f32 (runtime/kernels/common/params.h: same
// params and operands); runs for the ops the converter assigned to the
// CORTEX_M backend. The output must not overlap the input or the filter.
#pragma once

#include "runtime/core/registry.h"
#include "runtime/kernels/common/params.h"

namespace floe::cortexm {

void depthwise_conv2d_f32(const kernels::DepthwiseConv2DParams& params,
                          const kernels::DepthwiseConv2DOperands& ops);

}  // namespace floe::cortexm
