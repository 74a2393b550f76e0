// SPDX-License-Identifier: Apache-2.0
#include "converter/ir/host_tensor.h"

namespace floe::conv {

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

HostTensor narrowed_float64(const HostTensor& value) {
  if (value.dtype != DType::kFloat64) return value;
  HostTensor narrowed;
  narrowed.dtype = DType::kFloat32;
  narrowed.shape = value.shape;
  narrowed.data.resize(static_cast<size_t>(value.num_elements()) * sizeof(float));
  for (int64_t i = 0; i < value.num_elements(); ++i) narrowed.as<float>()[i] = static_cast<float>(value.as<double>()[i]);
  return narrowed;
}

}  // namespace floe::conv
