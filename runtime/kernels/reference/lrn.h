// SPDX-License-Identifier: Apache-2.0
// LRN: local response normalization over the last axis. Shapes are validated by the op's
// prepare step (below); outputs never alias inputs.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

struct LrnParams {
  int32_t depth_radius = 5;
  float bias = 1.0f, alpha = 1.0f, beta = 0.5f;
};

void lrn_f32(const LrnParams& p, In<float> input, Out<float> output);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_lrn(const OpContext& ctx);
Status eval_lrn(const PreparedOp& ctx);

}  // namespace floe::ops
