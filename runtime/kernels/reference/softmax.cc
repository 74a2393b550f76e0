// SPDX-License-Identifier: Apache-2.0
// Softmax over the last axis with a beta multiplier. Each row is shifted by its
// extreme value before exp so that no exponent is positive (no overflow for large
// logits); the shift cancels in the normalisation. Alias-safe: the output may be
// the input buffer (each row is read fully for its max before being written, and
// afterwards element i is read before element i is written).
#include "runtime/kernels/reference/softmax.h"

#include <math.h>
#include <stddef.h>

namespace floe::ref {

void softmax_f32(const SoftmaxParams& params, const SoftmaxOperands& ops) {
  const Shape& shape = ops.input.shape;
  const ptrdiff_t depth = shape.dims[shape.rank - 1];
  if (depth == 0) return;
  const ptrdiff_t rows = static_cast<ptrdiff_t>(shape.span(0, shape.rank - 1));
  const float beta = params.beta;
  const float* in = ops.input.data;
  float* out = ops.output.data;

  for (ptrdiff_t r = 0; r < rows; ++r, in += depth, out += depth) {
    // exp(beta*(x - pivot)) must have a non-positive exponent for every x: the
    // pivot is the row max for beta >= 0 (the usual case, matching the header's
    // formula exactly) and the row min for a negative beta.
    float pivot = in[0];
    if (beta >= 0.0f) {
      for (ptrdiff_t i = 1; i < depth; ++i) pivot = in[i] > pivot ? in[i] : pivot;
    } else {
      for (ptrdiff_t i = 1; i < depth; ++i) pivot = in[i] < pivot ? in[i] : pivot;
    }
    float sum = 0.0f;
    for (ptrdiff_t i = 0; i < depth; ++i) {
      const float e = expf(beta * (in[i] - pivot));
      out[i] = e;
      sum += e;
    }
    // sum >= 1 (the pivot's own term is exp(0)). A true division rather than a
    // multiply by 1/sum: one rounding instead of two, as TensorFlow computes it.
    for (ptrdiff_t i = 0; i < depth; ++i) out[i] /= sum;
  }
}

}  // namespace floe::ref
