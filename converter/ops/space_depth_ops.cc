// SPDX-License-Identifier: Apache-2.0
// SpaceToBatchND / BatchToSpaceND / DepthToSpace / SpaceToDepth: no kernels of
// their own, each becomes a PAD / RESHAPE / TRANSPOSE / STRIDED_SLICE sequence.
#include <numeric>

#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

int64_t product(const std::vector<int64_t>& v, size_t begin = 0, size_t end = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = begin; i < v.size() && i < end; ++i) p *= v[i];
  return p;
}

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
  value = ctx.transposed_value(value, perm, "blocks_first");
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
  value = ctx.transposed_value(value, perm, "blocks_inner");
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
  v = ctx.transposed_value(v, {0, 1, 3, 2, 4, 5}, "interleaved");
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
  v = ctx.transposed_value(v, {0, 1, 3, 2, 4, 5}, "gathered");
  ctx.add_op(schema::OpCode::RESHAPE, {v}, {ctx.output_value(0)});
}

}  // namespace

const std::vector<OpHandler>& space_depth_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"SpaceToBatchND", infer_space_to_batch, lower_space_to_batch},
      {"BatchToSpaceND", infer_batch_to_space, lower_batch_to_space},
      {"DepthToSpace", infer_depth_to_space, lower_depth_to_space},
      {"SpaceToDepth", infer_space_to_depth, lower_space_to_depth},
  };
  return handlers;
}

}  // namespace floe::conv
