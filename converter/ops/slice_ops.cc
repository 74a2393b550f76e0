// SPDX-License-Identifier: Apache-2.0
// Slicing and its inverses: Slice, StridedSlice (every mask), Split, SplitV,
// Unpack, Pack, Tile, ReverseV2. Slicing variants all become one STRIDED_SLICE
// kernel with per-dim begin/stride, plus a RESHAPE for inserted or removed
// dims; Pack is one CONCAT of reshaped inputs.
#include <algorithm>

#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"
#include "converter/ops/strided_slice_spec.h"
#include "schemas/contract/limits.h"

namespace floe::conv {
namespace {

void emit_slice(LowerContext& ctx, int input, const SliceSpec& s, int output, const std::string& suffix) {
  schema::StridedSliceOptionsT o;
  o.begin = s.begin;
  o.stride = s.stride;
  if (s.counts == s.final_shape) {
    ctx.add_op(schema::OpCode::STRIDED_SLICE, {input}, {output}, LowerContext::options(o));
    return;
  }
  const int mid = ctx.new_value(ctx.value_info(input).dtype, s.counts, suffix);
  ctx.add_op(schema::OpCode::STRIDED_SLICE, {input}, {mid}, LowerContext::options(o));
  ctx.add_op(schema::OpCode::RESHAPE, {mid}, {output});
}

SliceSpec strided_slice_spec(const NodeContext& ctx) {
  ctx.expect_inputs(4, 4);
  const auto& def = ctx.node().def;
  StridedSliceMasks masks;
  masks.begin = attr_int(def, "begin_mask", 0);
  masks.end = attr_int(def, "end_mask", 0);
  masks.ellipsis = attr_int(def, "ellipsis_mask", 0);
  masks.new_axis = attr_int(def, "new_axis_mask", 0);
  masks.shrink = attr_int(def, "shrink_axis_mask", 0);
  SliceSpec s;
  const std::string error = resolve_strided_slice(
      ctx.input(0).shape, ctx.constant_ints(1, "StridedSlice begin"), ctx.constant_ints(2, "StridedSlice end"),
      ctx.constant_ints(3, "StridedSlice strides"), masks, &s);
  if (!error.empty()) ctx.fail("StridedSlice " + error);
  return s;
}

std::vector<TensorInfo> infer_strided_slice(const NodeContext& ctx) {
  return {TensorInfo{ctx.input(0).dtype, strided_slice_spec(ctx).final_shape, nullptr}};
}
void lower_strided_slice(LowerContext& ctx) {
  emit_slice(ctx, ctx.input_value(0), strided_slice_spec(ctx), ctx.output_value(0), "slice");
}

SliceSpec slice_spec(const NodeContext& ctx) {
  ctx.expect_inputs(3, 3);
  const auto& in = ctx.input(0).shape;
  const std::vector<int64_t> begin = ctx.constant_ints(1, "Slice begin");
  const std::vector<int64_t> size = ctx.constant_ints(2, "Slice size");
  if (begin.size() != in.size() || size.size() != in.size()) ctx.fail("begin/size must have one value per dim");
  SliceSpec s;
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t count = size[d] == -1 ? in[d] - begin[d] : size[d];
    if (begin[d] < 0 || count < 0 || begin[d] + count > in[d]) ctx.fail("Slice window leaves the input");
    s.begin.push_back(static_cast<int32_t>(count > 0 ? begin[d] : 0));
    s.stride.push_back(1);
    s.counts.push_back(count);
  }
  s.final_shape = s.counts;
  return s;
}

std::vector<TensorInfo> infer_slice(const NodeContext& ctx) {
  return {TensorInfo{ctx.input(0).dtype, slice_spec(ctx).counts, nullptr}};
}
void lower_slice(LowerContext& ctx) {
  emit_slice(ctx, ctx.input_value(0), slice_spec(ctx), ctx.output_value(0), "slice");
}

// Split / SplitV / Unpack: consecutive pieces along one axis.
struct Pieces {
  int value_input = 0;
  int64_t axis = 0;
  std::vector<int64_t> sizes;
  bool squeeze = false;  // Unpack drops the axis
};

Pieces pieces_of(const NodeContext& ctx) {
  Pieces p;
  const std::string& op = ctx.node().op();
  if (op == "Split") {
    ctx.expect_inputs(2, 2);
    p.value_input = 1;
    const auto& in = ctx.input(1).shape;
    p.axis = normalize_axis(ctx, ctx.constant_ints(0, "the split axis")[0], static_cast<int64_t>(in.size()));
    const int64_t num = attr_int(ctx.node().def, "num_split", 1);
    const int64_t dim = in[static_cast<size_t>(p.axis)];
    if (num < 1 || dim % num != 0) ctx.fail("cannot split dim " + std::to_string(dim) + " into " + std::to_string(num));
    p.sizes.assign(static_cast<size_t>(num), dim / num);
  } else if (op == "SplitV") {
    ctx.expect_inputs(3, 3);
    const auto& in = ctx.input(0).shape;
    p.axis = normalize_axis(ctx, ctx.constant_ints(2, "the split axis")[0], static_cast<int64_t>(in.size()));
    p.sizes = ctx.constant_ints(1, "size_splits");
    const int64_t dim = in[static_cast<size_t>(p.axis)];
    int64_t known = 0, unknown = -1;
    for (size_t i = 0; i < p.sizes.size(); ++i) {
      if (p.sizes[i] == -1) {
        unknown = static_cast<int64_t>(i);
      } else {
        known += p.sizes[i];
      }
    }
    if (unknown >= 0) p.sizes[static_cast<size_t>(unknown)] = dim - known;
    int64_t total = 0;
    for (int64_t s : p.sizes) total += s;
    if (total != dim) ctx.fail("size_splits do not add up to the dim");
  } else {  // Unpack
    ctx.expect_inputs(1, 1);
    const auto& in = ctx.input(0).shape;
    p.axis = normalize_axis(ctx, attr_int(ctx.node().def, "axis", 0), static_cast<int64_t>(in.size()));
    p.sizes.assign(static_cast<size_t>(in[static_cast<size_t>(p.axis)]), 1);
    p.squeeze = true;
  }
  return p;
}

std::vector<TensorInfo> infer_pieces(const NodeContext& ctx) {
  const Pieces p = pieces_of(ctx);
  const TensorInfo& in = ctx.input(p.value_input);
  std::vector<TensorInfo> out;
  for (int64_t size : p.sizes) {
    std::vector<int64_t> shape = in.shape;
    if (p.squeeze) {
      shape.erase(shape.begin() + p.axis);
    } else {
      shape[static_cast<size_t>(p.axis)] = size;
    }
    out.push_back(TensorInfo{in.dtype, shape, nullptr});
  }
  return out;
}

void lower_pieces(LowerContext& ctx) {
  const Pieces p = pieces_of(ctx);
  const TensorInfo& in = ctx.input(p.value_input);
  const int value = ctx.input_value(p.value_input);
  int64_t offset = 0;
  for (size_t i = 0; i < p.sizes.size(); ++i) {
    SliceSpec s;
    for (size_t d = 0; d < in.shape.size(); ++d) {
      const bool on_axis = static_cast<int64_t>(d) == p.axis;
      s.begin.push_back(static_cast<int32_t>(on_axis && p.sizes[i] > 0 ? offset : 0));
      s.stride.push_back(1);
      s.counts.push_back(on_axis ? p.sizes[i] : in.shape[d]);
    }
    s.final_shape = ctx.output_info(static_cast<int>(i)).shape;
    emit_slice(ctx, value, s, ctx.output_value(static_cast<int>(i)), "piece_" + std::to_string(i));
    offset += p.sizes[i];
  }
}

// Pack: each input gets the new axis (reshape), then one CONCAT.
std::vector<TensorInfo> infer_pack(const NodeContext& ctx) {
  if (ctx.input_count() < 1) ctx.fail("Pack needs inputs");
  const TensorInfo& first = ctx.input(0);
  for (int i = 1; i < ctx.input_count(); ++i) {
    if (ctx.input(i).shape != first.shape || ctx.input(i).dtype != first.dtype) ctx.fail("Pack inputs differ");
  }
  const int64_t axis =
      normalize_axis(ctx, attr_int(ctx.node().def, "axis", 0), static_cast<int64_t>(first.shape.size()) + 1);
  std::vector<int64_t> shape = first.shape;
  shape.insert(shape.begin() + axis, ctx.input_count());
  return {TensorInfo{first.dtype, shape, nullptr}};
}

void lower_pack(LowerContext& ctx) {
  const int n = ctx.input_count();
  if (n > kMaxConcatInputs) ctx.fail("Pack of more than " + std::to_string(kMaxConcatInputs) + " tensors is not supported yet");
  const int64_t axis = normalize_axis(ctx, attr_int(ctx.node().def, "axis", 0),
                                      static_cast<int64_t>(ctx.input(0).shape.size()) + 1);
  std::vector<int64_t> piece = ctx.input(0).shape;
  piece.insert(piece.begin() + axis, 1);
  std::vector<int> inputs;
  for (int i = 0; i < n; ++i) inputs.push_back(ctx.reshaped_value(ctx.input_value(i), piece, "item_" + std::to_string(i)));
  schema::ConcatOptionsT o;
  o.axis = static_cast<int32_t>(axis);
  ctx.add_op(schema::OpCode::CONCAT, inputs, {ctx.output_value(0)}, LowerContext::options(o));
}

std::vector<TensorInfo> infer_tile(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const std::vector<int64_t> m = ctx.constant_ints(1, "Tile multiples");
  std::vector<int64_t> shape = ctx.input(0).shape;
  if (m.size() != shape.size()) ctx.fail("multiples must have one value per dim");
  for (size_t d = 0; d < shape.size(); ++d) {
    if (m[d] < 0) ctx.fail("negative multiple");
    shape[d] *= m[d];
  }
  return {TensorInfo{ctx.input(0).dtype, shape, nullptr}};
}
void lower_tile(LowerContext& ctx) { ctx.add_op(schema::OpCode::TILE, {ctx.input_value(0)}, {ctx.output_value(0)}); }

std::vector<TensorInfo> infer_reverse(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}
// Reverses input 0 along `axes` (non-negative) with one negative-stride slice.
void emit_reverse(LowerContext& ctx, const std::vector<size_t>& axes) {
  const auto& in = ctx.input(0).shape;
  SliceSpec s;
  s.counts = in;
  s.final_shape = in;
  s.begin.assign(in.size(), 0);
  s.stride.assign(in.size(), 1);
  for (size_t d : axes) {
    s.begin[d] = static_cast<int32_t>(in[d] > 0 ? in[d] - 1 : 0);
    s.stride[d] = -1;
  }
  emit_slice(ctx, ctx.input_value(0), s, ctx.output_value(0), "reverse");
}
void lower_reverse(LowerContext& ctx) {
  std::vector<size_t> axes;
  for (int64_t a : ctx.constant_ints(1, "ReverseV2 axes")) {
    axes.push_back(static_cast<size_t>(normalize_axis(ctx, a, static_cast<int64_t>(ctx.input(0).shape.size()))));
  }
  emit_reverse(ctx, axes);
}

// Reverse (V1): one bool per dim says whether to reverse it.
std::vector<size_t> reverse_v1_axes(const NodeContext& ctx) {
  const HostTensor& dims = ctx.constant_input(1, "Reverse dims");
  const size_t rank = ctx.input(0).shape.size();
  if (dims.dtype != DType::kBool || static_cast<size_t>(dims.num_elements()) != rank) {
    ctx.fail("dims must be a bool vector with one value per dim of input 0 (rank " + std::to_string(rank) +
             "), got " + dtype_name(dims.dtype) + " " + shape_to_string(dims.shape));
  }
  std::vector<size_t> axes;
  for (size_t d = 0; d < rank; ++d) {
    if (dims.as<uint8_t>()[d] != 0) axes.push_back(d);
  }
  return axes;
}
std::vector<TensorInfo> infer_reverse_v1(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  reverse_v1_axes(ctx);
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}
void lower_reverse_v1(LowerContext& ctx) { emit_reverse(ctx, reverse_v1_axes(ctx)); }

}  // namespace

const std::vector<OpHandler>& slice_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"StridedSlice", infer_strided_slice, lower_strided_slice},
      {"Slice", infer_slice, lower_slice},
      {"Split", infer_pieces, lower_pieces},
      {"SplitV", infer_pieces, lower_pieces},
      {"Unpack", infer_pieces, lower_pieces},
      {"Pack", infer_pack, lower_pack},
      {"Tile", infer_tile, lower_tile},
      {"ReverseV2", infer_reverse, lower_reverse},
      {"Reverse", infer_reverse_v1, lower_reverse_v1},
  };
  return handlers;
}

}  // namespace floe::conv
