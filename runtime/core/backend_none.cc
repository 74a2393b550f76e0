// SPDX-License-Identifier: Apache-2.0
// The backend seam for builds without an optional kernel library
// (FLOE_WITH_XNNPACK=OFF, Cortex-M): every operator runs its reference kernel,
// and no arena bytes beyond the planned activations are needed.
#include "runtime/core/backend.h"

namespace floe {

bool backend_active(const Model&) { return false; }
uint64_t backend_arena_bytes(const Model&) { return 0; }
Status backend_prepare(const Model&, const BackendInit&, BackendResult* result) {
  *result = BackendResult();
  return Status::kOk;
}
bool backend_owns(const BackendState*, uint32_t) { return false; }
Status backend_run(BackendState*, uint32_t, void*) { return Status::kKernelError; }
OpThreads backend_op_threads(void*) { return OpThreads{}; }
Status backend_initialize() { return Status::kOk; }
const char* backend_description() { return "none (reference kernels only)"; }

}  // namespace floe
