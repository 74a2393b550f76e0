// SPDX-License-Identifier: Apache-2.0
// Concatenation along one axis. Type-agnostic: copies bytes, so one kernel serves
// every dtype (element_size given by the caller).
#pragma once

#include "runtime/core/tensor.h"

namespace floe::ref {

struct ConcatParams {
  int32_t axis = 0;          // non-negative
  size_t element_size = 4;
};

// `inputs[i]` all have the output's rank and equal dims except along `axis`.
void concat(const ConcatParams& params, const In<void>* inputs, int32_t input_count,
            const Out<void>& output);

}  // namespace floe::ref
