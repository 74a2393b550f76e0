// SPDX-License-Identifier: Apache-2.0
// Typed element-wise binary ops with broadcasting, for every dtype floe
// computes in: float32, int32, int64 (arithmetic), those plus bool (comparisons,
// output bool), bool (logical). Narrower TF types (float16, int8, ...) are
// widened by Cast ops the converter inserts, so kernels stay few.
// Integer semantics follow TensorFlow's CPU kernels: DIV and TRUNCATE_DIV
// truncate toward zero, FLOOR_DIV rounds toward -inf, FLOOR_MOD takes the
// divisor's sign; a zero integer divisor makes the call return false.
#pragma once

#include "runtime/core/tensor.h"

namespace floe::ref {

enum class ArithOp : uint8_t {
  kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kFloorDiv, kFloorMod, kTruncateDiv, kPow,
  kAtan2, kSquaredDifference
};
enum class CompareOp : uint8_t { kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual };
enum class LogicalOp : uint8_t { kAnd, kOr };

struct TypedBinaryOperands {
  In<void> a;
  In<void> b;
  Out<void> output;
};

// Which (op, dtype) pairs exist; prepare checks before eval calls.
bool arith_supports(ArithOp op, DType dtype);
bool compare_supports(CompareOp op, DType dtype);

// Returns false on an integer division by zero (output partially written).
// arith_op<kOp> links only that op's arithmetic (firmware size); arith() any.
template <ArithOp kOp>
bool arith_op(DType dtype, const TypedBinaryOperands& ops);
bool arith(ArithOp op, DType dtype, const TypedBinaryOperands& ops);
void compare(CompareOp op, DType dtype, const TypedBinaryOperands& ops);  // output bool
void logical(LogicalOp op, const TypedBinaryOperands& ops);                // bool x bool -> bool

}  // namespace floe::ref
