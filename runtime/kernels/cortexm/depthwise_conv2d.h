// SPDX-License-Identifier: Apache-2.0
// Cortex-M DEPTHWISE_CONV2D (float32): the contract of
// ref::depthwise_conv2d_f32 (runtime/kernels/reference/depthwise_conv2d.h), same
// params and operands; runs for the ops the converter assigned to the CORTEX_M
// backend. The output must not overlap the input or the filter.
#pragma once

#include "runtime/kernels/reference/depthwise_conv2d.h"
#include "runtime/core/dispatch.h"

namespace floe::cortexm {

void depthwise_conv2d_f32(const ref::DepthwiseConv2DParams& params,
                          const ref::DepthwiseConv2DOperands& ops);

}  // namespace floe::cortexm

namespace floe::ops {

// The CORTEX_M variant of the reference adapter's eval (it picks this one at prepare).
Status eval_depthwise_conv2d_cortexm(const PreparedOp& ctx);

// int8 DEPTHWISE_CONV2D with Operator.cortexm_kernel S8_DEPTHWISE (multiplier
// 1, raw bias present, per-channel arrays); fills the plan and picks the eval.
const char* prepare_depthwise_conv2d_s8_cortexm(const OpContext& ctx);

}  // namespace floe::ops
