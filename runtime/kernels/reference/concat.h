// SPDX-License-Identifier: Apache-2.0
// Concatenation along one axis. Type-agnostic: copies bytes, so one kernel serves
// every dtype (element_size given by the caller).
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/dispatch.h"

namespace floe::ref {

struct ConcatParams {
  int32_t axis = 0;          // non-negative
  size_t element_size = 4;
};

// `inputs[i]` all have the output's rank and equal dims except along `axis`.
void concat(const ConcatParams& params, const In<void>* inputs, int32_t input_count,
            const Out<void>& output);

}  // namespace floe::ref

// The op's adapter (runtime/ops.def names it; runtime/core/dispatch.h).
namespace floe::ops {

struct ConcatPrepared {
  int32_t axis;
  int32_t element_size;
};

const char* prepare_concat(const OpContext& ctx);
Status eval_concat(const PreparedOp& ctx);

}  // namespace floe::ops
