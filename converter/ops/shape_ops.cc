// SPDX-License-Identifier: Apache-2.0
// Shape-changing TF ops: Reshape, Squeeze, ExpandDims (all a byte copy with a
// new shape), ConcatV2, and the Mean reduction. Shape arguments must be known
// at conversion time: the converter resolves every shape.
#include <algorithm>

#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"
#include "schemas/contract/limits.h"

namespace floe::conv {

namespace {

// Reshaping a constant needs no kernel: same bytes, new shape.
TensorInfo with_shape(const TensorInfo& input, std::vector<int64_t> shape) {
  TensorInfo out{input.dtype, std::move(shape), nullptr};
  if (input.value) {
    auto value = std::make_shared<HostTensor>(*input.value);
    value->shape = out.shape;
    out.value = std::move(value);
  }
  return out;
}

std::vector<TensorInfo> infer_reshape(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  std::vector<int64_t> shape = ctx.constant_ints(1, "the target shape");
  const int64_t total = element_count(ctx.input(0).shape);
  int64_t known = 1;
  int unknown = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (unknown >= 0) ctx.fail("target shape " + shape_to_string(shape) + " has two -1 dims");
      unknown = static_cast<int>(i);
    } else if (shape[i] < 0) {
      ctx.fail("target shape " + shape_to_string(shape) + " has a negative dim");
    } else {
      known *= shape[i];
    }
  }
  if (unknown >= 0) {
    if (known == 0 || total % known != 0) {
      ctx.fail("cannot reshape " + shape_to_string(ctx.input(0).shape) + " into " +
               shape_to_string(shape));
    }
    shape[static_cast<size_t>(unknown)] = total / known;
  } else if (known != total) {
    ctx.fail("cannot reshape " + shape_to_string(ctx.input(0).shape) + " (" +
             std::to_string(total) + " elements) into " + shape_to_string(shape));
  }
  return {with_shape(ctx.input(0), shape)};
}

std::vector<TensorInfo> infer_squeeze(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  const auto& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> dims = attr_ints(ctx.node().def, "squeeze_dims", {});
  if (dims.empty()) dims = attr_ints(ctx.node().def, "axis", {});
  std::vector<bool> drop(in.size(), false);
  if (dims.empty()) {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  } else {
    for (int64_t d : dims) {
      const int64_t a = normalize_axis(ctx, d, rank);
      if (in[static_cast<size_t>(a)] != 1) {
        ctx.fail("cannot squeeze dim " + std::to_string(d) + " of " + shape_to_string(in) +
                 ": its size is not 1");
      }
      drop[static_cast<size_t>(a)] = true;
    }
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!drop[i]) out.push_back(in[i]);
  }
  return {with_shape(ctx.input(0), out)};
}

std::vector<TensorInfo> infer_expand_dims(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const std::vector<int64_t> dim = ctx.constant_ints(1, "the dim argument");
  if (dim.size() != 1) ctx.fail("dim must hold exactly one value");
  std::vector<int64_t> shape = ctx.input(0).shape;
  const int64_t axis = normalize_axis(ctx, dim[0], static_cast<int64_t>(shape.size()) + 1);
  shape.insert(shape.begin() + axis, 1);
  return {with_shape(ctx.input(0), shape)};
}

void lower_reshape(LowerContext& ctx) {
  ctx.add_op(schema::OpCode::RESHAPE, {ctx.input_value(0)}, {ctx.output_value(0)});
}

// ConcatV2 takes the axis last, Concat (V1) first: `first` is the values'
// first input, `n` their count, `axis_input` the axis'.
struct ConcatInputs {
  int first, n, axis_input;
};
ConcatInputs concat_inputs(const NodeContext& ctx) {
  if (ctx.input_count() < 2) ctx.fail("concat needs at least one value and an axis");
  const int n = ctx.input_count() - 1;
  return ctx.node().op() == "Concat" ? ConcatInputs{1, n, 0} : ConcatInputs{0, n, n};
}

std::vector<TensorInfo> infer_concat(const NodeContext& ctx) {
  const ConcatInputs c = concat_inputs(ctx);
  const int n = c.n;
  const std::vector<int64_t> axis_v = ctx.constant_ints(c.axis_input, "the concat axis");
  if (axis_v.size() != 1) ctx.fail("axis must be a scalar");
  const TensorInfo& first = ctx.input(c.first);
  std::vector<int64_t> shape = first.shape;
  const int64_t axis = normalize_axis(ctx, axis_v[0], static_cast<int64_t>(shape.size()));
  int64_t total = 0;
  for (int i = c.first; i < c.first + n; ++i) {
    const TensorInfo& in = ctx.input(i);
    if (in.dtype != first.dtype || in.shape.size() != shape.size()) {
      ctx.fail("input " + std::to_string(i) + " differs in dtype or rank");
    }
    for (size_t d = 0; d < shape.size(); ++d) {
      if (static_cast<int64_t>(d) != axis && in.shape[d] != shape[d]) {
        ctx.fail("input " + std::to_string(i) + " shape " + shape_to_string(in.shape) +
                 " differs from " + shape_to_string(shape) + " off the concat axis");
      }
    }
    total += in.shape[static_cast<size_t>(axis)];
  }
  shape[static_cast<size_t>(axis)] = total;
  return {TensorInfo{first.dtype, shape, nullptr}};
}

void lower_concat(LowerContext& ctx) {
  const ConcatInputs c = concat_inputs(ctx);
  if (c.n > kMaxConcatInputs) ctx.fail("concat of more than " + std::to_string(kMaxConcatInputs) + " tensors is not supported yet");
  const int32_t axis = static_cast<int32_t>(normalize_axis(
      ctx, ctx.constant_ints(c.axis_input, "the concat axis")[0],
      static_cast<int64_t>(ctx.input(c.first).shape.size())));
  std::vector<int> inputs;
  for (int i = c.first; i < c.first + c.n; ++i) inputs.push_back(ctx.input_value(i));
  schema::ConcatOptionsT options;
  options.axis = axis;
  ctx.add_op(schema::OpCode::CONCAT, inputs, {ctx.output_value(0)}, LowerContext::options(options));
}

// BroadcastArgs(s0, s1): the broadcast of two shapes. Shapes are static in
// floe, so both are known and the result is folded.
std::vector<TensorInfo> infer_broadcast_args(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const std::vector<int64_t> a = ctx.constant_ints(0, "shape s0");
  const std::vector<int64_t> b = ctx.constant_ints(1, "shape s1");
  const std::vector<int64_t> out = broadcast_shapes(ctx, a, b);
  auto t = std::make_shared<HostTensor>();
  t->dtype = ctx.input(0).dtype;
  t->shape = {static_cast<int64_t>(out.size())};
  t->data.resize(out.size() * dtype_size(t->dtype));
  for (size_t i = 0; i < out.size(); ++i) {
    if (t->dtype == DType::kInt32) t->as<int32_t>()[i] = static_cast<int32_t>(out[i]);
    else t->as<int64_t>()[i] = out[i];
  }
  return {TensorInfo::of(std::move(t))};
}

void lower_mean(LowerContext& ctx) {
  const std::vector<int32_t> axes = reduction_axes(ctx);
  if (axes.empty()) {  // Mean over no axes is the identity.
    lower_reshape(ctx);
    return;
  }
  schema::ReduceOptionsT options;
  options.axes = axes;
  ctx.add_op(schema::OpCode::MEAN, {ctx.input_value(0)}, {ctx.output_value(0)}, LowerContext::options(options));
}

}  // namespace

const std::vector<OpHandler>& shape_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"Reshape", infer_reshape, lower_reshape},
      {"Squeeze", infer_squeeze, lower_reshape},
      {"ExpandDims", infer_expand_dims, lower_reshape},
      {"ConcatV2", infer_concat, lower_concat},
      {"Concat", infer_concat, lower_concat},
      {"BroadcastArgs", infer_broadcast_args, nullptr},
      {"Mean", infer_reduction, lower_mean},
  };
  return handlers;
}

}  // namespace floe::conv
