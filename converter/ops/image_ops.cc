// SPDX-License-Identifier: Apache-2.0
// Image, detection and 3-D pooling ops: CropAndResize, NonMaxSuppressionV2..V5,
// Dilation2D, MaxPool3D / AvgPool3D, MaxPoolWithArgmax and
// ImageProjectiveTransformV3, each lowered to its one floe op. They compute in
// float32: other input dtypes get a CAST first.
#include <algorithm>
#include <cmath>
#include <limits>

#include "converter/ir/attrs.h"
#include "converter/ir/error.h"
#include "converter/ops/op_registry.h"
#include "converter/ops/window_geometry.h"

namespace floe::conv {
namespace {

// Input i as a float32 value (a CAST into a helper value when it is not).
int f32_input(LowerContext& ctx, int i, const char* what) {
  const int v = ctx.input_value(i);
  if (ctx.input(i).dtype == DType::kFloat32) return v;
  const int f = ctx.new_value(DType::kFloat32, ctx.input(i).shape, std::string(what) + "_f32");
  ctx.add_op(schema::OpCode::CAST, {v}, {f});
  return f;
}

void require_f32_input(const NodeContext& ctx, int i) {
  if (ctx.input(i).dtype != DType::kFloat32) {
    ctx.fail(std::string("dtype ") + dtype_name(ctx.input(i).dtype) + " is not supported (float32 only)");
  }
}

// One spatial axis of a SAME or VALID window; these ops refuse a VALID window
// larger than the input (TF does too).
WindowAxis window_axis(const NodeContext& ctx, const std::string& padding, int64_t in, int64_t k, int64_t stride,
                       int64_t rate) {
  if (k < 1 || stride < 1 || rate < 1) ctx.fail("window sizes, strides and rates must be >= 1");
  if (padding == "VALID" && in < (k - 1) * rate + 1) ctx.fail("VALID window larger than the input");
  WindowAxis a;
  if (!same_or_valid(padding, in, k, stride, rate, &a)) {
    ctx.fail("padding '" + padding + "' is not supported (SAME or VALID)");
  }
  return a;
}

// An attr of `n` ints whose first and last entries (batch, channels) must be 1.
std::vector<int64_t> window_attr(const NodeContext& ctx, const char* name, size_t n) {
  const std::vector<int64_t> v = attr_ints(ctx.node().def, name, std::vector<int64_t>(n, 1));
  if (v.size() != n) ctx.fail(std::string("attr '") + name + "' must have " + std::to_string(n) + " values");
  if (v.front() != 1 || v.back() != 1) ctx.fail(std::string("attr '") + name + "' over batch or channels is not supported");
  return v;
}

// ---- CropAndResize ------------------------------------------------------------------------

std::vector<TensorInfo> infer_crop_and_resize(const NodeContext& ctx) {
  ctx.expect_inputs(4, 4);
  ctx.expect_rank(0, 4);
  ctx.expect_rank(1, 2);
  ctx.expect_rank(2, 1);
  const auto &image = ctx.input(0).shape, &boxes = ctx.input(1).shape;
  const std::vector<int64_t> size = ctx.constant_ints(3, "crop_size");
  if (size.size() != 2 || size[0] <= 0 || size[1] <= 0) ctx.fail("crop_size must be 2 positive values");
  if (boxes[1] != 4) ctx.fail("boxes must be [num_boxes, 4], has " + shape_to_string(boxes));
  if (ctx.input(2).shape[0] != boxes[0]) ctx.fail("box_ind must have one entry per box");
  if (image[1] <= 0 || image[2] <= 0) ctx.fail("image dimensions must be positive, has " + shape_to_string(image));
  const std::string method = attr_string(ctx.node().def, "method", "bilinear");
  if (method != "bilinear" && method != "nearest") ctx.fail("method '" + method + "' is not supported (bilinear or nearest)");
  return {TensorInfo{DType::kFloat32, {boxes[0], size[0], size[1], image[3]}, nullptr}};
}

void lower_crop_and_resize(LowerContext& ctx) {
  schema::CropAndResizeOptionsT o;
  o.nearest = attr_string(ctx.node().def, "method", "bilinear") == "nearest";
  o.extrapolation_value = attr_float(ctx.node().def, "extrapolation_value", 0.0f);
  ctx.add_op(schema::OpCode::CROP_AND_RESIZE,
             {f32_input(ctx, 0, "image"), f32_input(ctx, 1, "boxes"), ctx.input_value(2)}, {ctx.output_value(0)},
             LowerContext::options(o));
}

// ---- NonMaxSuppressionV2..V5 -------------------------------------------------------------

bool nms_is_padded(const NodeContext& ctx) {
  const std::string& op = ctx.node().op();
  return (op == "NonMaxSuppressionV4" || op == "NonMaxSuppressionV5") &&
         attr_bool(ctx.node().def, "pad_to_max_output_size", false);
}

std::vector<TensorInfo> infer_nms(const NodeContext& ctx) {
  const std::string& op = ctx.node().op();
  const int inputs = op == "NonMaxSuppressionV2" ? 4 : op == "NonMaxSuppressionV5" ? 6 : 5;
  ctx.expect_inputs(inputs, inputs);
  ctx.expect_rank(0, 2);
  ctx.expect_rank(1, 1);
  const auto &boxes = ctx.input(0).shape, &scores = ctx.input(1).shape;
  if (boxes[1] != 4) ctx.fail("boxes must be [num_boxes, 4], has " + shape_to_string(boxes));
  if (scores[0] != boxes[0]) ctx.fail("scores must have one entry per box");
  for (int i = 3; i < inputs; ++i) {
    if (!ctx.input(i).shape.empty()) ctx.fail("input " + std::to_string(i) + " must be a scalar");
  }
  const std::vector<int64_t> max_size = ctx.constant_ints(2, "max_output_size");
  if (max_size.size() != 1 || max_size[0] < 0) ctx.fail("max_output_size must be a scalar >= 0");
  const int64_t max_out = max_size[0];
  if (!nms_is_padded(ctx)) {
    // floe's tensors have static shapes; TF returns min(selected, max_output_size) indices.
    const std::string fix = op == "NonMaxSuppressionV4" || op == "NonMaxSuppressionV5"
                                ? "export it with pad_to_max_output_size=True"
                                : "export it as NonMaxSuppressionV4/V5 with pad_to_max_output_size=True "
                                  "(tf.image.non_max_suppression_padded)";
    throw ConvertError(ctx.graph().source() + ": node '" + ctx.node().name() + "' (op " + op +
                           "): output length depends on the data (between 0 and max_output_size = " +
                           std::to_string(max_out) + "), and floe's tensors have static shapes; " + fix +
                           ", which returns " + std::to_string(max_out) + " padded indices and the valid count",
                       ErrorCategory::kUnsupported,
                       ErrorLocation{ctx.graph().source(), ctx.node().name(), op, -1});
  }
  std::vector<TensorInfo> out = {TensorInfo{DType::kInt32, {max_out}, nullptr}};
  if (op == "NonMaxSuppressionV5") out.push_back(TensorInfo{ctx.input(1).dtype, {max_out}, nullptr});
  out.push_back(TensorInfo{DType::kInt32, {}, nullptr});
  return out;
}

void lower_nms(LowerContext& ctx) {
  const bool v5 = ctx.node().op() == "NonMaxSuppressionV5";
  const int64_t n = ctx.input(0).shape[0];
  const int64_t max_out = ctx.output_info(0).shape[0];
  std::vector<int> inputs = {f32_input(ctx, 0, "boxes"), f32_input(ctx, 1, "scores"), f32_input(ctx, 3, "iou_threshold")};
  if (ctx.node().op() == "NonMaxSuppressionV2") {
    HostTensor none;
    none.dtype = DType::kFloat32;
    none.data.resize(sizeof(float));
    none.as<float>()[0] = -std::numeric_limits<float>::infinity();
    inputs.push_back(ctx.constant_value("score_threshold", std::move(none)));
  } else {
    inputs.push_back(f32_input(ctx, 4, "score_threshold"));
  }
  inputs.push_back(v5 ? f32_input(ctx, 5, "soft_nms_sigma") : -1);
  const bool scores_f32 = !v5 || ctx.output_info(1).dtype == DType::kFloat32;
  const int scores = v5 && scores_f32 ? ctx.output_value(1) : ctx.new_value(DType::kFloat32, {max_out}, "selected_scores");
  const int count = ctx.output_value(v5 ? 2 : 1);
  ctx.add_op(schema::OpCode::NON_MAX_SUPPRESSION, inputs,
             {ctx.output_value(0), scores, count, ctx.new_value(DType::kFloat32, {n}, "candidate_scores"),
              ctx.new_value(DType::kInt32, {n}, "candidate_compared")});
  if (v5 && !scores_f32) ctx.add_op(schema::OpCode::CAST, {scores}, {ctx.output_value(1)});
}

// ---- Dilation2D ----------------------------------------------------------------------------

struct Dilation2DGeometry {
  schema::Conv2DOptionsT o;
  std::vector<int64_t> out;
};

Dilation2DGeometry dilation2d_geometry(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_rank(0, 4);
  ctx.expect_rank(1, 3);
  const auto &in = ctx.input(0).shape, &f = ctx.input(1).shape;
  if (f[2] != in[3]) ctx.fail("filter depth " + std::to_string(f[2]) + " does not match the input's " + std::to_string(in[3]));
  const std::vector<int64_t> s = window_attr(ctx, "strides", 4), r = window_attr(ctx, "rates", 4);
  const std::string padding = attr_string(ctx.node().def, "padding", "");
  const WindowAxis h = window_axis(ctx, padding, in[1], f[0], s[1], r[1]);
  const WindowAxis w = window_axis(ctx, padding, in[2], f[1], s[2], r[2]);
  Dilation2DGeometry g;
  g.out = {in[0], h.out, w.out, in[3]};
  g.o.stride_h = static_cast<int32_t>(s[1]);
  g.o.stride_w = static_cast<int32_t>(s[2]);
  g.o.dilation_h = static_cast<int32_t>(r[1]);
  g.o.dilation_w = static_cast<int32_t>(r[2]);
  g.o.pad_top = static_cast<int32_t>(h.pad_before);
  g.o.pad_left = static_cast<int32_t>(w.pad_before);
  return g;
}

std::vector<TensorInfo> infer_dilation2d(const NodeContext& ctx) {
  require_f32_input(ctx, 0);
  return {TensorInfo{DType::kFloat32, dilation2d_geometry(ctx).out, nullptr}};
}

void lower_dilation2d(LowerContext& ctx) {
  ctx.add_op(schema::OpCode::DILATION2D, {ctx.input_value(0), ctx.input_value(1)}, {ctx.output_value(0)},
             LowerContext::options(dilation2d_geometry(ctx).o));
}

// ---- MaxPool3D / AvgPool3D -----------------------------------------------------------------

bool is_ncdhw(const NodeContext& ctx) {
  const std::string format = attr_string(ctx.node().def, "data_format", "NDHWC");
  if (format != "NDHWC" && format != "NCDHW") ctx.fail("unknown data_format " + format);
  return format == "NCDHW";
}

std::vector<int64_t> ncdhw_to_ndhwc(const std::vector<int64_t>& v) { return {v[0], v[2], v[3], v[4], v[1]}; }
std::vector<int64_t> ndhwc_to_ncdhw(const std::vector<int64_t>& v) { return {v[0], v[4], v[1], v[2], v[3]}; }

struct Pool3DGeometry {
  schema::Pool3DOptionsT o;
  std::vector<int64_t> out_ndhwc;
};

Pool3DGeometry pool3d_geometry(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_rank(0, 5);
  const bool ncdhw = is_ncdhw(ctx);
  const std::vector<int64_t> in = ncdhw ? ncdhw_to_ndhwc(ctx.input(0).shape) : ctx.input(0).shape;
  std::vector<int64_t> k = attr_ints(ctx.node().def, "ksize", {});
  std::vector<int64_t> s = attr_ints(ctx.node().def, "strides", {});
  if (k.size() != 5 || s.size() != 5) ctx.fail("ksize and strides must have 5 values");
  if (ncdhw) {
    k = ncdhw_to_ndhwc(k);
    s = ncdhw_to_ndhwc(s);
  }
  if (k[0] != 1 || k[4] != 1 || s[0] != 1 || s[4] != 1) ctx.fail("pooling over batch or channels is not supported");
  const std::string padding = attr_string(ctx.node().def, "padding", "");
  WindowAxis axes[3];
  for (size_t a = 0; a < 3; ++a) axes[a] = window_axis(ctx, padding, in[a + 1], k[a + 1], s[a + 1], 1);
  Pool3DGeometry g;
  g.out_ndhwc = ndhwc_window(axes, in[0], in[4], s, &g.o);
  g.o.filter_d = static_cast<int32_t>(k[1]);
  g.o.filter_h = static_cast<int32_t>(k[2]);
  g.o.filter_w = static_cast<int32_t>(k[3]);
  return g;
}

std::vector<TensorInfo> infer_pool3d(const NodeContext& ctx) {
  require_f32_input(ctx, 0);
  const Pool3DGeometry g = pool3d_geometry(ctx);
  return {TensorInfo{DType::kFloat32, is_ncdhw(ctx) ? ndhwc_to_ncdhw(g.out_ndhwc) : g.out_ndhwc, nullptr}};
}

// NCDHW nodes run in NDHWC between two transposes (the optimizer may cancel them).
template <schema::OpCode kCode>
void lower_pool3d(LowerContext& ctx) {
  const Pool3DGeometry g = pool3d_geometry(ctx);
  if (!is_ncdhw(ctx)) {
    ctx.add_op(kCode, {ctx.input_value(0)}, {ctx.output_value(0)}, LowerContext::options(g.o));
    return;
  }
  const int in = ctx.transposed_value(ctx.input_value(0), {0, 2, 3, 4, 1}, "input_ndhwc");
  const int out = ctx.new_value(DType::kFloat32, g.out_ndhwc, "output_ndhwc");
  ctx.add_op(kCode, {in}, {out}, LowerContext::options(g.o));
  schema::TransposeOptionsT back;
  back.perm = {0, 4, 1, 2, 3};
  ctx.add_op(schema::OpCode::TRANSPOSE, {out}, {ctx.output_value(0)}, LowerContext::options(back));
}

// ---- MaxPoolWithArgmax ---------------------------------------------------------------------

struct ArgmaxPoolGeometry {
  schema::Pool2DOptionsT o;
  std::vector<int64_t> out;
};

ArgmaxPoolGeometry argmax_pool_geometry(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_rank(0, 4);
  const auto& in = ctx.input(0).shape;
  const std::vector<int64_t> k = window_attr(ctx, "ksize", 4), s = window_attr(ctx, "strides", 4);
  const std::string padding = attr_string(ctx.node().def, "padding", "");
  const WindowAxis h = window_axis(ctx, padding, in[1], k[1], s[1], 1);
  const WindowAxis w = window_axis(ctx, padding, in[2], k[2], s[2], 1);
  ArgmaxPoolGeometry g;
  g.out = {in[0], h.out, w.out, in[3]};
  g.o.filter_h = static_cast<int32_t>(k[1]);
  g.o.filter_w = static_cast<int32_t>(k[2]);
  g.o.stride_h = static_cast<int32_t>(s[1]);
  g.o.stride_w = static_cast<int32_t>(s[2]);
  g.o.pad_top = static_cast<int32_t>(h.pad_before);
  g.o.pad_left = static_cast<int32_t>(w.pad_before);
  g.o.include_batch_in_index = attr_bool(ctx.node().def, "include_batch_in_index", false);
  return g;
}

std::vector<TensorInfo> infer_max_pool_with_argmax(const NodeContext& ctx) {
  require_f32_input(ctx, 0);
  const ArgmaxPoolGeometry g = argmax_pool_geometry(ctx);
  const DType index = dtype_attr(ctx, "Targmax");
  if (index != DType::kInt64 && index != DType::kInt32) ctx.fail("Targmax must be int32 or int64");
  return {TensorInfo{DType::kFloat32, g.out, nullptr}, TensorInfo{index, g.out, nullptr}};
}

void lower_max_pool_with_argmax(LowerContext& ctx) {
  ctx.add_op(schema::OpCode::MAX_POOL_WITH_ARGMAX, {ctx.input_value(0)}, {ctx.output_value(0), ctx.output_value(1)},
             LowerContext::options(argmax_pool_geometry(ctx).o));
}

// ---- ImageProjectiveTransformV3 ------------------------------------------------------------

schema::ImageFillMode fill_mode(const NodeContext& ctx) {
  const std::string mode = attr_string(ctx.node().def, "fill_mode", "CONSTANT");
  if (mode == "CONSTANT") return schema::ImageFillMode::CONSTANT;
  if (mode == "REFLECT") return schema::ImageFillMode::REFLECT;
  if (mode == "WRAP") return schema::ImageFillMode::WRAP;
  if (mode == "NEAREST") return schema::ImageFillMode::NEAREST;
  ctx.fail("fill_mode '" + mode + "' is not supported (CONSTANT, REFLECT, WRAP or NEAREST)");
}

bool nearest_interpolation(const NodeContext& ctx) {
  const std::string mode = attr_string(ctx.node().def, "interpolation", "");
  if (mode != "NEAREST" && mode != "BILINEAR") ctx.fail("interpolation '" + mode + "' is not supported (NEAREST or BILINEAR)");
  return mode == "NEAREST";
}

std::vector<TensorInfo> infer_image_transform(const NodeContext& ctx) {
  ctx.expect_inputs(4, 4);
  ctx.expect_rank(0, 4);
  ctx.expect_rank(1, 2);
  require_f32_input(ctx, 0);
  const auto &in = ctx.input(0).shape, &t = ctx.input(1).shape;
  if (t[1] != 8 || (t[0] != 1 && t[0] != in[0])) {
    ctx.fail("transforms must be [1, 8] or [batch, 8], has " + shape_to_string(t));
  }
  const std::vector<int64_t> size = ctx.constant_ints(2, "output_shape");
  if (size.size() != 2 || size[0] <= 0 || size[1] <= 0) ctx.fail("output_shape must be 2 positive values");
  if (ctx.input(3).shape.size() > 1 || (ctx.input(3).shape.size() == 1 && ctx.input(3).shape[0] != 1)) {
    ctx.fail("fill_value must be a scalar");
  }
  fill_mode(ctx);
  nearest_interpolation(ctx);
  return {TensorInfo{DType::kFloat32, {in[0], size[0], size[1], in[3]}, nullptr}};
}

void lower_image_transform(LowerContext& ctx) {
  schema::ImageTransformOptionsT o;
  o.nearest = nearest_interpolation(ctx);
  o.fill_mode = fill_mode(ctx);
  ctx.add_op(schema::OpCode::IMAGE_PROJECTIVE_TRANSFORM,
             {ctx.input_value(0), f32_input(ctx, 1, "transforms"), f32_input(ctx, 3, "fill_value")},
             {ctx.output_value(0)}, LowerContext::options(o));
}

}  // namespace

namespace {
constexpr const char* kNmsDataDependentLength =
    "its output length depends on the data (0 to max_output_size): export it as NonMaxSuppressionV4/V5 with "
    "pad_to_max_output_size=True";
constexpr const char* kNmsUnpadded =
    "lowered with pad_to_max_output_size=True (indices padded to max_output_size, plus the valid count); "
    "refused without it: the output length would depend on the data";
}  // namespace

const std::vector<OpHandler>& image_handlers() {
  using schema::OpCode;
  static const std::vector<OpHandler> handlers = {
      {"CropAndResize", infer_crop_and_resize, lower_crop_and_resize},
      {"NonMaxSuppressionV2", infer_nms, lower_nms, false, kNmsDataDependentLength, true},
      {"NonMaxSuppressionV3", infer_nms, lower_nms, false, kNmsDataDependentLength, true},
      {"NonMaxSuppressionV4", infer_nms, lower_nms, false, kNmsUnpadded},
      {"NonMaxSuppressionV5", infer_nms, lower_nms, false, kNmsUnpadded},
      {"Dilation2D", infer_dilation2d, lower_dilation2d},
      {"MaxPool3D", infer_pool3d, lower_pool3d<OpCode::MAX_POOL3D>},
      {"AvgPool3D", infer_pool3d, lower_pool3d<OpCode::AVG_POOL3D>},
      {"MaxPoolWithArgmax", infer_max_pool_with_argmax, lower_max_pool_with_argmax},
      {"ImageProjectiveTransformV3", infer_image_transform, lower_image_transform},
  };
  return handlers;
}

}  // namespace floe::conv
