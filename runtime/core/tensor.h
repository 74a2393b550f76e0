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

// The element type a C++ type reads and writes: as<T>() hands out a T* only
// for a tensor of that dtype (float16 / bfloat16 have no C++ type: use .data).
template <typename T> struct DTypeOf { static constexpr DType value = DType::kInvalid; };
template <typename T> struct DTypeOf<const T> : DTypeOf<T> {};
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kFloat64; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::kInt8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::kInt16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kUInt8; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::kUInt16; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::kUInt32; };
template <> struct DTypeOf<uint64_t> { static constexpr DType value = DType::kUInt64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };

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

  // Checked typed access, as TFLite's typed_tensor: null unless the tensor's
  // dtype is T's (writing floats into an int8 input is a compile-or-null
  // error, never a silent reinterpretation).
  template <typename T>
  T* as() const {
    static_assert(DTypeOf<T>::value != DType::kInvalid, "as<T>(): T has no floe dtype");
    return dtype == DTypeOf<T>::value ? static_cast<T*>(data) : nullptr;
  }
};

// Kernels' access: the dtype was checked once when Init prepared the op, so
// eval reads the pointer without checking again.
template <typename T>
T* data_as(const TensorView& v) {
  return static_cast<T*>(v.data);
}

// A variable tensor's value after Interpreter::Init() and
// ResetVariableTensors(): its zero point in every element when int8, else
// all bytes zero (TFLite's and TFLM's reset).
inline void reset_variable(const TensorView& t, int32_t int8_zero_point) {
  const uint8_t fill = t.dtype == DType::kInt8 ? static_cast<uint8_t>(int8_zero_point) : 0;
  uint8_t* bytes = static_cast<uint8_t*>(t.data);
  for (size_t i = 0; i < t.bytes; ++i) bytes[i] = fill;
}

}  // namespace floe
