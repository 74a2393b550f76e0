// SPDX-License-Identifier: Apache-2.0
// Host-only tool code (never built for a device): it may use the heap, the
// standard library and exceptions; the arena-only rule binds runtime/core and kernels.
//
// Feeding a model input from an array as users hold it: numpy's default
// float64 and int64, or another width than the model's. Session.run converts a
// fed value to the placeholder's dtype; floe-run does the same when no value
// changes (every integer fits, an integer float is an exact integer, an
// integer is exactly representable as a float; float to float rounds as
// numpy's astype does), and refuses otherwise with the first value that would
// change and what to pass instead. The element count must match; a mismatch
// names the `--input-shape` floe-convert needs for the array's shape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/tensor.h"

namespace floe::tools {

struct InputTarget {
  std::string name;                      // the model input's name ("x:0")
  DType dtype = DType::kInvalid;         // what the model computes it in
  DType source_dtype = DType::kInvalid;  // the TF graph's dtype when it differs (Tensor.source_dtype)
  std::vector<int64_t> shape;
  bool quantized = false;                // int8 with a scale (floe-run quantizes float32 itself)
  bool complex = false;                  // float32 pairs in a last dim of 2 (Tensor.complex)
  void* data = nullptr;                  // the input's bytes in the arena
};

// Fills target.data from `values` (`dtype`, `shape`, row-major). `what` names
// the values' origin (a file) in messages. Returns "" when the bytes were
// copied as they are, else a one-line note saying what was converted. Throws
// std::runtime_error with the reason when the element count differs or a
// value would change. `complex`: the values are complex, float pairs in a
// last dim of 2 (NpyArray::complex); they feed complex inputs only, and
// complex128 (float64 pairs) converts to complex64 as float64 to float32.
std::string convert_input(const void* values, DType dtype, const std::vector<int64_t>& shape,
                          const std::string& what, const InputTarget& target, bool complex = false);

// "d0,d1,..." as floe-convert's --input-shape takes it.
std::string input_shape_argument(const std::vector<int64_t>& shape);

}  // namespace floe::tools
