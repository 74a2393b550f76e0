// SPDX-License-Identifier: Apache-2.0
// The geometry windowed ops share: the NHWC window of the 2-D ones (Conv2D,
// DepthwiseConv2dNative and their fused forms in conv_ops.cc, MaxPool / AvgPool
// in pool_ops.cc) resolved once into explicit pads, NCHW nodes computed in NHWC
// between transposes; one spatial axis of a SAME or VALID window, and the
// output shape and options fields of an NDHWC window over three axes (Conv3D in
// conv_ops.cc, Dilation2D and the 3-D pools in image_ops.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "converter/ops/op_registry.h"

namespace floe::conv {

// Resolved geometry of one spatial dimension.
struct PaddedAxis {
  int64_t out = 0, pad_before = 0, pad_after = 0;
};

// TF's rules for one axis of SAME, VALID or EXPLICIT padding (a window larger
// than the input fails the node).
PaddedAxis resolve_axis(const NodeContext& ctx, const std::string& padding, int64_t in, int64_t k, int64_t stride,
                        int64_t dilation, int64_t explicit_before, int64_t explicit_after);

// Spatial parameters shared by conv, depthwise and pooling (NHWC only).
struct Window {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  PaddedAxis h, w;
};

// NCHW graphs are computed in NHWC: the input is transposed on entry and the
// output back (the optimizer's transpose pass may cancel neighbouring pairs).
bool is_nchw(const NodeContext& ctx);
// A 4-value attr in NHWC order whatever the node's data_format.
std::vector<int64_t> four_ints(const NodeContext& ctx, const char* name, int64_t fallback);
// Input 0's shape in NHWC order.
std::vector<int64_t> nhwc_input(const NodeContext& ctx);
// The op's NHWC output shape in the node's own layout.
std::vector<int64_t> in_node_layout(const NodeContext& ctx, std::vector<int64_t> nhwc);
// Emits `code` on NHWC operands: for NCHW nodes, input 0 is transposed to
// NHWC first and the result transposed back into output 0.
void add_nhwc_op(LowerContext& ctx, schema::OpCode code, std::vector<int> inputs, schema::OpOptionsUnion options);
// The window of a kh x kw kernel from the node's strides, dilations and padding.
Window resolve_window(const NodeContext& ctx, int64_t kh, int64_t kw);

// The strides and explicit pads of a 2-D window op's options (Conv2DOptionsT,
// DepthwiseConv2DOptionsT, Pool2DOptionsT).
template <typename Options>
void set_strides_and_pads(Options& o, const Window& w) {
  o.stride_h = static_cast<int32_t>(w.sh);
  o.stride_w = static_cast<int32_t>(w.sw);
  o.pad_top = static_cast<int32_t>(w.h.pad_before);
  o.pad_left = static_cast<int32_t>(w.w.pad_before);
  o.pad_bottom = static_cast<int32_t>(w.h.pad_after);
  o.pad_right = static_cast<int32_t>(w.w.pad_after);
}

// One spatial axis of a SAME or VALID window, by TF's rules (a VALID window
// larger than the input leaves no output; SAME puts the odd pad after).
struct WindowAxis {
  int64_t out = 0, pad_before = 0;
};

// False for any other padding: each op words that refusal itself.
inline bool same_or_valid(const std::string& padding, int64_t in, int64_t k, int64_t stride, int64_t dilation,
                          WindowAxis* axis) {
  const int64_t eff = (k - 1) * dilation + 1;
  if (padding == "VALID") {
    axis->out = in >= eff ? (in - eff) / stride + 1 : 0;
    axis->pad_before = 0;
  } else if (padding == "SAME") {
    axis->out = (in + stride - 1) / stride;
    axis->pad_before = std::max<int64_t>((axis->out - 1) * stride + eff - in, 0) / 2;
  } else {
    return false;
  }
  return true;
}

// An NDHWC window op's output shape from its depth, height and width axes, and
// its options' strides (`strides` in NDHWC order) and leading pads
// (Conv3DOptionsT, Pool3DOptionsT).
template <typename Options>
std::vector<int64_t> ndhwc_window(const WindowAxis (&axes)[3], int64_t batch, int64_t channels,
                                  const std::vector<int64_t>& strides, Options* o) {
  o->stride_d = static_cast<int32_t>(strides[1]);
  o->stride_h = static_cast<int32_t>(strides[2]);
  o->stride_w = static_cast<int32_t>(strides[3]);
  o->pad_front = static_cast<int32_t>(axes[0].pad_before);
  o->pad_top = static_cast<int32_t>(axes[1].pad_before);
  o->pad_left = static_cast<int32_t>(axes[2].pad_before);
  return {batch, axes[0].out, axes[1].out, axes[2].out, channels};
}

}  // namespace floe::conv
