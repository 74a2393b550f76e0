// SPDX-License-Identifier: Apache-2.0
// Element-wise unary math: activations (Relu, Relu6, Sigmoid, Tanh) and Abs,
// Neg, Exp, Log, Sqrt, Rsqrt, Square. Each op has its own loop
// (the switch is outside), and every loop reads element i before writing element
// i, so the output may be the input buffer.
#include "runtime/kernels/reference/unary.h"

#include <math.h>
#include <stddef.h>

namespace floe::ref {
namespace {

// 1 / (1 + e^-x) overflows e^-x to inf for x < ~-88 (the result would still be
// 0, but via inf), and for x >> 0 the alternative e^x / (1 + e^x) is inf/inf =
// NaN. Evaluating exp only of -|x| keeps every intermediate in [0, 1]: both
// branches are exact rearrangements of the same function.
inline float stable_sigmoid(float x) {
  if (x >= 0.0f) {
    const float e = expf(-x);
    return 1.0f / (1.0f + e);
  }
  const float e = expf(x);  // x < 0 (a NaN input also lands here and stays NaN)
  return e / (1.0f + e);
}

}  // namespace

void unary_f32(UnaryOp op, const UnaryOperands& ops) {
  const ptrdiff_t n = static_cast<ptrdiff_t>(ops.input.shape.num_elements());
  const float* in = ops.input.data;
  float* out = ops.output.data;
  switch (op) {
    case UnaryOp::kRelu:
      // `x < 0 ? 0 : x` rather than fmaxf: NaN propagates, as in TensorFlow.
      for (ptrdiff_t i = 0; i < n; ++i) {
        const float x = in[i];
        out[i] = x < 0.0f ? 0.0f : x;
      }
      return;
    case UnaryOp::kRelu6:
      for (ptrdiff_t i = 0; i < n; ++i) {
        const float x = in[i];
        out[i] = x < 0.0f ? 0.0f : (x > 6.0f ? 6.0f : x);
      }
      return;
    case UnaryOp::kSigmoid:
      for (ptrdiff_t i = 0; i < n; ++i) out[i] = stable_sigmoid(in[i]);
      return;
    case UnaryOp::kTanh:
      for (ptrdiff_t i = 0; i < n; ++i) out[i] = tanhf(in[i]);
      return;
    case UnaryOp::kAbs:
      for (ptrdiff_t i = 0; i < n; ++i) out[i] = fabsf(in[i]);
      return;
    case UnaryOp::kNeg:
      for (ptrdiff_t i = 0; i < n; ++i) out[i] = -in[i];
      return;
    case UnaryOp::kExp:
      for (ptrdiff_t i = 0; i < n; ++i) out[i] = expf(in[i]);
      return;
    case UnaryOp::kLog:
      for (ptrdiff_t i = 0; i < n; ++i) out[i] = logf(in[i]);
      return;
    case UnaryOp::kSqrt:
      for (ptrdiff_t i = 0; i < n; ++i) out[i] = sqrtf(in[i]);
      return;
    case UnaryOp::kRsqrt:
      // TF computes 1 / sqrt(x) (not an approximate reciprocal square root).
      for (ptrdiff_t i = 0; i < n; ++i) out[i] = 1.0f / sqrtf(in[i]);
      return;
    case UnaryOp::kSquare:
      for (ptrdiff_t i = 0; i < n; ++i) out[i] = in[i] * in[i];
      return;
  }
}

}  // namespace floe::ref
