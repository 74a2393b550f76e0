// SPDX-License-Identifier: Apache-2.0
// Element-wise unary math: activations (Relu, Relu6, Sigmoid, Tanh) and Abs,
// Neg, Exp, Log, Sqrt, Rsqrt, Square. Each op has its own loop
// (the switch is outside), and every loop reads element i before writing element
// i, so the output may be the input buffer.
// Typed unary ops and Cast (declared in unary.h). Each op is a functor applied by
// one loop instantiated per (op, dtype); the switches run once per call.
#include "runtime/kernels/reference/unary.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/kernels/reference/half.h"
#include "runtime/kernels/common/op_adapter.h"

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
  }
}

}  // namespace floe::ref

namespace floe::ref {
namespace {

template <typename TI, typename TO, typename F>
void apply(const TypedUnaryOperands& ops, F f) {
  const ptrdiff_t n = static_cast<ptrdiff_t>(ops.input.shape.num_elements());
  const TI* in = static_cast<const TI*>(ops.input.data);
  TO* out = static_cast<TO*>(ops.output.data);
  for (ptrdiff_t i = 0; i < n; ++i) out[i] = f(in[i]);
}

// Round half to even (TF's Round; rintf honours the default rounding mode).
inline float round_even(float x) { return rintf(x); }

// SELU constants (Klambauer et al.), as TF uses them.
constexpr float kSeluScale = 1.0507009873554804934193349852946f;
constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;

// TF's softplus: log(1 + e^x) with its thresholds so large |x| do not overflow.
inline float softplus(float x) {
  const float threshold = 2.0f + logf(1.1920929e-07f);  // log(eps) + 2, as TF's
  if (x > -threshold) return x;
  if (x < threshold) return expf(x);
  return log1pf(expf(x));
}

void math_float(MathOp op, const TypedUnaryOperands& ops) {
  switch (op) {
    case MathOp::kFloor: return apply<float, float>(ops, [](float x) { return floorf(x); });
    case MathOp::kCeil: return apply<float, float>(ops, [](float x) { return ceilf(x); });
    case MathOp::kRound: return apply<float, float>(ops, round_even);
    case MathOp::kSign:
      return apply<float, float>(ops, [](float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x); });
    case MathOp::kReciprocal: return apply<float, float>(ops, [](float x) { return 1.0f / x; });
    case MathOp::kSin: return apply<float, float>(ops, [](float x) { return sinf(x); });
    case MathOp::kCos: return apply<float, float>(ops, [](float x) { return cosf(x); });
    case MathOp::kTan: return apply<float, float>(ops, [](float x) { return tanf(x); });
    case MathOp::kAsin: return apply<float, float>(ops, [](float x) { return asinf(x); });
    case MathOp::kAcos: return apply<float, float>(ops, [](float x) { return acosf(x); });
    case MathOp::kAtan: return apply<float, float>(ops, [](float x) { return atanf(x); });
    case MathOp::kSinh: return apply<float, float>(ops, [](float x) { return sinhf(x); });
    case MathOp::kCosh: return apply<float, float>(ops, [](float x) { return coshf(x); });
    case MathOp::kAsinh: return apply<float, float>(ops, [](float x) { return asinhf(x); });
    case MathOp::kAcosh: return apply<float, float>(ops, [](float x) { return acoshf(x); });
    case MathOp::kAtanh: return apply<float, float>(ops, [](float x) { return atanhf(x); });
    case MathOp::kExpm1: return apply<float, float>(ops, [](float x) { return expm1f(x); });
    case MathOp::kLog1p: return apply<float, float>(ops, [](float x) { return log1pf(x); });
    case MathOp::kElu: return apply<float, float>(ops, [](float x) { return x < 0.0f ? expm1f(x) : x; });
    case MathOp::kSelu:
      return apply<float, float>(
          ops, [](float x) { return x < 0.0f ? kSeluScale * kSeluAlpha * expm1f(x) : kSeluScale * x; });
    case MathOp::kSoftplus: return apply<float, float>(ops, softplus);
    case MathOp::kSoftsign: return apply<float, float>(ops, [](float x) { return x / (1.0f + fabsf(x)); });
    case MathOp::kAbs: return apply<float, float>(ops, [](float x) { return fabsf(x); });
    case MathOp::kNeg: return apply<float, float>(ops, [](float x) { return -x; });
    case MathOp::kSquare: return apply<float, float>(ops, [](float x) { return x * x; });
  }
}

template <typename T, typename U>
void math_int(MathOp op, const TypedUnaryOperands& ops) {
  // Unsigned arithmetic wraps like TF's (two's complement) results for INT_MIN.
  switch (op) {
    case MathOp::kAbs:
      return apply<T, T>(ops, [](T x) { return x < 0 ? static_cast<T>(U(0) - static_cast<U>(x)) : x; });
    case MathOp::kNeg: return apply<T, T>(ops, [](T x) { return static_cast<T>(U(0) - static_cast<U>(x)); });
    case MathOp::kSign: return apply<T, T>(ops, [](T x) { return static_cast<T>((x > 0) - (x < 0)); });
    case MathOp::kSquare:
      return apply<T, T>(ops, [](T x) { return static_cast<T>(static_cast<U>(x) * static_cast<U>(x)); });
    default: return;
  }
}

// ---- cast ----------------------------------------------------------------------

// float -> int saturates at the destination's range (C++ leaves it undefined,
// TF's static_cast gives whatever the CPU does); NaN -> 0.
template <typename T>
T float_to_int(double v, double lo, double hi) {
  if (v != v) return 0;
  if (v <= lo) return static_cast<T>(lo);
  if (v >= hi) return static_cast<T>(hi);
  return static_cast<T>(v);  // truncates toward zero
}

// Reads element i of `data` (dtype t) as double (floats) or int64 (ints, bool).
inline bool is_float(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16;
}

template <typename TO>
void cast_to_int(DType from, const void* in, TO* out, ptrdiff_t n, double lo, double hi) {
  switch (from) {
    case DType::kFloat32: {
      const float* p = static_cast<const float*>(in);
      for (ptrdiff_t i = 0; i < n; ++i) out[i] = float_to_int<TO>(p[i], lo, hi);
      return;
    }
    case DType::kFloat16: {
      const uint16_t* p = static_cast<const uint16_t*>(in);
      for (ptrdiff_t i = 0; i < n; ++i) out[i] = float_to_int<TO>(half_to_float(p[i]), lo, hi);
      return;
    }
    case DType::kBFloat16: {
      const uint16_t* p = static_cast<const uint16_t*>(in);
      for (ptrdiff_t i = 0; i < n; ++i) out[i] = float_to_int<TO>(bfloat16_to_float(p[i]), lo, hi);
      return;
    }
#define FLOE_CAST_INT(DT, CT)                                                 \
  case DType::DT: {                                                           \
    const CT* p = static_cast<const CT*>(in);                                 \
    for (ptrdiff_t i = 0; i < n; ++i) out[i] = static_cast<TO>(p[i]);         \
    return;                                                                   \
  }
    FLOE_CAST_INT(kInt8, int8_t)
    FLOE_CAST_INT(kInt16, int16_t)
    FLOE_CAST_INT(kInt32, int32_t)
    FLOE_CAST_INT(kInt64, int64_t)
    FLOE_CAST_INT(kUInt8, uint8_t)
    FLOE_CAST_INT(kUInt16, uint16_t)
    FLOE_CAST_INT(kUInt32, uint32_t)
    FLOE_CAST_INT(kUInt64, uint64_t)
#undef FLOE_CAST_INT
    case DType::kBool: {
      const uint8_t* p = static_cast<const uint8_t*>(in);
      for (ptrdiff_t i = 0; i < n; ++i) out[i] = static_cast<TO>(p[i] != 0 ? 1 : 0);
      return;
    }
    default: return;
  }
}

// Source element as float (for float destinations).
template <typename Store>
void cast_to_float(DType from, const void* in, ptrdiff_t n, Store store) {
  switch (from) {
    case DType::kFloat32: {
      const float* p = static_cast<const float*>(in);
      for (ptrdiff_t i = 0; i < n; ++i) store(i, p[i]);
      return;
    }
    case DType::kFloat16: {
      const uint16_t* p = static_cast<const uint16_t*>(in);
      for (ptrdiff_t i = 0; i < n; ++i) store(i, half_to_float(p[i]));
      return;
    }
    case DType::kBFloat16: {
      const uint16_t* p = static_cast<const uint16_t*>(in);
      for (ptrdiff_t i = 0; i < n; ++i) store(i, bfloat16_to_float(p[i]));
      return;
    }
#define FLOE_CAST_FLT(DT, CT)                                                       \
  case DType::DT: {                                                                 \
    const CT* p = static_cast<const CT*>(in);                                       \
    for (ptrdiff_t i = 0; i < n; ++i) store(i, static_cast<float>(p[i]));           \
    return;                                                                         \
  }
    FLOE_CAST_FLT(kInt8, int8_t)
    FLOE_CAST_FLT(kInt16, int16_t)
    FLOE_CAST_FLT(kInt32, int32_t)
    FLOE_CAST_FLT(kInt64, int64_t)
    FLOE_CAST_FLT(kUInt8, uint8_t)
    FLOE_CAST_FLT(kUInt16, uint16_t)
    FLOE_CAST_FLT(kUInt32, uint32_t)
    FLOE_CAST_FLT(kUInt64, uint64_t)
#undef FLOE_CAST_FLT
    case DType::kBool: {
      const uint8_t* p = static_cast<const uint8_t*>(in);
      for (ptrdiff_t i = 0; i < n; ++i) store(i, p[i] != 0 ? 1.0f : 0.0f);
      return;
    }
    default: return;
  }
}

bool castable(DType t) {
  switch (t) {
    case DType::kFloat32: case DType::kFloat16: case DType::kBFloat16: case DType::kInt8:
    case DType::kInt16: case DType::kInt32: case DType::kInt64: case DType::kUInt8:
    case DType::kUInt16: case DType::kUInt32: case DType::kUInt64: case DType::kBool:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool math_supports(MathOp op, DType dtype) {
  if (dtype == DType::kFloat32) return true;
  if (dtype == DType::kInt32 || dtype == DType::kInt64) {
    return op == MathOp::kAbs || op == MathOp::kNeg || op == MathOp::kSign || op == MathOp::kSquare;
  }
  return false;
}

void math(MathOp op, DType dtype, const TypedUnaryOperands& ops) {
  switch (dtype) {
    case DType::kFloat32: return math_float(op, ops);
    case DType::kInt32: return math_int<int32_t, uint32_t>(op, ops);
    case DType::kInt64: return math_int<int64_t, uint64_t>(op, ops);
    default: return;
  }
}

void predicate_f32(PredicateOp op, const TypedUnaryOperands& ops) {
  switch (op) {
    case PredicateOp::kIsNan: return apply<float, uint8_t>(ops, [](float x) -> uint8_t { return x != x; });
    case PredicateOp::kIsInf: return apply<float, uint8_t>(ops, [](float x) -> uint8_t { return isinf(x) ? 1 : 0; });
    case PredicateOp::kIsFinite:
      return apply<float, uint8_t>(ops, [](float x) -> uint8_t { return isfinite(x) ? 1 : 0; });
  }
}

void logical_not(const TypedUnaryOperands& ops) {
  apply<uint8_t, uint8_t>(ops, [](uint8_t x) -> uint8_t { return x == 0; });
}

void leaky_relu_f32(float alpha, const TypedUnaryOperands& ops) {
  apply<float, float>(ops, [alpha](float x) { return x < 0.0f ? x * alpha : x; });
}

bool cast_supports(DType from, DType to) { return castable(from) && castable(to); }

void cast(DType from, DType to, const TypedUnaryOperands& ops) {
  const ptrdiff_t n = static_cast<ptrdiff_t>(ops.input.shape.num_elements());
  const void* in = ops.input.data;
  void* out = ops.output.data;
  switch (to) {
    case DType::kFloat32: {
      float* o = static_cast<float*>(out);
      return cast_to_float(from, in, n, [o](ptrdiff_t i, float v) { o[i] = v; });
    }
    case DType::kFloat16: {
      uint16_t* o = static_cast<uint16_t*>(out);
      return cast_to_float(from, in, n, [o](ptrdiff_t i, float v) { o[i] = float_to_half(v); });
    }
    case DType::kBFloat16: {
      uint16_t* o = static_cast<uint16_t*>(out);
      return cast_to_float(from, in, n, [o](ptrdiff_t i, float v) { o[i] = float_to_bfloat16(v); });
    }
    case DType::kInt8: return cast_to_int(from, in, static_cast<int8_t*>(out), n, -128.0, 127.0);
    case DType::kInt16: return cast_to_int(from, in, static_cast<int16_t*>(out), n, -32768.0, 32767.0);
    case DType::kInt32:
      return cast_to_int(from, in, static_cast<int32_t*>(out), n, -2147483648.0, 2147483647.0);
    case DType::kInt64:
      // 2^63 is not representable in int64: clamp just below it.
      return cast_to_int(from, in, static_cast<int64_t*>(out), n, -9223372036854775808.0,
                         9223372036854774784.0);
    case DType::kUInt8: return cast_to_int(from, in, static_cast<uint8_t*>(out), n, 0.0, 255.0);
    case DType::kUInt16: return cast_to_int(from, in, static_cast<uint16_t*>(out), n, 0.0, 65535.0);
    case DType::kUInt32: return cast_to_int(from, in, static_cast<uint32_t*>(out), n, 0.0, 4294967295.0);
    // 2^64 is not representable: clamp just below it.
    case DType::kUInt64:
      return cast_to_int(from, in, static_cast<uint64_t*>(out), n, 0.0, 18446744073709549568.0);
    case DType::kBool: {
      uint8_t* o = static_cast<uint8_t*>(out);
      if (is_float(from)) {
        return cast_to_float(from, in, n, [o](ptrdiff_t i, float v) { o[i] = v != 0.0f ? 1 : 0; });
      }
      // Integers: != 0 (wrapping through a narrow type first would lose bits).
      switch (from) {
#define FLOE_CAST_BOOL(DT, CT)                                                    \
  case DType::DT: {                                                               \
    const CT* p = static_cast<const CT*>(in);                                     \
    for (ptrdiff_t i = 0; i < n; ++i) o[i] = p[i] != 0 ? 1 : 0;                   \
    return;                                                                       \
  }
        FLOE_CAST_BOOL(kInt8, int8_t)
        FLOE_CAST_BOOL(kInt16, int16_t)
        FLOE_CAST_BOOL(kInt32, int32_t)
        FLOE_CAST_BOOL(kInt64, int64_t)
        FLOE_CAST_BOOL(kUInt8, uint8_t)
        FLOE_CAST_BOOL(kUInt16, uint16_t)
        FLOE_CAST_BOOL(kUInt32, uint32_t)
        FLOE_CAST_BOOL(kUInt64, uint64_t)
        FLOE_CAST_BOOL(kBool, uint8_t)
#undef FLOE_CAST_BOOL
        default: return;
      }
    }
    default: return;
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {
namespace {

using ref::MathOp;

const char* check_unary(const OpContext& ctx, DType in, DType out) {
  if (!has_io(ctx, 1, 1)) return FLOE_MSG("expects 1 input and 1 output");
  const TensorView i = ctx.input(0), o = ctx.output(0);
  if (!dims_equal(i.shape, o.shape)) return FLOE_MSG("output shape differs from input shape");
  if (i.dtype != in || o.dtype != out) return FLOE_MSG("unsupported input/output dtype");
  return nullptr;
}

const char* prepare_math(const OpContext& ctx, MathOp op) {
  const DType t = ctx.has_input(0) ? ctx.input(0).dtype : DType::kInvalid;
  if (!ref::math_supports(op, t)) return FLOE_MSG("dtype not supported by this op");
  return check_unary(ctx, t, t);
}

Status eval_math(const PreparedOp& ctx, MathOp op) {
  ref::math(op, ctx.input(0).dtype, {in_void(ctx.input(0)), out_void(ctx.output(0))});
  return Status::kOk;
}

}  // namespace

// ---- element-wise --------------------------------------------------------

// The float32 activations (RELU..RSQRT) share one prepare; the typed math ops
// (FLOOR..SQUARE, ABS, NEG) and predicates follow.

const char* prepare_unary(const OpContext& ctx) {
  if (const char* err = expect_f32_io(ctx, 1)) return err;
  if (!dims_equal(ctx.input(0).shape, ctx.output(0).shape)) {
    return FLOE_MSG("output shape differs from input shape");
  }
  return nullptr;
}

Status eval_unary(const PreparedOp& ctx, ref::UnaryOp op) {
  ref::unary_f32(op, {in_as<float>(ctx.input(0)), out_as<float>(ctx.output(0))});
  return Status::kOk;
}

Status eval_relu(const PreparedOp& ctx) { return eval_unary(ctx, ref::UnaryOp::kRelu); }

Status eval_relu6(const PreparedOp& ctx) { return eval_unary(ctx, ref::UnaryOp::kRelu6); }

namespace {

Status eval_logistic_s8(const PreparedOp& ctx) {
  ref::logistic_s8(ctx.params_as<ref::FixedPointActivationS8Params>(),
                   {in_as<int8_t>(ctx.input(0)), out_as<int8_t>(ctx.output(0))});
  return Status::kOk;
}

Status eval_tanh_s8(const PreparedOp& ctx) {
  ref::tanh_s8(ctx.params_as<ref::FixedPointActivationS8Params>(),
               {in_as<int8_t>(ctx.input(0)), out_as<int8_t>(ctx.output(0))});
  return Status::kOk;
}

// int8: the output's fixed format (1/256, -128 or 1/128, 0) was checked by the
// converter; the input rescaling comes from it.
const char* prepare_fixed_point_s8(const OpContext& ctx, EvalFn eval) {
  if (!has_io(ctx, 1, 1) || !is_s8(ctx.output(0))) return FLOE_MSG("int8 activation takes one int8 input and output");
  if (!dims_equal(ctx.input(0).shape, ctx.output(0).shape)) return FLOE_MSG("output shape differs from input shape");
  const char* why = nullptr;
  const schema::Requantization* r = requantization_of(ctx, &why);
  if (r == nullptr) return why;
  ref::FixedPointActivationS8Params& p = ctx.params<ref::FixedPointActivationS8Params>();
  p.input_zero_point = -entry(r->input_offsets(), 0);
  p.input_range_radius = r->input_range_radius();
  p.input_multiplier = r->output_multiplier();
  p.input_left_shift = r->output_shift();
  if (p.input_zero_point < -128 || p.input_zero_point > 127 || p.input_multiplier < 0 ||
      p.input_left_shift < 0 || p.input_left_shift > 31 || p.input_range_radius < 0) {
    return FLOE_MSG("int8 activation rescaling out of range");
  }
  ctx.set_eval(eval);
  return nullptr;
}

}  // namespace

const char* prepare_sigmoid(const OpContext& ctx) {
  if (ctx.has_input(0) && is_s8(ctx.input(0))) return prepare_fixed_point_s8(ctx, eval_logistic_s8);
  return prepare_unary(ctx);
}

const char* prepare_tanh(const OpContext& ctx) {
  if (ctx.has_input(0) && is_s8(ctx.input(0))) return prepare_fixed_point_s8(ctx, eval_tanh_s8);
  return prepare_unary(ctx);
}

Status eval_sigmoid(const PreparedOp& ctx) { return eval_unary(ctx, ref::UnaryOp::kSigmoid); }

Status eval_tanh(const PreparedOp& ctx) { return eval_unary(ctx, ref::UnaryOp::kTanh); }

Status eval_exp(const PreparedOp& ctx) { return eval_unary(ctx, ref::UnaryOp::kExp); }

Status eval_log(const PreparedOp& ctx) { return eval_unary(ctx, ref::UnaryOp::kLog); }

Status eval_sqrt(const PreparedOp& ctx) { return eval_unary(ctx, ref::UnaryOp::kSqrt); }

Status eval_rsqrt(const PreparedOp& ctx) { return eval_unary(ctx, ref::UnaryOp::kRsqrt); }

#define FLOE_MATH(name, op)                                                             \
  const char* prepare_##name(const OpContext& ctx) { return prepare_math(ctx, op); }   \
  Status eval_##name(const PreparedOp& ctx) { return eval_math(ctx, op); }

FLOE_MATH(floor, MathOp::kFloor)

FLOE_MATH(ceil, MathOp::kCeil)

FLOE_MATH(round, MathOp::kRound)

FLOE_MATH(sign, MathOp::kSign)

FLOE_MATH(reciprocal, MathOp::kReciprocal)

FLOE_MATH(sin, MathOp::kSin)

FLOE_MATH(cos, MathOp::kCos)

FLOE_MATH(tan, MathOp::kTan)

FLOE_MATH(asin, MathOp::kAsin)

FLOE_MATH(acos, MathOp::kAcos)

FLOE_MATH(atan, MathOp::kAtan)

FLOE_MATH(sinh, MathOp::kSinh)

FLOE_MATH(cosh, MathOp::kCosh)

FLOE_MATH(asinh, MathOp::kAsinh)

FLOE_MATH(acosh, MathOp::kAcosh)

FLOE_MATH(atanh, MathOp::kAtanh)

FLOE_MATH(expm1, MathOp::kExpm1)

FLOE_MATH(log1p, MathOp::kLog1p)

FLOE_MATH(elu, MathOp::kElu)

FLOE_MATH(selu, MathOp::kSelu)

FLOE_MATH(softplus, MathOp::kSoftplus)

FLOE_MATH(softsign, MathOp::kSoftsign)

FLOE_MATH(abs, MathOp::kAbs)

FLOE_MATH(neg, MathOp::kNeg)

FLOE_MATH(square, MathOp::kSquare)

#undef FLOE_MATH

const char* prepare_logical_not(const OpContext& ctx) { return check_unary(ctx, DType::kBool, DType::kBool); }

Status eval_logical_not(const PreparedOp& ctx) {
  ref::logical_not({in_void(ctx.input(0)), out_void(ctx.output(0))});
  return Status::kOk;
}

#define FLOE_PREDICATE(name, op)                                                                         \
  const char* prepare_##name(const OpContext& ctx) { return check_unary(ctx, DType::kFloat32, DType::kBool); } \
  Status eval_##name(const PreparedOp& ctx) {                                                             \
    ref::predicate_f32(op, {in_void(ctx.input(0)), out_void(ctx.output(0))});                            \
    return Status::kOk;                                                                                  \
  }

FLOE_PREDICATE(is_nan, ref::PredicateOp::kIsNan)

FLOE_PREDICATE(is_inf, ref::PredicateOp::kIsInf)

FLOE_PREDICATE(is_finite, ref::PredicateOp::kIsFinite)

#undef FLOE_PREDICATE

const char* prepare_leaky_relu(const OpContext& ctx) {
  ctx.params<LeakyReluPrepared>().alpha = ctx.op->options_as_LeakyReluOptions()->alpha();
  return check_unary(ctx, DType::kFloat32, DType::kFloat32);
}

Status eval_leaky_relu(const PreparedOp& ctx) {
  ref::leaky_relu_f32(ctx.params_as<LeakyReluPrepared>().alpha,
                      {in_void(ctx.input(0)), out_void(ctx.output(0))});
  return Status::kOk;
}

template <typename T>
Status eval_leaky_relu_quantized(const PreparedOp& ctx) {
  const LeakyReluQuantizedPrepared& p = ctx.params_as<LeakyReluQuantizedPrepared>();
  const In<T> in = in_as<T>(ctx.input(0));
  const Out<T> out = out_as<T>(ctx.output(0));
  const ptrdiff_t n = static_cast<ptrdiff_t>(in.shape.num_elements());
  for (ptrdiff_t i = 0; i < n; ++i) {
    const int32_t x = in.data[i] - p.input_zero_point;
    const int32_t y = x >= 0 ? ref::multiply_by_quantized_multiplier(x, p.identity_multiplier, p.identity_shift)
                             : ref::multiply_by_quantized_multiplier(x, p.alpha_multiplier, p.alpha_shift);
    out.data[i] = static_cast<T>(ref::clamp_to(y + p.output_zero_point, p.act_min, p.act_max));
  }
  return Status::kOk;
}

const char* prepare_leaky_relu_quantized(const OpContext& ctx) {
  const DType t = ctx.input(0).dtype;
  if (const char* err = check_unary(ctx, t, t)) return err;
  const char* why = nullptr;
  const schema::Requantization* r = requantization_of(ctx, &why, t);
  if (r == nullptr) return why;
  LeakyReluQuantizedPrepared& p = ctx.params<LeakyReluQuantizedPrepared>();
  p.input_zero_point = -entry(r->input_offsets(), 0);
  p.output_zero_point = r->output_offset();
  p.identity_multiplier = entry(r->input_multipliers(), 0);
  p.identity_shift = entry(r->input_shifts(), 0);
  p.alpha_multiplier = entry(r->input_multipliers(), 1);
  p.alpha_shift = entry(r->input_shifts(), 1);
  p.act_min = r->activation_min();
  p.act_max = r->activation_max();
  const int32_t lo = t == DType::kInt8 ? INT8_MIN : INT16_MIN, hi = t == DType::kInt8 ? INT8_MAX : INT16_MAX;
  if (p.input_zero_point < lo || p.input_zero_point > hi || p.output_zero_point < lo || p.output_zero_point > hi ||
      (t == DType::kInt16 && (p.input_zero_point != 0 || p.output_zero_point != 0)) || p.act_min < lo ||
      p.act_max > hi || p.act_min > p.act_max || !valid_multiplier(p.identity_multiplier, p.identity_shift) ||
      !valid_multiplier(p.alpha_multiplier, p.alpha_shift)) {
    return FLOE_MSG("quantized leaky relu zero points, multipliers or clamp out of range");
  }
  ctx.set_eval(t == DType::kInt8 ? eval_leaky_relu_quantized<int8_t> : eval_leaky_relu_quantized<int16_t>);
  return nullptr;
}

const char* prepare_cast(const OpContext& ctx) {
  if (!has_io(ctx, 1, 1)) return FLOE_MSG("expects 1 input and 1 output");
  const TensorView i = ctx.input(0), o = ctx.output(0);
  if (!dims_equal(i.shape, o.shape)) return FLOE_MSG("output shape differs from input shape");
  if (!ref::cast_supports(i.dtype, o.dtype)) return FLOE_MSG("cast between these dtypes is not supported");
  return nullptr;
}

Status eval_cast(const PreparedOp& ctx) {
  const TensorView &i = ctx.input(0), &o = ctx.output(0);
  ref::cast(i.dtype, o.dtype, {in_void(i), out_void(o)});
  return Status::kOk;
}

}  // namespace floe::ops

namespace floe::ref {
namespace {

constexpr int kActivationInputIntegerBits = 4;  // the input in Q4.27

// Shared shape of int8 LOGISTIC and TANH: saturate beyond the input radius,
// else rescale to Q4.27 and map with `f`, which returns the int8 output.
template <typename F>
void fixed_point_activation_s8(const FixedPointActivationS8Params& p, const UnaryS8Operands& ops,
                               F f) {
  const ptrdiff_t count = static_cast<ptrdiff_t>(ops.input.shape.num_elements());
  for (ptrdiff_t i = 0; i < count; ++i) {
    const int32_t x = ops.input.data[i] - p.input_zero_point;
    int8_t out;
    if (x <= -p.input_range_radius) {
      out = INT8_MIN;
    } else if (x >= p.input_range_radius) {
      out = INT8_MAX;
    } else {
      out = f(multiply_by_quantized_multiplier(x, p.input_multiplier, p.input_left_shift));
    }
    ops.output.data[i] = out;
  }
}

}  // namespace

void logistic_s8(const FixedPointActivationS8Params& params, const UnaryS8Operands& ops) {
  fixed_point_activation_s8(params, ops, [](int32_t q4) {
    const int32_t q0 = fixed_point::logistic(q4, kActivationInputIntegerBits);
    // Q0.31 -> steps of 1/256, then the -128 zero point.
    const int32_t steps = rounding_divide_by_pot(q0, 31 - 8);
    return static_cast<int8_t>(clamp_to(steps + INT8_MIN, INT8_MIN, INT8_MAX));
  });
}

void tanh_s8(const FixedPointActivationS8Params& params, const UnaryS8Operands& ops) {
  fixed_point_activation_s8(params, ops, [](int32_t q4) {
    const int32_t q0 = fixed_point::tanh(q4, kActivationInputIntegerBits);
    // Q0.31 -> steps of 1/128, zero point 0.
    const int32_t steps = rounding_divide_by_pot(q0, 31 - 7);
    return static_cast<int8_t>(clamp_to(steps, INT8_MIN, INT8_MAX));
  });
}

namespace {

// sigmoid(i / 24) for i = 0..255 in 0.16 format, as TFLite's and CMSIS-NN's
// sigmoid_table_uint16 hold it (a fitted table: not all entries are the
// rounded function, so the values are data, not a formula).
constexpr uint16_t kSigmoidTable[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535};

// The input in steps of 1/(3 * 4096), and its magnitude.
template <typename F>
void activation_s16(const ActivationS16Params& p, const UnaryS16Operands& ops, F f) {
  int32_t multiplier = p.input_multiplier, shift = p.input_left_shift;
  if (multiplier == 0) {  // a power-of-two scale: 3 << shift, no shift after
    multiplier = 3 << shift;
    shift = 0;
  }
  const int32_t round = shift > 0 ? 1 << (shift - 1) : 0;
  const ptrdiff_t count = static_cast<ptrdiff_t>(ops.input.shape.num_elements());
  for (ptrdiff_t i = 0; i < count; ++i) {
    const int32_t x = (int32_t{ops.input.data[i]} * multiplier + round) >> shift;
    ops.output.data[i] = f(x, static_cast<uint32_t>(x < 0 ? -x : x));
  }
}

// The table at |x| with `fraction_bits` bits between entries, interpolated
// (the result scaled by 2^fraction_bits); `saturated` past its end.
uint32_t sigmoid_lookup(uint32_t magnitude, int fraction_bits, uint32_t saturated) {
  const uint32_t index = magnitude >> fraction_bits;
  if (index >= 255) return saturated;
  const uint32_t a = kSigmoidTable[index], b = kSigmoidTable[index + 1];
  const uint32_t t = magnitude & ((1u << fraction_bits) - 1);
  return (a << fraction_bits) + t * (b - a);
}

}  // namespace

void logistic_s16(const ActivationS16Params& params, const UnaryS16Operands& ops) {
  activation_s16(params, ops, [](int32_t x, uint32_t magnitude) {
    // 9 fraction bits (x / 2^9 indexes i / 24 at 3/4 scale); sigmoid(-x) = 1 - sigmoid(x).
    uint32_t r = sigmoid_lookup(magnitude, 9, 0x7FFFu << 10);
    r = x >= 0 ? r + (1u << 9) : (1u << (16 + 9)) - r + (1u << 9) - 1;
    return static_cast<int16_t>(r >> 10);
  });
}

void tanh_s16(const ActivationS16Params& params, const UnaryS16Operands& ops) {
  activation_s16(params, ops, [](int32_t x, uint32_t magnitude) {
    // 8 fraction bits: the table read at 2x; 2 sigmoid - 1, negated for x < 0.
    const int32_t r = static_cast<int32_t>(sigmoid_lookup(magnitude, 8, 0xFFFFu << 8));
    const int32_t centered = x >= 0 ? r - (1 << (14 + 9)) + (1 << (9 - 2)) : -r + (1 << (14 + 9)) + (1 << (9 - 2)) - 1;
    return static_cast<int16_t>(centered >> (9 - 1));
  });
}

}  // namespace floe::ref

namespace floe::ops {
namespace {

Status eval_logistic_s16(const PreparedOp& ctx) {
  ref::logistic_s16(ctx.params_as<ref::ActivationS16Params>(),
                    {in_as<int16_t>(ctx.input(0)), out_as<int16_t>(ctx.output(0))});
  return Status::kOk;
}

Status eval_tanh_s16(const PreparedOp& ctx) {
  ref::tanh_s16(ctx.params_as<ref::ActivationS16Params>(),
                {in_as<int16_t>(ctx.input(0)), out_as<int16_t>(ctx.output(0))});
  return Status::kOk;
}

// int16: the converter's multiplier and shift (Requantization output_*),
// zero points 0 and a Q0.15 output (checked there).
const char* prepare_activation_s16(const OpContext& ctx) {
  if (!has_io(ctx, 1, 1) || ctx.input(0).dtype != DType::kInt16 || ctx.output(0).dtype != DType::kInt16) {
    return FLOE_MSG("int16 activation takes one int16 input and output");
  }
  if (!dims_equal(ctx.input(0).shape, ctx.output(0).shape)) return FLOE_MSG("output shape differs from input shape");
  const char* why = nullptr;
  const schema::Requantization* r = requantization_of(ctx, &why, DType::kInt16);
  if (r == nullptr) return why;
  ref::ActivationS16Params& p = ctx.params<ref::ActivationS16Params>();
  p.input_multiplier = r->output_multiplier();
  p.input_left_shift = r->output_shift();
  // x * multiplier must fit int32: |x| <= 2^15, multiplier < 2^15 (or 3 << shift, shift <= 1).
  if (p.input_multiplier < 0 || p.input_multiplier > INT16_MAX || p.input_left_shift < 0 || p.input_left_shift > 31 ||
      (p.input_multiplier == 0 && p.input_left_shift > 1)) {
    return FLOE_MSG("int16 activation rescaling out of range");
  }
  return nullptr;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, SIGMOID, INT16, ref::ActivationS16Params, ops::prepare_activation_s16, ops::eval_logistic_s16)
FLOE_KERNEL(REFERENCE, TANH, INT16, ref::ActivationS16Params, ops::prepare_activation_s16, ops::eval_tanh_s16)
FLOE_KERNEL(REFERENCE, RELU, ANY, NoParams, ops::prepare_unary, ops::eval_relu)
FLOE_KERNEL(REFERENCE, RELU6, ANY, NoParams, ops::prepare_unary, ops::eval_relu6)
FLOE_KERNEL(REFERENCE, SIGMOID, ANY, ref::FixedPointActivationS8Params, ops::prepare_sigmoid, ops::eval_sigmoid)
FLOE_KERNEL(REFERENCE, TANH, ANY, ref::FixedPointActivationS8Params, ops::prepare_tanh, ops::eval_tanh)
FLOE_KERNEL(REFERENCE, EXP, ANY, NoParams, ops::prepare_unary, ops::eval_exp)
FLOE_KERNEL(REFERENCE, LOG, ANY, NoParams, ops::prepare_unary, ops::eval_log)
FLOE_KERNEL(REFERENCE, SQRT, ANY, NoParams, ops::prepare_unary, ops::eval_sqrt)
FLOE_KERNEL(REFERENCE, RSQRT, ANY, NoParams, ops::prepare_unary, ops::eval_rsqrt)
FLOE_KERNEL(REFERENCE, LOGICAL_NOT, ANY, NoParams, ops::prepare_logical_not, ops::eval_logical_not)
FLOE_KERNEL(REFERENCE, LEAKY_RELU, ANY, ops::LeakyReluPrepared, ops::prepare_leaky_relu, ops::eval_leaky_relu)
FLOE_KERNEL(REFERENCE, LEAKY_RELU, INT8, ops::LeakyReluQuantizedPrepared, ops::prepare_leaky_relu_quantized,
            ops::eval_leaky_relu_quantized<int8_t>)
FLOE_KERNEL(REFERENCE, LEAKY_RELU, INT16, ops::LeakyReluQuantizedPrepared, ops::prepare_leaky_relu_quantized,
            ops::eval_leaky_relu_quantized<int16_t>)
FLOE_KERNEL(REFERENCE, CAST, ANY, NoParams, ops::prepare_cast, ops::eval_cast)

FLOE_KERNEL(REFERENCE, ABS, ANY, NoParams, ops::prepare_abs, ops::eval_abs)
FLOE_KERNEL(REFERENCE, NEG, ANY, NoParams, ops::prepare_neg, ops::eval_neg)
FLOE_KERNEL(REFERENCE, SQUARE, ANY, NoParams, ops::prepare_square, ops::eval_square)
FLOE_KERNEL(REFERENCE, FLOOR, ANY, NoParams, ops::prepare_floor, ops::eval_floor)
FLOE_KERNEL(REFERENCE, CEIL, ANY, NoParams, ops::prepare_ceil, ops::eval_ceil)
FLOE_KERNEL(REFERENCE, ROUND, ANY, NoParams, ops::prepare_round, ops::eval_round)
FLOE_KERNEL(REFERENCE, SIGN, ANY, NoParams, ops::prepare_sign, ops::eval_sign)
FLOE_KERNEL(REFERENCE, RECIPROCAL, ANY, NoParams, ops::prepare_reciprocal, ops::eval_reciprocal)
FLOE_KERNEL(REFERENCE, SIN, ANY, NoParams, ops::prepare_sin, ops::eval_sin)
FLOE_KERNEL(REFERENCE, COS, ANY, NoParams, ops::prepare_cos, ops::eval_cos)
FLOE_KERNEL(REFERENCE, TAN, ANY, NoParams, ops::prepare_tan, ops::eval_tan)
FLOE_KERNEL(REFERENCE, ASIN, ANY, NoParams, ops::prepare_asin, ops::eval_asin)
FLOE_KERNEL(REFERENCE, ACOS, ANY, NoParams, ops::prepare_acos, ops::eval_acos)
FLOE_KERNEL(REFERENCE, ATAN, ANY, NoParams, ops::prepare_atan, ops::eval_atan)
FLOE_KERNEL(REFERENCE, SINH, ANY, NoParams, ops::prepare_sinh, ops::eval_sinh)
FLOE_KERNEL(REFERENCE, COSH, ANY, NoParams, ops::prepare_cosh, ops::eval_cosh)
FLOE_KERNEL(REFERENCE, ASINH, ANY, NoParams, ops::prepare_asinh, ops::eval_asinh)
FLOE_KERNEL(REFERENCE, ACOSH, ANY, NoParams, ops::prepare_acosh, ops::eval_acosh)
FLOE_KERNEL(REFERENCE, ATANH, ANY, NoParams, ops::prepare_atanh, ops::eval_atanh)
FLOE_KERNEL(REFERENCE, EXPM1, ANY, NoParams, ops::prepare_expm1, ops::eval_expm1)
FLOE_KERNEL(REFERENCE, LOG1P, ANY, NoParams, ops::prepare_log1p, ops::eval_log1p)
FLOE_KERNEL(REFERENCE, ELU, ANY, NoParams, ops::prepare_elu, ops::eval_elu)
FLOE_KERNEL(REFERENCE, SELU, ANY, NoParams, ops::prepare_selu, ops::eval_selu)
FLOE_KERNEL(REFERENCE, SOFTPLUS, ANY, NoParams, ops::prepare_softplus, ops::eval_softplus)
FLOE_KERNEL(REFERENCE, SOFTSIGN, ANY, NoParams, ops::prepare_softsign, ops::eval_softsign)
FLOE_KERNEL(REFERENCE, IS_NAN, ANY, NoParams, ops::prepare_is_nan, ops::eval_is_nan)
FLOE_KERNEL(REFERENCE, IS_INF, ANY, NoParams, ops::prepare_is_inf, ops::eval_is_inf)
FLOE_KERNEL(REFERENCE, IS_FINITE, ANY, NoParams, ops::prepare_is_finite, ops::eval_is_finite)
