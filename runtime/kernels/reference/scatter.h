// SPDX-License-Identifier: Apache-2.0
// Index-driven writes: SCATTER_ND_{UPDATE,ADD,SUB,MUL,DIV,MIN,MAX}, one kernel
// for every TF scatter (ScatterNd, TensorScatter*, and the fetched variable
// updates Scatter* / ScatterNd*). The output starts as a copy of `data` (or
// zeros when the op has no data input: ScatterNd), then each row of indices
// [..., k] picks the slice output[i0, .., ik-1, ...] and combines it with the
// matching slice of updates [..., output dims k..]. Rows apply in order, so
// duplicate indices accumulate for ADD/SUB/MUL/DIV/MIN/MAX and the last row
// wins for UPDATE. Indices come from run-time data: each is checked and an
// out-of-range one makes the kernel return false before anything is written
// outside the output (TF's CPU kernels fail the same way); so does an integer
// division by zero.
#pragma once

#include <stddef.h>

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

enum class ScatterMode : uint8_t { kUpdate, kAdd, kSub, kMul, kDiv, kMin, kMax };

// `data.data` null: the output starts at zero. UPDATE moves elements of any
// size; the arithmetic modes take float32, int32 and int64.
// An index outside the output fails before any update, saying which in *fault;
// false with fault->position -1: an arithmetic failure (integer division by 0).
bool scatter_nd(ScatterMode mode, DType dtype, bool indices_int64, In<void> data, In<void> indices,
                In<void> updates, Out<void> output, IndexFault* fault);

}  // namespace floe::ref

// The ops' adapters (schemas/contract/ops.def names them; runtime/core/registry.h).
namespace floe::ops {

struct ScatterPrepared {
  IndexFault fault;  // eval's report (status.h)
  uint8_t dtype;  // DType of data, updates and output
  uint8_t indices_int64;
  uint8_t from_zeros;  // no data input
  uint8_t unused;
};
static_assert(offsetof(ScatterPrepared, fault) == 0,
              "Interpreter::index_fault() reads the IndexFault at the start of the params block");

const char* prepare_scatter_nd(const OpContext& ctx);
const char* prepare_scatter_nd_arithmetic(const OpContext& ctx);
Status eval_scatter_nd_update(const PreparedOp& ctx);
Status eval_scatter_nd_add(const PreparedOp& ctx);
Status eval_scatter_nd_sub(const PreparedOp& ctx);
Status eval_scatter_nd_mul(const PreparedOp& ctx);
Status eval_scatter_nd_div(const PreparedOp& ctx);
Status eval_scatter_nd_min(const PreparedOp& ctx);
Status eval_scatter_nd_max(const PreparedOp& ctx);

}  // namespace floe::ops
