// SPDX-License-Identifier: Apache-2.0
// Neural-network TF ops: MatMul, Conv2D, DepthwiseConv2dNative, their fused
// forms (_FusedMatMul, _FusedConv2D, _FusedDepthwiseConv2dNative), MaxPool,
// AvgPool, Softmax. Window geometry (SAME/VALID/EXPLICIT padding) is resolved
// here, once, into explicit pads the kernels consume.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>

#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

// Shapes from inputs 0 and 1 (the fused variants carry more inputs).
std::vector<TensorInfo> matmul_output(const NodeContext& ctx) {
  ctx.expect_rank(0, 2);
  ctx.expect_rank(1, 2);
  const bool ta = attr_bool(ctx.node().def, "transpose_a", false);
  const bool tb = attr_bool(ctx.node().def, "transpose_b", false);
  const auto &a = ctx.input(0).shape, &b = ctx.input(1).shape;
  const int64_t m = ta ? a[1] : a[0], ka = ta ? a[0] : a[1];
  const int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (ka != kb) {
    ctx.fail("inner dimensions differ: " + shape_to_string(a) + (ta ? "^T" : "") + " x " +
             shape_to_string(b) + (tb ? "^T" : ""));
  }
  if (ctx.input(0).dtype != ctx.input(1).dtype) ctx.fail("input dtypes differ");
  return {TensorInfo{ctx.input(0).dtype, {m, n}, nullptr}};
}

std::vector<TensorInfo> infer_matmul(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  return matmul_output(ctx);
}

void require_f32(LowerContext& ctx) {
  if (ctx.output_info(0).dtype != DType::kFloat32) {
    ctx.fail(std::string("dtype ") + dtype_name(ctx.output_info(0).dtype) +
             " is not supported (float32 only)");
  }
}

void lower_matmul(LowerContext& ctx) {
  require_f32(ctx);
  const bool ta = attr_bool(ctx.node().def, "transpose_a", false);
  const bool tb = attr_bool(ctx.node().def, "transpose_b", false);
  schema::MatMulOptionsT options;
  options.transpose_a = ta;
  options.transpose_b = tb;
  ctx.add_op(schema::OpCode::MATMUL, {ctx.input_value(0), ctx.input_value(1)},
             {ctx.output_value(0)}, LowerContext::options(options));
}

// Resolved geometry of one spatial dimension.
struct Axis {
  int64_t out = 0, pad_before = 0, pad_after = 0;
};

// TF's rules: VALID: out = ceil((in - eff_k + 1) / s); SAME: out = ceil(in / s), total
// pad = max((out - 1) * s + eff_k - in, 0) with the odd pixel after (bottom/right).
Axis resolve_axis(const NodeContext& ctx, const std::string& padding, int64_t in, int64_t k,
                  int64_t stride, int64_t dilation, int64_t explicit_before,
                  int64_t explicit_after) {
  const int64_t eff_k = (k - 1) * dilation + 1;
  Axis a;
  if (padding == "VALID") {
    if (in < eff_k) ctx.fail("VALID window larger than input");
    a.out = (in - eff_k) / stride + 1;
  } else if (padding == "SAME") {
    a.out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((a.out - 1) * stride + eff_k - in, 0);
    a.pad_before = total / 2;
    a.pad_after = total - a.pad_before;
  } else if (padding == "EXPLICIT") {
    a.pad_before = explicit_before;
    a.pad_after = explicit_after;
    const int64_t padded = in + explicit_before + explicit_after;
    if (padded < eff_k) ctx.fail("EXPLICIT padding leaves a window larger than the input");
    a.out = (padded - eff_k) / stride + 1;
  } else {
    ctx.fail("unknown padding '" + padding + "'");
  }
  return a;
}

// Spatial parameters shared by conv, depthwise and pooling (NHWC only).
struct Window {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  Axis h, w;
};

// NCHW graphs are computed in NHWC: the input is transposed on entry and the
// output back (the optimizer's transpose pass may cancel neighbouring pairs).
bool is_nchw(const NodeContext& ctx) {
  const std::string format = attr_string(ctx.node().def, "data_format", "NHWC");
  if (format != "NHWC" && format != "NCHW") ctx.fail("unknown data_format " + format);
  return format == "NCHW";
}

std::vector<int64_t> to_nhwc(const std::vector<int64_t>& v) { return {v[0], v[2], v[3], v[1]}; }
std::vector<int64_t> to_nchw(const std::vector<int64_t>& v) { return {v[0], v[3], v[1], v[2]}; }

// A 4-value attr in NHWC order whatever the node's data_format.
std::vector<int64_t> four_ints(const NodeContext& ctx, const char* name, int64_t fallback) {
  std::vector<int64_t> v = attr_ints(ctx.node().def, name, {});
  if (v.empty()) v.assign(4, fallback);
  if (v.size() != 4) ctx.fail(std::string("attr '") + name + "' must have 4 values");
  return is_nchw(ctx) ? to_nhwc(v) : v;
}

// Input 0's shape in NHWC order.
std::vector<int64_t> nhwc_input(const NodeContext& ctx) {
  return is_nchw(ctx) ? to_nhwc(ctx.input(0).shape) : ctx.input(0).shape;
}

// The op's NHWC output shape in the node's own layout.
std::vector<int64_t> in_node_layout(const NodeContext& ctx, std::vector<int64_t> nhwc) {
  return is_nchw(ctx) ? to_nchw(nhwc) : nhwc;
}

// Emits `code` on NHWC operands: for NCHW nodes, input 0 is transposed to
// NHWC first and the result transposed back into output 0.
void add_nhwc_op(LowerContext& ctx, schema::OpCode code, std::vector<int> inputs,
                 schema::OpOptionsUnion options) {
  if (!is_nchw(ctx)) {
    ctx.add_op(code, std::move(inputs), {ctx.output_value(0)}, std::move(options));
    return;
  }
  const DType t = ctx.output_info(0).dtype;
  const int in = ctx.new_value(t, to_nhwc(ctx.input(0).shape), "input_nhwc");
  schema::TransposeOptionsT to;
  to.perm = {0, 2, 3, 1};
  ctx.add_op(schema::OpCode::TRANSPOSE, {inputs[0]}, {in}, LowerContext::options(to));
  inputs[0] = in;
  const int out = ctx.new_value(t, to_nhwc(ctx.output_info(0).shape), "output_nhwc");
  ctx.add_op(code, std::move(inputs), {out}, std::move(options));
  schema::TransposeOptionsT back;
  back.perm = {0, 3, 1, 2};
  ctx.add_op(schema::OpCode::TRANSPOSE, {out}, {ctx.output_value(0)}, LowerContext::options(back));
}

Window resolve_window(const NodeContext& ctx, int64_t kh, int64_t kw) {
  const std::vector<int64_t> in = nhwc_input(ctx);
  const std::vector<int64_t> strides = four_ints(ctx, "strides", 1);
  const std::vector<int64_t> dilations = four_ints(ctx, "dilations", 1);
  if (strides[0] != 1 || strides[3] != 1) ctx.fail("strides over batch or channels are not supported");
  const std::string padding = attr_string(ctx.node().def, "padding", "");
  std::vector<int64_t> explicit_pads = attr_ints(ctx.node().def, "explicit_paddings", {});
  if (padding == "EXPLICIT" && explicit_pads.size() != 8) {
    ctx.fail("EXPLICIT padding needs 8 explicit_paddings values");
  }
  explicit_pads.resize(8, 0);
  if (is_nchw(ctx)) {  // pairs per dim: N, C, H, W -> N, H, W, C
    explicit_pads = {explicit_pads[0], explicit_pads[1], explicit_pads[4], explicit_pads[5],
                     explicit_pads[6], explicit_pads[7], explicit_pads[2], explicit_pads[3]};
  }
  Window w;
  w.kh = kh;
  w.kw = kw;
  w.sh = strides[1];
  w.sw = strides[2];
  w.dh = dilations[1];
  w.dw = dilations[2];
  if (w.sh < 1 || w.sw < 1 || w.dh < 1 || w.dw < 1) ctx.fail("strides/dilations must be >= 1");
  w.h = resolve_axis(ctx, padding, in[1], kh, w.sh, w.dh, explicit_pads[2], explicit_pads[3]);
  w.w = resolve_axis(ctx, padding, in[2], kw, w.sw, w.dw, explicit_pads[4], explicit_pads[5]);
  return w;
}

// Conv2D and DepthwiseConv2D options share their window fields.
template <typename Options>
void set_window(Options& o, const Window& w) {
  o.stride_h = static_cast<int32_t>(w.sh);
  o.stride_w = static_cast<int32_t>(w.sw);
  o.dilation_h = static_cast<int32_t>(w.dh);
  o.dilation_w = static_cast<int32_t>(w.dw);
  o.pad_top = static_cast<int32_t>(w.h.pad_before);
  o.pad_left = static_cast<int32_t>(w.w.pad_before);
  o.pad_bottom = static_cast<int32_t>(w.h.pad_after);
  o.pad_right = static_cast<int32_t>(w.w.pad_after);
}

std::vector<TensorInfo> conv2d_output(const NodeContext& ctx) {
  ctx.expect_rank(0, 4);
  ctx.expect_rank(1, 4);
  const std::vector<int64_t> in = nhwc_input(ctx);
  const auto& f = ctx.input(1).shape;
  if (f[2] != in[3]) {
    ctx.fail("filter " + shape_to_string(f) + " expects " + std::to_string(f[2]) +
             " input channels, input " + shape_to_string(ctx.input(0).shape) + " has " + std::to_string(in[3]));
  }
  const Window w = resolve_window(ctx, f[0], f[1]);
  return {TensorInfo{ctx.input(0).dtype, in_node_layout(ctx, {in[0], w.h.out, w.w.out, f[3]}), nullptr}};
}

std::vector<TensorInfo> infer_conv2d(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  return conv2d_output(ctx);
}

void lower_conv2d(LowerContext& ctx) {
  require_f32(ctx);
  const auto& f = ctx.input(1).shape;
  const Window w = resolve_window(ctx, f[0], f[1]);
  schema::Conv2DOptionsT o;
  set_window(o, w);
  add_nhwc_op(ctx, schema::OpCode::CONV2D, {ctx.input_value(0), ctx.input_value(1)}, LowerContext::options(o));
}

std::vector<TensorInfo> depthwise_output(const NodeContext& ctx) {
  ctx.expect_rank(0, 4);
  ctx.expect_rank(1, 4);
  const std::vector<int64_t> in = nhwc_input(ctx);
  const auto& f = ctx.input(1).shape;
  if (f[2] != in[3]) ctx.fail("filter channels do not match input channels");
  const Window w = resolve_window(ctx, f[0], f[1]);
  return {TensorInfo{ctx.input(0).dtype, in_node_layout(ctx, {in[0], w.h.out, w.w.out, in[3] * f[3]}), nullptr}};
}

std::vector<TensorInfo> infer_depthwise(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  return depthwise_output(ctx);
}

void lower_depthwise(LowerContext& ctx) {
  require_f32(ctx);
  const auto& f = ctx.input(1).shape;
  const Window w = resolve_window(ctx, f[0], f[1]);
  schema::DepthwiseConv2DOptionsT o;
  set_window(o, w);
  o.depth_multiplier = static_cast<int32_t>(f[3]);
  add_nhwc_op(ctx, schema::OpCode::DEPTHWISE_CONV2D, {ctx.input_value(0), ctx.input_value(1)},
              LowerContext::options(o));
}

// Conv1D (TF.js's op in graphs TF.js writes): x [N, W, C] (NWC), filter
// [K, C, O], int attrs stride and dilation; a CONV2D over a height of 1.
struct Conv1DWindow {
  int64_t stride, dilation;
  Axis w;
};
Conv1DWindow conv1d_window(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_rank(0, 3);
  ctx.expect_rank(1, 3);
  if (attr_string(ctx.node().def, "data_format", "NWC") != "NWC") ctx.fail("only data_format NWC is supported");
  const auto& in = ctx.input(0).shape;
  const auto& f = ctx.input(1).shape;
  if (f[1] != in[2]) {
    ctx.fail("filter " + shape_to_string(f) + " expects " + std::to_string(f[1]) + " input channels, input " +
             shape_to_string(in) + " has " + std::to_string(in[2]));
  }
  std::string padding = attr_string(ctx.node().def, "padding", "");
  for (char& c : padding) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (padding != "SAME" && padding != "VALID") ctx.fail("padding must be SAME or VALID, got '" + padding + "'");
  Conv1DWindow cw;
  cw.stride = attr_int(ctx.node().def, "stride", 1);
  cw.dilation = attr_int(ctx.node().def, "dilation", 1);
  if (cw.stride < 1 || cw.dilation < 1) ctx.fail("stride/dilation must be >= 1");
  cw.w = resolve_axis(ctx, padding, in[1], f[0], cw.stride, cw.dilation, 0, 0);
  return cw;
}

std::vector<TensorInfo> infer_conv1d(const NodeContext& ctx) {
  const Conv1DWindow cw = conv1d_window(ctx);
  return {TensorInfo{ctx.input(0).dtype, {ctx.input(0).shape[0], cw.w.out, ctx.input(1).shape[2]}, nullptr}};
}

void lower_conv1d(LowerContext& ctx) {
  require_f32(ctx);
  const Conv1DWindow cw = conv1d_window(ctx);
  const auto& in = ctx.input(0).shape;
  const auto& f = ctx.input(1).shape;
  const int x = ctx.reshaped_value(ctx.input_value(0), {in[0], 1, in[1], in[2]}, "nhwc");
  const int filter = ctx.reshaped_value(ctx.input_value(1), {1, f[0], f[1], f[2]}, "hwio");
  schema::Conv2DOptionsT o;
  o.stride_h = 1;
  o.stride_w = static_cast<int32_t>(cw.stride);
  o.dilation_h = 1;
  o.dilation_w = static_cast<int32_t>(cw.dilation);
  o.pad_left = static_cast<int32_t>(cw.w.pad_before);
  o.pad_right = static_cast<int32_t>(cw.w.pad_after);
  const int out = ctx.new_value(DType::kFloat32, {in[0], 1, cw.w.out, f[2]}, "conv2d");
  ctx.add_op(schema::OpCode::CONV2D, {x, filter}, {out}, LowerContext::options(o));
  ctx.add_op(schema::OpCode::RESHAPE, {out}, {ctx.output_value(0)});
}

// TF's graph optimizer (grappler's remapper) writes _FusedConv2D, _FusedMatMul
// and _FusedDepthwiseConv2dNative (TF.js's converter spells the last without the
// underscore) into graphs it rewrites, frozen ones included:
// the base op on inputs 0 and 1, then `fused_ops` in order on the extra inputs
// (`args`). floe lowers them to the base op followed by the ops they fuse; its
// optimizer then fuses bias and activation back into the base op.
struct FusedOps {
  bool bias = false;        // BiasAdd: args[0] is the bias [C]
  bool batch_norm = false;  // FusedBatchNorm: args are scale, offset, mean, variance
  bool add = false;         // Add after BiasAdd: the next arg is added (a residual)
  std::string activation;   // "" or Relu, Relu6, Elu, LeakyRelu, Sigmoid, Tanh
  int args = 0;
};

FusedOps fused_ops(const NodeContext& ctx) {
  const std::vector<std::string> ops = attr_strings(ctx.node().def, "fused_ops");
  FusedOps f;
  size_t i = 0;
  if (i < ops.size() && ops[i] == "BiasAdd") {
    f.bias = true;
    f.args = 1;
    ++i;
  } else if (i < ops.size() && ops[i] == "FusedBatchNorm" && ctx.node().op() == "_FusedConv2D") {
    f.batch_norm = true;
    f.args = 4;
    ++i;
  }
  if (f.bias && i < ops.size() && ops[i] == "Add") {
    f.add = true;
    ++f.args;
    ++i;
  }
  static const char* const kActivations[] = {"Relu", "Relu6", "Elu", "LeakyRelu", "Sigmoid", "Tanh"};
  if ((f.bias || f.batch_norm) && i < ops.size() &&
      std::find(std::begin(kActivations), std::end(kActivations), ops[i]) != std::end(kActivations)) {
    f.activation = ops[i];
    ++i;
  }
  if (!(f.bias || f.batch_norm) || i != ops.size()) {
    std::string list;
    for (const std::string& op : ops) list += (list.empty() ? "" : ",") + op;
    ctx.fail("fused_ops [" + list + "] is not a combination floe lowers: BiasAdd" +
             std::string(ctx.node().op() == "_FusedConv2D" ? " or FusedBatchNorm" : "") +
             ", then Add (after BiasAdd), then one of Relu, Relu6, Elu, LeakyRelu, Sigmoid, Tanh");
  }
  if (ctx.input_count() != 2 + f.args) {
    ctx.fail("fused_ops need " + std::to_string(f.args) + " args, the node has " +
             std::to_string(ctx.input_count() - 2));
  }
  return f;
}

std::vector<TensorInfo> infer_fused(const NodeContext& ctx) {
  const FusedOps f = fused_ops(ctx);
  const std::string& op = ctx.node().op();
  std::vector<TensorInfo> out = op == "_FusedMatMul" ? matmul_output(ctx)
                                : op == "_FusedConv2D" ? conv2d_output(ctx)
                                                       : depthwise_output(ctx);
  if (op != "_FusedMatMul" && is_nchw(ctx)) {
    ctx.fail("NCHW is not supported for fused convolutions (TF fuses NHWC ones on CPU); use the unfused graph");
  }
  const int64_t channels = out[0].shape.back();
  for (int a = 0; a < f.args; ++a) {
    const TensorInfo& arg = ctx.input(2 + a);
    if (arg.dtype != out[0].dtype) ctx.fail("fused args must have the output's dtype");
    const bool residual = f.add && a == 1;
    if (residual ? arg.shape != out[0].shape : arg.shape != std::vector<int64_t>{channels}) {
      ctx.fail("fused arg " + std::to_string(a) + " has shape " + shape_to_string(arg.shape) + ", expected " +
               (residual ? shape_to_string(out[0].shape) : "[" + std::to_string(channels) + "]"));
    }
  }
  return out;
}

void lower_fused(LowerContext& ctx) {
  require_f32(ctx);
  const FusedOps f = fused_ops(ctx);
  const std::string& op = ctx.node().op();
  const TensorInfo& out = ctx.output_info(0);
  const auto& filter = ctx.input(1).shape;
  // Each step writes a helper value; the last one writes the node's output.
  const int steps = 1 + (f.bias ? 1 : 0) + (f.batch_norm ? 2 : 0) + (f.add ? 1 : 0) + (f.activation.empty() ? 0 : 1);
  int step = 0;
  auto next = [&](const char* suffix) {
    return ++step == steps ? ctx.output_value(0) : ctx.new_value(out.dtype, out.shape, suffix);
  };
  int acc = next(op == "_FusedMatMul" ? "matmul" : "conv");
  if (op == "_FusedMatMul") {
    schema::MatMulOptionsT o;
    o.transpose_a = attr_bool(ctx.node().def, "transpose_a", false);
    o.transpose_b = attr_bool(ctx.node().def, "transpose_b", false);
    ctx.add_op(schema::OpCode::MATMUL, {ctx.input_value(0), ctx.input_value(1)}, {acc}, LowerContext::options(o));
  } else if (op == "_FusedConv2D") {
    schema::Conv2DOptionsT o;
    set_window(o, resolve_window(ctx, filter[0], filter[1]));
    ctx.add_op(schema::OpCode::CONV2D, {ctx.input_value(0), ctx.input_value(1)}, {acc}, LowerContext::options(o));
  } else {
    schema::DepthwiseConv2DOptionsT o;
    set_window(o, resolve_window(ctx, filter[0], filter[1]));
    o.depth_multiplier = static_cast<int32_t>(filter[3]);
    ctx.add_op(schema::OpCode::DEPTHWISE_CONV2D, {ctx.input_value(0), ctx.input_value(1)}, {acc},
               LowerContext::options(o));
  }
  if (f.bias) {
    const int biased = next("bias_add");
    ctx.add_op(schema::OpCode::ADD, {acc, ctx.input_value(2)}, {biased});
    acc = biased;
  }
  if (f.batch_norm) {
    // y = (x - mean) * scale / sqrt(variance + epsilon) + offset, as a per-channel
    // MUL and ADD of constants (the optimizer folds them into the filter).
    const HostTensor& scale = ctx.constant_input(2, "the batch norm scale");
    const HostTensor& offset = ctx.constant_input(3, "the batch norm offset");
    const HostTensor& mean = ctx.constant_input(4, "the batch norm mean");
    const HostTensor& variance = ctx.constant_input(5, "the batch norm variance");
    const float epsilon = attr_float(ctx.node().def, "epsilon", 0.0001f);
    HostTensor multiplier = scale, addend = offset;
    for (int64_t c = 0; c < scale.num_elements(); ++c) {
      const float m = scale.as<float>()[c] / std::sqrt(variance.as<float>()[c] + epsilon);
      multiplier.as<float>()[c] = m;
      addend.as<float>()[c] = offset.as<float>()[c] - mean.as<float>()[c] * m;
    }
    const int scaled = next("batch_norm_scale");
    ctx.add_op(schema::OpCode::MUL, {acc, ctx.constant_value("batch_norm_multiplier", std::move(multiplier))},
               {scaled});
    const int shifted = next("batch_norm_offset");
    ctx.add_op(schema::OpCode::ADD, {scaled, ctx.constant_value("batch_norm_addend", std::move(addend))}, {shifted});
    acc = shifted;
  }
  if (f.add) {
    const int summed = next("add");
    ctx.add_op(schema::OpCode::ADD, {acc, ctx.input_value(3)}, {summed});
    acc = summed;
  }
  if (!f.activation.empty()) {
    const int activated = next("activation");
    if (f.activation == "LeakyRelu") {
      schema::LeakyReluOptionsT o;
      o.alpha = attr_float(ctx.node().def, "leakyrelu_alpha", 0.2f);
      ctx.add_op(schema::OpCode::LEAKY_RELU, {acc}, {activated}, LowerContext::options(o));
    } else {
      const schema::OpCode code = f.activation == "Relu"    ? schema::OpCode::RELU
                                  : f.activation == "Relu6" ? schema::OpCode::RELU6
                                  : f.activation == "Elu"   ? schema::OpCode::ELU
                                  : f.activation == "Sigmoid" ? schema::OpCode::SIGMOID
                                                              : schema::OpCode::TANH;
      ctx.add_op(code, {acc}, {activated});
    }
  }
}

Window pool_window(const NodeContext& ctx) {
  const std::vector<int64_t> ksize = four_ints(ctx, "ksize", 1);
  if (ksize[0] != 1 || ksize[3] != 1) ctx.fail("pooling over batch or channels is not supported");
  return resolve_window(ctx, ksize[1], ksize[2]);
}

std::vector<TensorInfo> infer_pool(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_rank(0, 4);
  const std::vector<int64_t> in = nhwc_input(ctx);
  const Window w = pool_window(ctx);
  return {TensorInfo{ctx.input(0).dtype, in_node_layout(ctx, {in[0], w.h.out, w.w.out, in[3]}), nullptr}};
}

template <schema::OpCode kCode>
void lower_pool(LowerContext& ctx) {
  require_f32(ctx);
  const Window w = pool_window(ctx);
  schema::Pool2DOptionsT o;
  o.filter_h = static_cast<int32_t>(w.kh);
  o.filter_w = static_cast<int32_t>(w.kw);
  o.stride_h = static_cast<int32_t>(w.sh);
  o.stride_w = static_cast<int32_t>(w.sw);
  o.pad_top = static_cast<int32_t>(w.h.pad_before);
  o.pad_left = static_cast<int32_t>(w.w.pad_before);
  o.pad_bottom = static_cast<int32_t>(w.h.pad_after);
  o.pad_right = static_cast<int32_t>(w.w.pad_after);
  add_nhwc_op(ctx, kCode, {ctx.input_value(0)}, LowerContext::options(o));
}

std::vector<TensorInfo> infer_softmax(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  if (ctx.input(0).shape.empty()) ctx.fail("softmax input must have rank >= 1");
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}

void lower_softmax(LowerContext& ctx) {
  require_f32(ctx);
  ctx.add_op(schema::OpCode::SOFTMAX, {ctx.input_value(0)}, {ctx.output_value(0)},
             LowerContext::options(schema::SoftmaxOptionsT()));
}

}  // namespace

const std::vector<OpHandler>& nn_handlers() {
  using schema::OpCode;
  static const std::vector<OpHandler> handlers = {
      {"MatMul", infer_matmul, lower_matmul},
      {"Conv2D", infer_conv2d, lower_conv2d},
      {"DepthwiseConv2dNative", infer_depthwise, lower_depthwise},
      {"DepthwiseConv2d", infer_depthwise, lower_depthwise},  // TF.js's name, same attrs
      {"Conv1D", infer_conv1d, lower_conv1d},
      {"_FusedConv2D", infer_fused, lower_fused},
      {"_FusedMatMul", infer_fused, lower_fused},
      {"FusedDepthwiseConv2dNative", infer_fused, lower_fused},
      {"_FusedDepthwiseConv2dNative", infer_fused, lower_fused},
      {"MaxPool", infer_pool, lower_pool<OpCode::MAX_POOL2D>},
      {"AvgPool", infer_pool, lower_pool<OpCode::AVG_POOL2D>},
      {"Softmax", infer_softmax, lower_softmax},
  };
  return handlers;
}

}  // namespace floe::conv
