// SPDX-License-Identifier: Apache-2.0
// Inference TF ops that floe computes with ops it already has: ClipByValue
// (MINIMUM then MAXIMUM, in the order TF's kernel applies them), DivNoNan (DIV,
// then SELECT of 0 where the divisor is 0), Prelu (max(x, 0) + alpha * min(x,
// 0)), BroadcastTo (RESHAPE to the target rank, then TILE), EnsureShape (the
// shape is checked at conversion time, the tensor passes through), ShapeN
// (one shape vector per input, folded like Shape) and MatrixBandPart (SELECT
// with a constant band mask; num_lower / num_upper must be constants) and Erf
// (Abramowitz and Stegun 7.1.26 on element-wise ops: absolute error below
// 1.5e-7, under float32's resolution of erf's range near 1).
#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

using schema::OpCode;

void require_float_or_int32(const NodeContext& ctx, DType t) {
  if (t != DType::kFloat32 && t != DType::kInt32) {
    ctx.fail(std::string("dtype ") + dtype_name(t) + " is not supported (float32 or int32)");
  }
}

// A one-element constant of `dtype` holding `v`.
HostTensor scalar(DType dtype, double v) {
  HostTensor t;
  t.dtype = dtype;
  t.data.resize(dtype_size(dtype));
  if (dtype == DType::kFloat32) {
    t.as<float>()[0] = static_cast<float>(v);
  } else {
    t.as<int32_t>()[0] = static_cast<int32_t>(v);
  }
  return t;
}

std::vector<TensorInfo> infer_clip_by_value(const NodeContext& ctx) {
  ctx.expect_inputs(3, 3);
  const TensorInfo& t = ctx.input(0);
  for (int i = 1; i < 3; ++i) {
    const TensorInfo& bound = ctx.input(i);
    if (bound.dtype != t.dtype) ctx.fail("clip bounds must have the input's dtype");
    // TF: each bound is a scalar or has the input's shape.
    if (!bound.shape.empty() && bound.shape != t.shape) {
      ctx.fail(std::string(i == 1 ? "clip_value_min" : "clip_value_max") + " has shape " +
               shape_to_string(bound.shape) + "; it must be a scalar or the input's shape " + shape_to_string(t.shape));
    }
  }
  return {TensorInfo{t.dtype, t.shape, nullptr}};
}

void lower_clip_by_value(LowerContext& ctx) {
  const TensorInfo& out = ctx.output_info(0);
  require_float_or_int32(ctx, out.dtype);
  const int below_max = ctx.new_value(out.dtype, out.shape, "min");
  ctx.add_op(OpCode::MINIMUM, {ctx.input_value(0), ctx.input_value(2)}, {below_max});
  ctx.add_op(OpCode::MAXIMUM, {below_max, ctx.input_value(1)}, {ctx.output_value(0)});
}

std::vector<TensorInfo> infer_same_dtype_binary(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  if (ctx.input(0).dtype != ctx.input(1).dtype) ctx.fail("input dtypes differ");
  return {TensorInfo{ctx.input(0).dtype, broadcast_shapes(ctx, ctx.input(0).shape, ctx.input(1).shape), nullptr}};
}

void lower_div_no_nan(LowerContext& ctx) {
  const TensorInfo& out = ctx.output_info(0);
  if (out.dtype != DType::kFloat32) ctx.fail(std::string("dtype ") + dtype_name(out.dtype) + " is not supported");
  const int zero = ctx.constant_value("zero", scalar(out.dtype, 0.0));
  const int divisor_is_zero = ctx.new_value(DType::kBool, ctx.input(1).shape, "divisor_is_zero");
  ctx.add_op(OpCode::EQUAL, {ctx.input_value(1), zero}, {divisor_is_zero});
  const int quotient = ctx.new_value(out.dtype, out.shape, "quotient");
  ctx.add_op(OpCode::DIV, {ctx.input_value(0), ctx.input_value(1)}, {quotient});
  ctx.add_op(OpCode::SELECT, {divisor_is_zero, zero, quotient}, {ctx.output_value(0)});
}

void lower_prelu(LowerContext& ctx) {
  const TensorInfo& out = ctx.output_info(0);
  if (out.dtype != DType::kFloat32) ctx.fail(std::string("dtype ") + dtype_name(out.dtype) + " is not supported");
  const TensorInfo& x = ctx.input(0);
  const int zero = ctx.constant_value("zero", scalar(out.dtype, 0.0));
  const int positive = ctx.new_value(out.dtype, x.shape, "positive");
  ctx.add_op(OpCode::MAXIMUM, {ctx.input_value(0), zero}, {positive});
  const int negative = ctx.new_value(out.dtype, x.shape, "negative");
  ctx.add_op(OpCode::MINIMUM, {ctx.input_value(0), zero}, {negative});
  const int scaled = ctx.new_value(out.dtype, out.shape, "scaled");
  ctx.add_op(OpCode::MUL, {negative, ctx.input_value(1)}, {scaled});
  ctx.add_op(OpCode::ADD, {positive, scaled}, {ctx.output_value(0)});
}

std::vector<TensorInfo> infer_broadcast_to(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const std::vector<int64_t> target = ctx.constant_ints(1, "the target shape");
  const std::vector<int64_t>& in = ctx.input(0).shape;
  if (in.size() > target.size()) {
    ctx.fail("input " + shape_to_string(in) + " has more dims than the target shape " + shape_to_string(target));
  }
  const size_t lead = target.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] != 1 && in[d] != target[lead + d]) {
      ctx.fail("input " + shape_to_string(in) + " cannot be broadcast to " + shape_to_string(target));
    }
  }
  return {TensorInfo{ctx.input(0).dtype, target, nullptr}};
}

void lower_broadcast_to(LowerContext& ctx) {
  const std::vector<int64_t>& target = ctx.output_info(0).shape;
  std::vector<int64_t> in = ctx.input(0).shape;
  if (in == target) {
    ctx.alias_output(0, ctx.input_value(0));
    return;
  }
  int value = ctx.input_value(0);
  if (in.size() < target.size()) {
    in.insert(in.begin(), target.size() - in.size(), 1);
    value = ctx.reshaped_value(value, in, "ranked");
  }
  ctx.add_op(OpCode::TILE, {value}, {ctx.output_value(0)});
}

// EnsureShape: floe's shapes are static, so the check happens here, once.
std::vector<TensorInfo> infer_ensure_shape(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  bool unknown_rank = false;
  const std::vector<int64_t> wanted = attr_shape(ctx.node().def, "shape", &unknown_rank);
  const std::vector<int64_t>& have = ctx.input(0).shape;
  bool ok = unknown_rank || wanted.size() == have.size();
  for (size_t d = 0; ok && !unknown_rank && d < wanted.size(); ++d) ok = wanted[d] < 0 || wanted[d] == have[d];
  if (!ok) {
    ctx.fail("the input's shape " + shape_to_string(have) + " is not the shape " + shape_to_string(wanted) +
             " the graph ensures (-1 = any)");
  }
  return {ctx.input(0)};
}

void lower_ensure_shape(LowerContext& ctx) { ctx.alias_output(0, ctx.input_value(0)); }

std::vector<TensorInfo> infer_shape_n(const NodeContext& ctx) {
  if (ctx.input_count() < 1) ctx.fail("ShapeN needs at least one input");
  const DType type = find_attr(ctx.node().def, "out_type") ? dtype_attr(ctx, "out_type") : DType::kInt32;
  if (type != DType::kInt32 && type != DType::kInt64) ctx.fail("out_type must be int32 or int64");
  std::vector<TensorInfo> out;
  for (int i = 0; i < ctx.input_count(); ++i) {
    const std::vector<int64_t>& shape = ctx.input(i).shape;
    auto t = std::make_shared<HostTensor>();
    t->dtype = type;
    t->shape = {static_cast<int64_t>(shape.size())};
    t->data.resize(shape.size() * dtype_size(type));
    for (size_t d = 0; d < shape.size(); ++d) {
      if (type == DType::kInt64) {
        t->as<int64_t>()[d] = shape[d];
      } else {
        t->as<int32_t>()[d] = static_cast<int32_t>(shape[d]);
      }
    }
    out.push_back(TensorInfo::of(std::move(t)));
  }
  return out;
}

std::vector<TensorInfo> infer_matrix_band_part(const NodeContext& ctx) {
  ctx.expect_inputs(3, 3);
  if (ctx.input(0).shape.size() < 2) ctx.fail("input must have rank >= 2");
  ctx.constant_ints(1, "num_lower");
  ctx.constant_ints(2, "num_upper");
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}

// Keeps element (m, n) of each inner matrix where (num_lower < 0 || m - n <=
// num_lower) && (num_upper < 0 || n - m <= num_upper), as TF defines the band.
void lower_matrix_band_part(LowerContext& ctx) {
  const TensorInfo& out = ctx.output_info(0);
  require_float_or_int32(ctx, out.dtype);
  const std::vector<int64_t> lower = ctx.constant_ints(1, "num_lower"), upper = ctx.constant_ints(2, "num_upper");
  if (lower.size() != 1 || upper.size() != 1) ctx.fail("num_lower and num_upper must be scalars");
  const int64_t rows = out.shape[out.shape.size() - 2], cols = out.shape.back();
  if (lower[0] > rows || upper[0] > cols) ctx.fail("num_lower / num_upper exceed the matrix dims");
  HostTensor mask;
  mask.dtype = DType::kBool;
  mask.shape = {rows, cols};
  mask.data.resize(static_cast<size_t>(rows * cols));
  for (int64_t m = 0; m < rows; ++m) {
    for (int64_t n = 0; n < cols; ++n) {
      const bool in_band = (lower[0] < 0 || m - n <= lower[0]) && (upper[0] < 0 || n - m <= upper[0]);
      mask.data[static_cast<size_t>(m * cols + n)] = in_band ? 1 : 0;
    }
  }
  ctx.add_op(OpCode::SELECT,
             {ctx.constant_value("band", std::move(mask)), ctx.input_value(0),
              ctx.constant_value("zero", scalar(out.dtype, 0.0))},
             {ctx.output_value(0)});
}

std::vector<TensorInfo> infer_unary_same(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}

// erf(x) = sign(x) * (1 - (a1 t + a2 t^2 + a3 t^3 + a4 t^4 + a5 t^5) exp(-x^2)),
// t = 1 / (1 + p |x|); the polynomial in Horner form.
void lower_erf(LowerContext& ctx) {
  const TensorInfo& out = ctx.output_info(0);
  if (out.dtype != DType::kFloat32) ctx.fail(std::string("dtype ") + dtype_name(out.dtype) + " is not supported");
  const std::vector<int64_t>& shape = out.shape;
  int n = 0;
  auto value = [&]() { return ctx.new_value(out.dtype, shape, "erf_" + std::to_string(n++)); };
  auto constant = [&](double v) { return ctx.constant_value("erf_c" + std::to_string(n++), scalar(out.dtype, v)); };
  auto unary = [&](OpCode code, int a) {
    const int r = value();
    ctx.add_op(code, {a}, {r});
    return r;
  };
  auto binary = [&](OpCode code, int a, int b) {
    const int r = value();
    ctx.add_op(code, {a, b}, {r});
    return r;
  };
  const int x = ctx.input_value(0);
  const int t = unary(OpCode::RECIPROCAL,
                      binary(OpCode::ADD, binary(OpCode::MUL, unary(OpCode::ABS, x), constant(0.3275911)), constant(1.0)));
  const double a[5] = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
  int poly = constant(a[4]);
  for (int i = 3; i >= 0; --i) poly = binary(OpCode::ADD, binary(OpCode::MUL, poly, t), constant(a[i]));
  poly = binary(OpCode::MUL, poly, t);
  const int gauss = unary(OpCode::EXP, unary(OpCode::NEG, unary(OpCode::SQUARE, x)));
  const int magnitude = binary(OpCode::SUB, constant(1.0), binary(OpCode::MUL, poly, gauss));
  ctx.add_op(OpCode::MUL, {unary(OpCode::SIGN, x), magnitude}, {ctx.output_value(0)});
}

}  // namespace

const std::vector<OpHandler>& composite_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"ClipByValue", infer_clip_by_value, lower_clip_by_value},
      {"DivNoNan", infer_same_dtype_binary, lower_div_no_nan},
      {"Prelu", infer_same_dtype_binary, lower_prelu},
      {"BroadcastTo", infer_broadcast_to, lower_broadcast_to},
      {"EnsureShape", infer_ensure_shape, lower_ensure_shape},
      {"ShapeN", infer_shape_n, nullptr},
      {"MatrixBandPart", infer_matrix_band_part, lower_matrix_band_part},
      {"Erf", infer_unary_same, lower_erf},
  };
  return handlers;
}

}  // namespace floe::conv
