// SPDX-License-Identifier: Apache-2.0
// TopKV2: the k largest values along the last axis and their indices (k must
// be known at conversion time).
#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

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

}  // namespace

const std::vector<OpHandler>& topk_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"TopKV2", infer_topk, lower_topk},
  };
  return handlers;
}

}  // namespace floe::conv
