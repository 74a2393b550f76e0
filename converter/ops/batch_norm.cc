// SPDX-License-Identifier: Apache-2.0
// FusedBatchNorm / V2 / V3 in inference mode (is_training=false):
//   y = x * m + b, m = scale / sqrt(variance + epsilon), b = offset - mean * m,
// per channel (NHWC: last dim; NCHW: dim 1). m and b are computed at conversion
// time by running the reference kernels on a scratch model of constant ops, so
// the math has one definition; the model gets one MUL and one ADD. Training mode
// (is_training true, which is TF's default when the attr is absent) is refused.
#include "converter/frontend/graphdef/attrs.h"
#include "converter/ops/op_registry.h"
#include "converter/eval/run_lowered.h"

namespace floe::conv {
namespace {

int channel_axis(const NodeContext& ctx, size_t rank) {
  const std::string format = attr_string(ctx.node().def, "data_format", "NHWC");
  if (format == "NHWC" || format == "NDHWC") return static_cast<int>(rank) - 1;
  if (format == "NCHW" || format == "NCDHW") return 1;
  ctx.fail("data_format '" + format + "' is not supported (NHWC, NCHW, NDHWC, NCDHW)");
}

void refuse_training(const NodeContext& ctx, const std::string& why) {
  ctx.fail("graph is in training mode: node " + ctx.node().name() + " (" + ctx.node().op() + ") " + why +
           "; export the inference graph (is_training=False / K.set_learning_phase(0))");
}

std::vector<TensorInfo> infer_batch_norm(const NodeContext& ctx) {
  ctx.expect_inputs(5, 5);
  if (attr_bool(ctx.node().def, "is_training", true)) refuse_training(ctx, "has is_training=true");
  const TensorInfo& x = ctx.input(0);
  if (x.shape.size() != 4 && x.shape.size() != 5) {
    ctx.fail("input must have rank 4 (or 5), has shape " + shape_to_string(x.shape));
  }
  const int64_t channels = x.shape[static_cast<size_t>(channel_axis(ctx, x.shape.size()))];
  static const char* const kNames[] = {"x", "scale", "offset", "mean", "variance"};
  for (int i = 1; i < 5; ++i) {
    const TensorInfo& p = ctx.input(i);
    if (i >= 3 && p.shape == std::vector<int64_t>{0} && channels != 0) {
      refuse_training(ctx, "has empty mean/variance inputs (a training-mode export)");
    }
    if (p.shape != std::vector<int64_t>{channels}) {
      ctx.fail(std::string(kNames[i]) + " has shape " + shape_to_string(p.shape) + ", expected [" +
               std::to_string(channels) + "] (the channel count of " + shape_to_string(x.shape) + ")");
    }
    if (p.dtype != DType::kFloat32) ctx.fail(std::string(kNames[i]) + " must be float32");
  }
  if (x.dtype != DType::kFloat32) {
    ctx.fail(std::string("input dtype ") + dtype_name(x.dtype) + " is not supported (float32 only)");
  }
  // batch_mean/batch_variance (and the CPU reserve spaces) echo the moving
  // statistics in inference mode; V3's reserve_space_3 is empty.
  std::vector<TensorInfo> outs = {TensorInfo{x.dtype, x.shape, nullptr}, ctx.input(3), ctx.input(4),
                                  ctx.input(3), ctx.input(4)};
  if (ctx.node().op() == "FusedBatchNormV3") {
    auto empty = std::make_shared<HostTensor>();
    empty->dtype = DType::kFloat32;
    empty->shape = {0};
    outs.push_back(TensorInfo::of(empty));
  }
  return outs;
}

HostTensor copy_of(const HostTensor& t) { return t; }

void lower_batch_norm(LowerContext& ctx) {
  const TensorInfo& x = ctx.input(0);
  const int64_t channels = ctx.input(1).shape[0];
  const float epsilon = attr_float(ctx.node().def, "epsilon", 0.0001f);

  // Scratch model: m = scale * rsqrt(variance + epsilon); b = offset - mean * m.
  LoweredModel scratch;
  auto constant = [&](const char* name, HostTensor t) {
    Value v;
    v.name = name;
    v.dtype = t.dtype;
    v.shape = t.shape;
    v.constant = std::make_shared<const HostTensor>(std::move(t));
    return scratch.add_value(std::move(v));
  };
  auto temporary = [&](const char* name) {
    Value v;
    v.name = name;
    v.dtype = DType::kFloat32;
    v.shape = {channels};
    return scratch.add_value(std::move(v));
  };
  auto op = [&](schema::OpCode code, std::vector<int> in, int out) {
    LoweredOp o;
    o.opcode = code;
    o.inputs = std::move(in);
    o.outputs = {out};
    o.node_name = ctx.node().name();
    scratch.ops.push_back(std::move(o));
  };
  HostTensor eps;
  eps.dtype = DType::kFloat32;
  eps.data.resize(sizeof(float));
  *eps.as<float>() = epsilon;
  const int scale = constant("scale", copy_of(ctx.constant_input(1, "scale")));
  const int offset = constant("offset", copy_of(ctx.constant_input(2, "offset")));
  const int mean = constant("mean", copy_of(ctx.constant_input(3, "mean")));
  const int variance = constant("variance", copy_of(ctx.constant_input(4, "variance")));
  const int epsilon_value = constant("epsilon", std::move(eps));
  const int padded = temporary("variance_plus_epsilon"), inv_std = temporary("inv_std");
  const int multiplier = temporary("multiplier"), mean_scaled = temporary("mean_scaled");
  const int shift = temporary("shift");
  op(schema::OpCode::ADD, {variance, epsilon_value}, padded);
  op(schema::OpCode::RSQRT, {padded}, inv_std);
  op(schema::OpCode::MUL, {scale, inv_std}, multiplier);
  op(schema::OpCode::MUL, {mean, multiplier}, mean_scaled);
  op(schema::OpCode::SUB, {offset, mean_scaled}, shift);
  scratch.outputs = {multiplier, shift};
  std::vector<HostTensor> folded =
      run_lowered(scratch, ctx.graph().source() + ": node '" + ctx.node().name() + "' (op " + ctx.node().op() + ")");

  // Per-channel vectors broadcast against x: [C] for channels-last, [C,1,1(,1)] for NCHW.
  const size_t axis = static_cast<size_t>(channel_axis(ctx, x.shape.size()));
  std::vector<int64_t> broadcast = {channels};
  for (size_t d = axis + 1; d < x.shape.size(); ++d) broadcast.push_back(1);
  folded[0].shape = broadcast;
  folded[1].shape = broadcast;
  const int m = ctx.constant_value("bn_multiplier", std::move(folded[0]));
  const int b = ctx.constant_value("bn_offset", std::move(folded[1]));
  const int scaled = ctx.intermediate_value("bn_scaled", DType::kFloat32, x.shape);
  ctx.add_op(schema::OpCode::MUL, {ctx.input_value(0), m}, {scaled});
  ctx.add_op(schema::OpCode::ADD, {scaled, b}, {ctx.output_value(0)});
  // The statistics outputs are the (constant) moving statistics themselves.
  for (size_t port = 1; port < ctx.output_values().size(); ++port) {
    if (port <= 4) {
      ctx.alias_output(static_cast<int>(port), ctx.input_value(port % 2 == 1 ? 3 : 4));
    } else {
      ctx.alias_output(static_cast<int>(port), ctx.constant_value("reserve_space_3", *ctx.output_info(5).value));
    }
  }
}

}  // namespace

const std::vector<OpHandler>& batch_norm_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"FusedBatchNorm", infer_batch_norm, lower_batch_norm},
      {"FusedBatchNormV2", infer_batch_norm, lower_batch_norm},
      {"FusedBatchNormV3", infer_batch_norm, lower_batch_norm},
  };
  return handlers;
}

}  // namespace floe::conv
