// SPDX-License-Identifier: Apache-2.0
// The seam between the interpreter and an optional kernel library (XNNPACK).
// The converter assigns each operator a backend for Model.target; at Init() the
// backend builds all its state (operator objects, packed weights, indirection
// buffers) inside the arena's persistent region, which starts 64-byte aligned
// after the planned activations; Invoke() asks it to run the operators it took.
// Builds without a library link backend_none.cc, and every op runs reference.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "runtime/core/parallel.h"
#include "runtime/core/status.h"
#include "schemas/contract/limits.h"

namespace floe {

class Model;
struct BackendState;  // opaque; lives inside the arena

// The backend's region starts at the first kBackendRegionAlignment boundary
// at or after the planned activations (schemas/contract/limits.h), so its
// allocations are laid out identically whatever the arena's address.

// Whether this runtime was built with a kernel library (FLOE_WITH_BACKEND,
// set by runtime/CMakeLists.txt with XNNPACK); without one, the interpreter
// compiles no backend code at all.
#if defined(FLOE_WITH_BACKEND)
constexpr bool kHasBackend = true;
#else
constexpr bool kHasBackend = false;
#endif

// True when this build runs the model's XNNPACK operators (built with XNNPACK
// for the model's target and the model assigns at least one op to it).
bool backend_active(const Model& model);

// Bytes beyond the planned activations the backend needs for `model` on this
// build, including the alignment gap; 0 when !backend_active(model).
uint64_t backend_arena_bytes(const Model& model);

// Plain aggregates without default initializers: the caller sets every field
// of BackendInit, backend_prepare() every field of BackendResult.
struct BackendInit {
  uint8_t* arena;           // the persistent region's arena (16-byte aligned)
  uint8_t* const* region_arenas;  // every memory region's arena, for binding operands
  size_t arena_bytes;       // the backend's region ends here
  size_t activation_bytes;  // the planned activations: [0, activation_bytes)
  void* thread_pool;        // pthreadpool_t or null (caller's thread only)
};

struct BackendResult {
  BackendState* state = nullptr;   // null when no op runs on the backend
  size_t bytes_used = 0;           // persistent bytes actually used (incl. alignment gap)
  size_t ops_taken = 0;            // operators the backend runs
  Error error;                     // when the returned status is not kOk
};

// Creates and sets up every operator assigned to the backend. All memory comes
// from the arena after the activations; never from the heap.
Status backend_prepare(const Model& model, const BackendInit& init, BackendResult* result);

// True when operator `op` runs on the backend.
bool backend_owns(const BackendState* state, uint32_t op);

// Runs operator `op` (backend_owns() must be true). Allocates nothing.
Status backend_run(BackendState* state, uint32_t op, void* thread_pool);

// The library's thread pool as floe's own kernels use it (runtime/core/parallel.h):
// `thread_pool` (non-null) with its runner and thread count; empty without a library.
OpThreads backend_op_threads(void* thread_pool);

// Process-global set-up of the library (XNNPACK: xnn_initialize with floe's
// arena allocator; cpuinfo identifies the CPU with a one-time heap allocation).
// Call once at start-up to keep every Interpreter::Init() heap-free; Init()
// calls it itself otherwise. Returns kOk when there is no library.
Status backend_initialize();

// "xnnpack (aarch64)" / "none".
const char* backend_description();

}  // namespace floe
