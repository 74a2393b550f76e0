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

#include "runtime/kernels/reference/quantization.h"
#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

enum class UnaryOp : uint8_t {
  kRelu, kRelu6, kSigmoid, kTanh, kExp, kLog, kSqrt, kRsqrt
};

struct UnaryOperands {
  In<float> input;
  Out<float> output;
};

void unary_f32(UnaryOp op, const UnaryOperands& ops);

// ---- int8 LOGISTIC and TANH (TFLM's integer path) ----
// q - input_zero_point is rescaled to Q4.27 (multiplier, left shift >= 0);
// beyond +-input_range_radius the output saturates; otherwise gemmlowp's
// fixed-point logistic / tanh, rounded to the fixed output format: LOGISTIC
// scale 1/256 zero point -128, TANH scale 1/128 zero point 0. (TFLite, not
// Micro, fills a 256-entry table from float tanh / logistic instead; the two
// can differ by one step.)
struct FixedPointActivationS8Params {
  int32_t input_zero_point;
  int32_t input_range_radius;
  int32_t input_multiplier;
  int32_t input_left_shift;
};

struct UnaryS8Operands {
  In<int8_t> input;
  Out<int8_t> output;  // same element count; may alias the input
};

void logistic_s8(const FixedPointActivationS8Params& params, const UnaryS8Operands& ops);
void tanh_s8(const FixedPointActivationS8Params& params, const UnaryS8Operands& ops);

// int16 LOGISTIC and TANH (TFLite's 16x8 scheme, as TFLite's and TFLM's
// reference_integer_ops): the input, zero point 0, rescaled to steps of
// 1/(3 * 4096) (x * multiplier, rounded right shift; multiplier 0 means the
// power-of-two scale's 3 << shift), then a 256-entry table of sigmoid(i / 24)
// in 0.16 format, interpolated linearly; tanh(x) = 2 sigmoid(2x) - 1. Output
// Q0.15, zero point 0.
struct ActivationS16Params {
  int32_t input_multiplier;
  int32_t input_left_shift;  // a right shift, as TFLite names it
};

struct UnaryS16Operands {
  In<int16_t> input;
  Out<int16_t> output;  // same element count; may alias the input
};

void logistic_s16(const ActivationS16Params& params, const UnaryS16Operands& ops);
void tanh_s16(const ActivationS16Params& params, const UnaryS16Operands& ops);

// Host-side (converter): TFLM's Prepare for int8 LOGISTIC / TANH (the same
// derivation: input_scale * 2^27 split by frexp).
// (TFLM takes the rounded frexp mantissa as is; with a float32 scale it
// cannot round up to 2^31.)
inline FixedPointActivationS8Params prepare_logistic_s8(float input_scale, int32_t input_zero_point) {
  constexpr int kInputIntegerBits = 4;
  const double real = static_cast<double>(input_scale) *
                      static_cast<double>(int64_t{1} << (31 - kInputIntegerBits));
  int left_shift = 0;
  const double mantissa = frexp(real, &left_shift);
  const int32_t multiplier =
      static_cast<int32_t>(round(mantissa * static_cast<double>(int64_t{1} << 31)));
  return {input_zero_point, calculate_input_radius(kInputIntegerBits, left_shift), multiplier,
          left_shift};
}
inline FixedPointActivationS8Params prepare_tanh_s8(float input_scale, int32_t input_zero_point) {
  return prepare_logistic_s8(input_scale, input_zero_point);
}

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

// The adapters' params blocks (each op registers its row in the .cc:
// runtime/core/registry.h).
namespace floe::ops {

struct LeakyReluPrepared {
  float alpha;
};

// int8 / int16 LEAKY_RELU (TFLM's QuantizeLeakyRelu): x - input zero point,
// rescaled by the identity multiplier (x >= 0) or the alpha one (x < 0).
struct LeakyReluQuantizedPrepared {
  int32_t input_zero_point, output_zero_point;
  int32_t identity_multiplier, identity_shift;
  int32_t alpha_multiplier, alpha_shift;
  int32_t act_min, act_max;
};

// The float unary ops' prepare, which SOFTMAX's file reuses for its own checks.
const char* prepare_unary(const OpContext& ctx);

}  // namespace floe::ops
