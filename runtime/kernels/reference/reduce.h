// SPDX-License-Identifier: Apache-2.0
// Mean over a set of axes. `axes` are sorted, unique and non-negative; keep_dims
// only changes the output shape, which the caller provides.
#pragma once

#include "runtime/core/tensor.h"

namespace floe::ref {

struct ReduceParams {
  const int32_t* axes = nullptr;
  int32_t axis_count = 0;
  bool average = true;  // false: the pairwise sum itself (Sum on float32)
};

struct ReduceOperands {
  In<float> input;
  Out<float> output;
};

void mean_f32(const ReduceParams& params, const ReduceOperands& ops);
// Same walk and pairwise summation without the division (TF Sum on float32).
inline void sum_f32(ReduceParams params, const ReduceOperands& ops) {
  params.average = false;
  mean_f32(params, ops);
}

}  // namespace floe::ref
