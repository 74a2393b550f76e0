// SPDX-License-Identifier: Apache-2.0
// Typed reductions over a sorted, unique set of axes (Sum/Prod/Max/Min on
// int32/int64/float32, Mean on int32/int64, All/Any on bool) and ArgMax/ArgMin
// over one axis (first index wins ties, as TensorFlow). float32 Sum and Mean use
// the pairwise kernels of reduce.h. The output must not overlap the input.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/kernels/reference/reduce.h"

namespace floe::ref {

enum class ReduceKind : uint8_t { kSum, kProd, kMax, kMin, kAll, kAny, kMean };

bool reduce_supports(ReduceKind kind, DType dtype);
void reduce(ReduceKind kind, DType dtype, const ReduceParams& params, In<void> input, Out<void> output);

// input float32/int32/int64; output int32/int64 (indices along `axis`).
bool arg_reduce_supports(DType input, DType output);
void arg_reduce(bool is_max, DType input_dtype, DType output_dtype, int32_t axis, In<void> input,
                Out<void> output);

}  // namespace floe::ref
