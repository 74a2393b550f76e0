// SPDX-License-Identifier: Apache-2.0
// Reductions. float32 Mean/Sum over a set of axes (pairwise sums; `axes` are
// sorted, unique and non-negative; keep_dims only changes the output shape,
// which the caller provides), and typed reductions over a sorted, unique set of axes (Sum/Prod/Max/Min on
// int32/int64/float32, Mean on int32/int64, All/Any on bool) and ArgMax/ArgMin
// over one axis (first index wins ties, as TensorFlow). float32 Sum and Mean use
// the pairwise kernels above. The output must not overlap the input.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/dispatch.h"

namespace floe::ref {

struct ReduceParams {
  const int32_t* axes = nullptr;
  int32_t axis_count = 0;
  bool average = true;  // false: the pairwise sum itself (Sum on float32)
};

struct ReduceOperands {
  In<float> input;
  Out<float> output;
};

void mean_f32(const ReduceParams& params, const ReduceOperands& ops);
// Same walk and pairwise summation without the division (TF Sum on float32).
inline void sum_f32(ReduceParams params, const ReduceOperands& ops) {
  params.average = false;
  mean_f32(params, ops);
}

}  // namespace floe::ref

namespace floe::ref {

enum class ReduceKind : uint8_t { kSum, kProd, kMax, kMin, kAll, kAny, kMean };

bool reduce_supports(ReduceKind kind, DType dtype);
void reduce(ReduceKind kind, DType dtype, const ReduceParams& params, In<void> input, Out<void> output);

// input float32/int32/int64; output int32/int64 (indices along `axis`).
bool arg_reduce_supports(DType input, DType output);
void arg_reduce(bool is_max, DType input_dtype, DType output_dtype, int32_t axis, In<void> input,
                Out<void> output);

}  // namespace floe::ref

// The op's adapter (runtime/ops.def names it; runtime/core/dispatch.h).
namespace floe::ops {

struct ReducePrepared {
  int32_t axes[kMaxRank];
  int32_t axis_count;
};

const char* prepare_mean(const OpContext& ctx);
Status eval_mean(const PreparedOp& ctx);
const char* prepare_sum(const OpContext& ctx);
Status eval_sum(const PreparedOp& ctx);
const char* prepare_prod(const OpContext& ctx);
Status eval_prod(const PreparedOp& ctx);
const char* prepare_reduce_max(const OpContext& ctx);
Status eval_reduce_max(const PreparedOp& ctx);
const char* prepare_reduce_min(const OpContext& ctx);
Status eval_reduce_min(const PreparedOp& ctx);
const char* prepare_reduce_all(const OpContext& ctx);
Status eval_reduce_all(const PreparedOp& ctx);
const char* prepare_reduce_any(const OpContext& ctx);
Status eval_reduce_any(const PreparedOp& ctx);
const char* prepare_arg_max(const OpContext& ctx);
Status eval_arg_max(const PreparedOp& ctx);
const char* prepare_arg_min(const OpContext& ctx);
Status eval_arg_min(const PreparedOp& ctx);

}  // namespace floe::ops
