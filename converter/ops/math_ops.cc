// SPDX-License-Identifier: Apache-2.0
// Element-wise TF ops beyond elementwise.cc (op coverage): integer
// and float division variants, Pow, Atan2, SquaredDifference, Cross, comparisons and
// logical ops (bool results), rounding/trigonometric/activation unary ops,
// LeakyRelu, Cast, Select/SelectV2, AddN, Fill, ZerosLike/OnesLike. Dtypes reach
// the handlers already widened (float16 -> float32, int8/16 -> int32: see
// lower_graph.cc), so every lowering targets float32/int32/int64/bool kernels.
#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

std::vector<TensorInfo> infer_same_dtype_binary(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const TensorInfo &a = ctx.input(0), &b = ctx.input(1);
  if (a.dtype != b.dtype) {
    ctx.fail(std::string("input dtypes differ: ") + dtype_name(a.dtype) + " vs " + dtype_name(b.dtype));
  }
  return {TensorInfo{a.dtype, broadcast_shapes(ctx, a.shape, b.shape), nullptr}};
}

std::vector<TensorInfo> infer_compare(const NodeContext& ctx) {
  std::vector<TensorInfo> out = infer_same_dtype_binary(ctx);
  out[0].dtype = DType::kBool;
  return out;
}

// BitwiseAnd: integers only (the narrow ones arrive widened to int32, whose
// low bits AND exactly as theirs do).
std::vector<TensorInfo> infer_bitwise(const NodeContext& ctx) {
  const DType t = ctx.input(0).dtype;
  if (t != DType::kInt32 && t != DType::kInt64 && t != DType::kInt8 && t != DType::kInt16 && t != DType::kUInt8 &&
      t != DType::kUInt16) {
    ctx.fail(std::string("bitwise ops take integers, got ") + dtype_name(t));
  }
  return infer_same_dtype_binary(ctx);
}

template <schema::OpCode kCode>
void lower_binary_op(LowerContext& ctx) {
  ctx.add_op(kCode, {ctx.input_value(0), ctx.input_value(1)}, {ctx.output_value(0)});
}

std::vector<TensorInfo> infer_same(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}

std::vector<TensorInfo> infer_predicate(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  return {TensorInfo{DType::kBool, ctx.input(0).shape, nullptr}};
}

template <schema::OpCode kCode>
void lower_unary_op(LowerContext& ctx) {
  ctx.add_op(kCode, {ctx.input_value(0)}, {ctx.output_value(0)});
}

void lower_leaky_relu(LowerContext& ctx) {
  schema::LeakyReluOptionsT o;
  o.alpha = attr_float(ctx.node().def, "alpha", 0.2f);
  ctx.add_op(schema::OpCode::LEAKY_RELU, {ctx.input_value(0)}, {ctx.output_value(0)}, LowerContext::options(o));
}

std::vector<TensorInfo> infer_cast(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  return {TensorInfo{dtype_attr(ctx, "DstT"), ctx.input(0).shape, nullptr}};
}

void lower_cast(LowerContext& ctx) {
  if (ctx.input(0).dtype == ctx.output_info(0).dtype) {
    ctx.alias_output(0, ctx.input_value(0));
    return;
  }
  ctx.add_op(schema::OpCode::CAST, {ctx.input_value(0)}, {ctx.output_value(0)});
}

// TF1 Select: cond is x's shape, a vector selecting along dim 0, or a scalar
// picking x or y whole (x and y have one shape). SelectV2 broadcasts all three.
std::vector<TensorInfo> infer_select(const NodeContext& ctx) {
  ctx.expect_inputs(3, 3);
  const TensorInfo &c = ctx.input(0), &x = ctx.input(1), &y = ctx.input(2);
  if (c.dtype != DType::kBool) ctx.fail("condition must be bool");
  if (x.dtype != y.dtype) ctx.fail("x and y dtypes differ");
  std::vector<int64_t> shape = broadcast_shapes(ctx, x.shape, y.shape);
  if (ctx.node().op() == "Select") {
    // TF1 Select does not broadcast x against y; a scalar condition picks one whole tensor.
    if (x.shape != y.shape) {
      ctx.fail("Select needs x and y of one shape, got " + shape_to_string(x.shape) + " and " +
               shape_to_string(y.shape));
    }
    if (c.shape != shape && !c.shape.empty() && !(c.shape.size() == 1 && !shape.empty() && c.shape[0] == shape[0])) {
      ctx.fail("Select condition " + shape_to_string(c.shape) + " must be a scalar, equal x's shape or be [dim 0]");
    }
  } else {
    shape = broadcast_shapes(ctx, c.shape, shape);
  }
  return {TensorInfo{x.dtype, shape, nullptr}};
}

void lower_select(LowerContext& ctx) {
  int cond = ctx.input_value(0);
  const auto& cs = ctx.input(0).shape;
  const auto& os = ctx.output_info(0).shape;
  if (ctx.node().op() == "Select" && cs.size() == 1 && os.size() > 1) {
    std::vector<int64_t> shape(os.size(), 1);
    shape[0] = cs[0];
    cond = ctx.reshaped_value(cond, shape, "cond_rows");
  }
  ctx.add_op(schema::OpCode::SELECT, {cond, ctx.input_value(1), ctx.input_value(2)}, {ctx.output_value(0)});
}

std::vector<TensorInfo> infer_add_n(const NodeContext& ctx) {
  if (ctx.input_count() < 1) ctx.fail("AddN needs at least one input");
  for (int i = 1; i < ctx.input_count(); ++i) {
    if (ctx.input(i).shape != ctx.input(0).shape || ctx.input(i).dtype != ctx.input(0).dtype) {
      ctx.fail("AddN inputs differ in shape or dtype");
    }
  }
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}

void lower_add_n(LowerContext& ctx) {
  if (ctx.input_count() == 1) {
    ctx.alias_output(0, ctx.input_value(0));
    return;
  }
  int acc = ctx.input_value(0);
  for (int i = 1; i < ctx.input_count(); ++i) {
    const bool last = i + 1 == ctx.input_count();
    const int out = last ? ctx.output_value(0)
                         : ctx.new_value(ctx.output_info(0).dtype, ctx.output_info(0).shape,
                                         "partial_" + std::to_string(i));
    ctx.add_op(schema::OpCode::ADD, {acc, ctx.input_value(i)}, {out});
    acc = out;
  }
}

std::shared_ptr<const HostTensor> filled(DType dtype, const std::vector<int64_t>& shape, double value) {
  auto t = std::make_shared<HostTensor>();
  t->dtype = dtype;
  t->shape = shape;
  const int64_t n = t->num_elements();
  t->data.resize(static_cast<size_t>(n) * dtype_size(dtype));
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DType::kFloat32: t->as<float>()[i] = static_cast<float>(value); break;
      case DType::kInt32: t->as<int32_t>()[i] = static_cast<int32_t>(value); break;
      case DType::kInt64: t->as<int64_t>()[i] = static_cast<int64_t>(value); break;
      case DType::kBool: case DType::kUInt8: t->data[static_cast<size_t>(i)] = value != 0.0; break;
      case DType::kInt8: t->as<int8_t>()[i] = static_cast<int8_t>(value); break;
      case DType::kInt16: t->as<int16_t>()[i] = static_cast<int16_t>(value); break;
      case DType::kUInt16: t->as<uint16_t>()[i] = static_cast<uint16_t>(value); break;
      case DType::kFloat16: t->as<uint16_t>()[i] = value == 0.0 ? 0 : 0x3C00; break;  // 0 or 1
      case DType::kBFloat16: t->as<uint16_t>()[i] = value == 0.0 ? 0 : 0x3F80; break;
      default: break;
    }
  }
  return t;
}

// ZerosLike / OnesLike: the shape is static, so the value is known.
std::vector<TensorInfo> infer_zeros_like(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  return {TensorInfo::of(filled(ctx.input(0).dtype, ctx.input(0).shape, 0.0))};
}
std::vector<TensorInfo> infer_ones_like(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  return {TensorInfo::of(filled(ctx.input(0).dtype, ctx.input(0).shape, 1.0))};
}

// Ones / Zeros (TF.js's names in graphs TF.js writes): shape input, dtype attr T.
template <int kValue>
std::vector<TensorInfo> infer_constant_of_shape(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  const std::vector<int64_t> dims = ctx.constant_ints(0, "the shape");
  for (int64_t d : dims) {
    if (d < 0) ctx.fail("shape " + shape_to_string(dims) + " has a negative dim");
  }
  return {TensorInfo::of(filled(dtype_attr(ctx, "T"), dims, kValue))};
}

// Fill(dims, value): dims must be known; a run-time value is tiled.
std::vector<TensorInfo> infer_fill(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const std::vector<int64_t> dims = ctx.constant_ints(0, "the dims of Fill");
  for (int64_t d : dims) {
    if (d < 0) ctx.fail("Fill dims " + shape_to_string(dims) + " has a negative dim");
  }
  if (!ctx.input(1).shape.empty()) ctx.fail("Fill value must be a scalar");
  return {TensorInfo{ctx.input(1).dtype, dims, nullptr}};
}

// Cross (tf.linalg.cross): a and b of one shape [..., 3], no broadcasting.
std::vector<TensorInfo> infer_cross(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const TensorInfo &a = ctx.input(0), &b = ctx.input(1);
  if (a.dtype != DType::kFloat32 && a.dtype != DType::kInt32 && a.dtype != DType::kInt64) {
    ctx.fail(std::string("dtype ") + dtype_name(a.dtype) + " is not supported (float32, int32, int64)");
  }
  if (a.shape != b.shape) ctx.fail("inputs differ in shape: " + shape_to_string(a.shape) + " vs " + shape_to_string(b.shape));
  if (a.shape.empty() || a.shape.back() != 3) ctx.fail("the last dimension must be 3, input is " + shape_to_string(a.shape));
  return {TensorInfo{a.dtype, a.shape, nullptr}};
}

void lower_fill(LowerContext& ctx) {
  const auto& shape = ctx.output_info(0).shape;
  const int value = ctx.reshaped_value(ctx.input_value(1), std::vector<int64_t>(shape.size(), 1), "value");
  ctx.add_op(schema::OpCode::TILE, {value}, {ctx.output_value(0)});
}

}  // namespace

const std::vector<OpHandler>& math_handlers() {
  using schema::OpCode;
  static const std::vector<OpHandler> handlers = {
      {"FloorDiv", infer_same_dtype_binary, lower_binary_op<OpCode::FLOOR_DIV>},
      {"FloorMod", infer_same_dtype_binary, lower_binary_op<OpCode::FLOOR_MOD>},
      {"Mod", infer_same_dtype_binary, lower_binary_op<OpCode::FLOOR_MOD>},
      {"TruncateDiv", infer_same_dtype_binary, lower_binary_op<OpCode::TRUNCATE_DIV>},
      {"Pow", infer_same_dtype_binary, lower_binary_op<OpCode::POW>},
      {"Atan2", infer_same_dtype_binary, lower_binary_op<OpCode::ATAN2>},
      {"Cross", infer_cross, lower_binary_op<OpCode::CROSS>},
      {"BitwiseAnd", infer_bitwise, lower_binary_op<OpCode::BITWISE_AND>},
      {"SquaredDifference", infer_same_dtype_binary, lower_binary_op<OpCode::SQUARED_DIFFERENCE>},
      {"Equal", infer_compare, lower_binary_op<OpCode::EQUAL>},
      {"NotEqual", infer_compare, lower_binary_op<OpCode::NOT_EQUAL>},
      {"Less", infer_compare, lower_binary_op<OpCode::LESS>},
      {"LessEqual", infer_compare, lower_binary_op<OpCode::LESS_EQUAL>},
      {"Greater", infer_compare, lower_binary_op<OpCode::GREATER>},
      {"GreaterEqual", infer_compare, lower_binary_op<OpCode::GREATER_EQUAL>},
      {"LogicalAnd", infer_same_dtype_binary, lower_binary_op<OpCode::LOGICAL_AND>},
      {"LogicalOr", infer_same_dtype_binary, lower_binary_op<OpCode::LOGICAL_OR>},
      {"Floor", infer_same, lower_unary_op<OpCode::FLOOR>},
      {"Ceil", infer_same, lower_unary_op<OpCode::CEIL>},
      {"Round", infer_same, lower_unary_op<OpCode::ROUND>},
      {"Rint", infer_same, lower_unary_op<OpCode::ROUND>},
      {"Sign", infer_same, lower_unary_op<OpCode::SIGN>},
      {"Reciprocal", infer_same, lower_unary_op<OpCode::RECIPROCAL>},
      {"Inv", infer_same, lower_unary_op<OpCode::RECIPROCAL>},
      {"Sin", infer_same, lower_unary_op<OpCode::SIN>},
      {"Cos", infer_same, lower_unary_op<OpCode::COS>},
      {"Tan", infer_same, lower_unary_op<OpCode::TAN>},
      {"Asin", infer_same, lower_unary_op<OpCode::ASIN>},
      {"Acos", infer_same, lower_unary_op<OpCode::ACOS>},
      {"Atan", infer_same, lower_unary_op<OpCode::ATAN>},
      {"Sinh", infer_same, lower_unary_op<OpCode::SINH>},
      {"Cosh", infer_same, lower_unary_op<OpCode::COSH>},
      {"Asinh", infer_same, lower_unary_op<OpCode::ASINH>},
      {"Acosh", infer_same, lower_unary_op<OpCode::ACOSH>},
      {"Atanh", infer_same, lower_unary_op<OpCode::ATANH>},
      {"Expm1", infer_same, lower_unary_op<OpCode::EXPM1>},
      {"Log1p", infer_same, lower_unary_op<OpCode::LOG1P>},
      {"Elu", infer_same, lower_unary_op<OpCode::ELU>},
      {"Selu", infer_same, lower_unary_op<OpCode::SELU>},
      {"Softplus", infer_same, lower_unary_op<OpCode::SOFTPLUS>},
      {"Softsign", infer_same, lower_unary_op<OpCode::SOFTSIGN>},
      {"LogicalNot", infer_same, lower_unary_op<OpCode::LOGICAL_NOT>},
      {"IsNan", infer_predicate, lower_unary_op<OpCode::IS_NAN>},
      {"IsInf", infer_predicate, lower_unary_op<OpCode::IS_INF>},
      {"IsFinite", infer_predicate, lower_unary_op<OpCode::IS_FINITE>},
      {"LeakyRelu", infer_same, lower_leaky_relu},
      {"Cast", infer_cast, lower_cast},
      {"Select", infer_select, lower_select},
      {"SelectV2", infer_select, lower_select},
      {"AddN", infer_add_n, lower_add_n},
      {"ZerosLike", infer_zeros_like, nullptr},
      {"OnesLike", infer_ones_like, nullptr},
      {"Fill", infer_fill, lower_fill},
      {"Ones", infer_constant_of_shape<1>, nullptr},
      {"Zeros", infer_constant_of_shape<0>, nullptr},
  };
  return handlers;
}

}  // namespace floe::conv
