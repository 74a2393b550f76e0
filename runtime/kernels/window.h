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

}  // namespace floe::kernels
