// SPDX-License-Identifier: Apache-2.0
// GatherV2 / Gather (axis, batch_dims), GatherNd, OneHot. (Ops whose output
// shape depends on index values live in index_ops.cc.)
#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

struct GatherGeometry {
  int64_t axis = 0, batch_dims = 0;
};

GatherGeometry gather_geometry(const NodeContext& ctx) {
  GatherGeometry g;
  const int64_t rank = static_cast<int64_t>(ctx.input(0).shape.size());
  const int64_t idx_rank = static_cast<int64_t>(ctx.input(1).shape.size());
  if (ctx.node().op() == "GatherV2") {
    ctx.expect_inputs(3, 3);
    g.axis = normalize_axis(ctx, ctx.constant_ints(2, "the gather axis")[0], rank);
    g.batch_dims = attr_int(ctx.node().def, "batch_dims", 0);
    if (g.batch_dims < 0) g.batch_dims += idx_rank;
  } else {
    ctx.expect_inputs(2, 2);
  }
  if (g.batch_dims < 0 || g.batch_dims > g.axis) ctx.fail("batch_dims out of range");
  return g;
}

std::vector<TensorInfo> infer_gather(const NodeContext& ctx) {
  const GatherGeometry g = gather_geometry(ctx);
  const auto &p = ctx.input(0).shape, &idx = ctx.input(1).shape;
  std::vector<int64_t> out(p.begin(), p.begin() + g.axis);
  out.insert(out.end(), idx.begin() + g.batch_dims, idx.end());
  out.insert(out.end(), p.begin() + g.axis + 1, p.end());
  return {TensorInfo{ctx.input(0).dtype, out, nullptr}};
}

void lower_gather(LowerContext& ctx) {
  const GatherGeometry g = gather_geometry(ctx);
  schema::GatherOptionsT o;
  o.axis = static_cast<int32_t>(g.axis);
  o.batch_dims = static_cast<int32_t>(g.batch_dims);
  ctx.add_op(schema::OpCode::GATHER, {ctx.input_value(0), ctx.input_value(1)}, {ctx.output_value(0)},
             LowerContext::options(o));
}

std::vector<TensorInfo> infer_gather_nd(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const auto &p = ctx.input(0).shape, &idx = ctx.input(1).shape;
  if (idx.empty() || idx.back() > static_cast<int64_t>(p.size())) ctx.fail("index depth exceeds params rank");
  std::vector<int64_t> out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), p.begin() + idx.back(), p.end());
  return {TensorInfo{ctx.input(0).dtype, out, nullptr}};
}
void lower_gather_nd(LowerContext& ctx) {
  ctx.add_op(schema::OpCode::GATHER_ND, {ctx.input_value(0), ctx.input_value(1)}, {ctx.output_value(0)});
}

std::vector<TensorInfo> infer_one_hot(const NodeContext& ctx) {
  ctx.expect_inputs(4, 4);
  const int64_t depth = ctx.constant_ints(1, "OneHot depth")[0];
  const auto& idx = ctx.input(0).shape;
  int64_t axis = attr_int(ctx.node().def, "axis", -1);
  if (axis == -1) axis = static_cast<int64_t>(idx.size());
  if (depth < 0 || axis < 0 || axis > static_cast<int64_t>(idx.size())) ctx.fail("bad depth or axis");
  std::vector<int64_t> out = idx;
  out.insert(out.begin() + axis, depth);
  return {TensorInfo{ctx.input(2).dtype, out, nullptr}};
}
void lower_one_hot(LowerContext& ctx) {
  schema::OneHotOptionsT o;
  int64_t axis = attr_int(ctx.node().def, "axis", -1);
  if (axis == -1) axis = static_cast<int64_t>(ctx.input(0).shape.size());
  o.axis = static_cast<int32_t>(axis);
  ctx.add_op(schema::OpCode::ONE_HOT, {ctx.input_value(0), ctx.input_value(2), ctx.input_value(3)},
             {ctx.output_value(0)}, LowerContext::options(o));
}

}  // namespace

const std::vector<OpHandler>& gather_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"GatherV2", infer_gather, lower_gather},
      {"Gather", infer_gather, lower_gather},
      {"GatherNd", infer_gather_nd, lower_gather_nd},
      {"OneHot", infer_one_hot, lower_one_hot},
  };
  return handlers;
}

}  // namespace floe::conv
