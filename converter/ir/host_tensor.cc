// SPDX-License-Identifier: Apache-2.0
#include "converter/ir/host_tensor.h"

namespace floe::conv {

HostTensor integer_tensor(DType dtype, std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data.resize(values.size() * dtype_size(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kInt64) {
      t.as<int64_t>()[i] = values[i];
    } else {
      t.as<int32_t>()[i] = static_cast<int32_t>(values[i]);
    }
  }
  return t;
}

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
