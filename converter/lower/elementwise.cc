// SPDX-License-Identifier: Apache-2.0
// Element-wise TF ops: binary arithmetic with broadcasting (Add, AddV2, Sub,
// Mul, RealDiv, Div, Maximum, Minimum, BiasAdd) and unary math (Relu, Relu6,
// Sigmoid, Tanh, Abs, Neg, Exp, Log, Sqrt, Rsqrt, Square).
#include "converter/frontend/graphdef/attrs.h"
#include "converter/lower/op_registry.h"

namespace floe::conv {
namespace {

std::vector<TensorInfo> infer_binary(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const TensorInfo &a = ctx.input(0), &b = ctx.input(1);
  if (a.dtype != b.dtype) {
    ctx.fail(std::string("input dtypes differ: ") + dtype_name(a.dtype) + " vs " +
             dtype_name(b.dtype));
  }
  TensorInfo out;
  out.dtype = a.dtype;
  out.shape = broadcast_shapes(ctx, a.shape, b.shape);
  return {out};
}

std::vector<TensorInfo> infer_bias_add(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const std::string format = attr_string(ctx.node().def, "data_format", "NHWC");
  if (format != "NHWC") ctx.fail("data_format " + format + " is not supported yet (NHWC only)");
  const TensorInfo &value = ctx.input(0), &bias = ctx.input(1);
  if (bias.shape.size() != 1 || value.shape.empty() || value.shape.back() != bias.shape[0]) {
    ctx.fail("bias shape " + shape_to_string(bias.shape) + " does not match the last dim of " +
             shape_to_string(value.shape));
  }
  return infer_binary(ctx);
}

template <schema::OpCode kCode>
void lower_binary(LowerContext& ctx) {
  if (ctx.output_info(0).dtype != DType::kFloat32) {
    ctx.fail(std::string("dtype ") + dtype_name(ctx.output_info(0).dtype) +
             " is only supported when the result is known at conversion time");
  }
  ctx.add_op(kCode, {ctx.input_value(0), ctx.input_value(1)}, {ctx.output_value(0)});
}

std::vector<TensorInfo> infer_unary(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}

template <schema::OpCode kCode>
void lower_unary(LowerContext& ctx) {
  if (ctx.output_info(0).dtype != DType::kFloat32) {
    ctx.fail(std::string("dtype ") + dtype_name(ctx.output_info(0).dtype) + " is not supported");
  }
  ctx.add_op(kCode, {ctx.input_value(0)}, {ctx.output_value(0)});
}

}  // namespace

const std::vector<OpHandler>& elementwise_handlers() {
  using schema::OpCode;
  static const std::vector<OpHandler> handlers = {
      {"Add", infer_binary, lower_binary<OpCode::ADD>},
      {"AddV2", infer_binary, lower_binary<OpCode::ADD>},
      {"BiasAdd", infer_bias_add, lower_binary<OpCode::ADD>},
      {"BiasAddV1", infer_bias_add, lower_binary<OpCode::ADD>},
      {"Sub", infer_binary, lower_binary<OpCode::SUB>},
      {"Mul", infer_binary, lower_binary<OpCode::MUL>},
      {"RealDiv", infer_binary, lower_binary<OpCode::DIV>},
      {"Div", infer_binary, lower_binary<OpCode::DIV>},
      {"Maximum", infer_binary, lower_binary<OpCode::MAXIMUM>},
      {"Minimum", infer_binary, lower_binary<OpCode::MINIMUM>},
      {"Relu", infer_unary, lower_unary<OpCode::RELU>},
      {"Relu6", infer_unary, lower_unary<OpCode::RELU6>},
      {"Sigmoid", infer_unary, lower_unary<OpCode::SIGMOID>},
      {"Tanh", infer_unary, lower_unary<OpCode::TANH>},
      {"Abs", infer_unary, lower_unary<OpCode::ABS>},
      {"Neg", infer_unary, lower_unary<OpCode::NEG>},
      {"Exp", infer_unary, lower_unary<OpCode::EXP>},
      {"Log", infer_unary, lower_unary<OpCode::LOG>},
      {"Sqrt", infer_unary, lower_unary<OpCode::SQRT>},
      {"Rsqrt", infer_unary, lower_unary<OpCode::RSQRT>},
      {"Square", infer_unary, lower_unary<OpCode::SQUARE>},
  };
  return handlers;
}

}  // namespace floe::conv
