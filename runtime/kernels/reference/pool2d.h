// SPDX-License-Identifier: Apache-2.0
// NHWC max and average pooling with explicit padding. Padded taps are ignored:
// max takes the maximum over in-bounds taps, average divides by their count
// (TensorFlow's AvgPool semantics for SAME padding).
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/kernels/common/activation.h"
#include "runtime/kernels/common/params.h"
#include "runtime/kernels/reference/quantization.h"

namespace floe::ref {

struct Pool2DParams {
  int32_t filter_h = 1, filter_w = 1;
  int32_t stride_h = 1, stride_w = 1;
  int32_t pad_top = 0, pad_left = 0;
  Activation activation = Activation::kNone;
};

struct Pool2DOperands {
  In<float> input;
  Out<float> output;
};

void max_pool2d_f32(const Pool2DParams& params, const Pool2DOperands& ops);
void avg_pool2d_f32(const Pool2DParams& params, const Pool2DOperands& ops);

// ---- int8 pooling (input and output share scale and zero point) ----
// Max: the largest in-image tap. Average: the sum of in-image taps divided by
// their count, rounded half away from zero (TFLite's integer AveragePool).
// Both clamp to [act_min, act_max]. A window with no in-image tap is
// impossible with resolved SAME/VALID padding (prepare must refuse it).
using Pool2DS8Params = kernels::Pool2DS8Params;
using Pool2DS8Operands = kernels::Pool2DS8Operands;

void max_pool2d_s8(const Pool2DS8Params& params, const Pool2DS8Operands& ops);
void avg_pool2d_s8(const Pool2DS8Params& params, const Pool2DS8Operands& ops);

// ---- int16 (TFLite's 16x8 scheme): the same, on int16 values -------------
struct Pool2DS16Operands {
  In<int16_t> input;    // [N, H, W, C]
  Out<int16_t> output;  // [N, OH, OW, C]
};

void max_pool2d_s16(const Pool2DS8Params& params, const Pool2DS16Operands& ops);
void avg_pool2d_s16(const Pool2DS8Params& params, const Pool2DS16Operands& ops);

}  // namespace floe::ref
