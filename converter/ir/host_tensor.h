// SPDX-License-Identifier: Apache-2.0
// A dense tensor owned by host-side code (converter): checkpoint values, Const
// node values, folded results. Bytes are row-major, little-endian.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schemas/contract/dtype.h"

namespace floe::conv {

// The number of elements of `shape` ([] = a scalar: 1).
inline int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

struct HostTensor {
  DType dtype = DType::kInvalid;
  std::vector<int64_t> shape;  // [] = scalar
  std::vector<uint8_t> data;   // num_elements() * dtype_size(dtype) bytes

  int64_t num_elements() const { return element_count(shape); }
  template <typename T>
  const T* as() const { return reinterpret_cast<const T*>(data.data()); }
  template <typename T>
  T* as() { return reinterpret_cast<T*>(data.data()); }
};

// An int32 or int64 tensor holding `values` (one per element of `shape`).
HostTensor integer_tensor(DType dtype, std::vector<int64_t> shape, const std::vector<int64_t>& values);

// "[2,3]" style rendering for messages.
std::string shape_to_string(const std::vector<int64_t>& shape);

// A float64 tensor's values rounded to float32 (floe computes float64 in
// float32); any other tensor is returned as it is.
HostTensor narrowed_float64(const HostTensor& value);

}  // namespace floe::conv
