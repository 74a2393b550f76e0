// SPDX-License-Identifier: Apache-2.0
// The NHWC window of TF's 2-D window ops (see window_geometry.h).
#include "converter/ops/window_geometry.h"

#include <algorithm>

#include "converter/ir/attrs.h"

namespace floe::conv {

// TF's rules: VALID: out = ceil((in - eff_k + 1) / s); SAME: out = ceil(in / s), total
// pad = max((out - 1) * s + eff_k - in, 0) with the odd pixel after (bottom/right).
PaddedAxis resolve_axis(const NodeContext& ctx, const std::string& padding, int64_t in, int64_t k,
                  int64_t stride, int64_t dilation, int64_t explicit_before,
                  int64_t explicit_after) {
  const int64_t eff_k = (k - 1) * dilation + 1;
  PaddedAxis a;
  if (padding == "VALID") {
    if (in < eff_k) ctx.fail("VALID window larger than input");
    a.out = (in - eff_k) / stride + 1;
  } else if (padding == "SAME") {
    a.out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((a.out - 1) * stride + eff_k - in, 0);
    a.pad_before = total / 2;
    a.pad_after = total - a.pad_before;
  } else if (padding == "EXPLICIT") {
    a.pad_before = explicit_before;
    a.pad_after = explicit_after;
    const int64_t padded = in + explicit_before + explicit_after;
    if (padded < eff_k) ctx.fail("EXPLICIT padding leaves a window larger than the input");
    a.out = (padded - eff_k) / stride + 1;
  } else {
    ctx.fail("unknown padding '" + padding + "'");
  }
  return a;
}

// NCHW graphs are computed in NHWC: the input is transposed on entry and the
// output back (the optimizer's transpose pass may cancel neighbouring pairs).
bool is_nchw(const NodeContext& ctx) {
  const std::string format = attr_string(ctx.node().def, "data_format", "NHWC");
  if (format != "NHWC" && format != "NCHW") ctx.fail("unknown data_format " + format);
  return format == "NCHW";
}

static std::vector<int64_t> to_nhwc(const std::vector<int64_t>& v) { return {v[0], v[2], v[3], v[1]}; }
static std::vector<int64_t> to_nchw(const std::vector<int64_t>& v) { return {v[0], v[3], v[1], v[2]}; }

// A 4-value attr in NHWC order whatever the node's data_format.
std::vector<int64_t> four_ints(const NodeContext& ctx, const char* name, int64_t fallback) {
  std::vector<int64_t> v = attr_ints(ctx.node().def, name, {});
  if (v.empty()) v.assign(4, fallback);
  if (v.size() != 4) ctx.fail(std::string("attr '") + name + "' must have 4 values");
  return is_nchw(ctx) ? to_nhwc(v) : v;
}

// Input 0's shape in NHWC order.
std::vector<int64_t> nhwc_input(const NodeContext& ctx) {
  return is_nchw(ctx) ? to_nhwc(ctx.input(0).shape) : ctx.input(0).shape;
}

// The op's NHWC output shape in the node's own layout.
std::vector<int64_t> in_node_layout(const NodeContext& ctx, std::vector<int64_t> nhwc) {
  return is_nchw(ctx) ? to_nchw(nhwc) : nhwc;
}

// Emits `code` on NHWC operands: for NCHW nodes, input 0 is transposed to
// NHWC first and the result transposed back into output 0.
void add_nhwc_op(LowerContext& ctx, schema::OpCode code, std::vector<int> inputs,
                 schema::OpOptionsUnion options) {
  if (!is_nchw(ctx)) {
    ctx.add_op(code, std::move(inputs), {ctx.output_value(0)}, std::move(options));
    return;
  }
  const DType t = ctx.output_info(0).dtype;
  const int in = ctx.new_value(t, to_nhwc(ctx.input(0).shape), "input_nhwc");
  schema::TransposeOptionsT to;
  to.perm = {0, 2, 3, 1};
  ctx.add_op(schema::OpCode::TRANSPOSE, {inputs[0]}, {in}, LowerContext::options(to));
  inputs[0] = in;
  const int out = ctx.new_value(t, to_nhwc(ctx.output_info(0).shape), "output_nhwc");
  ctx.add_op(code, std::move(inputs), {out}, std::move(options));
  schema::TransposeOptionsT back;
  back.perm = {0, 3, 1, 2};
  ctx.add_op(schema::OpCode::TRANSPOSE, {out}, {ctx.output_value(0)}, LowerContext::options(back));
}

Window resolve_window(const NodeContext& ctx, int64_t kh, int64_t kw) {
  const std::vector<int64_t> in = nhwc_input(ctx);
  const std::vector<int64_t> strides = four_ints(ctx, "strides", 1);
  const std::vector<int64_t> dilations = four_ints(ctx, "dilations", 1);
  if (strides[0] != 1 || strides[3] != 1) ctx.fail("strides over batch or channels are not supported");
  const std::string padding = attr_string(ctx.node().def, "padding", "");
  std::vector<int64_t> explicit_pads = attr_ints(ctx.node().def, "explicit_paddings", {});
  if (padding == "EXPLICIT" && explicit_pads.size() != 8) {
    ctx.fail("EXPLICIT padding needs 8 explicit_paddings values");
  }
  explicit_pads.resize(8, 0);
  if (is_nchw(ctx)) {  // pairs per dim: N, C, H, W -> N, H, W, C
    explicit_pads = {explicit_pads[0], explicit_pads[1], explicit_pads[4], explicit_pads[5],
                     explicit_pads[6], explicit_pads[7], explicit_pads[2], explicit_pads[3]};
  }
  Window w;
  w.kh = kh;
  w.kw = kw;
  w.sh = strides[1];
  w.sw = strides[2];
  w.dh = dilations[1];
  w.dw = dilations[2];
  if (w.sh < 1 || w.sw < 1 || w.dh < 1 || w.dw < 1) ctx.fail("strides/dilations must be >= 1");
  w.h = resolve_axis(ctx, padding, in[1], kh, w.sh, w.dh, explicit_pads[2], explicit_pads[3]);
  w.w = resolve_axis(ctx, padding, in[2], kw, w.sw, w.dw, explicit_pads[4], explicit_pads[5]);
  return w;
}

}  // namespace floe::conv
