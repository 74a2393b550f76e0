// SPDX-License-Identifier: Apache-2.0
// MatMul: one MATMUL op (transposes as options). BatchMatMul / BatchMatMulV2: one BATCH_MATMUL op (adjoints as options; V2
// broadcasts the batch dims). Einsum with two operands whose equation is a
// (batched) matrix product becomes the same op.
#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

}  // namespace

std::vector<TensorInfo> matmul_output(const NodeContext& ctx) {
  ctx.expect_rank(0, 2);
  ctx.expect_rank(1, 2);
  const bool ta = attr_bool(ctx.node().def, "transpose_a", false);
  const bool tb = attr_bool(ctx.node().def, "transpose_b", false);
  const auto &a = ctx.input(0).shape, &b = ctx.input(1).shape;
  const int64_t m = ta ? a[1] : a[0], ka = ta ? a[0] : a[1];
  const int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (ka != kb) {
    ctx.fail("inner dimensions differ: " + shape_to_string(a) + (ta ? "^T" : "") + " x " +
             shape_to_string(b) + (tb ? "^T" : ""));
  }
  if (ctx.input(0).dtype != ctx.input(1).dtype) ctx.fail("input dtypes differ");
  return {TensorInfo{ctx.input(0).dtype, {m, n}, nullptr}};
}

namespace {

std::vector<TensorInfo> infer_matmul(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  return matmul_output(ctx);
}

void lower_matmul(LowerContext& ctx) {
  require_float32_output(ctx);
  const bool ta = attr_bool(ctx.node().def, "transpose_a", false);
  const bool tb = attr_bool(ctx.node().def, "transpose_b", false);
  schema::MatMulOptionsT options;
  options.transpose_a = ta;
  options.transpose_b = tb;
  ctx.add_op(schema::OpCode::MATMUL, {ctx.input_value(0), ctx.input_value(1)},
             {ctx.output_value(0)}, LowerContext::options(options));
}

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

// An Einsum equation as a BATCH_MATMUL: "<batch>ik,<batch>kj-><batch>ij" with
// either operand's last two letters swapped (an adjoint) and either operand
// without the batch letters (broadcast, as Keras' EinsumDense "abc,cd->abd").
struct EinsumPlan {
  bool adj_x = false, adj_y = false;
  std::vector<int64_t> shape;
};

EinsumPlan einsum_plan(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  std::string eq;
  for (char c : attr_string(ctx.node().def, "equation")) {
    if (c != ' ') eq += c;
  }
  const std::string why = "einsum '" + eq +
                          "': floe lowers two-operand matrix products <batch>ik,<batch>kj-><batch>ij (either "
                          "operand's last two letters swapped, either without the batch letters); ";
  const size_t arrow = eq.find("->"), comma = eq.find(',');
  if (arrow == std::string::npos || comma == std::string::npos || comma > arrow) {
    ctx.fail(why + "this one has no explicit output or one operand");
  }
  if (eq.find('.') != std::string::npos) ctx.fail(why + "ellipses are not supported");
  const std::string a = eq.substr(0, comma), b = eq.substr(comma + 1, arrow - comma - 1), o = eq.substr(arrow + 2);
  if (b.find(',') != std::string::npos) ctx.fail(why + "this one has more than two operands");
  if (a.size() != ctx.input(0).shape.size() || b.size() != ctx.input(1).shape.size()) {
    ctx.fail(why + "the operand ranks do not match the equation");
  }
  if (o.size() < 2 || a.size() < 2 || b.size() < 2) ctx.fail(why + "every term needs two matrix letters");
  const std::string batch = o.substr(0, o.size() - 2);
  const char i = o[o.size() - 2], j = o[o.size() - 1];
  const std::string ha = a.substr(0, a.size() - 2), hb = b.substr(0, b.size() - 2);
  if ((ha != batch && !ha.empty()) || (hb != batch && !hb.empty())) ctx.fail(why + "the batch letters differ");
  const std::string ta = a.substr(a.size() - 2), tb = b.substr(b.size() - 2);
  EinsumPlan p;
  char k = 0;
  if (ta[0] == i) {
    k = ta[1];
  } else if (ta[1] == i) {
    k = ta[0];
    p.adj_x = true;
  } else {
    ctx.fail(why + "'" + std::string(1, i) + "' is not in the first operand's last two letters");
  }
  if (tb == std::string{k, j}) {
    p.adj_y = false;
  } else if (tb == std::string{j, k}) {
    p.adj_y = true;
  } else {
    ctx.fail(why + "the second operand's last two letters are not the contracted and the output letter");
  }
  if (k == i || k == j || i == j || o.find(k) != std::string::npos || batch.find(i) != std::string::npos ||
      batch.find(j) != std::string::npos) {
    ctx.fail(why + "this one is not a matrix product");
  }
  const auto &x = ctx.input(0).shape, &y = ctx.input(1).shape;
  const int64_t m = x[x.size() - (p.adj_x ? 1 : 2)], kx = x[x.size() - (p.adj_x ? 2 : 1)];
  const int64_t ky = y[y.size() - (p.adj_y ? 1 : 2)], n = y[y.size() - (p.adj_y ? 2 : 1)];
  if (kx != ky) ctx.fail(why + "the contracted dims differ: " + shape_to_string(x) + ", " + shape_to_string(y));
  const std::vector<int64_t> xb(x.begin(), x.end() - 2), yb(y.begin(), y.end() - 2);
  if (!xb.empty() && !yb.empty() && xb != yb) ctx.fail(why + "the batch dims differ");
  p.shape = xb.empty() ? yb : xb;
  p.shape.push_back(m);
  p.shape.push_back(n);
  return p;
}

std::vector<TensorInfo> infer_einsum(const NodeContext& ctx) {
  const EinsumPlan p = einsum_plan(ctx);
  if (ctx.input(0).dtype != ctx.input(1).dtype) ctx.fail("input dtypes differ");
  return {TensorInfo{ctx.input(0).dtype, p.shape, nullptr}};
}

void lower_einsum(LowerContext& ctx) {
  const EinsumPlan p = einsum_plan(ctx);
  schema::BatchMatMulOptionsT o;
  o.adj_x = p.adj_x;
  o.adj_y = p.adj_y;
  ctx.add_op(schema::OpCode::BATCH_MATMUL, {ctx.input_value(0), ctx.input_value(1)}, {ctx.output_value(0)},
             LowerContext::options(o));
}

}  // namespace

const std::vector<OpHandler>& matmul_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"MatMul", infer_matmul, lower_matmul},
      {"BatchMatMul", infer_batch_matmul, lower_batch_matmul},
      {"BatchMatMulV2", infer_batch_matmul, lower_batch_matmul},
      {"Einsum", infer_einsum, lower_einsum},
  };
  return handlers;
}

}  // namespace floe::conv
