// SPDX-License-Identifier: Apache-2.0
// Layout TF ops: Transpose, Pad, PadV2, MirrorPad. Their permutation and
// paddings must be known at conversion time and become TransposeOptions /
// PadOptions. Any dtype lowers (the kernels move bytes); PadV2's constant for a
// non-float32 tensor travels as a one-element constant input of that dtype, and
// a constant_values that is fed or computed at run time as that input in the
// arena (Session.run pads with whatever value the tensor holds).
#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

std::vector<int32_t> permutation(const NodeContext& ctx) {
  const int64_t rank = static_cast<int64_t>(ctx.input(0).shape.size());
  const std::vector<int64_t> perm = ctx.constant_ints(1, "the permutation");
  if (static_cast<int64_t>(perm.size()) != rank) {
    ctx.fail("permutation has " + std::to_string(perm.size()) + " entries for an input of rank " +
             std::to_string(rank));
  }
  std::vector<int32_t> out;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t p : perm) {
    const int64_t a = p < 0 ? p + rank : p;  // TF accepts negative entries
    if (a < 0 || a >= rank || seen[static_cast<size_t>(a)]) {
      ctx.fail("permutation " + shape_to_string(perm) + " is not a permutation of [0, " +
               std::to_string(rank) + ")");
    }
    seen[static_cast<size_t>(a)] = true;
    out.push_back(static_cast<int32_t>(a));
  }
  return out;
}

std::vector<TensorInfo> infer_transpose(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const std::vector<int32_t> perm = permutation(ctx);
  std::vector<int64_t> shape;
  for (int32_t p : perm) shape.push_back(ctx.input(0).shape[static_cast<size_t>(p)]);
  return {TensorInfo{ctx.input(0).dtype, shape, nullptr}};
}

void lower_transpose(LowerContext& ctx) {
  schema::TransposeOptionsT options;
  options.perm = permutation(ctx);
  ctx.add_op(schema::OpCode::TRANSPOSE, {ctx.input_value(0)}, {ctx.output_value(0)},
             LowerContext::options(options));
}

schema::PadMode pad_mode(const NodeContext& ctx) {
  if (ctx.node().op() != "MirrorPad") return schema::PadMode::CONSTANT;
  const std::string mode = attr_string(ctx.node().def, "mode", "");
  if (mode == "REFLECT") return schema::PadMode::REFLECT;
  if (mode == "SYMMETRIC") return schema::PadMode::SYMMETRIC;
  ctx.fail("MirrorPad mode '" + mode + "' is not REFLECT or SYMMETRIC");
}

// [before_0, after_0, ...] from the [rank, 2] paddings input, checked like TF.
std::vector<int32_t> paddings(const NodeContext& ctx) {
  const std::vector<int64_t>& in = ctx.input(0).shape;
  const TensorInfo& p = ctx.input(1);
  if (p.shape.size() != 2 || p.shape[0] != static_cast<int64_t>(in.size()) || p.shape[1] != 2) {
    ctx.fail("paddings must have shape [" + std::to_string(in.size()) + ",2], has " +
             shape_to_string(p.shape));
  }
  const std::vector<int64_t> values = ctx.constant_ints(1, "the paddings");
  const schema::PadMode mode = pad_mode(ctx);
  std::vector<int32_t> out;
  for (size_t d = 0; d < in.size(); ++d) {
    for (int side = 0; side < 2; ++side) {
      const int64_t v = values[2 * d + static_cast<size_t>(side)];
      const int64_t limit = mode == schema::PadMode::REFLECT ? in[d] - 1 : in[d];
      if (v < 0 || v > (1 << 30)) ctx.fail("paddings must be non-negative, got " + shape_to_string(values));
      if (mode != schema::PadMode::CONSTANT && v > limit) {
        ctx.fail("MirrorPad " + std::string(mode == schema::PadMode::REFLECT ? "REFLECT" : "SYMMETRIC") +
                 " paddings must be <= " + std::to_string(limit) + " for dim " + std::to_string(d) +
                 " of size " + std::to_string(in[d]) + ", got " + std::to_string(v));
      }
      out.push_back(static_cast<int32_t>(v));
    }
  }
  return out;
}

std::vector<TensorInfo> infer_pad(const NodeContext& ctx) {
  const bool v2 = ctx.node().op() == "PadV2";
  ctx.expect_inputs(v2 ? 3 : 2, v2 ? 3 : 2);
  if (v2) {
    const TensorInfo& c = ctx.input(2);
    if (c.dtype != ctx.input(0).dtype || (c.shape.size() > 0 && c.shape != std::vector<int64_t>{1})) {
      ctx.fail("constant_values must be a scalar of the input's dtype");
    }
  }
  const std::vector<int32_t> pads = paddings(ctx);
  std::vector<int64_t> shape = ctx.input(0).shape;
  for (size_t d = 0; d < shape.size(); ++d) shape[d] += pads[2 * d] + pads[2 * d + 1];
  return {TensorInfo{ctx.input(0).dtype, shape, nullptr}};
}

void lower_pad(LowerContext& ctx) {
  schema::PadOptionsT options;
  options.paddings = paddings(ctx);
  options.mode = pad_mode(ctx);
  std::vector<int> inputs = {ctx.input_value(0)};
  if (ctx.node().op() == "PadV2") {
    const std::shared_ptr<const HostTensor>& value = ctx.input(2).value;
    if (value && value->dtype == DType::kFloat32) {
      options.constant_value = value->as<float>()[0];
    } else {
      // A non-float32 constant, or a value fed or computed at run time: the
      // kernel reads this element at Invoke and copies it as is.
      inputs.push_back(ctx.input_value(2));
    }
  }
  ctx.add_op(schema::OpCode::PAD, inputs, {ctx.output_value(0)}, LowerContext::options(options));
}

}  // namespace

const std::vector<OpHandler>& layout_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"Transpose", infer_transpose, lower_transpose},
      {"Pad", infer_pad, lower_pad},
      {"PadV2", infer_pad, lower_pad},
      {"MirrorPad", infer_pad, lower_pad},
  };
  return handlers;
}

}  // namespace floe::conv
