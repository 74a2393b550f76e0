// SPDX-License-Identifier: Apache-2.0
// Index-driven data movement for any element size: GATHER (TF GatherV2 with
// batch_dims), GATHER_ND, ONE_HOT. Indices (int32 or int64) come from run-time
// data, so every kernel checks each index and returns false when one is out of
// range, saying which in *fault (the interpreter reports kIndexOutOfRange with
// it); TF's CPU kernels fail the same way. ONE_HOT writes off_value for
// out-of-range indices, as TF does.
#pragma once

#include <stddef.h>

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

struct GatherParams {
  int32_t axis = 0;
  int32_t batch_dims = 0;
  size_t element_size = 4;
  bool indices_int64 = false;
};

// params [B..., A, rest...] (A at `axis`), indices [B..., I...] -> [B..., pre, I..., rest...].
bool gather(const GatherParams& p, In<void> params, In<void> indices, Out<void> output, IndexFault* fault);

// indices [..., k] address the first k dims of params; output [..., params dims k..].
bool gather_nd(size_t element_size, bool indices_int64, In<void> params, In<void> indices, Out<void> output,
               IndexFault* fault);

// indices [...] -> output with a new axis of size depth at `axis`.
void one_hot(size_t element_size, bool indices_int64, int32_t axis, In<void> indices, const void* on_value,
             const void* off_value, Out<void> output);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

// The params blocks start with the IndexFault eval writes (status.h).
struct GatherPrepared {
  IndexFault fault;
  int32_t axis;
  int32_t batch_dims;
  int32_t element_size;
  bool indices_int64;
};

struct GatherNdPrepared {
  IndexFault fault;
};
static_assert(offsetof(GatherPrepared, fault) == 0 && offsetof(GatherNdPrepared, fault) == 0,
              "Interpreter::index_fault() reads the IndexFault at the start of the params block");

const char* prepare_gather(const OpContext& ctx);
Status eval_gather(const PreparedOp& ctx);
const char* prepare_gather_nd(const OpContext& ctx);
Status eval_gather_nd(const PreparedOp& ctx);
const char* prepare_one_hot(const OpContext& ctx);
Status eval_one_hot(const PreparedOp& ctx);

}  // namespace floe::ops
