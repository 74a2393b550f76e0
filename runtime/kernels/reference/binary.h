// SPDX-License-Identifier: Apache-2.0
// Element-wise binary ops with NumPy/TensorFlow broadcasting:
// Add, Sub, Mul, Div (RealDiv), Maximum, Minimum.
// Shapes are right-aligned; a dimension broadcasts when it is 1 (or absent).
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/kernels/reference/activation.h"

namespace floe::ref {

enum class BinaryOp : uint8_t { kAdd, kSub, kMul, kDiv, kMaximum, kMinimum };

struct BinaryParams {
  BinaryOp op = BinaryOp::kAdd;
  Activation activation = Activation::kNone;
};

struct BinaryOperands {
  In<float> a;
  In<float> b;
  Out<float> output;  // shape = broadcast(a.shape, b.shape), validated by the caller
};

void binary_f32(const BinaryParams& params, const BinaryOperands& ops);

}  // namespace floe::ref
