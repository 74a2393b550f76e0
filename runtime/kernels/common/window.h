// SPDX-License-Identifier: Apache-2.0
// Window geometry of the convolutions and poolings (reference and Cortex-M
// kernels): the taps of one output coordinate that fall inside the input (taps
// in the padding add zero, or are left out of a pooling), computed once per
// output row/column, never per tap. Freestanding.
#pragma once

#include <stddef.h>

namespace floe::kernels {

struct TapRange {
  ptrdiff_t begin;
  ptrdiff_t end;
};

// Taps t in [begin, end) of a k-tap window at input coordinate
// origin + t * dilation that lie inside [0, extent); origin = out * stride - pad
// is negative in the top/left padding, and the window's far side may run past
// the extent in the bottom/right padding (SAME puts the odd extra pixel there,
// which is why only top/left padding is a parameter: the output size implies
// the rest).
inline TapRange tap_range(ptrdiff_t origin, ptrdiff_t extent, ptrdiff_t k, ptrdiff_t dilation) {
  ptrdiff_t b = origin < 0 ? (-origin + dilation - 1) / dilation : 0;
  ptrdiff_t e = origin < extent ? (extent - origin - 1) / dilation + 1 : 0;
  if (e > k) e = k;
  if (b > e) b = e;
  return {b, e};
}

// tap_range for dilation 1, without divisions (per-output use in the
// single-channel convolution, where the window walk is most of the cost).
inline TapRange unit_tap_range(ptrdiff_t origin, ptrdiff_t extent, ptrdiff_t k) {
  ptrdiff_t b = origin < 0 ? -origin : 0;
  ptrdiff_t e = extent - origin < k ? extent - origin : k;
  if (e < 0) e = 0;
  if (b > e) b = e;
  return {b, e};
}

// A pooling window's geometry over one image plane (one spatial axis pair).
struct PoolWindows {
  ptrdiff_t in_h, in_w, out_h, out_w;
  ptrdiff_t filter_h, filter_w, stride_h, stride_w, pad_top, pad_left;
};

// The walk the reference poolings share: every output pixel in order, with
// its window's input origin (y0, x0; negative in the padding) and the taps
// inside the image, each range computed once per output row / column:
// visit(y0, x0, taps_y, taps_x).
template <typename Visit>
inline void for_each_pool_window(const PoolWindows& w, Visit&& visit) {
  for (ptrdiff_t oy = 0; oy < w.out_h; ++oy) {
    const ptrdiff_t y0 = oy * w.stride_h - w.pad_top;
    const TapRange taps_y = tap_range(y0, w.in_h, w.filter_h, 1);
    for (ptrdiff_t ox = 0; ox < w.out_w; ++ox) {
      const ptrdiff_t x0 = ox * w.stride_w - w.pad_left;
      visit(y0, x0, taps_y, tap_range(x0, w.in_w, w.filter_w, 1));
    }
  }
}

}  // namespace floe::kernels
