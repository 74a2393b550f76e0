// SPDX-License-Identifier: Apache-2.0
// UNIDIRECTIONAL_SEQUENCE_LSTM, float (see lstm.h). Sums in TFLite's order:
// each matrix-vector product summed on its own, then added to the gate.
#include "runtime/kernels/reference/lstm.h"

#include <math.h>
#include <stddef.h>

#include "runtime/core/quantization.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {

namespace {

enum Gate { kInputGate = 0, kForgetGate = 1, kCellGate = 2, kOutputGate = 3 };

float dot(const float* row, const float* v, int32_t n) {
  float sum = 0.0f;
  for (int32_t k = 0; k < n; ++k) sum += row[k] * v[k];
  return sum;
}

float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// One gate's pre-activation for one batch row: bias + W x + R h (+ p * c).
void gate_sums(const LstmParams& p, const LstmF32Operands& ops, int gate, const float* x, const float* h,
               const float* peephole, const float* c, float* out) {
  const float* w = ops.input_weights[gate];
  const float* r = ops.recurrent_weights[gate];
  for (int32_t i = 0; i < p.cells; ++i) {
    float acc = ops.bias[gate] != nullptr ? ops.bias[gate][i] : 0.0f;
    acc += dot(w + static_cast<ptrdiff_t>(i) * p.inputs, x, p.inputs);
    acc += dot(r + static_cast<ptrdiff_t>(i) * p.outputs, h, p.outputs);
    if (peephole != nullptr) acc += peephole[i] * c[i];
    out[i] = acc;
  }
}

float clip(float v, float limit) { return limit > 0.0f ? (v < -limit ? -limit : (v > limit ? limit : v)) : v; }

// One step of one batch row: x [inputs] -> h [outputs] (the output state),
// c [cells] updated in place.
void step(const LstmParams& p, const LstmF32Operands& ops, const float* x, float* h, float* c) {
  float* in_gate = ops.scratch;
  float* forget = in_gate + p.cells;
  float* cell = forget + p.cells;
  float* out_gate = cell + p.cells;
  float* hidden = out_gate + p.cells;
  if (!p.cifg) {
    gate_sums(p, ops, kInputGate, x, h, ops.peephole[0], c, in_gate);
    for (int32_t i = 0; i < p.cells; ++i) in_gate[i] = sigmoid(in_gate[i]);
  }
  gate_sums(p, ops, kForgetGate, x, h, ops.peephole[1], c, forget);
  for (int32_t i = 0; i < p.cells; ++i) forget[i] = sigmoid(forget[i]);
  gate_sums(p, ops, kCellGate, x, h, nullptr, c, cell);
  for (int32_t i = 0; i < p.cells; ++i) cell[i] = tanhf(cell[i]);
  for (int32_t i = 0; i < p.cells; ++i) {
    const float input_gate = p.cifg ? 1.0f - forget[i] : in_gate[i];
    c[i] = clip(forget[i] * c[i] + cell[i] * input_gate, p.cell_clip);
  }
  // The output gate's peephole reads the updated cell state.
  gate_sums(p, ops, kOutputGate, x, h, ops.peephole[2], c, out_gate);
  for (int32_t i = 0; i < p.cells; ++i) hidden[i] = sigmoid(out_gate[i]) * tanhf(c[i]);
  if (!p.projection) {
    for (int32_t i = 0; i < p.outputs; ++i) h[i] = hidden[i];
    return;
  }
  for (int32_t o = 0; o < p.outputs; ++o) {
    float acc = ops.projection_bias != nullptr ? ops.projection_bias[o] : 0.0f;
    acc += dot(ops.projection_weights + static_cast<ptrdiff_t>(o) * p.cells, hidden, p.cells);
    h[o] = clip(acc, p.projection_clip);
  }
}

}  // namespace

void lstm_f32(const LstmParams& p, const LstmF32Operands& ops) {
  for (int32_t t = 0; t < p.time; ++t) {
    for (int32_t b = 0; b < p.batch; ++b) {
      const ptrdiff_t row = p.time_major ? static_cast<ptrdiff_t>(t) * p.batch + b : static_cast<ptrdiff_t>(b) * p.time + t;
      float* h = ops.output_state + static_cast<ptrdiff_t>(b) * p.outputs;
      step(p, ops, ops.input + row * p.inputs, h, ops.cell_state + static_cast<ptrdiff_t>(b) * p.cells);
      float* out = ops.output + row * p.outputs;
      for (int32_t i = 0; i < p.outputs; ++i) out[i] = h[i];
    }
  }
}

}  // namespace floe::ref

// ---- adapter: prepare checks the operands once at Init() (and resets the
// states); eval runs the whole sequence on the bound operands.
namespace floe::ops {

namespace {

// TFLite's input slots.
constexpr int kInput = 0, kInputWeights = 1, kRecurrentWeights = 5, kPeephole = 9, kBias = 12,
              kProjectionWeights = 16, kProjectionBias = 17, kOutputState = 18, kCellState = 19,
              kLayerNorm = 20, kSlots = 24;

bool shaped(const TensorView& t, int32_t d0, int32_t d1) {
  return t.shape.rank == 2 && t.shape.dims[0] == d0 && t.shape.dims[1] == d1;
}
bool shaped(const TensorView& t, int32_t d0) { return t.shape.rank == 1 && t.shape.dims[0] == d0; }

}  // namespace

const char* prepare_lstm(const OpContext& ctx) {
  if (ctx.input_count() != kSlots || ctx.output_count() != 2) {
    return FLOE_MSG("UNIDIRECTIONAL_SEQUENCE_LSTM takes TFLite's 24 input slots and writes an output and a scratch");
  }
  for (int i = 0; i < kSlots; ++i) {
    if (ctx.has_input(i) && !is_f32(ctx.input(i))) return FLOE_MSG("LSTM operands must be float32");
  }
  if (!is_f32(ctx.output(0)) || !is_f32(ctx.output(1))) return FLOE_MSG("LSTM operands must be float32");
  for (int i = kLayerNorm; i < kSlots; ++i) {
    if (ctx.has_input(i)) return FLOE_MSG("LSTM layer normalization is not supported");
  }
  const auto* o = ctx.op->options_as_LstmOptions();
  ref::LstmParams& p = ctx.params<ref::LstmParams>();
  const Shape& in = ctx.input(kInput).shape;
  if (in.rank != 3 || !ctx.has_input(kInputWeights + 1) || ctx.input(kInputWeights + 1).shape.rank != 2 ||
      !ctx.has_input(kOutputState) || !ctx.has_input(kCellState)) {
    return FLOE_MSG("LSTM needs a 3-D input, the forget, cell and output weights and both states");
  }
  p.time_major = o->time_major() ? 1 : 0;
  p.time = in.dims[p.time_major ? 0 : 1];
  p.batch = in.dims[p.time_major ? 1 : 0];
  p.inputs = in.dims[2];
  p.cells = ctx.input(kInputWeights + 1).shape.dims[0];
  p.outputs = ctx.input(kOutputState).shape.rank == 2 ? ctx.input(kOutputState).shape.dims[1] : -1;
  p.cifg = ctx.has_input(kInputWeights) ? 0 : 1;
  p.peephole = ctx.has_input(kPeephole + 1) ? 1 : 0;
  p.projection = ctx.has_input(kProjectionWeights) ? 1 : 0;
  p.cell_clip = o->cell_clip();
  p.projection_clip = o->projection_clip();
  if (!(p.cell_clip >= 0.0f) || !(p.projection_clip >= 0.0f)) return FLOE_MSG("LSTM clips must be >= 0");
  for (int g = p.cifg; g < 4; ++g) {
    if (!ctx.has_input(kInputWeights + g) || !ctx.has_input(kRecurrentWeights + g) ||
        !shaped(ctx.input(kInputWeights + g), p.cells, p.inputs) ||
        !shaped(ctx.input(kRecurrentWeights + g), p.cells, p.outputs) ||
        (ctx.has_input(kBias + g) && !shaped(ctx.input(kBias + g), p.cells))) {
      return FLOE_MSG("LSTM gate weights or biases are missing or misshaped");
    }
  }
  if (p.cifg && (ctx.has_input(kRecurrentWeights) || ctx.has_input(kBias) || ctx.has_input(kPeephole))) {
    return FLOE_MSG("LSTM without input weights (CIFG) has no other input gate operand");
  }
  for (int g = p.cifg; g < 3; ++g) {
    if (ctx.has_input(kPeephole + g) != (p.peephole == 1) ||
        (p.peephole && !shaped(ctx.input(kPeephole + g), p.cells))) {
      return FLOE_MSG("LSTM peephole weights must be all present (shaped [cells]) or all absent");
    }
  }
  if ((p.projection && !shaped(ctx.input(kProjectionWeights), p.outputs, p.cells)) ||
      (!p.projection && p.outputs != p.cells) ||
      (ctx.has_input(kProjectionBias) && (!p.projection || !shaped(ctx.input(kProjectionBias), p.outputs)))) {
    return FLOE_MSG("LSTM projection weights [outputs, cells] (or outputs == cells without them) and bias disagree");
  }
  const int32_t out_dims[3] = {p.time_major ? p.time : p.batch, p.time_major ? p.batch : p.time, p.outputs};
  const Shape& out = ctx.output(0).shape;
  if (!shaped(ctx.input(kOutputState), p.batch, p.outputs) || !shaped(ctx.input(kCellState), p.batch, p.cells) ||
      out.rank != 3 || out.dims[0] != out_dims[0] || out.dims[1] != out_dims[1] || out.dims[2] != out_dims[2] ||
      ctx.output(1).shape.num_elements() != int64_t{5} * p.cells) {
    return FLOE_MSG("LSTM states, output or scratch misshaped");
  }
  if (!ctx.input_is_state(kOutputState) || !ctx.input_is_state(kCellState)) {
    return FLOE_MSG("LSTM output and cell states must be variable tensors live throughout");
  }
  reset_variable(ctx.input(kOutputState), 0);
  reset_variable(ctx.input(kCellState), 0);
  return nullptr;
}

Status eval_lstm(const PreparedOp& ctx) {
  auto f = [&](int i) { return ctx.has_input(i) ? ctx.input(i).as<const float>() : nullptr; };
  ref::LstmF32Operands ops{};
  ops.input = f(kInput);
  for (int g = 0; g < 4; ++g) {
    ops.input_weights[g] = f(kInputWeights + g);
    ops.recurrent_weights[g] = f(kRecurrentWeights + g);
    ops.bias[g] = f(kBias + g);
  }
  for (int g = 0; g < 3; ++g) ops.peephole[g] = f(kPeephole + g);
  ops.projection_weights = f(kProjectionWeights);
  ops.projection_bias = f(kProjectionBias);
  ops.output_state = ctx.input(kOutputState).as<float>();
  ops.cell_state = ctx.input(kCellState).as<float>();
  ops.output = ctx.output(0).as<float>();
  ops.scratch = ctx.output(1).as<float>();
  ref::lstm_f32(ctx.params_as<ref::LstmParams>(), ops);
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, UNIDIRECTIONAL_SEQUENCE_LSTM, ANY, ref::LstmParams, ops::prepare_lstm, ops::eval_lstm)
