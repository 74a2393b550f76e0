// SPDX-License-Identifier: Apache-2.0
// BatchMatMul / BatchMatMulV2: one BATCH_MATMUL op (adjoints as options; V2
// broadcasts the batch dims).
#include "converter/frontend/graphdef/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

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

}  // namespace

const std::vector<OpHandler>& batch_matmul_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"BatchMatMul", infer_batch_matmul, lower_batch_matmul},
      {"BatchMatMulV2", infer_batch_matmul, lower_batch_matmul},
  };
  return handlers;
}

}  // namespace floe::conv
