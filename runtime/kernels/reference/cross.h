// SPDX-License-Identifier: Apache-2.0
// CROSS: the cross product of the 3-vectors along the last axis of two inputs
// of one shape [..., 3] (TF's Cross): out = (a1 b2 - a2 b1, a2 b0 - a0 b2,
// a0 b1 - a1 b0), computed in the inputs' dtype, integers wrapping. Shapes are
// validated by the op's prepare step; the output may alias neither input.
#pragma once

#include "runtime/core/tensor.h"

namespace floe::ref {

bool cross_supports(DType dtype);

void cross(DType dtype, In<void> a, In<void> b, Out<void> output);

}  // namespace floe::ref
