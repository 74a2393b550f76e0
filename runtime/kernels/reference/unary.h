// SPDX-License-Identifier: Apache-2.0
// Element-wise unary math: Relu, Relu6, Sigmoid, Tanh, Abs, Neg, Exp, Log,
// Sqrt, Rsqrt, Square. Input and output have the
// same shape; the kernel is alias-safe (output may be the input buffer).
// Typed element-wise unary ops beyond unary.h's float activations: rounding,
// trigonometry, Elu/Selu/Softplus/Softsign, LeakyRelu (alpha), predicates
// (IsNan/IsInf/IsFinite: float -> bool), LogicalNot (bool), and integer Abs, Neg,
// Sign, Square; plus Cast between every runtime dtype. Alias-safe (each element
// is read before it is written) where input and output have the same size.
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

namespace floe::ref {

enum class MathOp : uint8_t {
  kFloor, kCeil, kRound, kSign, kReciprocal, kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh,
  kAsinh, kAcosh, kAtanh, kExpm1, kLog1p, kElu, kSelu, kSoftplus, kSoftsign, kAbs, kNeg, kSquare
};
enum class PredicateOp : uint8_t { kIsNan, kIsInf, kIsFinite };

struct TypedUnaryOperands {
  In<void> input;
  Out<void> output;
};

// float32 for every MathOp; int32/int64 for kAbs, kNeg, kSign, kSquare.
bool math_supports(MathOp op, DType dtype);
void math(MathOp op, DType dtype, const TypedUnaryOperands& ops);

void predicate_f32(PredicateOp op, const TypedUnaryOperands& ops);  // float -> bool
void logical_not(const TypedUnaryOperands& ops);                   // bool -> bool
void leaky_relu_f32(float alpha, const TypedUnaryOperands& ops);

// Any of float32, float16, bfloat16, int8, int16, int32, int64, uint8, uint16,
// bool to any of them. float -> int truncates toward zero and saturates (NaN -> 0);
// int -> narrower int wraps (two's complement), as static_cast does; -> bool is != 0.
bool cast_supports(DType from, DType to);
void cast(DType from, DType to, const TypedUnaryOperands& ops);

}  // namespace floe::ref
