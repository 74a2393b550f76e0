// SPDX-License-Identifier: Apache-2.0
// FAKE_QUANT: TF's fake quantization with nudged ranges (per tensor or per last-axis channel). Shapes are validated by the op's
// prepare step (below); outputs never alias inputs.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

// min/max: one value, or one per last-dim channel (count = channels).
void fake_quant_f32(int32_t num_bits, bool narrow_range, In<float> input, In<float> min, In<float> max,
                    Out<float> output);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

struct FakeQuantPrepared {
  int32_t num_bits;
  bool narrow_range;
};

const char* prepare_fake_quant(const OpContext& ctx);
Status eval_fake_quant(const PreparedOp& ctx);

}  // namespace floe::ops
