// SPDX-License-Identifier: Apache-2.0
// 2-D matrix product with optional transposes, bias and fused activation:
//   output[M,N] = act(op(a)[M,K] x op(b)[K,N] + bias[N])
// a is [M,K] ([K,M] when transpose_a), b is [K,N] ([N,K] when transpose_b).
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/kernels/common/params.h"
#include "runtime/kernels/reference/quantization.h"
#include "runtime/kernels/reference/weighted_quantized.h"

namespace floe::ref {

using MatMulParams = kernels::MatMulParams;
using MatMulOperands = kernels::MatMulOperands;

void matmul_f32(const MatMulParams& params, const MatMulOperands& ops);

// ---- int8 FULLY_CONNECTED (TFLite's quantized layout) ----
// output[b, n] = requantize(bias[n] + sum_k (w[n, k] + filter_offset) *
// (x[b, k] + input_offset)), weights [N, K] (TFLite's, i.e. transpose_b),
// every leading dim of input/output is a batch. Per-tensor (multiplier ==
// nullptr: params' pair) or per-channel (one pair per n) requantization, both
// with TFLM's double rounding. filter_offset is minus the weight zero point
// (0 for TFLite's symmetric weights).
struct FullyConnectedS8Params {
  int32_t input_offset;       // minus the input zero point
  int32_t filter_offset;      // minus the weight zero point
  int32_t output_offset;      // the output zero point
  int32_t output_multiplier;  // per-tensor requantization
  int32_t output_shift;
  int32_t act_min, act_max;
};

// [..., K] input, [N, K] weights, [N] bias, [..., N] output.
using FullyConnectedS8Operands = WeightedOperands<int8_t>;
using FullyConnectedS16Operands = WeightedOperands<int16_t>;

void fully_connected_s8(const FullyConnectedS8Params& params, const FullyConnectedS8Operands& ops);
// 16x8: the same params with zero offsets, int64 sums (weighted_quantized.h).
void fully_connected_s16(const FullyConnectedS8Params& params, const FullyConnectedS16Operands& ops);

}  // namespace floe::ref
