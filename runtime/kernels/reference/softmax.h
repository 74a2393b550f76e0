// SPDX-License-Identifier: Apache-2.0
// Softmax over the last axis: out = exp(beta*(x - max)) / sum(exp(beta*(x - max))).
#pragma once

#include "runtime/core/tensor.h"

namespace floe::ref {

struct SoftmaxParams {
  float beta = 1.0f;
};

struct SoftmaxOperands {
  In<float> input;  // rank >= 1
  Out<float> output;
};

void softmax_f32(const SoftmaxParams& params, const SoftmaxOperands& ops);

}  // namespace floe::ref
