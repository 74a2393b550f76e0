// SPDX-License-Identifier: Apache-2.0
// Cumsum / Cumprod along one axis (exclusive and reverse as options).
#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

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

}  // namespace

const std::vector<OpHandler>& cumulative_handlers() {
  using schema::OpCode;
  static const std::vector<OpHandler> handlers = {
      {"Cumsum", infer_cumulative, lower_cumulative<OpCode::CUMSUM>},
      {"Cumprod", infer_cumulative, lower_cumulative<OpCode::CUMPROD>},
  };
  return handlers;
}

}  // namespace floe::conv
