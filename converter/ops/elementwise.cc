// SPDX-License-Identifier: Apache-2.0
// Element-wise TF ops: binary arithmetic with broadcasting (Add, AddV2, Sub,
// Mul, RealDiv, Div, Maximum, Minimum, BiasAdd) and unary math (Relu, Relu6,
// Sigmoid, Tanh, Abs, Neg, Exp, Log, Sqrt, Rsqrt, Square).
#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

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
  const TensorInfo &value = ctx.input(0), &bias = ctx.input(1);
  if (format == "NCHW" || format == "NCDHW") {
    if (bias.shape.size() != 1 || value.shape.size() < 2 || value.shape[1] != bias.shape[0]) {
      ctx.fail("bias shape " + shape_to_string(bias.shape) + " does not match dim 1 of " +
               shape_to_string(value.shape));
    }
    return {TensorInfo{value.dtype, value.shape, nullptr}};
  }
  if (format != "NHWC" && format != "NDHWC") ctx.fail("unknown data_format " + format);
  if (bias.shape.size() != 1 || value.shape.empty() || value.shape.back() != bias.shape[0]) {
    ctx.fail("bias shape " + shape_to_string(bias.shape) + " does not match the last dim of " +
             shape_to_string(value.shape));
  }
  return infer_binary(ctx);
}

template <schema::OpCode kCode>
void lower_binary(LowerContext& ctx) {
  // Every dtype reaching here is float32/int32/int64 (narrow types are widened
  // by the driver); the runtime's prepare names any unsupported combination.
  ctx.add_op(kCode, {ctx.input_value(0), ctx.input_value(1)}, {ctx.output_value(0)});
}

std::vector<TensorInfo> infer_unary(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}

template <schema::OpCode kCode>
void lower_unary(LowerContext& ctx) {
  const bool int_ok = kCode == schema::OpCode::ABS || kCode == schema::OpCode::NEG ||
                      kCode == schema::OpCode::SQUARE;
  const DType t = ctx.output_info(0).dtype;
  if (t != DType::kFloat32 && !(int_ok && (t == DType::kInt32 || t == DType::kInt64))) {
    ctx.fail(std::string("dtype ") + dtype_name(t) + " is not supported");
  }
  ctx.add_op(kCode, {ctx.input_value(0)}, {ctx.output_value(0)});
}

// BiasAdd: NCHW bias [C] becomes a [C, 1, ..., 1] constant (or reshape) so the
// broadcasting ADD puts it on dim 1.
void lower_bias_add(LowerContext& ctx) {
  const std::string format = attr_string(ctx.node().def, "data_format", "NHWC");
  int bias = ctx.input_value(1);
  if (format == "NCHW" || format == "NCDHW") {
    std::vector<int64_t> shape(ctx.input(0).shape.size() - 1, 1);
    shape[0] = ctx.input(1).shape[0];
    if (ctx.input(1).value) {
      HostTensor t = *ctx.input(1).value;
      t.shape = shape;
      bias = ctx.constant_value("bias_nchw", std::move(t));
    } else {
      bias = ctx.reshaped_value(bias, shape, "bias_nchw");
    }
  }
  ctx.add_op(schema::OpCode::ADD, {ctx.input_value(0), bias}, {ctx.output_value(0)});
}

}  // namespace

const std::vector<OpHandler>& elementwise_handlers() {
  using schema::OpCode;
  static const std::vector<OpHandler> handlers = {
      {"Add", infer_binary, lower_binary<OpCode::ADD>},
      {"AddV2", infer_binary, lower_binary<OpCode::ADD>},
      {"BiasAdd", infer_bias_add, lower_bias_add},
      {"BiasAddV1", infer_bias_add, lower_bias_add},
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
