// SPDX-License-Identifier: Apache-2.0
// Quantization-aware-trained (TF1 FakeQuant) graphs -> int8 ranges. A
// FakeQuantWithMinMax{Args,Vars,VarsPerChannel} op stores min/max that TF
// nudges before use (so that real 0 is exactly representable); the nudged
// grid is what training saw, so its scale and zero point are the int8
// tensor's: scale = nudged scale, zero point = nudged zero point - 128
// (quant range [0, 255], or [1, 255] with narrow_range).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter/ir/lowered.h"

namespace floe::conv {

// TF's Nudge (fake_quant_ops_functor.h), in float as TF computes it.
struct NudgedRange {
  float scale = 0;
  int64_t zero_point = 0;  // in [quant_min, quant_max]
  float min = 0, max = 0;  // nudged
  int64_t quant_min = 0, quant_max = 0;
};
NudgedRange nudge_fake_quant(float min, float max, int num_bits, bool narrow_range);

// The int8 quantization of a FakeQuant's grid: one scale per min/max pair
// (per channel along `channel_axis` when there are several), zero points
// shifted by -128. Only num_bits 8 maps onto int8; callers refuse others.
Quantization int8_from_fake_quant(const std::vector<float>& min, const std::vector<float>& max, bool narrow_range,
                                  int channel_axis);

// Whether every zero point is 0 (TFLite's int8 weights must be symmetric).
bool symmetric(const Quantization& q);

}  // namespace floe::conv
