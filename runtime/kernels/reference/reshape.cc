// SPDX-License-Identifier: Apache-2.0
// Reshape / Squeeze / ExpandDims: the row-major bytes are unchanged, so the op is
// a copy, skipped when the planner gave input and output the same buffer. memmove
// rather than memcpy because a planner may also overlap them partially.
#include "runtime/kernels/reference/reshape.h"

#include <string.h>

namespace floe::ref {

void reshape(const void* input, void* output, size_t bytes) {
  if (input == output || bytes == 0) return;
  memmove(output, input, bytes);
}

}  // namespace floe::ref
