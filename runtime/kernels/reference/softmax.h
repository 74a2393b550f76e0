// SPDX-License-Identifier: Apache-2.0
// Softmax over the last axis: out = exp(beta*(x - max)) / sum(exp(beta*(x - max))).
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/dispatch.h"

namespace floe::ref {

struct SoftmaxParams {
  float beta = 1.0f;
};

struct SoftmaxOperands {
  In<float> input;  // rank >= 1
  Out<float> output;
};

void softmax_f32(const SoftmaxParams& params, const SoftmaxOperands& ops);

void log_softmax_f32(In<float> input, Out<float> output);

}  // namespace floe::ref

// The op's adapter (runtime/ops.def names it; runtime/core/dispatch.h).
namespace floe::ops {

const char* prepare_softmax(const OpContext& ctx);
Status eval_softmax(const PreparedOp& ctx);
const char* prepare_log_softmax(const OpContext& ctx);
Status eval_log_softmax(const PreparedOp& ctx);

}  // namespace floe::ops
