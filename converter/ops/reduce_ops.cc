// SPDX-License-Identifier: Apache-2.0
// Reductions: Sum, Prod, Max, Min, All, Any (one op each over constant axes;
// Mean is lowered in shape_ops.cc), ArgMax, ArgMin.
#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

template <schema::OpCode kCode>
void lower_reduce(LowerContext& ctx) {
  const std::vector<int32_t> axes = reduction_axes(ctx);
  if (axes.empty()) {
    ctx.add_op(schema::OpCode::RESHAPE, {ctx.input_value(0)}, {ctx.output_value(0)});
    return;
  }
  schema::ReduceOptionsT o;
  o.axes = axes;
  ctx.add_op(kCode, {ctx.input_value(0)}, {ctx.output_value(0)}, LowerContext::options(o));
}

// EuclideanNorm: sqrt(sum(x^2)) over the axes (float only: TF's integer
// variant truncates a square root, which no model relies on).
std::vector<TensorInfo> infer_euclidean_norm(const NodeContext& ctx) {
  if (ctx.input(0).dtype != DType::kFloat32) {
    ctx.fail("floe computes EuclideanNorm of float32 (or float64) only, got " +
             std::string(dtype_name(ctx.input(0).dtype)));
  }
  return infer_reduction(ctx);
}

void lower_euclidean_norm(LowerContext& ctx) {
  const std::vector<int32_t> axes = reduction_axes(ctx);
  if (axes.empty()) {  // the norm of each element alone
    ctx.add_op(schema::OpCode::ABS, {ctx.input_value(0)}, {ctx.output_value(0)});
    return;
  }
  const int squares = ctx.new_value(DType::kFloat32, ctx.input(0).shape, "squares");
  ctx.add_op(schema::OpCode::SQUARE, {ctx.input_value(0)}, {squares});
  const int sum = ctx.new_value(DType::kFloat32, ctx.output_info(0).shape, "sum_of_squares");
  schema::ReduceOptionsT o;
  o.axes = axes;
  ctx.add_op(schema::OpCode::SUM, {squares}, {sum}, LowerContext::options(o));
  ctx.add_op(schema::OpCode::SQRT, {sum}, {ctx.output_value(0)});
}

std::vector<TensorInfo> infer_arg(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const auto& in = ctx.input(0).shape;
  const std::vector<int64_t> axis_v = ctx.constant_ints(1, "the ArgMax/ArgMin axis");
  if (axis_v.size() != 1) ctx.fail("axis must be a scalar");
  const int64_t axis = normalize_axis(ctx, axis_v[0], static_cast<int64_t>(in.size()));
  if (in[static_cast<size_t>(axis)] == 0) ctx.fail("cannot take ArgMax/ArgMin over an empty axis");
  std::vector<int64_t> out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (static_cast<int64_t>(d) != axis) out.push_back(in[d]);
  }
  const DType t = find_attr(ctx.node().def, "output_type") ? dtype_attr(ctx, "output_type") : DType::kInt64;
  return {TensorInfo{t, out, nullptr}};
}

template <schema::OpCode kCode>
void lower_arg(LowerContext& ctx) {
  schema::ArgOptionsT o;
  o.axis = static_cast<int32_t>(normalize_axis(ctx, ctx.constant_ints(1, "axis")[0],
                                               static_cast<int64_t>(ctx.input(0).shape.size())));
  ctx.add_op(kCode, {ctx.input_value(0)}, {ctx.output_value(0)}, LowerContext::options(o));
}

}  // namespace

const std::vector<OpHandler>& reduce_handlers() {
  using schema::OpCode;
  static const std::vector<OpHandler> handlers = {
      {"Sum", infer_reduction, lower_reduce<OpCode::SUM>},
      {"Prod", infer_reduction, lower_reduce<OpCode::PROD>},
      {"Max", infer_reduction, lower_reduce<OpCode::REDUCE_MAX>},
      {"Min", infer_reduction, lower_reduce<OpCode::REDUCE_MIN>},
      {"All", infer_reduction, lower_reduce<OpCode::REDUCE_ALL>},
      {"Any", infer_reduction, lower_reduce<OpCode::REDUCE_ANY>},
      {"EuclideanNorm", infer_euclidean_norm, lower_euclidean_norm},
      {"ArgMax", infer_arg, lower_arg<OpCode::ARG_MAX>},
      {"ArgMin", infer_arg, lower_arg<OpCode::ARG_MIN>},
  };
  return handlers;
}

}  // namespace floe::conv
