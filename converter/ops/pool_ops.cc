// SPDX-License-Identifier: Apache-2.0
// 2-D pooling: MaxPool and AvgPool (NCHW through transposes). The 3-D pools and
// MaxPoolWithArgmax are in image_ops.cc.
#include "converter/ops/op_registry.h"
#include "converter/ops/window_geometry.h"

namespace floe::conv {
namespace {

Window pool_window(const NodeContext& ctx) {
  const std::vector<int64_t> ksize = four_ints(ctx, "ksize", 1);
  if (ksize[0] != 1 || ksize[3] != 1) ctx.fail("pooling over batch or channels is not supported");
  return resolve_window(ctx, ksize[1], ksize[2]);
}

std::vector<TensorInfo> infer_pool(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_rank(0, 4);
  const std::vector<int64_t> in = nhwc_input(ctx);
  const Window w = pool_window(ctx);
  return {TensorInfo{ctx.input(0).dtype, in_node_layout(ctx, {in[0], w.h.out, w.w.out, in[3]}), nullptr}};
}

template <schema::OpCode kCode>
void lower_pool(LowerContext& ctx) {
  require_float32_output(ctx);
  const Window w = pool_window(ctx);
  schema::Pool2DOptionsT o;
  o.filter_h = static_cast<int32_t>(w.kh);
  o.filter_w = static_cast<int32_t>(w.kw);
  set_strides_and_pads(o, w);
  add_nhwc_op(ctx, kCode, {ctx.input_value(0)}, LowerContext::options(o));
}

}  // namespace

const std::vector<OpHandler>& pool_handlers() {
  using schema::OpCode;
  static const std::vector<OpHandler> handlers = {
      {"MaxPool", infer_pool, lower_pool<OpCode::MAX_POOL2D>},
      {"AvgPool", infer_pool, lower_pool<OpCode::AVG_POOL2D>},
  };
  return handlers;
}

}  // namespace floe::conv
