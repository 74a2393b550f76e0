// SPDX-License-Identifier: Apache-2.0
// BATCH_MATMUL: batched matmul with broadcast batch dims and adjoints. Shapes are validated by the op's
// prepare step (below); outputs never alias inputs.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

struct BatchMatMulParams {
  bool adj_x = false;
  bool adj_y = false;
};

// x [..., M, K] (or [..., K, M]), y [..., K, N] (or [..., N, K]); batch dims broadcast.
void batch_matmul_f32(const BatchMatMulParams& p, In<float> x, In<float> y, Out<float> output);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_batch_matmul(const OpContext& ctx);
Status eval_batch_matmul(const PreparedOp& ctx);

}  // namespace floe::ops
