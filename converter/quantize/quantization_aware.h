// SPDX-License-Identifier: Apache-2.0
// Quantization-aware-trained TF1 graphs: the FAKE_QUANT ops left on
// activations after lowering give int8 quantizations (converter/quantize/
// fake_quant_ranges.h); FakeQuant on weights was folded while lowering and
// reaches quantization as the weights' Value::quantization instead.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "converter/ir/lowered.h"

namespace floe::conv {

struct TrainedRanges {
  std::map<int, Quantization> quantization;  // value id -> from its FakeQuant
  std::set<int> narrow_range;                // values whose FakeQuant never gives int8 -128
  std::vector<size_t> fake_quants;           // FAKE_QUANT ops that gave one (op index)
  std::vector<std::string> unusable;         // "NODE: why", FakeQuant ops int8 cannot follow
};

// The quantization each 8-bit FAKE_QUANT op with constant min/max gives its
// input and output. FakeQuant ops that cannot become int8 (num_bits other than
// 8, per-channel on an activation, min/max computed at run time, an empty
// range) are listed in `unusable`. A FakeQuant over a constant stays a float op.
TrainedRanges trained_ranges(const LoweredModel& model);

// Removes the FAKE_QUANT ops `trained` took ranges from: their readers read
// the input, which keeps the same quantization, so the int8 tensor does the
// rounding the op did (a FakeQuant that is a model output hands its name to
// its input). Returns how many were removed.
int drop_trained_fake_quants(const TrainedRanges& trained, LoweredModel* model);

// After derive_int8_arithmetic: an int8 op computing a narrow-range value
// clamps at -127, as the FakeQuant's quant range [1, 255] does.
void clamp_narrow_range_outputs(const TrainedRanges& trained, LoweredModel* model);

// Refuses, in one ConvertError naming every node, FakeQuant ops int8 cannot follow.
void refuse_unusable_fake_quants(const std::vector<std::string>& unusable);

}  // namespace floe::conv
