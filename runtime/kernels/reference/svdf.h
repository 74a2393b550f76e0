// SPDX-License-Identifier: Apache-2.0
// SVDF (TFLite's builtin): a rank-r factorized convolution over time that keeps
// the last `memory` feature projections of every filter in a state tensor. One
// call is one time step: the state moves one element left, each filter's
// projection of the input lands in its newest slot, and each output unit is
// its bias plus the time-weighted sums of its `rank` filters. Float as TFLM's
// EvalFloatSvdfReference (activation applied), integer as its
// EvalIntegerSvdfReference (int8 input and output, int16 or int8 state; the
// output clamped to int8 only).
#pragma once

#include <stdint.h>

#include "runtime/core/registry.h"
#include "runtime/core/tensor.h"

namespace floe::ref {

struct SvdfParams {
  int32_t rank;
  int32_t activation;  // floe::Activation (float only)
  int32_t input_zero_point;
  int32_t state_zero_point;
  int32_t output_zero_point;
  int32_t to_state_multiplier, to_state_shift;    // input * weights_feature -> state
  int32_t to_output_multiplier, to_output_shift;  // state * weights_time -> output
};

// Shapes (checked by the prepare step): input [batch, input_size],
// weights_feature [filters, input_size], weights_time [filters, memory],
// bias [filters / rank] or data == nullptr, state [batch, filters * memory],
// output [batch, filters / rank].
template <typename State>
struct SvdfOperands {
  In<int8_t> input;
  In<int8_t> weights_feature;
  In<State> weights_time;
  In<int32_t> bias;
  State* state;
  Out<int8_t> output;
};

struct SvdfF32Operands {
  In<float> input;
  In<float> weights_feature;
  In<float> weights_time;
  In<float> bias;
  float* state;
  Out<float> output;
};

void svdf_f32(const SvdfParams& params, const SvdfF32Operands& ops);
void svdf_s8_state16(const SvdfParams& params, const SvdfOperands<int16_t>& ops);
void svdf_s8_state8(const SvdfParams& params, const SvdfOperands<int8_t>& ops);

}  // namespace floe::ref

// The op's adapter (registered as rows in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_svdf(const OpContext& ctx);
const char* prepare_svdf_quantized(const OpContext& ctx);

}  // namespace floe::ops
