// SPDX-License-Identifier: Apache-2.0
// Cortex-M CONV2D (float32): the contract of ref::conv2d_f32
// (runtime/kernels/reference/conv2d.h), same params and operands; runs for the
// ops the converter assigned to the CORTEX_M backend. The output must not
// overlap the input or the filter.
#pragma once

#include "runtime/kernels/reference/conv2d.h"

namespace floe::cortexm {

void conv2d_f32(const ref::Conv2DParams& params, const ref::Conv2DOperands& ops);

}  // namespace floe::cortexm
