// SPDX-License-Identifier: Apache-2.0
// Reductions. float32 Mean/Sum over a set of axes (pairwise sums; `axes` are
// sorted, unique and non-negative; keep_dims only changes the output shape,
// which the caller provides), and typed reductions over a sorted, unique set of axes (Sum/Prod/Max/Min on
// int32/int64/float32, Mean on int32/int64, All/Any on bool) and ArgMax/ArgMin
// over one axis (first index wins ties, as TensorFlow). float32 Sum and Mean use
// the pairwise kernels above. The output must not overlap the input.
#pragma once

#include "runtime/kernels/reference/quantization.h"
#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

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

// ---- int8 (and int16) MEAN (TFLM's integer path, QuantizedMeanOrSum) ----
// The sum over the reduced axes minus count * input_zero_point, requantized
// by input_scale / output_scale with 1/count folded into the multiplier
// (multiplier * 2^s / count, s = floor(log2(count)) capped), plus the output
// zero point, clamped to int8. TFLM takes this path for every int8 MEAN;
// TFLite (not Micro) instead truncates sum / count when input and output
// quantization are equal, and has a float path for 4-D means over H, W.
struct MeanS8Params {
  int32_t axes[kMaxRank];  // sorted, unique, non-negative
  int32_t axis_count;
  int32_t input_zero_point;
  int32_t output_zero_point;
  int32_t multiplier, shift;  // input_scale / output_scale
};

// TFLM's two integer MEANs: an output on the input's grid (same scale and zero
// point) is the raw sum divided by the count, rounded toward zero
// (reference_ops::Mean); any other grid requantizes the centered sum
// (QuantizedMeanOrSum). They differ by one step on about half the outputs.
enum class MeanRounding { kRequantize, kTruncateSum };

// The output is on the input's grid: equal zero points and a scale ratio of
// exactly 1, which quantize_multiplier writes as 2^30 * 2^(1 - 31) and no
// other float32 ratio rounds to.
inline bool mean_keeps_grid(const MeanS8Params& p) {
  return p.input_zero_point == p.output_zero_point && p.multiplier == (int32_t{1} << 30) && p.shift == 1;
}

void mean_s8(const MeanS8Params& params, const In<int8_t>& input, const Out<int8_t>& output,
             MeanRounding rounding);
// int16 (TFLite's 16x8 scheme): the same arithmetic, clamped to int16.
void mean_s16(const MeanS8Params& params, const In<int16_t>& input, const Out<int16_t>& output,
              MeanRounding rounding);

// Host-side (converter).
inline MeanS8Params prepare_mean_s8(const int32_t* axes, int32_t axis_count, float input_scale,
                                    int32_t input_zero_point, float output_scale,
                                    int32_t output_zero_point) {
  MeanS8Params p{};
  for (int32_t i = 0; i < axis_count; ++i) p.axes[i] = axes[i];
  p.axis_count = axis_count;
  p.input_zero_point = input_zero_point;
  p.output_zero_point = output_zero_point;
  const QuantizedMultiplier q =
      quantize_multiplier(static_cast<double>(input_scale) / static_cast<double>(output_scale));
  p.multiplier = q.multiplier;
  p.shift = q.shift;
  return p;
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

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

struct ReducePrepared {
  int32_t axes[kMaxRank];
  int32_t axis_count;
};

// MEAN's params block: any dtype, or quantized int8.
union MeanPrepared {
  ReducePrepared plain;
  ref::MeanS8Params s8;
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
