// SPDX-License-Identifier: Apache-2.0
// Element-wise binary ops with NumPy/TensorFlow broadcasting:
// Add, Sub, Mul, Div (RealDiv), Maximum, Minimum.
// Shapes are right-aligned; a dimension broadcasts when it is 1 (or absent).
// Typed element-wise binary ops with broadcasting, for every dtype floe
// computes in: float32, int32, int64 (arithmetic), those plus bool (comparisons,
// output bool), bool (logical). Narrower TF types (float16, int8, ...) are
// widened by Cast ops the converter inserts, so kernels stay few.
// Integer semantics follow TensorFlow's CPU kernels: DIV and TRUNCATE_DIV
// truncate toward zero, FLOOR_DIV rounds toward -inf, FLOOR_MOD takes the
// divisor's sign; a zero integer divisor makes the call return false.
#pragma once

#include "runtime/kernels/reference/quantization.h"
#include "runtime/core/tensor.h"
#include "runtime/kernels/common/activation.h"
#include "runtime/core/registry.h"

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

// The element functions (the semantics of each op). Ops are types so each
// inner loop is instantiated (and inlined) per op: no per-element indirect call.
struct AddOp {
  static float apply(float a, float b) { return a + b; }
};
struct SubOp {
  static float apply(float a, float b) { return a - b; }
};
struct MulOp {
  static float apply(float a, float b) { return a * b; }
};
// RealDiv: IEEE float division (x/0 = +-inf, 0/0 = NaN), no reciprocal trick.
struct DivOp {
  static float apply(float a, float b) { return a / b; }
};
// Maximum/Minimum propagate NaN from either side, as TensorFlow >= 2.4 and NumPy
// do (older TF returned the NaN or the number depending on operand order, as a
// bare `a > b ? a : b` would).
struct MaxOp {
  static float apply(float a, float b) { return (a > b || a != a) ? a : b; }
};
struct MinOp {
  static float apply(float a, float b) { return (a < b || a != a) ? a : b; }
};

// Operands of one shape, no activation: out[i] = Op(a[i], b[i]) for i < count.
template <typename Op>
void binary_flat_f32(const float* a, const float* b, float* out, int32_t count) {
  for (int32_t i = 0; i < count; ++i) out[i] = Op::apply(a[i], b[i]);
}

// ---- int8 element-wise ops with broadcasting (TFLite's quantized ADD, SUB,
// MUL, MAXIMUM, MINIMUM). Shapes broadcast as the float ops (rank <= kMaxRank).

// ADD / SUB: each input, offset by minus its zero point and shifted left by
// left_shift (20 for int8), is rescaled by its own multiplier (shift <= 0);
// the sum (difference) is rescaled by the output multiplier, offset, clamped.
struct AddS8Params {
  int32_t input1_offset, input2_offset;  // minus the input zero points
  int32_t output_offset;                 // the output zero point
  int32_t left_shift;
  int32_t input1_multiplier, input1_shift;
  int32_t input2_multiplier, input2_shift;
  int32_t output_multiplier, output_shift;
  int32_t act_min, act_max;
};

// MUL: (q1 + input1_offset) * (q2 + input2_offset), requantized once.
struct MulS8Params {
  int32_t input1_offset, input2_offset;
  int32_t output_offset;
  int32_t output_multiplier, output_shift;
  int32_t act_min, act_max;
};

struct BinaryS8Operands {
  In<int8_t> a;
  In<int8_t> b;
  Out<int8_t> output;  // shape = broadcast(a.shape, b.shape)
};

void add_s8(const AddS8Params& params, const BinaryS8Operands& ops);
void sub_s8(const AddS8Params& params, const BinaryS8Operands& ops);

// int16 ADD / SUB (TFLite's 16x8 scheme): the same arithmetic as int8 with
// left_shift 15 and zero offsets, clamped to the int16 activation range.
struct BinaryS16Operands {
  In<int16_t> a;
  In<int16_t> b;
  Out<int16_t> output;  // shape = broadcast(a.shape, b.shape)
};
void add_s16(const AddS8Params& params, const BinaryS16Operands& ops);
void sub_s16(const AddS8Params& params, const BinaryS16Operands& ops);
void mul_s16(const MulS8Params& params, const BinaryS16Operands& ops);
void mul_s8(const MulS8Params& params, const BinaryS8Operands& ops);
// MAXIMUM (kMax) / MINIMUM of int8 or int16 compare the stored values:
// TFLite requires inputs and output to share scale and zero point, so no
// rescaling happens. Ops: BinaryS8Operands or BinaryS16Operands.
template <bool kMax, typename Ops>
void quantized_extremum(const Ops& ops);

// Host-side (converter), as TFLM's Prepare: ADD/SUB use twice the larger input
// scale as the common scale, left_shift 20; MUL one multiplier s1*s2/s_out.
// SUB uses the same parameters (sub_s8 subtracts the rescaled inputs).
inline AddS8Params prepare_add_s8(float input1_scale, int32_t input1_zero_point, float input2_scale,
                                  int32_t input2_zero_point, float output_scale,
                                  int32_t output_zero_point, Activation activation) {
  constexpr int32_t kLeftShift = 20;
  const double twice_max = 2.0 * static_cast<double>(input1_scale > input2_scale ? input1_scale
                                                                                   : input2_scale);
  const QuantizedMultiplier m1 = quantize_multiplier(static_cast<double>(input1_scale) / twice_max);
  const QuantizedMultiplier m2 = quantize_multiplier(static_cast<double>(input2_scale) / twice_max);
  const QuantizedMultiplier mo = quantize_multiplier(
      twice_max / (static_cast<double>(1 << kLeftShift) * static_cast<double>(output_scale)));
  const QuantizedRange range = quantized_activation_range_s8(activation, output_scale, output_zero_point);
  return {-input1_zero_point, -input2_zero_point, output_zero_point, kLeftShift,
          m1.multiplier,      m1.shift,           m2.multiplier,     m2.shift,
          mo.multiplier,      mo.shift,           range.min,         range.max};
}
inline MulS8Params prepare_mul_s8(float input1_scale, int32_t input1_zero_point, float input2_scale,
                                  int32_t input2_zero_point, float output_scale,
                                  int32_t output_zero_point, Activation activation) {
  const QuantizedMultiplier m = quantize_multiplier(
      static_cast<double>(input1_scale) * static_cast<double>(input2_scale) /
      static_cast<double>(output_scale));
  const QuantizedRange range = quantized_activation_range_s8(activation, output_scale, output_zero_point);
  return {-input1_zero_point, -input2_zero_point, output_zero_point, m.multiplier, m.shift,
          range.min, range.max};
}

}  // namespace floe::ref

namespace floe::ref {

enum class ArithOp : uint8_t {
  kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kFloorDiv, kFloorMod, kTruncateDiv, kPow,
  kAtan2, kSquaredDifference, kBitwiseAnd  // kBitwiseAnd: integers only
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

// The adapters' params blocks (each op registers its row in the .cc:
// runtime/core/registry.h).
namespace floe::ops {

// ---- params blocks (pointer-free, fixed-width: see runtime/core/registry.h) ----

// Binary arithmetic: the element count when no operand broadcasts.
struct ElementwisePrepared {
  int32_t count;
};

// ADD, SUB, MUL: float (element count) or int8 (the converter's requantization).
union ArithPrepared {
  ElementwisePrepared f32;
  ref::AddS8Params add_s8;  // ADD, SUB
  ref::MulS8Params mul_s8;  // MUL
};

}  // namespace floe::ops
