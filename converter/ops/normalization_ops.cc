// SPDX-License-Identifier: Apache-2.0
// Ops that normalize along the last axis: LogSoftmax, LRN, and
// SoftmaxCrossEntropyWithLogits (a LOG_SOFTMAX / SOFTMAX sequence).
#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

std::vector<TensorInfo> infer_same1(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  if (ctx.input(0).shape.empty()) ctx.fail("input must have rank >= 1");
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}

void lower_log_softmax(LowerContext& ctx) {
  ctx.add_op(schema::OpCode::LOG_SOFTMAX, {ctx.input_value(0)}, {ctx.output_value(0)});
}

void lower_lrn(LowerContext& ctx) {
  const auto& def = ctx.node().def;
  schema::LrnOptionsT o;
  o.depth_radius = static_cast<int32_t>(attr_int(def, "depth_radius", 5));
  o.bias = attr_float(def, "bias", 1.0f);
  o.alpha = attr_float(def, "alpha", 1.0f);
  o.beta = attr_float(def, "beta", 0.5f);
  ctx.add_op(schema::OpCode::LRN, {ctx.input_value(0)}, {ctx.output_value(0)}, LowerContext::options(o));
}

// SoftmaxCrossEntropyWithLogits(features [B,C], labels [B,C]) -> loss [B],
// backprop [B,C]: loss = -sum(labels * log_softmax(features)), backprop =
// softmax(features) - labels.
std::vector<TensorInfo> infer_xent(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const auto &f = ctx.input(0).shape, &l = ctx.input(1).shape;
  if (f.size() != 2 || f != l) ctx.fail("features and labels must both be [batch, classes]");
  return {TensorInfo{ctx.input(0).dtype, {f[0]}, nullptr}, TensorInfo{ctx.input(0).dtype, f, nullptr}};
}

void lower_xent(LowerContext& ctx) {
  const auto& f = ctx.input(0).shape;
  const DType t = ctx.output_info(0).dtype;
  const int features = ctx.input_value(0), labels = ctx.input_value(1);
  const int log_p = ctx.new_value(t, f, "log_softmax");
  ctx.add_op(schema::OpCode::LOG_SOFTMAX, {features}, {log_p});
  const int weighted = ctx.new_value(t, f, "weighted");
  ctx.add_op(schema::OpCode::MUL, {labels, log_p}, {weighted});
  const int sum = ctx.new_value(t, {f[0]}, "sum");
  schema::ReduceOptionsT r;
  r.axes = {1};
  ctx.add_op(schema::OpCode::SUM, {weighted}, {sum}, LowerContext::options(r));
  ctx.add_op(schema::OpCode::NEG, {sum}, {ctx.output_value(0)});
  const int p = ctx.new_value(t, f, "softmax");
  ctx.add_op(schema::OpCode::SOFTMAX, {features}, {p}, LowerContext::options(schema::SoftmaxOptionsT()));
  ctx.add_op(schema::OpCode::SUB, {p, labels}, {ctx.output_value(1)});
}

std::vector<TensorInfo> infer_softmax(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  if (ctx.input(0).shape.empty()) ctx.fail("softmax input must have rank >= 1");
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}

void lower_softmax(LowerContext& ctx) {
  require_float32_output(ctx);
  ctx.add_op(schema::OpCode::SOFTMAX, {ctx.input_value(0)}, {ctx.output_value(0)},
             LowerContext::options(schema::SoftmaxOptionsT()));
}

}  // namespace

const std::vector<OpHandler>& normalization_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"Softmax", infer_softmax, lower_softmax},
      {"LogSoftmax", infer_same1, lower_log_softmax},
      {"LRN", infer_same1, lower_lrn},
      {"SoftmaxCrossEntropyWithLogits", infer_xent, lower_xent},
  };
  return handlers;
}

}  // namespace floe::conv
