// SPDX-License-Identifier: Apache-2.0
// FAKE_QUANT (see fake_quant.h). Formulas follow the TensorFlow CPU kernels'
// documented conventions; code is our own.
#include "runtime/kernels/reference/fake_quant.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "runtime/kernels/reference/element_copy.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {

// ---- fake quantization ------------------------------------------------------------------

void fake_quant_f32(int32_t num_bits, bool narrow_range, In<float> input, In<float> min, In<float> max,
                    Out<float> output) {
  const float quant_min = narrow_range ? 1.0f : 0.0f;
  const float quant_max = static_cast<float>((1 << num_bits) - 1);
  const ptrdiff_t channels = static_cast<ptrdiff_t>(min.shape.num_elements());
  const ptrdiff_t n = static_cast<ptrdiff_t>(input.shape.num_elements());
  for (ptrdiff_t c = 0; c < channels; ++c) {
    const float lo = min.data[c], hi = max.data[c];
    // Nudge so that real 0.0 is exactly representable (TF's FakeQuant* rule).
    const float scale = (hi - lo) / (quant_max - quant_min);
    const float zero_from_min = quant_min - lo / scale;
    const float zero = zero_from_min < quant_min ? quant_min
                       : zero_from_min > quant_max ? quant_max
                                                   : roundf(zero_from_min);
    const float nudged_min = (quant_min - zero) * scale;
    const float nudged_max = (quant_max - zero) * scale;
    const float inv_scale = 1.0f / scale;
    for (ptrdiff_t i = c; i < n; i += channels) {
      const float x = input.data[i];
      const float clamped = x < nudged_min ? nudged_min : (x > nudged_max ? nudged_max : x);
      output.data[i] = floorf((clamped - nudged_min) * inv_scale + 0.5f) * scale + nudged_min;
    }
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

const char* prepare_fake_quant(const OpContext& ctx) {
  if (!has_io(ctx, 3, 1) || !all_f32(ctx)) return FLOE_MSG("expects x, min, max (float32) and 1 output");
  const TensorView x = ctx.input(0), lo = ctx.input(1), hi = ctx.input(2);
  if (!dims_equal(x.shape, ctx.output(0).shape)) return FLOE_MSG("output shape differs");
  const int64_t c = lo.shape.num_elements();
  if (c != hi.shape.num_elements() || c < 1) return FLOE_MSG("min/max sizes differ");
  if (c > 1 && (x.shape.rank < 1 || x.shape.dims[x.shape.rank - 1] != c)) {
    return FLOE_MSG("per-channel min/max must match the last dim");
  }
  const auto* o = ctx.op->options_as_FakeQuantOptions();
  const int32_t bits = o->num_bits();
  if (bits < 2 || bits > 16) return FLOE_MSG("num_bits must be in [2, 16]");
  FakeQuantPrepared& prepared = ctx.params<FakeQuantPrepared>();
  prepared.num_bits = bits;
  prepared.narrow_range = o->narrow_range();
  return nullptr;
}

Status eval_fake_quant(const PreparedOp& ctx) {
  const FakeQuantPrepared& prepared = ctx.params_as<FakeQuantPrepared>();
  ref::fake_quant_f32(prepared.num_bits, prepared.narrow_range, in_as<float>(ctx.input(0)), in_as<float>(ctx.input(1)),
                      in_as<float>(ctx.input(2)), out_as<float>(ctx.output(0)));
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, FAKE_QUANT, ANY, ops::FakeQuantPrepared, ops::prepare_fake_quant, ops::eval_fake_quant)
