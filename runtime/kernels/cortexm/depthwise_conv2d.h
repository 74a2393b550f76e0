// SPDX-License-Identifier: Apache-2.0
// Cortex-M DEPTHWISE_CONV2D (float32): the contract of
// ref::depthwise_conv2d_f32 (runtime/kernels/reference/depthwise_conv2d.h), same
// params and operands; runs for the ops the converter assigned to the CORTEX_M
// backend. The output must not overlap the input or the filter.
#pragma once

#include "runtime/kernels/reference/depthwise_conv2d.h"

namespace floe::cortexm {

void depthwise_conv2d_f32(const ref::DepthwiseConv2DParams& params,
                          const ref::DepthwiseConv2DOperands& ops);

}  // namespace floe::cortexm
