// SPDX-License-Identifier: Apache-2.0
#include "converter/ir/host_tensor.h"

namespace floe::conv {

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace floe::conv
