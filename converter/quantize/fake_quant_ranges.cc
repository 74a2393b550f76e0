// SPDX-License-Identifier: Apache-2.0
// FakeQuant ranges (see fake_quant_ranges.h).
#include "converter/quantize/fake_quant_ranges.h"

#include <cmath>

namespace floe::conv {

NudgedRange nudge_fake_quant(float min, float max, int num_bits, bool narrow_range) {
  NudgedRange r;
  r.quant_min = narrow_range ? 1 : 0;
  r.quant_max = (int64_t{1} << num_bits) - 1;
  const float quant_min = static_cast<float>(r.quant_min);
  const float quant_max = static_cast<float>(r.quant_max);
  r.scale = (max - min) / (quant_max - quant_min);
  // The zero point the range implies, moved to the nearest integer of the
  // quant range; min and max then follow from it.
  const float zero_from_min = quant_min - min / r.scale;
  r.zero_point = zero_from_min < quant_min   ? r.quant_min
                 : zero_from_min > quant_max ? r.quant_max
                                             : static_cast<int64_t>(std::round(zero_from_min));
  r.min = (quant_min - static_cast<float>(r.zero_point)) * r.scale;
  r.max = (quant_max - static_cast<float>(r.zero_point)) * r.scale;
  return r;
}

Quantization int8_from_fake_quant(const std::vector<float>& min, const std::vector<float>& max, bool narrow_range,
                                  int channel_axis) {
  Quantization q;
  q.dimension = min.size() > 1 ? channel_axis : 0;
  for (size_t c = 0; c < min.size() && c < max.size(); ++c) {
    const NudgedRange r = nudge_fake_quant(min[c], max[c], 8, narrow_range);
    q.scale.push_back(r.scale);
    q.zero_point.push_back(r.zero_point - 128);
  }
  return q;
}

bool symmetric(const Quantization& q) {
  for (int64_t z : q.zero_point) {
    if (z != 0) return false;
  }
  return !q.scale.empty();
}

}  // namespace floe::conv
