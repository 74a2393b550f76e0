// SPDX-License-Identifier: Apache-2.0
// NN TF ops added for op coverage: BatchMatMul/V2,
// Conv2DBackpropInput, LogSoftmax, TopKV2, Cumsum/Cumprod, FakeQuant*, the
// Resize* family, LRN, and the layout ops SpaceToBatchND / BatchToSpaceND /
// DepthToSpace / SpaceToDepth, which become PAD / RESHAPE / TRANSPOSE /
// STRIDED_SLICE sequences (no dedicated kernels: one definition each).
#include <algorithm>
#include <numeric>

#include "converter/frontend/graphdef/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

int64_t product(const std::vector<int64_t>& v, size_t begin = 0, size_t end = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = begin; i < v.size() && i < end; ++i) p *= v[i];
  return p;
}

int transposed(LowerContext& ctx, int value, const std::vector<int32_t>& perm, const std::string& suffix) {
  const Value& v = ctx.value_info(value);
  std::vector<int64_t> shape;
  for (int32_t p : perm) shape.push_back(v.shape[static_cast<size_t>(p)]);
  const int out = ctx.new_value(v.dtype, shape, suffix);
  schema::TransposeOptionsT o;
  o.perm = perm;
  ctx.add_op(schema::OpCode::TRANSPOSE, {value}, {out}, LowerContext::options(o));
  return out;
}

// ---- BatchMatMul ----------------------------------------------------------------------

std::vector<TensorInfo> infer_batch_matmul(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const auto &x = ctx.input(0).shape, &y = ctx.input(1).shape;
  if (x.size() < 2 || y.size() < 2) ctx.fail("operands need rank >= 2");
  const bool ax = attr_bool(ctx.node().def, "adj_x", false), ay = attr_bool(ctx.node().def, "adj_y", false);
  const int64_t m = ax ? x[x.size() - 1] : x[x.size() - 2], kx = ax ? x[x.size() - 2] : x[x.size() - 1];
  const int64_t ky = ay ? y[y.size() - 1] : y[y.size() - 2], n = ay ? y[y.size() - 2] : y[y.size() - 1];
  if (kx != ky) ctx.fail("inner dimensions differ: " + shape_to_string(x) + " x " + shape_to_string(y));
  std::vector<int64_t> xb(x.begin(), x.end() - 2), yb(y.begin(), y.end() - 2);
  if (ctx.node().op() == "BatchMatMul" && xb != yb) ctx.fail("BatchMatMul batch dims differ");
  std::vector<int64_t> out = broadcast_shapes(ctx, xb, yb);
  out.push_back(m);
  out.push_back(n);
  return {TensorInfo{ctx.input(0).dtype, out, nullptr}};
}

void lower_batch_matmul(LowerContext& ctx) {
  schema::BatchMatMulOptionsT o;
  o.adj_x = attr_bool(ctx.node().def, "adj_x", false);
  o.adj_y = attr_bool(ctx.node().def, "adj_y", false);
  ctx.add_op(schema::OpCode::BATCH_MATMUL, {ctx.input_value(0), ctx.input_value(1)}, {ctx.output_value(0)},
             LowerContext::options(o));
}

// ---- Conv2DBackpropInput ----------------------------------------------------------------

struct TConvGeometry {
  bool nchw = false;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, pad_top = 0, pad_left = 0;
  std::vector<int64_t> out_nhwc;
};

int64_t forward_pad(const NodeContext& ctx, const std::string& padding, int64_t in, int64_t k, int64_t s,
                    int64_t d, int64_t expected_out) {
  const int64_t eff = (k - 1) * d + 1;
  int64_t out = 0, before = 0;
  if (padding == "VALID") {
    out = in >= eff ? (in - eff) / s + 1 : 0;
  } else if (padding == "SAME") {
    out = (in + s - 1) / s;
    before = std::max<int64_t>((out - 1) * s + eff - in, 0) / 2;
  } else {
    ctx.fail("padding '" + padding + "' is not supported for Conv2DBackpropInput");
  }
  if (out != expected_out) {
    ctx.fail("input_sizes do not match out_backprop under " + padding + " padding");
  }
  return before;
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
  if (g.nchw) input = transposed(ctx, input, {0, 2, 3, 1}, "to_nhwc");
  const int out = g.nchw ? ctx.new_value(ctx.output_info(0).dtype, g.out_nhwc, "nhwc") : ctx.output_value(0);
  ctx.add_op(schema::OpCode::TRANSPOSE_CONV2D, {input, ctx.input_value(1)}, {out}, LowerContext::options(o));
  if (g.nchw) {
    schema::TransposeOptionsT t;
    t.perm = {0, 3, 1, 2};
    ctx.add_op(schema::OpCode::TRANSPOSE, {out}, {ctx.output_value(0)}, LowerContext::options(t));
  }
}

// ---- last-axis ops --------------------------------------------------------------------

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

std::vector<TensorInfo> infer_topk(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const auto& in = ctx.input(0).shape;
  if (in.empty()) ctx.fail("input must have rank >= 1");
  const int64_t k = ctx.constant_ints(1, "k")[0];
  if (k < 0 || k > in.back()) ctx.fail("k is out of range for the last dim");
  std::vector<int64_t> out = in;
  out.back() = k;
  return {TensorInfo{ctx.input(0).dtype, out, nullptr}, TensorInfo{DType::kInt32, out, nullptr}};
}

void lower_topk(LowerContext& ctx) {
  schema::TopKOptionsT o;
  o.sorted = attr_bool(ctx.node().def, "sorted", true);
  ctx.add_op(schema::OpCode::TOPK, {ctx.input_value(0)}, {ctx.output_value(0), ctx.output_value(1)},
             LowerContext::options(o));
}

std::vector<TensorInfo> infer_cumulative(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  normalize_axis(ctx, ctx.constant_ints(1, "axis")[0], static_cast<int64_t>(ctx.input(0).shape.size()));
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}

template <schema::OpCode kCode>
void lower_cumulative(LowerContext& ctx) {
  schema::CumulativeOptionsT o;
  o.axis = static_cast<int32_t>(
      normalize_axis(ctx, ctx.constant_ints(1, "axis")[0], static_cast<int64_t>(ctx.input(0).shape.size())));
  o.exclusive = attr_bool(ctx.node().def, "exclusive", false);
  o.reverse = attr_bool(ctx.node().def, "reverse", false);
  ctx.add_op(kCode, {ctx.input_value(0)}, {ctx.output_value(0)}, LowerContext::options(o));
}

// ---- fake quant -----------------------------------------------------------------------

std::vector<TensorInfo> infer_fake_quant(const NodeContext& ctx) {
  ctx.expect_inputs(ctx.node().op() == "FakeQuantWithMinMaxArgs" ? 1 : 3,
                    ctx.node().op() == "FakeQuantWithMinMaxArgs" ? 1 : 3);
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}

void lower_fake_quant(LowerContext& ctx) {
  const auto& def = ctx.node().def;
  schema::FakeQuantOptionsT o;
  o.num_bits = static_cast<int32_t>(attr_int(def, "num_bits", 8));
  o.narrow_range = attr_bool(def, "narrow_range", false);
  int lo, hi;
  if (ctx.node().op() == "FakeQuantWithMinMaxArgs") {
    auto scalar = [&](const char* name, float fallback) {
      HostTensor t;
      t.dtype = DType::kFloat32;
      t.shape = {};
      t.data.resize(4);
      *t.as<float>() = attr_float(def, name, fallback);
      return ctx.constant_value(name, std::move(t));
    };
    lo = scalar("min", -6.0f);
    hi = scalar("max", 6.0f);
  } else {
    lo = ctx.input_value(1);
    hi = ctx.input_value(2);
  }
  ctx.add_op(schema::OpCode::FAKE_QUANT, {ctx.input_value(0), lo, hi}, {ctx.output_value(0)},
             LowerContext::options(o));
}

// ---- resize ---------------------------------------------------------------------------

std::vector<TensorInfo> infer_resize(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_rank(0, 4);
  const std::vector<int64_t> size = ctx.constant_ints(1, "the output size");
  if (size.size() != 2 || size[0] < 0 || size[1] < 0) ctx.fail("size must be [height, width]");
  const auto& in = ctx.input(0).shape;
  // TF refuses it too ("input image must be of non-zero size"); the runtime's
  // prepare would reject the emitted op, so it must be said here.
  if ((in[1] == 0 || in[2] == 0) && in[0] * size[0] * size[1] * in[3] != 0) {
    ctx.fail("cannot resize an empty image: input " + shape_to_string(in) + " to " + std::to_string(size[0]) +
             "x" + std::to_string(size[1]));
  }
  const DType t = ctx.node().op() == "ResizeNearestNeighbor" ? ctx.input(0).dtype : DType::kFloat32;
  return {TensorInfo{t, {in[0], size[0], size[1], in[3]}, nullptr}};
}

template <schema::OpCode kCode>
void lower_resize(LowerContext& ctx) {
  schema::ResizeOptionsT o;
  o.align_corners = attr_bool(ctx.node().def, "align_corners", false);
  o.half_pixel_centers = attr_bool(ctx.node().def, "half_pixel_centers", false);
  int input = ctx.input_value(0);
  if (kCode != schema::OpCode::RESIZE_NEAREST && ctx.input(0).dtype != DType::kFloat32) {
    const int f = ctx.new_value(DType::kFloat32, ctx.input(0).shape, "as_float");
    ctx.add_op(schema::OpCode::CAST, {input}, {f});
    input = f;
  }
  ctx.add_op(kCode, {input}, {ctx.output_value(0)}, LowerContext::options(o));
}

// ---- space/batch/depth layout ops ---------------------------------------------------------

struct SpaceBatch {
  std::vector<int64_t> block;
  std::vector<std::pair<int64_t, int64_t>> pads;  // paddings or crops, per spatial dim
};

SpaceBatch space_batch(const NodeContext& ctx, const char* what) {
  ctx.expect_inputs(3, 3);
  SpaceBatch s;
  s.block = ctx.constant_ints(1, "block_shape");
  const std::vector<int64_t> p = ctx.constant_ints(2, what);
  if (p.size() != 2 * s.block.size()) ctx.fail(std::string(what) + " must be [M, 2]");
  for (size_t i = 0; i < s.block.size(); ++i) {
    if (s.block[i] < 1 || p[2 * i] < 0 || p[2 * i + 1] < 0) ctx.fail("bad block_shape or " + std::string(what));
    s.pads.push_back({p[2 * i], p[2 * i + 1]});
  }
  if (ctx.input(0).shape.size() < 1 + s.block.size()) ctx.fail("input rank is too small for block_shape");
  return s;
}

std::vector<TensorInfo> infer_space_to_batch(const NodeContext& ctx) {
  const SpaceBatch s = space_batch(ctx, "paddings");
  std::vector<int64_t> out = ctx.input(0).shape;
  for (size_t i = 0; i < s.block.size(); ++i) {
    const int64_t padded = out[i + 1] + s.pads[i].first + s.pads[i].second;
    if (padded % s.block[i] != 0) ctx.fail("padded spatial dim is not a multiple of the block");
    out[i + 1] = padded / s.block[i];
  }
  out[0] *= product(s.block);
  return {TensorInfo{ctx.input(0).dtype, out, nullptr}};
}

void lower_space_to_batch(LowerContext& ctx) {
  const SpaceBatch s = space_batch(ctx, "paddings");
  const auto& in = ctx.input(0).shape;
  const size_t m = s.block.size();
  int value = ctx.input_value(0);
  std::vector<int64_t> padded = in;
  bool any_pad = false;
  schema::PadOptionsT pad;
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t before = (d >= 1 && d <= m) ? s.pads[d - 1].first : 0;
    const int64_t after = (d >= 1 && d <= m) ? s.pads[d - 1].second : 0;
    pad.paddings.push_back(static_cast<int32_t>(before));
    pad.paddings.push_back(static_cast<int32_t>(after));
    padded[d] += before + after;
    any_pad = any_pad || before || after;
  }
  if (any_pad) {
    const int p = ctx.new_value(ctx.input(0).dtype, padded, "padded");
    ctx.add_op(schema::OpCode::PAD, {value}, {p}, LowerContext::options(pad));
    value = p;
  }
  // [N, S1/b1, b1, ..., SM/bM, bM, R...] -> [b1..bM, N, S1/b1..SM/bM, R...]
  std::vector<int64_t> split = {padded[0]};
  for (size_t i = 0; i < m; ++i) {
    split.push_back(padded[i + 1] / s.block[i]);
    split.push_back(s.block[i]);
  }
  for (size_t d = m + 1; d < padded.size(); ++d) split.push_back(padded[d]);
  value = ctx.reshaped_value(value, split, "blocks");
  std::vector<int32_t> perm;
  for (size_t i = 0; i < m; ++i) perm.push_back(static_cast<int32_t>(2 + 2 * i));
  perm.push_back(0);
  for (size_t i = 0; i < m; ++i) perm.push_back(static_cast<int32_t>(1 + 2 * i));
  for (size_t d = 1 + 2 * m; d < split.size(); ++d) perm.push_back(static_cast<int32_t>(d));
  value = transposed(ctx, value, perm, "blocks_first");
  const int out = ctx.output_value(0);
  ctx.add_op(schema::OpCode::RESHAPE, {value}, {out});
}

std::vector<TensorInfo> infer_batch_to_space(const NodeContext& ctx) {
  const SpaceBatch s = space_batch(ctx, "crops");
  std::vector<int64_t> out = ctx.input(0).shape;
  const int64_t blocks = product(s.block);
  if (out[0] % blocks != 0) ctx.fail("batch is not a multiple of the block size");
  out[0] /= blocks;
  for (size_t i = 0; i < s.block.size(); ++i) {
    out[i + 1] = out[i + 1] * s.block[i] - s.pads[i].first - s.pads[i].second;
    if (out[i + 1] < 0) ctx.fail("crops exceed the spatial size");
  }
  return {TensorInfo{ctx.input(0).dtype, out, nullptr}};
}

void lower_batch_to_space(LowerContext& ctx) {
  const SpaceBatch s = space_batch(ctx, "crops");
  const auto& in = ctx.input(0).shape;
  const size_t m = s.block.size();
  // [b1..bM, N', S1..SM, R...] -> [N', S1, b1, ..., SM, bM, R...] -> [N', S1*b1, ..., R...]
  std::vector<int64_t> split(s.block.begin(), s.block.end());
  split.push_back(in[0] / product(s.block));
  for (size_t d = 1; d < in.size(); ++d) split.push_back(in[d]);
  int value = ctx.reshaped_value(ctx.input_value(0), split, "blocks");
  std::vector<int32_t> perm = {static_cast<int32_t>(m)};
  for (size_t i = 0; i < m; ++i) {
    perm.push_back(static_cast<int32_t>(m + 1 + i));
    perm.push_back(static_cast<int32_t>(i));
  }
  for (size_t d = 2 * m + 1; d < split.size(); ++d) perm.push_back(static_cast<int32_t>(d));
  value = transposed(ctx, value, perm, "blocks_inner");
  std::vector<int64_t> merged = {split[m]};
  for (size_t i = 0; i < m; ++i) merged.push_back(in[i + 1] * s.block[i]);
  for (size_t d = m + 1; d < in.size(); ++d) merged.push_back(in[d]);
  bool crop = false;
  for (const auto& c : s.pads) crop = crop || c.first || c.second;
  if (!crop) {
    const int v = ctx.reshaped_value(value, merged, "merged");
    ctx.add_op(schema::OpCode::RESHAPE, {v}, {ctx.output_value(0)});
    return;
  }
  value = ctx.reshaped_value(value, merged, "merged");
  schema::StridedSliceOptionsT o;
  for (size_t d = 0; d < merged.size(); ++d) {
    const bool spatial = d >= 1 && d <= m;
    const int64_t count = ctx.output_info(0).shape[d];
    o.begin.push_back(static_cast<int32_t>(spatial && count > 0 ? s.pads[d - 1].first : 0));
    o.stride.push_back(1);
  }
  ctx.add_op(schema::OpCode::STRIDED_SLICE, {value}, {ctx.output_value(0)}, LowerContext::options(o));
}

int64_t block_size(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_rank(0, 4);
  if (attr_string(ctx.node().def, "data_format", "NHWC") != "NHWC") ctx.fail("only NHWC is supported");
  const int64_t b = attr_int(ctx.node().def, "block_size", 2);
  if (b < 2) ctx.fail("block_size must be >= 2");
  return b;
}

std::vector<TensorInfo> infer_depth_to_space(const NodeContext& ctx) {
  const int64_t b = block_size(ctx);
  const auto& in = ctx.input(0).shape;
  if (in[3] % (b * b) != 0) ctx.fail("depth is not a multiple of block_size^2");
  return {TensorInfo{ctx.input(0).dtype, {in[0], in[1] * b, in[2] * b, in[3] / (b * b)}, nullptr}};
}

void lower_depth_to_space(LowerContext& ctx) {
  const int64_t b = block_size(ctx);
  const auto& in = ctx.input(0).shape;
  int v = ctx.reshaped_value(ctx.input_value(0), {in[0], in[1], in[2], b, b, in[3] / (b * b)}, "split");
  v = transposed(ctx, v, {0, 1, 3, 2, 4, 5}, "interleaved");
  ctx.add_op(schema::OpCode::RESHAPE, {v}, {ctx.output_value(0)});
}

std::vector<TensorInfo> infer_space_to_depth(const NodeContext& ctx) {
  const int64_t b = block_size(ctx);
  const auto& in = ctx.input(0).shape;
  if (in[1] % b != 0 || in[2] % b != 0) ctx.fail("spatial dims are not multiples of block_size");
  return {TensorInfo{ctx.input(0).dtype, {in[0], in[1] / b, in[2] / b, in[3] * b * b}, nullptr}};
}

void lower_space_to_depth(LowerContext& ctx) {
  const int64_t b = block_size(ctx);
  const auto& in = ctx.input(0).shape;
  int v = ctx.reshaped_value(ctx.input_value(0), {in[0], in[1] / b, b, in[2] / b, b, in[3]}, "split");
  v = transposed(ctx, v, {0, 1, 3, 2, 4, 5}, "gathered");
  ctx.add_op(schema::OpCode::RESHAPE, {v}, {ctx.output_value(0)});
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
  int64_t out_hw[2], pad[2];
  for (int a = 0; a < 2; ++a) {
    const int64_t size = in[static_cast<size_t>(a + 1)], kk = k[static_cast<size_t>(a + 1)],
                  st = s[static_cast<size_t>(a + 1)], rt = r[static_cast<size_t>(a + 1)];
    if (kk < 1 || st < 1 || rt < 1) ctx.fail("ksizes/strides/rates must be >= 1");
    const int64_t eff = (kk - 1) * rt + 1;
    if (padding == "VALID") {
      out_hw[a] = size >= eff ? (size - eff) / st + 1 : 0;
      pad[a] = 0;
    } else if (padding == "SAME") {
      out_hw[a] = (size + st - 1) / st;
      pad[a] = std::max<int64_t>((out_hw[a] - 1) * st + eff - size, 0) / 2;
    } else {
      ctx.fail("unknown padding " + padding);
    }
  }
  g.o.size_h = static_cast<int32_t>(k[1]);
  g.o.size_w = static_cast<int32_t>(k[2]);
  g.o.stride_h = static_cast<int32_t>(s[1]);
  g.o.stride_w = static_cast<int32_t>(s[2]);
  g.o.rate_h = static_cast<int32_t>(r[1]);
  g.o.rate_w = static_cast<int32_t>(r[2]);
  g.o.pad_top = static_cast<int32_t>(pad[0]);
  g.o.pad_left = static_cast<int32_t>(pad[1]);
  g.out = {in[0], out_hw[0], out_hw[1], k[1] * k[2] * in[3]};
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
  Conv3DGeometry g;
  g.out = {in[0], 0, 0, 0, f[4]};
  int64_t pad[3];
  for (int a = 0; a < 3; ++a) {
    const int64_t size = in[static_cast<size_t>(a + 1)], k = f[static_cast<size_t>(a)];
    const int64_t st = s[static_cast<size_t>(a + 1)], dl = d[static_cast<size_t>(a + 1)];
    if (st < 1 || dl < 1) ctx.fail("strides/dilations must be >= 1");
    const int64_t eff = (k - 1) * dl + 1;
    int64_t out = 0;
    pad[a] = 0;
    if (padding == "VALID") {
      out = size >= eff ? (size - eff) / st + 1 : 0;
    } else if (padding == "SAME") {
      out = (size + st - 1) / st;
      pad[a] = std::max<int64_t>((out - 1) * st + eff - size, 0) / 2;
    } else {
      ctx.fail("unknown padding " + padding);
    }
    g.out[static_cast<size_t>(a + 1)] = out;
  }
  g.o.stride_d = static_cast<int32_t>(s[1]);
  g.o.stride_h = static_cast<int32_t>(s[2]);
  g.o.stride_w = static_cast<int32_t>(s[3]);
  g.o.dilation_d = static_cast<int32_t>(d[1]);
  g.o.dilation_h = static_cast<int32_t>(d[2]);
  g.o.dilation_w = static_cast<int32_t>(d[3]);
  g.o.pad_front = static_cast<int32_t>(pad[0]);
  g.o.pad_top = static_cast<int32_t>(pad[1]);
  g.o.pad_left = static_cast<int32_t>(pad[2]);
  return g;
}

std::vector<TensorInfo> infer_conv3d(const NodeContext& ctx) {
  return {TensorInfo{ctx.input(0).dtype, conv3d_geometry(ctx).out, nullptr}};
}

void lower_conv3d(LowerContext& ctx) {
  ctx.add_op(schema::OpCode::CONV3D, {ctx.input_value(0), ctx.input_value(1)}, {ctx.output_value(0)},
             LowerContext::options(conv3d_geometry(ctx).o));
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

}  // namespace

const std::vector<OpHandler>& nn_extra_handlers() {
  using schema::OpCode;
  static const std::vector<OpHandler> handlers = {
      {"BatchMatMul", infer_batch_matmul, lower_batch_matmul},
      {"BatchMatMulV2", infer_batch_matmul, lower_batch_matmul},
      {"Conv2DBackpropInput", infer_tconv, lower_tconv},
      {"LogSoftmax", infer_same1, lower_log_softmax},
      {"LRN", infer_same1, lower_lrn},
      {"TopKV2", infer_topk, lower_topk},
      {"Cumsum", infer_cumulative, lower_cumulative<OpCode::CUMSUM>},
      {"Cumprod", infer_cumulative, lower_cumulative<OpCode::CUMPROD>},
      {"FakeQuantWithMinMaxArgs", infer_fake_quant, lower_fake_quant},
      {"FakeQuantWithMinMaxVars", infer_fake_quant, lower_fake_quant},
      {"FakeQuantWithMinMaxVarsPerChannel", infer_fake_quant, lower_fake_quant},
      {"ResizeBilinear", infer_resize, lower_resize<OpCode::RESIZE_BILINEAR>},
      {"ResizeNearestNeighbor", infer_resize, lower_resize<OpCode::RESIZE_NEAREST>},
      {"ResizeBicubic", infer_resize, lower_resize<OpCode::RESIZE_BICUBIC>},
      {"ResizeArea", infer_resize, lower_resize<OpCode::RESIZE_AREA>},
      {"SpaceToBatchND", infer_space_to_batch, lower_space_to_batch},
      {"BatchToSpaceND", infer_batch_to_space, lower_batch_to_space},
      {"DepthToSpace", infer_depth_to_space, lower_depth_to_space},
      {"SpaceToDepth", infer_space_to_depth, lower_space_to_depth},
      {"ExtractImagePatches", infer_patches, lower_patches},
      {"SoftmaxCrossEntropyWithLogits", infer_xent, lower_xent},
      {"Conv3D", infer_conv3d, lower_conv3d},
  };
  return handlers;
}

}  // namespace floe::conv
