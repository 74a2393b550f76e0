// SPDX-License-Identifier: Apache-2.0
// Element-wise binary ops (Add, Sub, Mul, Div, Maximum, Minimum) with NumPy /
// TensorFlow broadcasting and a fused output activation. Owns the broadcasting
// walk: operand shapes are right-aligned against the output, runs of dimensions
// that broadcast the same way are merged, and the merged innermost run becomes a
// tight loop in which each operand is either contiguous or a single value.
// Typed binary ops (declared in binary.h): one functor per op, instantiated per
// dtype; the dtype/op switch runs once per call, the broadcast walk inlines the
// functor. Integer division checks for zero divisors in a pre-pass over the
// divisor (so the hot loop has no branch that can fail).
#include "runtime/kernels/reference/binary.h"

#include <type_traits>

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/kernels/reference/broadcast.h"
#include "runtime/kernels/common/wrapping.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {
namespace {

// The fused activation as a [lo, hi] clamp computed once per call, so inner
// loops carry no switch (activation.h).
using Clamp = ActivationRange;

// One run of `n` outputs. sa/sb are 1 (operand walks with the output) or 0 (the
// operand is one value repeated: bias-like or scalar broadcasting). The value of a
// repeated operand is read once, before any write, so `out` may alias the other,
// full-size operand.
template <typename Op>
void run(const float* a, ptrdiff_t sa, const float* b, ptrdiff_t sb, float* out, ptrdiff_t n,
         Clamp clamp) {
  if (sa != 0 && sb != 0) {
    for (ptrdiff_t i = 0; i < n; ++i) out[i] = clamp(Op::apply(a[i], b[i]));
  } else if (sa != 0) {
    const float bv = *b;
    for (ptrdiff_t i = 0; i < n; ++i) out[i] = clamp(Op::apply(a[i], bv));
  } else if (sb != 0) {
    const float av = *a;
    for (ptrdiff_t i = 0; i < n; ++i) out[i] = clamp(Op::apply(av, b[i]));
  } else {
    const float v = clamp(Op::apply(*a, *b));
    for (ptrdiff_t i = 0; i < n; ++i) out[i] = v;
  }
}

// The broadcast layout in merged form. Dimension g of the merged output has
// `size[g]` elements; stepping it advances operand a by `a_stride[g]` elements
// (0 when a broadcasts along it), likewise b. The output is dense row-major.
struct Layout {
  int count = 0;
  ptrdiff_t size[kMaxRank];
  ptrdiff_t a_stride[kMaxRank];
  ptrdiff_t b_stride[kMaxRank];
};

// Right-aligns a and b against the output (missing leading dims count as 1),
// drops output dims of size 1 (nobody moves along them), and merges neighbours
// whose (a broadcasts, b broadcasts) pattern is the same: such a run is one
// longer dimension for both operands. Strides are then the running products of
// the sizes each operand really holds, from the innermost outwards.
Layout make_layout(const Shape& a, const Shape& b, const Shape& out) {
  Layout l;
  bool a_full[kMaxRank];
  bool b_full[kMaxRank];
  const int rank = out.rank;
  for (int i = 0; i < rank; ++i) {
    const int32_t od = out.dims[i];
    if (od == 1) continue;
    const int ai = i - (rank - a.rank);
    const int bi = i - (rank - b.rank);
    const bool af = ai >= 0 && a.dims[ai] != 1;
    const bool bf = bi >= 0 && b.dims[bi] != 1;
    if (l.count > 0 && a_full[l.count - 1] == af && b_full[l.count - 1] == bf) {
      l.size[l.count - 1] *= od;
    } else {
      a_full[l.count] = af;
      b_full[l.count] = bf;
      l.size[l.count] = od;
      ++l.count;
    }
  }
  ptrdiff_t a_step = 1;
  ptrdiff_t b_step = 1;
  for (int g = l.count - 1; g >= 0; --g) {
    l.a_stride[g] = a_full[g] ? a_step : 0;
    l.b_stride[g] = b_full[g] ? b_step : 0;
    if (a_full[g]) a_step *= l.size[g];
    if (b_full[g]) b_step *= l.size[g];
  }
  return l;
}

template <typename Op>
void binary(const BinaryOperands& ops, Clamp clamp) {
  const ptrdiff_t n_out = static_cast<ptrdiff_t>(ops.output.shape.num_elements());
  if (n_out == 0) return;
  const ptrdiff_t n_a = static_cast<ptrdiff_t>(ops.a.shape.num_elements());
  const ptrdiff_t n_b = static_cast<ptrdiff_t>(ops.b.shape.num_elements());
  const float* a = ops.a.data;
  const float* b = ops.b.data;
  float* out = ops.output.data;

  // Fast paths that need no layout. An operand with as many elements as the
  // output has the output's shape up to size-1 dims, so it walks flat; a
  // single-element operand is a scalar. (When one operand is a scalar the other
  // necessarily has the output's element count.)
  if (n_a == n_out && n_b == n_out) {
    run<Op>(a, 1, b, 1, out, n_out, clamp);
    return;
  }
  if (n_b == 1) {
    run<Op>(a, 1, b, 0, out, n_out, clamp);
    return;
  }
  if (n_a == 1) {
    run<Op>(a, 0, b, 1, out, n_out, clamp);
    return;
  }

  // General walk: the innermost merged dim is the tight loop (for [M,N] + [N]
  // that is one contiguous/contiguous run per row); an odometer over the outer
  // merged dims moves the operand offsets by their strides, rewinding a dim's
  // whole extent when it wraps, so no per-element index arithmetic remains.
  const Layout l = make_layout(ops.a.shape, ops.b.shape, ops.output.shape);
  const int inner = l.count - 1;  // >= 0: n_out > 1 here, so some dim is not 1
  const ptrdiff_t n = l.size[inner];
  const ptrdiff_t sa = l.a_stride[inner] != 0 ? 1 : 0;
  const ptrdiff_t sb = l.b_stride[inner] != 0 ? 1 : 0;
  ptrdiff_t index[kMaxRank] = {};
  ptrdiff_t a_off = 0;
  ptrdiff_t b_off = 0;
  for (ptrdiff_t done = 0; done < n_out; done += n) {
    run<Op>(a + a_off, sa, b + b_off, sb, out + done, n, clamp);
    for (int g = inner - 1; g >= 0; --g) {
      a_off += l.a_stride[g];
      b_off += l.b_stride[g];
      if (++index[g] < l.size[g]) break;
      a_off -= l.a_stride[g] * l.size[g];
      b_off -= l.b_stride[g] * l.size[g];
      index[g] = 0;
    }
  }
}

}  // namespace

void binary_f32(const BinaryParams& params, const BinaryOperands& ops) {
  const Clamp clamp = activation_range(params.activation);
  switch (params.op) {
    case BinaryOp::kAdd:
      return binary<AddOp>(ops, clamp);
    case BinaryOp::kSub:
      return binary<SubOp>(ops, clamp);
    case BinaryOp::kMul:
      return binary<MulOp>(ops, clamp);
    case BinaryOp::kDiv:
      return binary<DivOp>(ops, clamp);
    case BinaryOp::kMaximum:
      return binary<MaxOp>(ops, clamp);
    case BinaryOp::kMinimum:
      return binary<MinOp>(ops, clamp);
  }
}

}  // namespace floe::ref

namespace floe::ref {
namespace {

template <typename T> struct Add { T operator()(T a, T b) const { return wrapping_add(a, b); } };
template <typename T> struct Sub { T operator()(T a, T b) const { return wrapping_sub(a, b); } };
template <typename T> struct Mul { T operator()(T a, T b) const { return wrapping_mul(a, b); } };
template <typename T> struct Max {
  T operator()(T a, T b) const { return (a > b || a != a) ? a : b; }
};
template <typename T> struct Min {
  T operator()(T a, T b) const { return (a < b || a != a) ? a : b; }
};
template <typename T> struct SquaredDifference {
  T operator()(T a, T b) const { return wrapping_mul(wrapping_sub(a, b), wrapping_sub(a, b)); }
};

// Integer division: INT_MIN / -1 overflows in C++; TF's result wraps to
// INT_MIN, computed here as a wrapping negation.
template <typename T> T neg_wrap(T a);
template <> inline int32_t neg_wrap(int32_t a) { return static_cast<int32_t>(0u - static_cast<uint32_t>(a)); }
template <> inline int64_t neg_wrap(int64_t a) { return static_cast<int64_t>(0ull - static_cast<uint64_t>(a)); }

template <typename T> struct TruncDiv {
  T operator()(T a, T b) const { return b == -1 ? neg_wrap(a) : static_cast<T>(a / b); }
};
template <typename T> struct FloorDivInt {
  T operator()(T a, T b) const {
    if (b == -1) return neg_wrap(a);
    const T q = static_cast<T>(a / b);
    return ((a % b) != 0 && ((a < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
  }
};
template <typename T> struct FloorModInt {
  T operator()(T a, T b) const {
    if (b == -1) return 0;
    const T r = static_cast<T>(a % b);
    return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
  }
};
template <typename T> struct PowInt {
  T operator()(T base, T exp) const {
    // Negative exponents: TF errors; floe returns 0 except for |base| == 1
    // (prepare cannot see values; the result is the mathematical truncation).
    if (exp < 0) return base == 1 ? 1 : (base == -1 ? ((exp & 1) ? -1 : 1) : 0);
    T result = 1;
    T b = base;
    while (exp > 0) {
      if (exp & 1) result = wrapping_mul(result, b);
      b = wrapping_mul(b, b);
      exp = static_cast<T>(exp >> 1);
    }
    return result;
  }
};

struct DivF { float operator()(float a, float b) const { return a / b; } };
// TF: floor(x / y) for floats.
struct FloorDivF { float operator()(float a, float b) const { return floorf(a / b); } };
// TF FloorMod on floats: fmod, then shifted into the divisor's sign.
struct FloorModF {
  float operator()(float a, float b) const {
    const float r = fmodf(a, b);
    return (r != 0.0f && ((r < 0.0f) != (b < 0.0f))) ? r + b : r;
  }
};
struct TruncDivF { float operator()(float a, float b) const { return truncf(a / b); } };
struct PowF { float operator()(float a, float b) const { return powf(a, b); } };
struct Atan2F { float operator()(float a, float b) const { return atan2f(a, b); } };

template <typename T, typename F>
void run(const TypedBinaryOperands& ops, F f) {
  broadcast_binary(static_cast<const T*>(ops.a.data), ops.a.shape, static_cast<const T*>(ops.b.data),
                   ops.b.shape, static_cast<T*>(ops.output.data), ops.output.shape, f);
}

template <typename T>
bool has_zero(const In<void>& v) {
  const T* p = static_cast<const T*>(v.data);
  const int64_t n = v.shape.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    if (p[i] == 0) return true;
  }
  return false;
}

// kOp is a template argument so each op's instantiation holds (and links) only
// its own arithmetic: ADD in a firmware does not bring in powf or atan2f.
template <typename T, ArithOp kOp>
bool arith_int(const TypedBinaryOperands& ops) {
  switch (kOp) {
    case ArithOp::kAdd: run<T>(ops, Add<T>()); return true;
    case ArithOp::kSub: run<T>(ops, Sub<T>()); return true;
    case ArithOp::kMul: run<T>(ops, Mul<T>()); return true;
    case ArithOp::kMaximum: run<T>(ops, Max<T>()); return true;
    case ArithOp::kMinimum: run<T>(ops, Min<T>()); return true;
    case ArithOp::kSquaredDifference: run<T>(ops, SquaredDifference<T>()); return true;
    case ArithOp::kPow: run<T>(ops, PowInt<T>()); return true;
    case ArithOp::kDiv:
    case ArithOp::kTruncateDiv:
      if (has_zero<T>(ops.b)) return false;
      run<T>(ops, TruncDiv<T>());
      return true;
    case ArithOp::kFloorDiv:
      if (has_zero<T>(ops.b)) return false;
      run<T>(ops, FloorDivInt<T>());
      return true;
    case ArithOp::kFloorMod:
      if (has_zero<T>(ops.b)) return false;
      run<T>(ops, FloorModInt<T>());
      return true;
    case ArithOp::kBitwiseAnd: run<T>(ops, [](T a, T b) -> T { return a & b; }); return true;
    case ArithOp::kAtan2: return false;
  }
  return false;
}

template <ArithOp kOp>
bool arith_float(const TypedBinaryOperands& ops) {
  switch (kOp) {
    case ArithOp::kAdd: run<float>(ops, Add<float>()); return true;
    case ArithOp::kSub: run<float>(ops, Sub<float>()); return true;
    case ArithOp::kMul: run<float>(ops, Mul<float>()); return true;
    case ArithOp::kDiv: run<float>(ops, DivF()); return true;
    case ArithOp::kMaximum: run<float>(ops, Max<float>()); return true;
    case ArithOp::kMinimum: run<float>(ops, Min<float>()); return true;
    case ArithOp::kFloorDiv: run<float>(ops, FloorDivF()); return true;
    case ArithOp::kFloorMod: run<float>(ops, FloorModF()); return true;
    case ArithOp::kTruncateDiv: run<float>(ops, TruncDivF()); return true;
    case ArithOp::kPow: run<float>(ops, PowF()); return true;
    case ArithOp::kAtan2: run<float>(ops, Atan2F()); return true;
    case ArithOp::kSquaredDifference: run<float>(ops, SquaredDifference<float>()); return true;
    case ArithOp::kBitwiseAnd: return false;
  }
  return false;
}

template <typename T>
void compare_typed(CompareOp op, const TypedBinaryOperands& ops) {
  const T* a = static_cast<const T*>(ops.a.data);
  const T* b = static_cast<const T*>(ops.b.data);
  uint8_t* o = static_cast<uint8_t*>(ops.output.data);
  const Shape &sa = ops.a.shape, &sb = ops.b.shape, &so = ops.output.shape;
  switch (op) {
    case CompareOp::kEqual: broadcast_binary(a, sa, b, sb, o, so, [](T x, T y) -> uint8_t { return x == y; }); return;
    case CompareOp::kNotEqual: broadcast_binary(a, sa, b, sb, o, so, [](T x, T y) -> uint8_t { return x != y; }); return;
    case CompareOp::kLess: broadcast_binary(a, sa, b, sb, o, so, [](T x, T y) -> uint8_t { return x < y; }); return;
    case CompareOp::kLessEqual: broadcast_binary(a, sa, b, sb, o, so, [](T x, T y) -> uint8_t { return x <= y; }); return;
    case CompareOp::kGreater: broadcast_binary(a, sa, b, sb, o, so, [](T x, T y) -> uint8_t { return x > y; }); return;
    case CompareOp::kGreaterEqual: broadcast_binary(a, sa, b, sb, o, so, [](T x, T y) -> uint8_t { return x >= y; }); return;
  }
}

}  // namespace

bool arith_supports(ArithOp op, DType dtype) {
  if (dtype == DType::kFloat32) return op != ArithOp::kBitwiseAnd;
  if (dtype == DType::kInt32 || dtype == DType::kInt64) return op != ArithOp::kAtan2;
  return false;
}

bool compare_supports(CompareOp op, DType dtype) {
  if (dtype == DType::kFloat32 || dtype == DType::kInt32 || dtype == DType::kInt64) return true;
  return dtype == DType::kBool && (op == CompareOp::kEqual || op == CompareOp::kNotEqual);
}

template <ArithOp kOp>
bool arith_op(DType dtype, const TypedBinaryOperands& ops) {
  switch (dtype) {
    case DType::kFloat32: return arith_float<kOp>(ops);
    case DType::kInt32: return arith_int<int32_t, kOp>(ops);
    case DType::kInt64: return arith_int<int64_t, kOp>(ops);
    default: return false;
  }
}
#define FLOE_ARITH_OP(op) template bool arith_op<ArithOp::op>(DType, const TypedBinaryOperands&);
FLOE_ARITH_OP(kAdd) FLOE_ARITH_OP(kSub) FLOE_ARITH_OP(kMul) FLOE_ARITH_OP(kDiv) FLOE_ARITH_OP(kMaximum)
FLOE_ARITH_OP(kMinimum) FLOE_ARITH_OP(kFloorDiv) FLOE_ARITH_OP(kFloorMod) FLOE_ARITH_OP(kTruncateDiv)
FLOE_ARITH_OP(kPow) FLOE_ARITH_OP(kAtan2) FLOE_ARITH_OP(kSquaredDifference) FLOE_ARITH_OP(kBitwiseAnd)
#undef FLOE_ARITH_OP

bool arith(ArithOp op, DType dtype, const TypedBinaryOperands& ops) {
  switch (op) {
    case ArithOp::kAdd: return arith_op<ArithOp::kAdd>(dtype, ops);
    case ArithOp::kSub: return arith_op<ArithOp::kSub>(dtype, ops);
    case ArithOp::kMul: return arith_op<ArithOp::kMul>(dtype, ops);
    case ArithOp::kDiv: return arith_op<ArithOp::kDiv>(dtype, ops);
    case ArithOp::kMaximum: return arith_op<ArithOp::kMaximum>(dtype, ops);
    case ArithOp::kMinimum: return arith_op<ArithOp::kMinimum>(dtype, ops);
    case ArithOp::kFloorDiv: return arith_op<ArithOp::kFloorDiv>(dtype, ops);
    case ArithOp::kFloorMod: return arith_op<ArithOp::kFloorMod>(dtype, ops);
    case ArithOp::kTruncateDiv: return arith_op<ArithOp::kTruncateDiv>(dtype, ops);
    case ArithOp::kPow: return arith_op<ArithOp::kPow>(dtype, ops);
    case ArithOp::kAtan2: return arith_op<ArithOp::kAtan2>(dtype, ops);
    case ArithOp::kSquaredDifference: return arith_op<ArithOp::kSquaredDifference>(dtype, ops);
    case ArithOp::kBitwiseAnd: return arith_op<ArithOp::kBitwiseAnd>(dtype, ops);
  }
  return false;
}

void compare(CompareOp op, DType dtype, const TypedBinaryOperands& ops) {
  switch (dtype) {
    case DType::kFloat32: return compare_typed<float>(op, ops);
    case DType::kInt32: return compare_typed<int32_t>(op, ops);
    case DType::kInt64: return compare_typed<int64_t>(op, ops);
    case DType::kBool: return compare_typed<uint8_t>(op, ops);
    default: return;
  }
}

void logical(LogicalOp op, const TypedBinaryOperands& ops) {
  const uint8_t* a = static_cast<const uint8_t*>(ops.a.data);
  const uint8_t* b = static_cast<const uint8_t*>(ops.b.data);
  uint8_t* o = static_cast<uint8_t*>(ops.output.data);
  if (op == LogicalOp::kAnd) {
    broadcast_binary(a, ops.a.shape, b, ops.b.shape, o, ops.output.shape,
                     [](uint8_t x, uint8_t y) -> uint8_t { return (x != 0) && (y != 0); });
  } else {
    broadcast_binary(a, ops.a.shape, b, ops.b.shape, o, ops.output.shape,
                     [](uint8_t x, uint8_t y) -> uint8_t { return (x != 0) || (y != 0); });
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {
namespace {

using ref::ArithOp;

using ref::CompareOp;

const char* check_binary_shapes(const OpContext& ctx) {
  if (!has_io(ctx, 2, 1)) return FLOE_MSG("expects 2 inputs and 1 output");
  const TensorView a = ctx.input(0), b = ctx.input(1), o = ctx.output(0);
  if (a.dtype != b.dtype) return FLOE_MSG("input dtypes differ");
  const Shape shapes[2] = {a.shape, b.shape};
  if (!is_broadcast_of(shapes, 2, o.shape)) return FLOE_MSG("output shape is not the broadcast shape");
  return nullptr;
}

Status eval_add_s8(const PreparedOp& ctx) {
  ref::add_s8(ctx.params_as<ArithPrepared>().add_s8,
              {in_as<int8_t>(ctx.input(0)), in_as<int8_t>(ctx.input(1)), out_as<int8_t>(ctx.output(0))});
  return Status::kOk;
}

Status eval_sub_s8(const PreparedOp& ctx) {
  ref::sub_s8(ctx.params_as<ArithPrepared>().add_s8,
              {in_as<int8_t>(ctx.input(0)), in_as<int8_t>(ctx.input(1)), out_as<int8_t>(ctx.output(0))});
  return Status::kOk;
}

Status eval_add_s16(const PreparedOp& ctx) {
  ref::add_s16(ctx.params_as<ArithPrepared>().add_s8,
               {in_as<int16_t>(ctx.input(0)), in_as<int16_t>(ctx.input(1)), out_as<int16_t>(ctx.output(0))});
  return Status::kOk;
}

Status eval_sub_s16(const PreparedOp& ctx) {
  ref::sub_s16(ctx.params_as<ArithPrepared>().add_s8,
               {in_as<int16_t>(ctx.input(0)), in_as<int16_t>(ctx.input(1)), out_as<int16_t>(ctx.output(0))});
  return Status::kOk;
}

Status eval_mul_s16(const PreparedOp& ctx) {
  ref::mul_s16(ctx.params_as<ArithPrepared>().mul_s8,
               {in_as<int16_t>(ctx.input(0)), in_as<int16_t>(ctx.input(1)), out_as<int16_t>(ctx.output(0))});
  return Status::kOk;
}

Status eval_mul_s8(const PreparedOp& ctx) {
  ref::mul_s8(ctx.params_as<ArithPrepared>().mul_s8,
              {in_as<int8_t>(ctx.input(0)), in_as<int8_t>(ctx.input(1)), out_as<int8_t>(ctx.output(0))});
  return Status::kOk;
}

bool int8_offset(int32_t v) { return v >= -127 && v <= 128; }

// int8 / int16 MAXIMUM and MINIMUM compare the stored integers: with one
// scale and zero point for inputs and output (the converter checks it) they
// order like the reals.
template <bool kMax, typename T, typename Ops>
Status eval_quantized_extremum(const PreparedOp& ctx) {
  ref::quantized_extremum<kMax>(Ops{in_as<T>(ctx.input(0)), in_as<T>(ctx.input(1)), out_as<T>(ctx.output(0))});
  return Status::kOk;
}

// Quantized int8 ADD/SUB/MUL (an Operator.requantization is present): each
// input is rescaled by the converter's multipliers. Plain int8 integers (no
// requantization) keep the wrapping typed kernel.
const char* prepare_quantized_arith(const OpContext& ctx, ArithOp op) {
  if (const char* err = check_binary_shapes(ctx)) return err;
  const DType t = ctx.input(0).dtype;
  if ((t != DType::kInt8 && t != DType::kInt16) || ctx.output(0).dtype != t) {
    return FLOE_MSG("quantized arithmetic takes int8 or int16");
  }
  const bool wide = t == DType::kInt16;
  const char* why = nullptr;
  const schema::Requantization* r = requantization_of(ctx, &why, t);
  if (r == nullptr) return why;
  const int32_t in1 = entry(r->input_offsets(), 0), in2 = entry(r->input_offsets(), 1);
  // requantization_of has checked the output offset (0 for int16).
  if (wide ? (in1 != 0 || in2 != 0) : (!int8_offset(in1) || !int8_offset(in2))) {
    return FLOE_MSG("quantized input offsets outside the dtype (int16: 0)");
  }
  if (!valid_multiplier(r->output_multiplier(), r->output_shift())) {
    return FLOE_MSG("int8 multiplier or shift out of range");
  }
  if (op == ArithOp::kMul) {
    ref::MulS8Params& p = ctx.params<ArithPrepared>().mul_s8;
    p.input1_offset = in1;
    p.input2_offset = in2;
    p.output_offset = r->output_offset();
    p.output_multiplier = r->output_multiplier();
    p.output_shift = r->output_shift();
    p.act_min = r->activation_min();
    p.act_max = r->activation_max();
    ctx.set_eval(wide ? eval_mul_s16 : eval_mul_s8);
    return nullptr;
  }
  if (op != ArithOp::kAdd && op != ArithOp::kSub) return FLOE_MSG("no quantized kernel for this op");
  ref::AddS8Params& p = ctx.params<ArithPrepared>().add_s8;
  p.input1_offset = in1;
  p.input2_offset = in2;
  p.output_offset = r->output_offset();
  p.left_shift = r->left_shift();
  p.input1_multiplier = entry(r->input_multipliers(), 0);
  p.input1_shift = entry(r->input_shifts(), 0);
  p.input2_multiplier = entry(r->input_multipliers(), 1);
  p.input2_shift = entry(r->input_shifts(), 1);
  p.output_multiplier = r->output_multiplier();
  p.output_shift = r->output_shift();
  p.act_min = r->activation_min();
  p.act_max = r->activation_max();
  // (q + offset) << left_shift must fit int32: |q + offset| <= 255 < 2^(31 - left_shift)
  // for int8, |q| <= 32768 < 2^(31 - left_shift) for int16.
  if (p.left_shift < 0 || p.left_shift > (wide ? 15 : 22) || !valid_multiplier(p.input1_multiplier, p.input1_shift) ||
      !valid_multiplier(p.input2_multiplier, p.input2_shift) || p.input1_shift > 0 || p.input2_shift > 0) {
    return FLOE_MSG("quantized add/sub rescaling out of range");
  }
  if (wide) {
    ctx.set_eval(op == ArithOp::kAdd ? eval_add_s16 : eval_sub_s16);
  } else {
    ctx.set_eval(op == ArithOp::kAdd ? eval_add_s8 : eval_sub_s8);
  }
  return nullptr;
}

// Picks the kernel variant once: float32 operands of one shape run a flat loop
// over `count` elements; other float32 shapes the broadcasting float kernel;
// other dtypes the typed kernel.
const char* prepare_arith(const OpContext& ctx, ArithOp op, EvalFn flat_f32, EvalFn broadcast_f32) {
  if (ctx.op->requantization() != nullptr) return prepare_quantized_arith(ctx, op);
  if (const char* err = check_binary_shapes(ctx)) return err;
  const DType t = ctx.input(0).dtype;
  if (ctx.output(0).dtype != t) return FLOE_MSG("output dtype differs from the inputs'");
  if (t == DType::kInt8 && (op == ArithOp::kMaximum || op == ArithOp::kMinimum)) {
    ctx.set_eval(op == ArithOp::kMaximum ? eval_quantized_extremum<true, int8_t, ref::BinaryS8Operands>
                                         : eval_quantized_extremum<false, int8_t, ref::BinaryS8Operands>);
    return nullptr;
  }
  if (t == DType::kInt16 && (op == ArithOp::kMaximum || op == ArithOp::kMinimum)) {
    ctx.set_eval(op == ArithOp::kMaximum ? eval_quantized_extremum<true, int16_t, ref::BinaryS16Operands>
                                         : eval_quantized_extremum<false, int16_t, ref::BinaryS16Operands>);
    return nullptr;
  }
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

FLOE_ARITH(bitwise_and, ArithOp::kBitwiseAnd)

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

}  // namespace floe::ops

namespace floe::ref {
namespace {

// One input of ADD / SUB in the common scale: offset, shifted left, rescaled.
inline int32_t add_operand_s8(int32_t q, int32_t offset, int32_t left_shift, int32_t multiplier,
                              int32_t shift) {
  return multiply_by_quantized_multiplier((q + offset) * (1 << left_shift), multiplier, shift);
}

template <bool kSubtract, typename T, typename Operands>
void add_or_sub_quantized(const AddS8Params& p, const Operands& ops) {
  broadcast_binary(ops.a.data, ops.a.shape, ops.b.data, ops.b.shape, ops.output.data,
                   ops.output.shape, [&p](T a, T b) {
                     const int32_t x = add_operand_s8(a, p.input1_offset, p.left_shift,
                                                      p.input1_multiplier, p.input1_shift);
                     const int32_t y = add_operand_s8(b, p.input2_offset, p.left_shift,
                                                      p.input2_multiplier, p.input2_shift);
                     const int32_t raw = kSubtract ? x - y : x + y;
                     const int32_t out =
                         multiply_by_quantized_multiplier(raw, p.output_multiplier, p.output_shift) +
                         p.output_offset;
                     return static_cast<T>(clamp_to(out, p.act_min, p.act_max));
                   });
}

}  // namespace

void add_s8(const AddS8Params& params, const BinaryS8Operands& ops) {
  add_or_sub_quantized<false, int8_t>(params, ops);
}

void sub_s8(const AddS8Params& params, const BinaryS8Operands& ops) {
  add_or_sub_quantized<true, int8_t>(params, ops);
}

void add_s16(const AddS8Params& params, const BinaryS16Operands& ops) {
  add_or_sub_quantized<false, int16_t>(params, ops);
}

void sub_s16(const AddS8Params& params, const BinaryS16Operands& ops) {
  add_or_sub_quantized<true, int16_t>(params, ops);
}

namespace {

// |(a + offset) * (b + offset)| <= 2^30 for int16 (zero offsets) and int8.
template <typename T, typename Operands>
void mul_quantized(const MulS8Params& p, const Operands& ops) {
  broadcast_binary(ops.a.data, ops.a.shape, ops.b.data, ops.b.shape, ops.output.data,
                   ops.output.shape, [&p](T a, T b) {
                     const int32_t product = (a + p.input1_offset) * (b + p.input2_offset);
                     const int32_t out = multiply_by_quantized_multiplier(
                                             product, p.output_multiplier, p.output_shift) +
                                         p.output_offset;
                     return static_cast<T>(clamp_to(out, p.act_min, p.act_max));
                   });
}

}  // namespace

void mul_s8(const MulS8Params& p, const BinaryS8Operands& ops) { mul_quantized<int8_t>(p, ops); }

void mul_s16(const MulS8Params& p, const BinaryS16Operands& ops) { mul_quantized<int16_t>(p, ops); }

template <bool kMax, typename Ops>
void quantized_extremum(const Ops& ops) {
  using T = std::remove_const_t<std::remove_pointer_t<decltype(ops.a.data)>>;
  broadcast_binary(ops.a.data, ops.a.shape, ops.b.data, ops.b.shape, ops.output.data, ops.output.shape,
                   [](T a, T b) { return kMax ? (a > b ? a : b) : (a < b ? a : b); });
}

template void quantized_extremum<true>(const BinaryS8Operands&);
template void quantized_extremum<false>(const BinaryS8Operands&);
template void quantized_extremum<true>(const BinaryS16Operands&);
template void quantized_extremum<false>(const BinaryS16Operands&);

}  // namespace floe::ref

FLOE_KERNEL(REFERENCE, LOGICAL_AND, ANY, NoParams, ops::prepare_logical_and, ops::eval_logical_and)
FLOE_KERNEL(REFERENCE, LOGICAL_OR, ANY, NoParams, ops::prepare_logical_or, ops::eval_logical_or)

FLOE_KERNEL(REFERENCE, ADD, ANY, ops::ArithPrepared, ops::prepare_add, ops::eval_add)
FLOE_KERNEL(REFERENCE, SUB, ANY, ops::ArithPrepared, ops::prepare_sub, ops::eval_sub)
FLOE_KERNEL(REFERENCE, MUL, ANY, ops::ArithPrepared, ops::prepare_mul, ops::eval_mul)
FLOE_KERNEL(REFERENCE, DIV, ANY, ops::ElementwisePrepared, ops::prepare_div, ops::eval_div)
FLOE_KERNEL(REFERENCE, MAXIMUM, ANY, ops::ElementwisePrepared, ops::prepare_maximum, ops::eval_maximum)
FLOE_KERNEL(REFERENCE, MINIMUM, ANY, ops::ElementwisePrepared, ops::prepare_minimum, ops::eval_minimum)
FLOE_KERNEL(REFERENCE, FLOOR_DIV, ANY, NoParams, ops::prepare_floor_div, ops::eval_floor_div)
FLOE_KERNEL(REFERENCE, FLOOR_MOD, ANY, NoParams, ops::prepare_floor_mod, ops::eval_floor_mod)
FLOE_KERNEL(REFERENCE, TRUNCATE_DIV, ANY, NoParams, ops::prepare_truncate_div, ops::eval_truncate_div)
FLOE_KERNEL(REFERENCE, POW, ANY, NoParams, ops::prepare_pow, ops::eval_pow)
FLOE_KERNEL(REFERENCE, ATAN2, ANY, NoParams, ops::prepare_atan2, ops::eval_atan2)
FLOE_KERNEL(REFERENCE, SQUARED_DIFFERENCE, ANY, NoParams, ops::prepare_squared_difference, ops::eval_squared_difference)
FLOE_KERNEL(REFERENCE, EQUAL, ANY, NoParams, ops::prepare_equal, ops::eval_equal)
FLOE_KERNEL(REFERENCE, NOT_EQUAL, ANY, NoParams, ops::prepare_not_equal, ops::eval_not_equal)
FLOE_KERNEL(REFERENCE, LESS, ANY, NoParams, ops::prepare_less, ops::eval_less)
FLOE_KERNEL(REFERENCE, LESS_EQUAL, ANY, NoParams, ops::prepare_less_equal, ops::eval_less_equal)
FLOE_KERNEL(REFERENCE, GREATER, ANY, NoParams, ops::prepare_greater, ops::eval_greater)
FLOE_KERNEL(REFERENCE, GREATER_EQUAL, ANY, NoParams, ops::prepare_greater_equal, ops::eval_greater_equal)
FLOE_KERNEL(REFERENCE, BITWISE_AND, ANY, NoParams, ops::prepare_bitwise_and, ops::eval_bitwise_and)
