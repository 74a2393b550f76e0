// SPDX-License-Identifier: Apache-2.0
// CUMSUM / CUMPROD along one axis (exclusive, reverse). Shapes are validated by the op's
// prepare step (below); outputs never alias inputs.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

struct CumulativeParams {
  int32_t axis = 0;
  bool exclusive = false;
  bool reverse = false;
  bool product = false;
};

bool cumulative_supports(DType dtype);

void cumulative(const CumulativeParams& p, DType dtype, In<void> input, Out<void> output);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_cumsum(const OpContext& ctx);
Status eval_cumsum(const PreparedOp& ctx);
const char* prepare_cumprod(const OpContext& ctx);
Status eval_cumprod(const PreparedOp& ctx);

}  // namespace floe::ops
