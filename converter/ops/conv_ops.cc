// SPDX-License-Identifier: Apache-2.0
// Windowed ops beyond nn.cc's Conv2D / DepthwiseConv2dNative / pooling:
// Conv2DBackpropInput (TRANSPOSE_CONV2D, NCHW through transposes), Conv3D, and
// ExtractImagePatches (a convolution's window gather without weights).
#include <algorithm>

#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"
#include "converter/ops/window_geometry.h"

namespace floe::conv {
namespace {

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
      {"Conv2DBackpropInput", infer_tconv, lower_tconv},
      {"ExtractImagePatches", infer_patches, lower_patches},
      {"Conv3D", infer_conv3d, lower_conv3d},
  };
  return handlers;
}

}  // namespace floe::conv
