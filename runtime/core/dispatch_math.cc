// SPDX-License-Identifier: Apache-2.0
// Element-wise adapters: typed binary arithmetic, comparisons and logical ops
// (broadcasting), typed unary math, predicates, LeakyRelu, Cast, Select. Prepare
// checks the dtype pair is one the kernel implements and that the output shape
// is exactly the broadcast of the inputs (the kernels index by it).
#include "runtime/core/dispatch_ops.h"
#include "runtime/kernels/reference/binary.h"
#include "runtime/kernels/reference/binary.h"
#include "runtime/kernels/reference/select.h"
#include "runtime/kernels/reference/unary.h"

namespace floe::ops {

bool is_broadcast_of(const Shape* shapes, int n, const Shape& o) {
  int rank = 0;
  for (int k = 0; k < n; ++k) rank = shapes[k].rank > rank ? shapes[k].rank : rank;
  if (o.rank != rank) return false;
  for (int i = 0; i < rank; ++i) {
    int32_t want = 1;
    for (int k = 0; k < n; ++k) {
      const int ki = i - (rank - shapes[k].rank);
      const int32_t d = ki >= 0 ? shapes[k].dims[ki] : 1;
      if (d == 1) continue;
      if (want != 1 && want != d) return false;
      want = d;
    }
    if (o.dims[i] != want) return false;
  }
  return true;
}

namespace {

using ref::ArithOp;
using ref::CompareOp;
using ref::MathOp;

const char* check_binary_shapes(const OpContext& ctx) {
  if (!has_io(ctx, 2, 1)) return FLOE_MSG("expects 2 inputs and 1 output");
  const TensorView a = ctx.input(0), b = ctx.input(1), o = ctx.output(0);
  if (a.dtype != b.dtype) return FLOE_MSG("input dtypes differ");
  const Shape shapes[2] = {a.shape, b.shape};
  if (!is_broadcast_of(shapes, 2, o.shape)) return FLOE_MSG("output shape is not the broadcast shape");
  return nullptr;
}

// Picks the kernel variant once: float32 operands of one shape run a flat loop
// over `count` elements; other float32 shapes the broadcasting float kernel;
// other dtypes the typed kernel.
const char* prepare_arith(const OpContext& ctx, ArithOp op, EvalFn flat_f32, EvalFn broadcast_f32) {
  if (const char* err = check_binary_shapes(ctx)) return err;
  const DType t = ctx.input(0).dtype;
  if (ctx.output(0).dtype != t) return FLOE_MSG("output dtype differs from the inputs'");
  if (!ref::arith_supports(op, t)) return FLOE_MSG("dtype not supported by this op");
  if (flat_f32 == nullptr) return nullptr;  // no params block: the typed kernel only
  const TensorView a = ctx.input(0), b = ctx.input(1), o = ctx.output(0);
  ctx.params<ElementwisePrepared>().count = static_cast<int32_t>(o.shape.num_elements());
  if (t == DType::kFloat32) {
    ctx.set_eval(dims_equal(a.shape, o.shape) && dims_equal(b.shape, o.shape) ? flat_f32 : broadcast_f32);
  }
  return nullptr;
}

ref::TypedBinaryOperands binary_operands(const PreparedOp& ctx) {
  return {in_void(ctx.input(0)), in_void(ctx.input(1)), out_void(ctx.output(0))};
}

template <ArithOp kOp>
Status eval_arith(const PreparedOp& ctx) {
  return ref::arith_op<kOp>(ctx.input(0).dtype, binary_operands(ctx)) ? Status::kOk : Status::kKernelError;
}

Status eval_binary_f32(const PreparedOp& ctx, ref::BinaryOp op) {
  ref::BinaryParams params;
  params.op = op;
  ref::binary_f32(params, {in_as<float>(ctx.input(0)), in_as<float>(ctx.input(1)),
                           out_as<float>(ctx.output(0))});
  return Status::kOk;
}

// Same-shape float32 operands: no index arithmetic at all.
template <typename Op>
Status eval_flat_f32(const PreparedOp& ctx) {
  ref::binary_flat_f32<Op>(static_cast<const float*>(ctx.input(0).data),
                           static_cast<const float*>(ctx.input(1).data),
                           static_cast<float*>(ctx.output(0).data),
                           ctx.params_as<ElementwisePrepared>().count);
  return Status::kOk;
}

const char* prepare_compare(const OpContext& ctx, CompareOp op) {
  if (const char* err = check_binary_shapes(ctx)) return err;
  if (ctx.output(0).dtype != DType::kBool) return FLOE_MSG("comparison output must be bool");
  if (!ref::compare_supports(op, ctx.input(0).dtype)) return FLOE_MSG("dtype not supported by this op");
  return nullptr;
}

const char* prepare_logical(const OpContext& ctx) {
  if (const char* err = check_binary_shapes(ctx)) return err;
  if (ctx.input(0).dtype != DType::kBool || ctx.output(0).dtype != DType::kBool) {
    return FLOE_MSG("logical ops take and return bool");
  }
  return nullptr;
}

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

#define FLOE_ARITH_F32(name, op, fop, element_op)                                              \
  namespace {                                                                                  \
  Status eval_##name##_f32(const PreparedOp& ctx) { return eval_binary_f32(ctx, fop); }       \
  }                                                                                            \
  const char* prepare_##name(const OpContext& ctx) {                                           \
    return prepare_arith(ctx, op, eval_flat_f32<element_op>, eval_##name##_f32);               \
  }                                                                                            \
  Status eval_##name(const PreparedOp& ctx) { return eval_arith<op>(ctx); }
FLOE_ARITH_F32(add, ArithOp::kAdd, ref::BinaryOp::kAdd, ref::AddOp)
FLOE_ARITH_F32(sub, ArithOp::kSub, ref::BinaryOp::kSub, ref::SubOp)
FLOE_ARITH_F32(mul, ArithOp::kMul, ref::BinaryOp::kMul, ref::MulOp)
FLOE_ARITH_F32(div, ArithOp::kDiv, ref::BinaryOp::kDiv, ref::DivOp)
FLOE_ARITH_F32(maximum, ArithOp::kMaximum, ref::BinaryOp::kMaximum, ref::MaxOp)
FLOE_ARITH_F32(minimum, ArithOp::kMinimum, ref::BinaryOp::kMinimum, ref::MinOp)
#undef FLOE_ARITH_F32

#define FLOE_ARITH(name, op)                                                                     \
  const char* prepare_##name(const OpContext& ctx) { return prepare_arith(ctx, op, nullptr, nullptr); } \
  Status eval_##name(const PreparedOp& ctx) { return eval_arith<op>(ctx); }
FLOE_ARITH(floor_div, ArithOp::kFloorDiv)
FLOE_ARITH(floor_mod, ArithOp::kFloorMod)
FLOE_ARITH(truncate_div, ArithOp::kTruncateDiv)
FLOE_ARITH(pow, ArithOp::kPow)
FLOE_ARITH(atan2, ArithOp::kAtan2)
FLOE_ARITH(squared_difference, ArithOp::kSquaredDifference)
#undef FLOE_ARITH

#define FLOE_COMPARE(name, op)                                                            \
  const char* prepare_##name(const OpContext& ctx) { return prepare_compare(ctx, op); }  \
  Status eval_##name(const PreparedOp& ctx) {                                              \
    ref::compare(op, ctx.input(0).dtype, binary_operands(ctx));                           \
    return Status::kOk;                                                                   \
  }
FLOE_COMPARE(equal, CompareOp::kEqual)
FLOE_COMPARE(not_equal, CompareOp::kNotEqual)
FLOE_COMPARE(less, CompareOp::kLess)
FLOE_COMPARE(less_equal, CompareOp::kLessEqual)
FLOE_COMPARE(greater, CompareOp::kGreater)
FLOE_COMPARE(greater_equal, CompareOp::kGreaterEqual)
#undef FLOE_COMPARE

const char* prepare_logical_and(const OpContext& ctx) { return prepare_logical(ctx); }
Status eval_logical_and(const PreparedOp& ctx) {
  ref::logical(ref::LogicalOp::kAnd, binary_operands(ctx));
  return Status::kOk;
}
const char* prepare_logical_or(const OpContext& ctx) { return prepare_logical(ctx); }
Status eval_logical_or(const PreparedOp& ctx) {
  ref::logical(ref::LogicalOp::kOr, binary_operands(ctx));
  return Status::kOk;
}

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

const char* prepare_select(const OpContext& ctx) {
  if (!has_io(ctx, 3, 1)) return FLOE_MSG("expects cond, x, y and 1 output");
  const TensorView c = ctx.input(0), x = ctx.input(1), y = ctx.input(2), o = ctx.output(0);
  if (c.dtype != DType::kBool) return FLOE_MSG("condition must be bool");
  if (x.dtype != y.dtype || o.dtype != x.dtype) return FLOE_MSG("x, y and output dtypes differ");
  if (dtype_size(o.dtype) == 0) return FLOE_MSG("invalid dtype");
  const Shape shapes[3] = {c.shape, x.shape, y.shape};
  if (!is_broadcast_of(shapes, 3, o.shape)) return FLOE_MSG("output shape is not the broadcast shape");
  return nullptr;
}
Status eval_select(const PreparedOp& ctx) {
  const TensorView &c = ctx.input(0), &o = ctx.output(0);
  ref::select(dtype_size(o.dtype),
              {in_as<uint8_t>(c), in_void(ctx.input(1)), in_void(ctx.input(2)), out_void(o)});
  return Status::kOk;
}

}  // namespace floe::ops
