// SPDX-License-Identifier: Apache-2.0
// What the int8 and int16x8 Cortex-M convolution prepares (conv2d.cc,
// conv2d_s16.cc) check and plan alike: the window of an OHWI-filter CONV2D
// within the kernels' 16-bit fields, and the geometry of their plans
// (Conv2DS8Plan, Conv2DS16Plan: the same field names).
#pragma once

#include "runtime/kernels/common/op_adapter.h"
#include "schemas/contract/limits.h"

namespace floe::cortexm {

inline bool fits_int16(int32_t v) { return v >= -32768 && v <= 32767; }

// Checks the window (filter [out_c, k_h, k_w, in_c], NHWC input and output)
// and fills the plan's geometry.
template <typename Plan>
const char* plan_conv_geometry(const OpContext& ctx, const Shape& input, const Shape& filter, const Shape& output,
                               Plan* p) {
  const auto* o = ctx.op->options_as_Conv2DOptions();
  // Read once: each accessor is a call in size builds.
  const int32_t stride_h = o->stride_h(), stride_w = o->stride_w(), dil_h = o->dilation_h(),
                dil_w = o->dilation_w(), pad_top = o->pad_top(), pad_left = o->pad_left();
  if (const char* err = ops::check_window(stride_h, stride_w, dil_h, dil_w, pad_top, pad_left)) return err;
  // k_size 0 would divide the im2col chunking by zero; positions are int32
  // (schemas/contract/limits.h).
  constexpr int32_t kMaxStrided = static_cast<int32_t>(kMaxCortexmStridedOutput);
  const int64_t k_size = int64_t{filter.dims[1]} * filter.dims[2] * filter.dims[3];
  for (int32_t v : {stride_h, stride_w, dil_h, dil_w, pad_top, pad_left, filter.dims[1], filter.dims[2]}) {
    if (!fits_int16(v)) return FLOE_MSG("conv2d: window beyond the Cortex-M kernel's range");
  }
  if (k_size < 1 || k_size > (int64_t{1} << 16) || output.dims[1] > kMaxStrided / stride_h ||
      output.dims[2] > kMaxStrided / stride_w) {
    return FLOE_MSG("conv2d: window beyond the Cortex-M kernel's range");
  }
  p->batches = input.dims[0];
  p->in_h = input.dims[1];
  p->in_w = input.dims[2];
  p->in_c = input.dims[3];
  p->out_h = output.dims[1];
  p->out_w = output.dims[2];
  p->out_c = filter.dims[0];
  p->k_size = static_cast<int32_t>(k_size);
  p->k_h = static_cast<int16_t>(filter.dims[1]);
  p->k_w = static_cast<int16_t>(filter.dims[2]);
  p->stride_h = static_cast<int16_t>(stride_h);
  p->stride_w = static_cast<int16_t>(stride_w);
  p->dil_h = static_cast<int16_t>(dil_h);
  p->dil_w = static_cast<int16_t>(dil_w);
  p->pad_top = static_cast<int16_t>(pad_top);
  p->pad_left = static_cast<int16_t>(pad_left);
  return nullptr;
}

// Whether a planned convolution may run as one GEMM on its input pixels.
template <typename Plan>
bool is_pointwise(const Plan& p) {
  return p.k_h == 1 && p.k_w == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
         p.out_h == p.in_h && p.out_w == p.in_w;
}

}  // namespace floe::cortexm
