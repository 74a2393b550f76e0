// SPDX-License-Identifier: Apache-2.0
// Lightweight, non-owning views of tensors as kernels see them. Shapes point
// straight into the model (no copy); data points into the arena or into the
// model's constant section. Freestanding: no allocation, no library calls.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "schemas/contract/dtype.h"
#include "schemas/contract/limits.h"

namespace floe {

// A shape view. `dims` may be null only when rank == 0 (scalar).
struct Shape {
  const int32_t* dims = nullptr;
  int32_t rank = 0;

  int32_t dim(int i) const { return dims[i]; }
  int64_t num_elements() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= dims[i];
    return n;
  }
  // Product of dims [begin, end).
  int64_t span(int begin, int end) const {
    int64_t n = 1;
    for (int i = begin; i < end; ++i) n *= dims[i];
    return n;
  }
};

// Read-only operand as a kernel receives it.
template <typename T>
struct In {
  const T* data;
  Shape shape;
};

// Written operand as a kernel receives it.
template <typename T>
struct Out {
  T* data;
  Shape shape;
};

// A tensor's affine quantization, real = scale * (q - zero_point), as firmware
// needs it to quantize sensor data into an int8 input or read an int8 output.
// Per-channel tensors (weights) report channel 0 and their channel count.
struct Quantization {
  float scale = 0.0f;
  int32_t zero_point = 0;
  uint32_t channels = 0;  // 0 = not quantized, 1 = per tensor, n = per channel
  bool quantized() const { return channels != 0; }
};

// Public, type-erased view of a model input or output.
struct TensorView {
  const char* name = "";
  DType dtype = DType::kInvalid;
  // Model inputs/outputs only (Tensor.complex): float32 pairs (real, imaginary)
  // in the last dim of 2, numpy's complex64 layout.
  bool complex = false;
  Shape shape;
  void* data = nullptr;
  size_t bytes = 0;

  template <typename T>
  T* as() const { return static_cast<T*>(data); }
};

// A variable tensor's value after Interpreter::Init() and
// ResetVariableTensors(): its zero point in every element when int8, else
// all bytes zero (TFLite's and TFLM's reset).
inline void reset_variable(const TensorView& t, int32_t int8_zero_point) {
  const uint8_t fill = t.dtype == DType::kInt8 ? static_cast<uint8_t>(int8_zero_point) : 0;
  uint8_t* bytes = static_cast<uint8_t*>(t.data);
  for (size_t i = 0; i < t.bytes; ++i) bytes[i] = fill;
}

}  // namespace floe
