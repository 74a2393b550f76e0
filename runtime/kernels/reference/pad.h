// SPDX-License-Identifier: Apache-2.0
// Pad: CONSTANT (fill with one element value), REFLECT and SYMMETRIC (mirror,
// TF MirrorPad). Type-agnostic: elements are `element_size` bytes. The caller
// guarantees rank <= kMaxRank, non-negative paddings, output dim = before +
// input dim + after, and for the mirror modes before/after <= dim - 1 (REFLECT)
// or <= dim (SYMMETRIC), so one reflection always lands inside the input.
#pragma once

#include <stddef.h>

#include "runtime/kernels/reference/quantization.h"
#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

enum class PadMode : uint8_t { kConstant = 0, kReflect = 1, kSymmetric = 2 };

struct PadParams {
  const int32_t* paddings = nullptr;  // [before_0, after_0, before_1, after_1, ...]
  PadMode mode = PadMode::kConstant;
  size_t element_size = 4;
  const void* constant_value = nullptr;  // one element (CONSTANT mode)
};

void pad(const PadParams& params, const In<void>& input, const Out<void>& output);

// ---- int8 PAD: CONSTANT mode whose border is the output zero point (the
// real value 0), as TFLite pads quantized tensors without a constant input.
struct PadS8Params {
  int32_t paddings[2 * kMaxRank];  // [before_0, after_0, ...]
  int32_t pad_value;               // the output zero point
};

void pad_s8(const PadS8Params& params, const In<int8_t>& input, const Out<int8_t>& output);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

struct PadPrepared {
  int32_t paddings[2 * kMaxRank];
  int32_t element_size;
  uint8_t mode;                 // ref::PadMode
  bool value_from_input;        // CONSTANT mode: input 1 holds the value
  uint8_t constant_value[8];    // CONSTANT mode otherwise: one element
};

const char* prepare_pad(const OpContext& ctx);
Status eval_pad(const PreparedOp& ctx);

}  // namespace floe::ops
