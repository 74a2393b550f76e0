// SPDX-License-Identifier: Apache-2.0
// Reshape / Squeeze / ExpandDims: the bytes do not change, only the shape. The
// copy is skipped when input and output share a buffer; otherwise they must
// not overlap (Model::Load's plan check guarantees it).
#pragma once

#include <stddef.h>
#include "runtime/core/registry.h"

namespace floe::ref {

void reshape(const void* input, void* output, size_t bytes);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_reshape(const OpContext& ctx);
Status eval_reshape(const PreparedOp& ctx);
// The output is the input's bytes (a zero-copy alias): nothing to do.
Status eval_reshape_in_place(const PreparedOp& ctx);

}  // namespace floe::ops
