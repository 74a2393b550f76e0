// SPDX-License-Identifier: Apache-2.0
// Gives every int8 operator of a lowered model, and every int16 one of
// TFLite's 16x8 scheme (int16 activations with zero point 0, int8 weights,
// int64 biases), the integers its kernel runs with (offsets, multipliers and
// shifts, clamp range, softmax/logistic fixed point), derived from the
// quantization of its tensors exactly as TFLM's Prepare() would, so the device
// derives nothing. Per-channel multipliers and
// shifts of CONV2D, DEPTHWISE_CONV2D and MATMUL become constant int32 inputs 3
// and 4 (filters keep the float ops' layouts; MATMUL weights become [N, K]
// with transpose_b, TFLite's FULLY_CONNECTED); a RELU/RELU6 that only clamps an int8 ADD/SUB/MUL result is folded
// into that op's clamp range.
#pragma once

#include <string>
#include <vector>

#include "converter/ir/lowered.h"

namespace floe::conv {

struct Int8ArithmeticStats {
  int ops = 0;                  // int8 operators given their arithmetic
  int folded_activations = 0;   // RELU/RELU6 folded into the clamp range
};

// Throws ConvertError (naming the op) when an int8 op's quantization is
// missing or breaks the scheme (e.g. SOFTMAX output not 1/256, -128).
Int8ArithmeticStats derive_int8_arithmetic(LoweredModel* model);

}  // namespace floe::conv
