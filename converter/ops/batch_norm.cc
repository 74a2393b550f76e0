// SPDX-License-Identifier: Apache-2.0
// FusedBatchNorm / V2 / V3 in inference mode (is_training=false):
//   y = x * m + b, m = scale / sqrt(variance + epsilon), b = offset - mean * m,
// per channel (NHWC: last dim; NCHW: dim 1). m and b are computed at conversion
// time by running the reference kernels on a scratch model of constant ops, so
// the math has one definition; the model gets one MUL and one ADD.
// Training mode (is_training true, TF's default when the attr is absent) is what
// Session.run computes then: x normalized with its own batch statistics over
// every axis but the channels (biased variance), outputs 1/2 the batch mean and
// the batch variance with Bessel's correction (n / (n - 1), n = elements per
// channel; mixed into the mean/variance inputs when exponential_avg_factor != 1).
// Outputs 3..5 are TF's implementation-defined reserve spaces: a graph reading
// them is refused (passes/inference_check.cc).
#include "converter/ir/attrs.h"
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

// float16/bfloat16 are computed in float32 (ops/evaluate.h), as TF's kernels do.
bool is_float(DType t) { return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16; }

bool training(const NodeContext& ctx) { return attr_bool(ctx.node().def, "is_training", true); }

// The statistics inputs matter in training mode only when mixed into outputs 1/2.
bool reads_statistics(const NodeContext& ctx) {
  return !training(ctx) || attr_float(ctx.node().def, "exponential_avg_factor", 1.0f) != 1.0f;
}

std::vector<TensorInfo> infer_batch_norm(const NodeContext& ctx) {
  ctx.expect_inputs(5, 5);
  const TensorInfo& x = ctx.input(0);
  if (x.shape.size() != 4 && x.shape.size() != 5) {
    ctx.fail("input must have rank 4 (or 5), has shape " + shape_to_string(x.shape));
  }
  const int64_t channels = x.shape[static_cast<size_t>(channel_axis(ctx, x.shape.size()))];
  static const char* const kNames[] = {"x", "scale", "offset", "mean", "variance"};
  for (int i = 1; i < 5; ++i) {
    const TensorInfo& p = ctx.input(i);
    if (i >= 3 && !reads_statistics(ctx)) continue;
    if (i >= 3 && p.shape == std::vector<int64_t>{0} && channels != 0) {
      refuse_training(ctx, "has empty mean/variance inputs (a training-mode export)");
    }
    if (p.shape != std::vector<int64_t>{channels}) {
      ctx.fail(std::string(kNames[i]) + " has shape " + shape_to_string(p.shape) + ", expected [" +
               std::to_string(channels) + "] (the channel count of " + shape_to_string(x.shape) + ")");
    }
    if (!is_float(p.dtype)) ctx.fail(std::string(kNames[i]) + " must be float32 (or float16/bfloat16)");
  }
  if (!is_float(x.dtype)) {
    ctx.fail(std::string("input dtype ") + dtype_name(x.dtype) + " is not supported (float32, float16, bfloat16)");
  }
  if (training(ctx)) {
    const TensorInfo statistics{ctx.input(1).dtype, {channels}, nullptr};
    std::vector<TensorInfo> outs = {TensorInfo{x.dtype, x.shape, nullptr}, statistics, statistics, statistics,
                                    statistics};
    if (ctx.node().op() == "FusedBatchNormV3") outs.push_back(TensorInfo{DType::kFloat32, {0}, nullptr});
    return outs;
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

HostTensor float_scalar(float value) {
  HostTensor t;
  t.dtype = DType::kFloat32;
  t.data.resize(sizeof(float));
  *t.as<float>() = value;
  return t;
}

// Training mode, one op per step on the device: mean = MEAN(x), centered = x - mean,
// variance = MEAN(centered^2), y = centered * (scale * rsqrt(variance + epsilon)) + offset.
void lower_training_batch_norm(LowerContext& ctx) {
  const TensorInfo& x = ctx.input(0);
  const size_t rank = x.shape.size();
  const int axis = channel_axis(ctx, rank);
  const int64_t channels = x.shape[static_cast<size_t>(axis)];
  const float epsilon = attr_float(ctx.node().def, "epsilon", 0.0001f);
  std::vector<int64_t> kept(rank, 1);  // the statistics' shape, broadcast against x
  kept[static_cast<size_t>(axis)] = channels;
  schema::ReduceOptionsT over_batch;
  int64_t per_channel = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (static_cast<int>(d) == axis) continue;
    over_batch.axes.push_back(static_cast<int32_t>(d));
    per_channel *= x.shape[d];
  }
  auto value = [&](const char* suffix, std::vector<int64_t> shape) {
    return ctx.intermediate_value(suffix, DType::kFloat32, std::move(shape));
  };
  const int mean = value("batch_mean", kept), centered = value("centered", x.shape);
  const int squared = value("centered_squared", x.shape), variance = value("batch_variance_biased", kept);
  const int padded = value("variance_plus_epsilon", kept), inv_std = value("inv_std", kept);
  const int multiplier = value("multiplier", kept), scaled = value("scaled", x.shape);
  ctx.add_op(schema::OpCode::MEAN, {ctx.input_value(0)}, {mean}, LowerContext::options(over_batch));
  ctx.add_op(schema::OpCode::SUB, {ctx.input_value(0), mean}, {centered});
  ctx.add_op(schema::OpCode::SQUARE, {centered}, {squared});
  ctx.add_op(schema::OpCode::MEAN, {squared}, {variance}, LowerContext::options(over_batch));
  ctx.add_op(schema::OpCode::ADD, {variance, ctx.constant_value("epsilon", float_scalar(epsilon))}, {padded});
  ctx.add_op(schema::OpCode::RSQRT, {padded}, {inv_std});
  ctx.add_op(schema::OpCode::MUL, {inv_std, ctx.reshaped_value(ctx.input_value(1), kept, "scale_broadcast")},
             {multiplier});
  ctx.add_op(schema::OpCode::MUL, {centered, multiplier}, {scaled});
  ctx.add_op(schema::OpCode::ADD, {scaled, ctx.reshaped_value(ctx.input_value(2), kept, "offset_broadcast")},
             {ctx.output_value(0)});

  // Outputs 1/2: what TF reports (and would feed the moving averages).
  const float factor = attr_float(ctx.node().def, "exponential_avg_factor", 1.0f);
  const float bessel = static_cast<float>(per_channel) / static_cast<float>(per_channel > 1 ? per_channel - 1 : 1);
  const int batch_mean = ctx.reshaped_value(mean, {channels}, "batch_mean_channels");
  const int biased = ctx.reshaped_value(variance, {channels}, "batch_variance_channels");
  const bool mixed = factor != 1.0f;
  const int corrected = mixed ? value("batch_variance_corrected", {channels}) : ctx.output_value(2);
  ctx.add_op(schema::OpCode::MUL, {biased, ctx.constant_value("bessel_correction", float_scalar(bessel))},
             {corrected});
  // Outputs 3..5 (reserve spaces) are refused when read; they get values only so
  // that a constant node folds like any other.
  ctx.alias_output(3, batch_mean);
  ctx.alias_output(4, biased);
  if (ctx.output_values().size() > 5) {
    HostTensor empty;
    empty.dtype = DType::kFloat32;
    empty.shape = {0};
    ctx.alias_output(5, ctx.constant_value("reserve_space_3", std::move(empty)));
  }
  if (!mixed) {
    ctx.alias_output(1, batch_mean);
    return;
  }
  // (1 - factor) * running + factor * batch, for the mean and the variance.
  const int keep_weight = ctx.constant_value("running_weight", float_scalar(1.0f - factor));
  const int batch_weight = ctx.constant_value("batch_weight", float_scalar(factor));
  for (int port = 1; port <= 2; ++port) {
    const int running = value(port == 1 ? "running_mean_weighted" : "running_variance_weighted", {channels});
    const int batch = value(port == 1 ? "batch_mean_weighted" : "batch_variance_weighted", {channels});
    ctx.add_op(schema::OpCode::MUL, {ctx.input_value(port + 2), keep_weight}, {running});
    ctx.add_op(schema::OpCode::MUL, {port == 1 ? batch_mean : corrected, batch_weight}, {batch});
    ctx.add_op(schema::OpCode::ADD, {running, batch}, {ctx.output_value(port)});
  }
}

void lower_batch_norm(LowerContext& ctx) {
  if (training(ctx)) {
    lower_training_batch_norm(ctx);
    return;
  }
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
