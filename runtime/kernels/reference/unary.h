// SPDX-License-Identifier: Apache-2.0
// Element-wise unary math: Relu, Relu6, Sigmoid, Tanh, Abs, Neg, Exp, Log,
// Sqrt, Rsqrt, Square. Input and output have the
// same shape; the kernel is alias-safe (output may be the input buffer).
#pragma once

#include "runtime/core/tensor.h"

namespace floe::ref {

enum class UnaryOp : uint8_t {
  kRelu, kRelu6, kSigmoid, kTanh, kAbs, kNeg, kExp, kLog, kSqrt, kRsqrt, kSquare
};

struct UnaryOperands {
  In<float> input;
  Out<float> output;
};

void unary_f32(UnaryOp op, const UnaryOperands& ops);

}  // namespace floe::ref
