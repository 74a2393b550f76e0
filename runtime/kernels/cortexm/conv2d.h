// SPDX-License-Identifier: Apache-2.0
// Cortex-M CONV2D (float32): the contract of the reference's conv2d_f32
// (runtime/kernels/common/params.h: same params and operands); runs for the
// ops the converter assigned to the CORTEX_M backend. The output must not
// overlap the input or the filter.
#pragma once

#include "runtime/core/registry.h"
#include "runtime/kernels/common/params.h"
#include "runtime/kernels/cortexm/s8_microkernels.h"
#include "runtime/kernels/cortexm/s8_plans.h"
#include "runtime/kernels/cortexm/s16_adapter.h"

namespace floe::cortexm {

// Everything the kernel derives from the params and the shapes, computed once
// (at Init(), by the op's prepare step): pointer-free, fixed-width.
struct Conv2DPlan {
  int32_t batches, in_h, in_w, in_c;
  int32_t k_h, k_w, out_h, out_w, out_c;
  int32_t stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
  float clamp_lo, clamp_hi;
  bool clamped;
};

Conv2DPlan plan_conv2d(const kernels::Conv2DParams& params, const Shape& input, const Shape& filter,
                       const Shape& output);

// Runs a planned convolution; bias may be null.
void conv2d_f32(const Conv2DPlan& plan, const float* input, const float* filter, const float* bias,
                float* output);

// Plans and runs (tests, benches).
void conv2d_f32(const kernels::Conv2DParams& params, const kernels::Conv2DOperands& ops);

// int8, as planned (plan.kernel S8_GEMM: s8_gemm on the input pixels;
// S8_IM2COL_GEMM: plan.chunk_rows im2col rows of plan.k_size bytes at a time
// in `scratch`, then s8_gemm). Filter OHWI, rq.bias folded (s8_microkernels.h).
void conv2d_s8(const Conv2DS8Plan& plan, const int8_t* input, const int8_t* filter, const S8Requant& rq,
               int8_t* scratch, int8_t* output);

// Completes a filled S8_IM2COL_GEMM plan with how its im2col rows are built
// (the prepare calls it; tests and benches that fill plans by hand too):
// on Helium, byte gathers when every tap of a window lies within 255 bytes of
// its first and a row is at most 64 bytes (KWS's first layer: 10x4 taps of one
// channel), else the per-tap copy.
void plan_im2col(Conv2DS8Plan& plan);

// int16x8 S16_IM2COL_GEMM, as planned: plan.chunk_rows im2col rows of
// plan.k_size int16 values at a time in `scratch`, then s16_gemm. Filter OHWI.
void conv2d_s16(const Conv2DS16Plan& plan, const int16_t* input, const int8_t* filter, const S16Requant& rq,
                int16_t* scratch, int16_t* output);

}  // namespace floe::cortexm
