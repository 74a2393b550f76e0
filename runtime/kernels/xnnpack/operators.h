// SPDX-License-Identifier: Apache-2.0
// One place per op for the XNNPACK backend: turns a floe operator (options,
// bound tensors) into an XNNPACK operator, created and set up once at Init()
// with the arena pointers the converter planned, so Invoke() only runs it.
// Relies on Model::Load and the reference prepare step having validated the
// op's shapes; re-checks what XNNPACK additionally assumes (constant weights,
// output geometry) and reports it instead of guessing.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <xnnpack.h>

#include "runtime/core/dispatch.h"
#include "runtime/core/status.h"
#include "runtime/kernels/xnnpack/arena_allocator.h"

namespace floe::xnnpack {

struct CreateArgs {
  const OpContext* ctx;
  ArenaRegion* region;          // persistent allocations (XNNPACK's allocator)
  uint8_t* activations;         // Init-time scratch: the planned activations
  size_t activation_bytes;      //   (no tensor is live during Init)
  pthreadpool_t thread_pool;    // setup tiles the work for this pool
};

// Creates and sets up the XNNPACK operator for ctx->op. On failure returns a
// status and sets *why (a static message).
Status create_operator(const CreateArgs& args, xnn_operator_t* out, const char** why);

}  // namespace floe::xnnpack
