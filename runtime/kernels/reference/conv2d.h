// SPDX-License-Identifier: Apache-2.0
// 2-D convolution, NHWC input, HWIO filter ([kh, kw, in_c, out_c]), explicit
// padding (the converter resolves SAME/VALID), dilation, optional bias, fused
// activation. Output [N, OH, OW, out_c] is given by the caller.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/kernels/common/params.h"
#include "runtime/kernels/reference/quantization.h"
#include "runtime/kernels/reference/weighted_quantized.h"

namespace floe::ref {

using Conv2DParams = kernels::Conv2DParams;
using Conv2DOperands = kernels::Conv2DOperands;

void conv2d_f32(const Conv2DParams& params, const Conv2DOperands& ops);

// ---- int8 (TFLite's quantized CONV_2D) ----
// Filter HWIO [kh, kw, in_c / groups, out_c], floe's layout for every conv
// (the converter transposes TFLite's OHWI; per-channel scales sit on axis 3);
// groups = input channels / filter channels, output channel oc reads the
// input channels of group oc / (out_c / groups). Per output channel:
// acc = bias + sum (q_in + input_offset) * q_filter over in-image taps, then
// multiply_by_quantized_multiplier(acc, multiplier, shift) + output_offset,
// clamped to [act_min, act_max].
struct Conv2DS8Params {
  int32_t stride_h, stride_w;
  int32_t dilation_h, dilation_w;
  int32_t pad_top, pad_left;
  int32_t input_offset;       // minus the input zero point
  int32_t output_offset;      // the output zero point
  int32_t output_multiplier;  // per-tensor requantization, when the operands have no arrays
  int32_t output_shift;
  int32_t act_min, act_max;   // the fused activation, in output steps
};

// [N, H, W, in_c] input, [kh, kw, in_c / groups, out_c] filter, [out_c] bias.
using Conv2DS8Operands = WeightedOperands<int8_t>;
using Conv2DS16Operands = WeightedOperands<int16_t>;

void conv2d_s8(const Conv2DS8Params& params, const Conv2DS8Operands& ops);

// 16x8 (TFLite's int16 activations, int8 weights): the int8 convolution's
// params with zero offsets.
void conv2d_s16(const Conv2DS8Params& params, const Conv2DS16Operands& ops);

}  // namespace floe::ref
