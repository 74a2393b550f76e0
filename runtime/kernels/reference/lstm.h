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
//
// int8 as TFLite's 8x8_16 integer LSTM (EvalInteger8x8_16; TFLM's int8
// LSTM computes the same steps): each gate is the input's and the output
// state's int32 products, each requantized to Q3.12 int16 (the second added
// with saturation); gemmlowp's int16 sigmoid (and tanh, 3 integer bits, for
// the cell gate) gives Q0.15; c = f * c >> 15 + i * g >> (30 + cell exponent)
// in the int16 cell state (scale 2^cell exponent), saturated and clipped;
// h = o * tanh(c) requantized to the int8 output state. No peephole,
// projection or layer normalization in int8.
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
  // int8 only: -zero points of input and output state; per gate g, the
  // input's ([2g]) and the output state's ([2g + 1]) multiplier to Q3.12;
  // o * tanh(c) (Q0.30) to the output state; the cell state's exponent and
  // clip in its steps (0 = none).
  int32_t input_offset, state_offset;
  int32_t gate_multiplier[8], gate_shift[8];
  int32_t hidden_multiplier, hidden_shift, hidden_zero_point;
  int32_t cell_exponent, cell_clip_steps;
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

struct LstmS8Operands {
  const int8_t* input;
  const int8_t* input_weights[4];      // per tensor, zero point 0
  const int8_t* recurrent_weights[4];
  const int32_t* bias[4];              // or nullptr
  int8_t* output_state;                // [batch, outputs], carried
  int16_t* cell_state;                 // [batch, cells], carried
  int8_t* output;
  int16_t* scratch;                    // [5, cells]
};

void lstm_s8(const LstmParams& params, const LstmS8Operands& ops);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_lstm(const OpContext& ctx);
const char* prepare_lstm_s8(const OpContext& ctx);
Status eval_lstm(const PreparedOp& ctx);
Status eval_lstm_s8(const PreparedOp& ctx);

}  // namespace floe::ops
