// SPDX-License-Identifier: Apache-2.0
// Transpose: output dim i is input dim perm[i]. Type-agnostic (moves elements of
// `element_size` bytes), so one kernel serves every dtype. The caller guarantees
// perm is a permutation of [0, rank), rank <= kMaxRank, and the output shape is
// the permuted input shape; input and output must not overlap.
#pragma once

#include <stddef.h>

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

struct TransposeParams {
  const int32_t* perm = nullptr;  // rank entries
  size_t element_size = 4;
};

void transpose(const TransposeParams& params, const In<void>& input, const Out<void>& output);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

struct TransposePrepared {
  int32_t perm[kMaxRank];
  int32_t element_size;
};

const char* prepare_transpose(const OpContext& ctx);
Status eval_transpose(const PreparedOp& ctx);

}  // namespace floe::ops
