// SPDX-License-Identifier: Apache-2.0
// Reshape / Squeeze / ExpandDims: the bytes do not change, only the shape. The
// copy is skipped when input and output share a buffer.
#pragma once

#include <stddef.h>

namespace floe::ref {

void reshape(const void* input, void* output, size_t bytes);

}  // namespace floe::ref
