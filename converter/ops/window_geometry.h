// SPDX-License-Identifier: Apache-2.0
// The geometry windowed ops share (Conv3D in conv_ops.cc, Dilation2D and the
// 3-D pools in image_ops.cc): one spatial axis of a SAME or VALID window, and
// the output shape and options fields of an NDHWC window over three axes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace floe::conv {

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
