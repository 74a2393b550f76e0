// SPDX-License-Identifier: Apache-2.0
// TOPK over the last axis (values and int32 indices, sorted or in input order). Shapes are validated by the op's
// prepare step (below); outputs never alias inputs.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

// Last axis. sorted: values descending, ties keep the lower index first;
// unsorted: TF's heap layout (the k largest, smallest at position 0).
void topk_f32(bool sorted, In<float> input, Out<float> values, Out<int32_t> indices);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

struct TopKPrepared {
  bool sorted;
};

const char* prepare_topk(const OpContext& ctx);
Status eval_topk(const PreparedOp& ctx);

}  // namespace floe::ops
