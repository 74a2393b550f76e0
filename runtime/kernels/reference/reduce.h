// SPDX-License-Identifier: Apache-2.0
// Mean over a set of axes. `axes` are sorted, unique and non-negative; keep_dims
// only changes the output shape, which the caller provides.
#pragma once

#include "runtime/core/tensor.h"

namespace floe::ref {

struct ReduceParams {
  const int32_t* axes = nullptr;
  int32_t axis_count = 0;
};

struct ReduceOperands {
  In<float> input;
  Out<float> output;
};

void mean_f32(const ReduceParams& params, const ReduceOperands& ops);

}  // namespace floe::ref
