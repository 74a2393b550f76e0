// SPDX-License-Identifier: Apache-2.0
// Pad: CONSTANT (fill with one element value), REFLECT and SYMMETRIC (mirror,
// TF MirrorPad). Type-agnostic: elements are `element_size` bytes. The caller
// guarantees rank <= kMaxRank, non-negative paddings, output dim = before +
// input dim + after, and for the mirror modes before/after <= dim - 1 (REFLECT)
// or <= dim (SYMMETRIC), so one reflection always lands inside the input.
#pragma once

#include <stddef.h>

#include "runtime/core/tensor.h"

namespace floe::ref {

enum class PadMode : uint8_t { kConstant = 0, kReflect = 1, kSymmetric = 2 };

struct PadParams {
  const int32_t* paddings = nullptr;  // [before_0, after_0, before_1, after_1, ...]
  PadMode mode = PadMode::kConstant;
  size_t element_size = 4;
  const void* constant_value = nullptr;  // one element (CONSTANT mode)
};

void pad(const PadParams& params, const In<void>& input, const Out<void>& output);

}  // namespace floe::ref
