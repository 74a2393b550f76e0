// SPDX-License-Identifier: Apache-2.0
// Softmax over the last axis: out = exp(beta*(x - max)) / sum(exp(beta*(x - max))).
#pragma once

#include "runtime/kernels/reference/quantization.h"
#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

struct SoftmaxParams {
  float beta = 1.0f;
};

struct SoftmaxOperands {
  In<float> input;  // rank >= 1
  Out<float> output;
};

void softmax_f32(const SoftmaxParams& params, const SoftmaxOperands& ops);

void log_softmax_f32(In<float> input, Out<float> output);

// ---- int8 SOFTMAX (TFLM's integer path) ----
// int8 output: scale 1/256, zero point -128; int16 output: scale 1/65536,
// zero point -32768 (TFLite requires them). Per row of the last axis:
// d = x - max(row); entries with d < diff_min give the output's lowest value;
// the others take exp(d * input_beta) in gemmlowp fixed point (d scaled into
// Q5.26 by input_multiplier << input_left_shift), summed in Q12.19, divided
// through a fixed-point reciprocal and rounded to Q0.8 (Q0.16 for int16).
struct SoftmaxS8Params {
  int32_t input_multiplier;  // beta * input_scale * 2^26 = multiplier * 2^left_shift / 2^31
  int32_t input_left_shift;  // >= 0
  int32_t diff_min;          // most negative d that still contributes
};

// ---- int16 SOFTMAX (TFLite's 16x8 scheme, TFLM's SoftmaxInt16) ----
// Input and output zero point 0, output Q0.15. Per row: d = x - max(row),
// scaled so [-65535, 0] spans [-10, 0] (input_multiplier, input_shift) and
// recentred to int16; exp from a 513-entry table over [-10, 0], the sum's
// reciprocal from one of 1 / (1 + x) over [0, 1] (both interpolated; the
// converter writes them as constants), the product rounded to Q0.15.
struct SoftmaxS16Params {
  int32_t input_multiplier;
  int32_t input_shift;  // TFLite's sign: positive = left
};

struct SoftmaxS16Operands {
  In<int16_t> input;  // rank >= 1
  const int16_t* exp_table;         // [513]
  const int16_t* reciprocal_table;  // [513]
  Out<int16_t> output;
};

void softmax_s16(const SoftmaxS16Params& params, const SoftmaxS16Operands& ops);

struct SoftmaxS8Operands {
  In<int8_t> input;  // rank >= 1
  Out<int8_t> output;
};

// One loop for both output dtypes (int16_output: `output` holds int16): a
// template would link a second copy into every int8 firmware with a SOFTMAX.
void softmax_s8_rows(const SoftmaxS8Params& params, const In<int8_t>& input, void* output, bool int16_output);

inline void softmax_s8(const SoftmaxS8Params& params, const SoftmaxS8Operands& ops) {
  softmax_s8_rows(params, ops.input, ops.output.data, false);
}

struct SoftmaxS8ToS16Operands {
  In<int8_t> input;  // rank >= 1
  Out<int16_t> output;
};

inline void softmax_s8_to_s16(const SoftmaxS8Params& params, const SoftmaxS8ToS16Operands& ops) {
  softmax_s8_rows(params, ops.input, ops.output.data, true);
}

// Host-side (converter): TFLM's PreprocessSoftmaxScaling and CalculateInputRadius.
inline SoftmaxS8Params prepare_softmax_s8(double beta, float input_scale) {
  constexpr int kScaledDiffIntegerBits = 5;
  double real = beta * static_cast<double>(input_scale) *
                static_cast<double>(int64_t{1} << (31 - kScaledDiffIntegerBits));
  const double cap = static_cast<double>(int64_t{1} << 31) - 1.0;
  if (real > cap) real = cap;
  const QuantizedMultiplier q = quantize_multiplier(real);
  return {q.multiplier, q.shift, -calculate_input_radius(kScaledDiffIntegerBits, q.shift)};
}

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

// The params block: float, int8 or int16.
union SoftmaxPrepared {
  ref::SoftmaxParams f32;
  ref::SoftmaxS8Params s8;
  ref::SoftmaxS16Params s16;
};

const char* prepare_softmax(const OpContext& ctx);
Status eval_softmax(const PreparedOp& ctx);
const char* prepare_log_softmax(const OpContext& ctx);
Status eval_log_softmax(const PreparedOp& ctx);

}  // namespace floe::ops
