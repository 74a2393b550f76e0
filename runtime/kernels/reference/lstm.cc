// SPDX-License-Identifier: Apache-2.0
// UNIDIRECTIONAL_SEQUENCE_LSTM, float (see lstm.h). Sums in TFLite's order:
// each matrix-vector product summed on its own, then added to the gate.
#include "runtime/kernels/reference/lstm.h"

#include <math.h>
#include <stddef.h>

#include "runtime/core/quantization.h"
#include "runtime/kernels/reference/quantization.h"
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

// Every step of every batch row in the input's order: `step` updates the
// row's output state h (and its cell state), which is also that step's output.
template <typename T, typename Operands, typename Step>
void run_sequence(const LstmParams& p, const Operands& ops, Step step) {
  for (int32_t t = 0; t < p.time; ++t) {
    for (int32_t b = 0; b < p.batch; ++b) {
      const ptrdiff_t row = p.time_major ? static_cast<ptrdiff_t>(t) * p.batch + b : static_cast<ptrdiff_t>(b) * p.time + t;
      T* h = ops.output_state + static_cast<ptrdiff_t>(b) * p.outputs;
      step(p, ops, ops.input + row * p.inputs, h, ops.cell_state + static_cast<ptrdiff_t>(b) * p.cells);
      T* out = ops.output + row * p.outputs;
      for (int32_t i = 0; i < p.outputs; ++i) out[i] = h[i];
    }
  }
}

// (Steps passed as lambdas, not function pointers: direct calls keep the
// firmware's stack-depth analysis exact.)
void lstm_f32(const LstmParams& p, const LstmF32Operands& ops) {
  run_sequence<float>(p, ops, [](const LstmParams& q, const LstmF32Operands& o, const float* x, float* h, float* c) {
    step(q, o, x, h, c);
  });
}

namespace {

int16_t saturate16(int32_t v) { return static_cast<int16_t>(v < INT16_MIN ? INT16_MIN : (v > INT16_MAX ? INT16_MAX : v)); }

// One gate's Q3.12 pre-activation: the input's product (with the bias)
// requantized, then the output state's requantized and added, each
// saturated to int16 as TFLite's MatrixBatchVectorMultiplyAccumulate does.
void gate_s8(const LstmParams& p, const LstmS8Operands& ops, int gate, const int8_t* x, const int8_t* h, int16_t* out) {
  const int8_t* w = ops.input_weights[gate];
  const int8_t* r = ops.recurrent_weights[gate];
  for (int32_t i = 0; i < p.cells; ++i) {
    // Sums in 32 bits wrap (TFLite's would overflow) rather than be undefined.
    uint32_t acc = ops.bias[gate] != nullptr ? static_cast<uint32_t>(ops.bias[gate][i]) : 0;
    const int8_t* w_row = w + static_cast<ptrdiff_t>(i) * p.inputs;
    for (int32_t k = 0; k < p.inputs; ++k) {
      acc += static_cast<uint32_t>(int32_t{w_row[k]} * (int32_t{x[k]} + p.input_offset));
    }
    const int32_t from_input = saturate16(multiply_by_quantized_multiplier(
        static_cast<int32_t>(acc), p.gate_multiplier[2 * gate], p.gate_shift[2 * gate]));
    uint32_t acc_h = 0;
    const int8_t* r_row = r + static_cast<ptrdiff_t>(i) * p.outputs;
    for (int32_t k = 0; k < p.outputs; ++k) {
      acc_h += static_cast<uint32_t>(int32_t{r_row[k]} * (int32_t{h[k]} + p.state_offset));
    }
    const int64_t sum = int64_t{multiply_by_quantized_multiplier(static_cast<int32_t>(acc_h),
                                                                 p.gate_multiplier[2 * gate + 1],
                                                                 p.gate_shift[2 * gate + 1])} +
                        from_input;
    out[i] = static_cast<int16_t>(sum < INT16_MIN ? INT16_MIN : (sum > INT16_MAX ? INT16_MAX : sum));
  }
}

void step_s8(const LstmParams& p, const LstmS8Operands& ops, const int8_t* x, int8_t* h, int16_t* c) {
  int16_t* in_gate = ops.scratch;
  int16_t* forget = in_gate + p.cells;
  int16_t* cell = forget + p.cells;
  int16_t* out_gate = cell + p.cells;
  int16_t* tanh_c = out_gate + p.cells;
  constexpr int kGateIntegerBits = 3;  // Q3.12
  if (!p.cifg) {
    gate_s8(p, ops, kInputGate, x, h, in_gate);
    for (int32_t i = 0; i < p.cells; ++i) in_gate[i] = fixed_point16::logistic(in_gate[i], kGateIntegerBits);
  }
  gate_s8(p, ops, kForgetGate, x, h, forget);
  for (int32_t i = 0; i < p.cells; ++i) forget[i] = fixed_point16::logistic(forget[i], kGateIntegerBits);
  gate_s8(p, ops, kCellGate, x, h, cell);
  for (int32_t i = 0; i < p.cells; ++i) cell[i] = fixed_point16::tanh(cell[i], kGateIntegerBits);
  gate_s8(p, ops, kOutputGate, x, h, out_gate);
  for (int32_t i = 0; i < p.cells; ++i) out_gate[i] = fixed_point16::logistic(out_gate[i], kGateIntegerBits);
  const int cell_bits = 15 + p.cell_exponent;  // tanh's input: the cell state's integer bits
  for (int32_t i = 0; i < p.cells; ++i) {
    // Products of Q0.15 values: f * c keeps c's scale (>> 15); i * g is
    // Q0.30, brought to the cell's 2^cell_exponent.
    const int32_t kept = static_cast<int16_t>(rounding_divide_by_pot(int32_t{forget[i]} * c[i], 15));
    const int32_t input_gate = p.cifg ? INT16_MAX - forget[i] : in_gate[i];
    const int32_t added = static_cast<int16_t>(rounding_divide_by_pot(input_gate * cell[i], 30 + p.cell_exponent));
    int32_t updated = saturate16(kept + added);
    if (p.cell_clip_steps > 0) {
      updated = updated < -p.cell_clip_steps ? -p.cell_clip_steps
                                             : (updated > p.cell_clip_steps ? p.cell_clip_steps : updated);
    }
    c[i] = static_cast<int16_t>(updated);
    tanh_c[i] = fixed_point16::tanh(c[i], cell_bits);
  }
  for (int32_t i = 0; i < p.cells; ++i) {
    const int64_t hidden =
        int64_t{multiply_by_quantized_multiplier(int32_t{out_gate[i]} * tanh_c[i], p.hidden_multiplier, p.hidden_shift)} +
        p.hidden_zero_point;
    h[i] = static_cast<int8_t>(hidden < INT8_MIN ? INT8_MIN : (hidden > INT8_MAX ? INT8_MAX : hidden));
  }
}

}  // namespace

void lstm_s8(const LstmParams& p, const LstmS8Operands& ops) {
  run_sequence<int8_t>(p, ops, [](const LstmParams& q, const LstmS8Operands& o, const int8_t* x, int8_t* h, int16_t* c) {
    step_s8(q, o, x, h, c);
  });
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

// The shapes and operand presence both dtypes share.
const char* check_lstm(const OpContext& ctx, ref::LstmParams& p) {
  if (ctx.input_count() != kSlots || ctx.output_count() != 2) {
    return FLOE_MSG("UNIDIRECTIONAL_SEQUENCE_LSTM takes TFLite's 24 input slots and writes an output and a scratch");
  }
  for (int i = kLayerNorm; i < kSlots; ++i) {
    if (ctx.has_input(i)) return FLOE_MSG("LSTM layer normalization is not supported");
  }
  const auto* o = ctx.op->options_as_LstmOptions();
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
  return nullptr;
}

const char* prepare_lstm(const OpContext& ctx) {
  ref::LstmParams& p = ctx.params<ref::LstmParams>();
  if (const char* why = check_lstm(ctx, p)) return why;
  for (int i = 0; i < kSlots; ++i) {
    if (ctx.has_input(i) && !is_f32(ctx.input(i))) return FLOE_MSG("LSTM operands must be float32");
  }
  if (!is_f32(ctx.output(0)) || !is_f32(ctx.output(1))) return FLOE_MSG("LSTM operands must be float32");
  reset_variable(ctx.input(kOutputState), 0);
  reset_variable(ctx.input(kCellState), 0);
  return nullptr;
}

// int8 input, weights, output state and output, int32 biases, an int16 cell
// state and scratch; the converter's multipliers (Requantization: offsets
// {input, output state}, the eight gate multipliers, the hidden one) and the
// cell exponent and clip (LstmOptions).
const char* prepare_lstm_s8(const OpContext& ctx) {
  ref::LstmParams& p = ctx.params<ref::LstmParams>();
  if (const char* why = check_lstm(ctx, p)) return why;
  bool typed = is_s8(ctx.input(kInput)) && is_s8(ctx.input(kOutputState)) && is_s8(ctx.output(0)) &&
               ctx.input(kCellState).dtype == DType::kInt16 && ctx.output(1).dtype == DType::kInt16;
  for (int g = 0; g < 4; ++g) {
    typed = typed && (!ctx.has_input(kInputWeights + g) || is_s8(ctx.input(kInputWeights + g))) &&
            (!ctx.has_input(kRecurrentWeights + g) || is_s8(ctx.input(kRecurrentWeights + g))) &&
            (!ctx.has_input(kBias + g) || ctx.input(kBias + g).dtype == DType::kInt32);
  }
  if (!typed) {
    return FLOE_MSG("int8 LSTM takes int8 input, weights, output state and output, int32 biases, an int16 cell state");
  }
  if (p.peephole || p.projection) return FLOE_MSG("int8 LSTM with peephole or projection weights is not supported");
  const char* why = nullptr;
  const schema::Requantization* r = requantization_of(ctx, &why);
  if (r == nullptr) return why;
  const auto* o = ctx.op->options_as_LstmOptions();
  p.input_offset = entry(r->input_offsets(), 0);
  p.state_offset = entry(r->input_offsets(), 1);
  bool valid = p.input_offset >= -INT8_MAX && p.input_offset <= 128 && p.state_offset >= -INT8_MAX &&
               p.state_offset <= 128;
  for (uint32_t k = 0; k < 8; ++k) {
    p.gate_multiplier[k] = entry(r->input_multipliers(), k);
    p.gate_shift[k] = entry(r->input_shifts(), k);
    valid = valid && valid_multiplier(p.gate_multiplier[k], p.gate_shift[k]);
  }
  p.hidden_multiplier = r->output_multiplier();
  p.hidden_shift = r->output_shift();
  p.hidden_zero_point = r->output_offset();
  p.cell_exponent = o->cell_scale_log2();
  p.cell_clip_steps = o->quantized_cell_clip();
  // tanh of the cell state takes 15 + exponent integer bits, at most 6.
  if (!valid || !valid_multiplier(p.hidden_multiplier, p.hidden_shift) || p.cell_exponent < -15 ||
      p.cell_exponent > -9 || p.cell_clip_steps < 0 || p.cell_clip_steps > INT16_MAX) {
    return FLOE_MSG("int8 LSTM zero points, multipliers, cell exponent or clip out of range");
  }
  reset_variable(ctx.input(kOutputState), -p.state_offset);
  reset_variable(ctx.input(kCellState), 0);
  return nullptr;
}

Status eval_lstm(const PreparedOp& ctx) {
  auto f = [&](int i) { return ctx.has_input(i) ? data_as<const float>(ctx.input(i)) : nullptr; };
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
  ops.output_state = data_as<float>(ctx.input(kOutputState));
  ops.cell_state = data_as<float>(ctx.input(kCellState));
  ops.output = data_as<float>(ctx.output(0));
  ops.scratch = data_as<float>(ctx.output(1));
  ref::lstm_f32(ctx.params_as<ref::LstmParams>(), ops);
  return Status::kOk;
}

Status eval_lstm_s8(const PreparedOp& ctx) {
  auto w = [&](int i) { return ctx.has_input(i) ? data_as<const int8_t>(ctx.input(i)) : nullptr; };
  ref::LstmS8Operands ops{};
  ops.input = w(kInput);
  for (int g = 0; g < 4; ++g) {
    ops.input_weights[g] = w(kInputWeights + g);
    ops.recurrent_weights[g] = w(kRecurrentWeights + g);
    ops.bias[g] = ctx.has_input(kBias + g) ? data_as<const int32_t>(ctx.input(kBias + g)) : nullptr;
  }
  ops.output_state = data_as<int8_t>(ctx.input(kOutputState));
  ops.cell_state = data_as<int16_t>(ctx.input(kCellState));
  ops.output = data_as<int8_t>(ctx.output(0));
  ops.scratch = data_as<int16_t>(ctx.output(1));
  ref::lstm_s8(ctx.params_as<ref::LstmParams>(), ops);
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, UNIDIRECTIONAL_SEQUENCE_LSTM, ANY, ref::LstmParams, ops::prepare_lstm, ops::eval_lstm)
FLOE_KERNEL(REFERENCE, UNIDIRECTIONAL_SEQUENCE_LSTM, INT8, ref::LstmParams, ops::prepare_lstm_s8, ops::eval_lstm_s8)
