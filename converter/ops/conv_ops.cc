// SPDX-License-Identifier: Apache-2.0
// Convolutions: Conv2D, DepthwiseConv2dNative, Conv1D, grappler's fused forms
// (_FusedConv2D, _FusedDepthwiseConv2dNative and, lowered by the same steps,
// _FusedMatMul), Conv2DBackpropInput (TRANSPOSE_CONV2D, NCHW through
// transposes), Conv3D, and ExtractImagePatches (a convolution's window gather
// without weights).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>

#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"
#include "converter/ops/window_geometry.h"

namespace floe::conv {
namespace {

// Conv2D and DepthwiseConv2D options share their window fields (the pools'
// without dilation).
template <typename Options>
void set_window(Options& o, const Window& w) {
  set_strides_and_pads(o, w);
  o.dilation_h = static_cast<int32_t>(w.dh);
  o.dilation_w = static_cast<int32_t>(w.dw);
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
  require_float32_output(ctx);
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
  require_float32_output(ctx);
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
  PaddedAxis w;
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
  require_float32_output(ctx);
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
  require_float32_output(ctx);
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

// ---- Conv2DBackpropInput ----------------------------------------------------------------

struct TConvGeometry {
  bool nchw = false;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, pad_top = 0, pad_left = 0;
  std::vector<int64_t> out_nhwc;
};

int64_t forward_pad(const NodeContext& ctx, const std::string& padding, int64_t in, int64_t k, int64_t s,
                    int64_t d, int64_t expected_out) {
  WindowAxis axis;
  if (!same_or_valid(padding, in, k, s, d, &axis)) {
    ctx.fail("padding '" + padding + "' is not supported for Conv2DBackpropInput");
  }
  if (axis.out != expected_out) {
    ctx.fail("input_sizes do not match out_backprop under " + padding + " padding");
  }
  return axis.pad_before;
}

TConvGeometry tconv_geometry(const NodeContext& ctx) {
  ctx.expect_inputs(3, 3);
  TConvGeometry g;
  const auto& def = ctx.node().def;
  g.nchw = attr_string(def, "data_format", "NHWC") == "NCHW";
  std::vector<int64_t> sizes = ctx.constant_ints(0, "input_sizes");
  const auto& f = ctx.input(1).shape;
  std::vector<int64_t> dy = ctx.input(2).shape;
  if (sizes.size() != 4 || f.size() != 4 || dy.size() != 4) ctx.fail("expects 4-D shapes");
  std::vector<int64_t> strides = attr_ints(def, "strides", {1, 1, 1, 1});
  std::vector<int64_t> dil = attr_ints(def, "dilations", {1, 1, 1, 1});
  if (g.nchw) {
    sizes = {sizes[0], sizes[2], sizes[3], sizes[1]};
    dy = {dy[0], dy[2], dy[3], dy[1]};
    strides = {strides[0], strides[2], strides[3], strides[1]};
    dil = {dil[0], dil[2], dil[3], dil[1]};
  }
  g.sh = strides[1];
  g.sw = strides[2];
  g.dh = dil[1];
  g.dw = dil[2];
  if (f[2] != sizes[3] || f[3] != dy[3]) ctx.fail("filter channels do not match");
  const std::string padding = attr_string(def, "padding", "VALID");
  g.pad_top = forward_pad(ctx, padding, sizes[1], f[0], g.sh, g.dh, dy[1]);
  g.pad_left = forward_pad(ctx, padding, sizes[2], f[1], g.sw, g.dw, dy[2]);
  g.out_nhwc = sizes;
  return g;
}

std::vector<TensorInfo> infer_tconv(const NodeContext& ctx) {
  const TConvGeometry g = tconv_geometry(ctx);
  std::vector<int64_t> out = g.out_nhwc;
  if (g.nchw) out = {out[0], out[3], out[1], out[2]};
  return {TensorInfo{ctx.input(2).dtype, out, nullptr}};
}

void lower_tconv(LowerContext& ctx) {
  const TConvGeometry g = tconv_geometry(ctx);
  schema::Conv2DOptionsT o;
  o.stride_h = static_cast<int32_t>(g.sh);
  o.stride_w = static_cast<int32_t>(g.sw);
  o.dilation_h = static_cast<int32_t>(g.dh);
  o.dilation_w = static_cast<int32_t>(g.dw);
  o.pad_top = static_cast<int32_t>(g.pad_top);
  o.pad_left = static_cast<int32_t>(g.pad_left);
  int input = ctx.input_value(2);
  if (g.nchw) input = ctx.transposed_value(input, {0, 2, 3, 1}, "to_nhwc");
  const int out = g.nchw ? ctx.new_value(ctx.output_info(0).dtype, g.out_nhwc, "nhwc") : ctx.output_value(0);
  ctx.add_op(schema::OpCode::TRANSPOSE_CONV2D, {input, ctx.input_value(1)}, {out}, LowerContext::options(o));
  if (g.nchw) {
    schema::TransposeOptionsT t;
    t.perm = {0, 3, 1, 2};
    ctx.add_op(schema::OpCode::TRANSPOSE, {out}, {ctx.output_value(0)}, LowerContext::options(t));
  }
}

// ExtractImagePatches(images): ksizes/strides/rates [1, h, w, 1], SAME/VALID.
struct PatchGeometry {
  schema::ExtractPatchesOptionsT o;
  std::vector<int64_t> out;
};

PatchGeometry patch_geometry(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_rank(0, 4);
  const auto& def = ctx.node().def;
  const std::vector<int64_t> k = attr_ints(def, "ksizes", {}), s = attr_ints(def, "strides", {}),
                             r = attr_ints(def, "rates", {});
  if (k.size() != 4 || s.size() != 4 || r.size() != 4) ctx.fail("ksizes/strides/rates need 4 values");
  const auto& in = ctx.input(0).shape;
  const std::string padding = attr_string(def, "padding", "VALID");
  PatchGeometry g;
  WindowAxis hw[2];
  for (size_t a = 0; a < 2; ++a) {
    if (k[a + 1] < 1 || s[a + 1] < 1 || r[a + 1] < 1) ctx.fail("ksizes/strides/rates must be >= 1");
    if (!same_or_valid(padding, in[a + 1], k[a + 1], s[a + 1], r[a + 1], &hw[a])) {
      ctx.fail("unknown padding " + padding);
    }
  }
  g.o.size_h = static_cast<int32_t>(k[1]);
  g.o.size_w = static_cast<int32_t>(k[2]);
  g.o.stride_h = static_cast<int32_t>(s[1]);
  g.o.stride_w = static_cast<int32_t>(s[2]);
  g.o.rate_h = static_cast<int32_t>(r[1]);
  g.o.rate_w = static_cast<int32_t>(r[2]);
  g.o.pad_top = static_cast<int32_t>(hw[0].pad_before);
  g.o.pad_left = static_cast<int32_t>(hw[1].pad_before);
  g.out = {in[0], hw[0].out, hw[1].out, k[1] * k[2] * in[3]};
  return g;
}

std::vector<TensorInfo> infer_patches(const NodeContext& ctx) {
  return {TensorInfo{ctx.input(0).dtype, patch_geometry(ctx).out, nullptr}};
}

void lower_patches(LowerContext& ctx) {
  ctx.add_op(schema::OpCode::EXTRACT_PATCHES, {ctx.input_value(0)}, {ctx.output_value(0)},
             LowerContext::options(patch_geometry(ctx).o));
}

// Conv3D(input NDHWC, filter DHWIO), SAME/VALID, strides/dilations [1,d,h,w,1].
struct Conv3DGeometry {
  schema::Conv3DOptionsT o;
  std::vector<int64_t> out;
};

Conv3DGeometry conv3d_geometry(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_rank(0, 5);
  ctx.expect_rank(1, 5);
  const auto& def = ctx.node().def;
  if (attr_string(def, "data_format", "NDHWC") != "NDHWC") ctx.fail("only NDHWC is supported");
  const auto &in = ctx.input(0).shape, &f = ctx.input(1).shape;
  if (f[3] != in[4]) ctx.fail("filter input channels do not match the input");
  const std::vector<int64_t> s = attr_ints(def, "strides", {1, 1, 1, 1, 1});
  const std::vector<int64_t> d = attr_ints(def, "dilations", {1, 1, 1, 1, 1});
  if (s.size() != 5 || d.size() != 5) ctx.fail("strides/dilations need 5 values");
  const std::string padding = attr_string(def, "padding", "VALID");
  WindowAxis axes[3];
  for (size_t a = 0; a < 3; ++a) {
    if (s[a + 1] < 1 || d[a + 1] < 1) ctx.fail("strides/dilations must be >= 1");
    if (!same_or_valid(padding, in[a + 1], f[a], s[a + 1], d[a + 1], &axes[a])) ctx.fail("unknown padding " + padding);
  }
  Conv3DGeometry g;
  g.out = ndhwc_window(axes, in[0], f[4], s, &g.o);
  g.o.dilation_d = static_cast<int32_t>(d[1]);
  g.o.dilation_h = static_cast<int32_t>(d[2]);
  g.o.dilation_w = static_cast<int32_t>(d[3]);
  return g;
}

std::vector<TensorInfo> infer_conv3d(const NodeContext& ctx) {
  return {TensorInfo{ctx.input(0).dtype, conv3d_geometry(ctx).out, nullptr}};
}

void lower_conv3d(LowerContext& ctx) {
  ctx.add_op(schema::OpCode::CONV3D, {ctx.input_value(0), ctx.input_value(1)}, {ctx.output_value(0)},
             LowerContext::options(conv3d_geometry(ctx).o));
}

}  // namespace

const std::vector<OpHandler>& conv_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"Conv2D", infer_conv2d, lower_conv2d},
      {"DepthwiseConv2dNative", infer_depthwise, lower_depthwise},
      {"DepthwiseConv2d", infer_depthwise, lower_depthwise},  // TF.js's name, same attrs
      {"Conv1D", infer_conv1d, lower_conv1d},
      {"_FusedConv2D", infer_fused, lower_fused},
      {"_FusedMatMul", infer_fused, lower_fused},
      {"FusedDepthwiseConv2dNative", infer_fused, lower_fused},
      {"_FusedDepthwiseConv2dNative", infer_fused, lower_fused},
      {"Conv2DBackpropInput", infer_tconv, lower_tconv},
      {"ExtractImagePatches", infer_patches, lower_patches},
      {"Conv3D", infer_conv3d, lower_conv3d},
  };
  return handlers;
}

}  // namespace floe::conv
