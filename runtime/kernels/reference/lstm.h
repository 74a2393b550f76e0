// SPDX-License-Identifier: Apache-2.0
// UNIDIRECTIONAL_SEQUENCE_LSTM (TFLite's builtin), float: one LSTM cell run
// over every time step of the input, its output state and cell state kept in
// variable tensors across steps and invocations. Per step, as TFLite's
// LstmStepFloat: each gate = bias + input weights . x + recurrent weights . h
// (+ peephole weights * c), sigmoid for the input, forget and output gates,
// tanh for the cell gate; c = f * c + i * g (i = 1 - f without an input gate,
// CIFG), clipped to +-cell_clip; the output gate's peephole reads the new c;
// h = o * tanh(c), projected (+ bias, clipped to +-projection_clip) when the
// model has projection weights.
#pragma once

#include <stdint.h>

#include "runtime/core/registry.h"
#include "runtime/core/tensor.h"

namespace floe::ref {

struct LstmParams {
  int32_t batch, time, inputs, cells, outputs;
  int32_t time_major;
  int32_t cifg, peephole, projection;  // 0 or 1
  float cell_clip, projection_clip;    // 0 = none
};

// Gates in TFLite's order: input, forget, cell, output.
struct LstmF32Operands {
  const float* input;              // [batch, time, inputs] or [time, batch, inputs]
  const float* input_weights[4];   // [cells, inputs]; [0] nullptr with CIFG
  const float* recurrent_weights[4];  // [cells, outputs]; [0] nullptr with CIFG
  const float* peephole[3];        // [cells] for i, f, o, or nullptr
  const float* bias[4];            // [cells]; [0] nullptr with CIFG
  const float* projection_weights;  // [outputs, cells] or nullptr
  const float* projection_bias;     // [outputs] or nullptr
  float* output_state;             // [batch, outputs], carried
  float* cell_state;               // [batch, cells], carried
  float* output;                   // like input, with outputs per step
  float* scratch;                  // [5, cells]: one batch row at a time
};

void lstm_f32(const LstmParams& params, const LstmF32Operands& ops);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_lstm(const OpContext& ctx);
Status eval_lstm(const PreparedOp& ctx);

}  // namespace floe::ops
