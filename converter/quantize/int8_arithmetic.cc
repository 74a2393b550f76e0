// SPDX-License-Identifier: Apache-2.0
#include "converter/quantize/int8_arithmetic.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>

#include "converter/ir/error.h"
#include "converter/quantize/requantization.h"
#include "schemas/contract/op_traits.h"

namespace floe::conv {
namespace {

using quant::QuantizedMultiplier;

bool is_int8(const LoweredModel& m, int v) {
  return v >= 0 && m.values[static_cast<size_t>(v)].dtype == DType::kInt8;
}

bool is_int16(const LoweredModel& m, int v) {
  return v >= 0 && m.values[static_cast<size_t>(v)].dtype == DType::kInt16;
}

// int8 holding real values (a scale): plain int8 integers from a TF graph
// keep their typed, wrapping arithmetic.
bool is_quantized_int8(const LoweredModel& m, int v) {
  return is_int8(m, v) && !m.values[static_cast<size_t>(v)].quantization.empty();
}

// int16 activations of TFLite's 16x8 scheme (int8 weights, int64 biases).
bool is_quantized_int16(const LoweredModel& m, int v) {
  return is_int16(m, v) && !m.values[static_cast<size_t>(v)].quantization.empty();
}

// int32 with a scale: only a QUANTIZE reads it (requantized to int16 or int8).
bool is_quantized_int32(const LoweredModel& m, int v) {
  return v >= 0 && m.values[static_cast<size_t>(v)].dtype == DType::kInt32 &&
         !m.values[static_cast<size_t>(v)].quantization.empty();
}

[[noreturn]] void refuse(const LoweredOp& op, const std::string& why) {
  ErrorLocation where;
  where.node = op.node_name;
  where.op = schema::EnumNameOpCode(op.opcode);
  throw ConvertError("quantized op '" + op.node_name + "' (" + where.op + "): " + why,
                     ErrorCategory::kUnsupported, where);
}

// The kernels take a multiplier with shift in [-31, 30] (op_adapter.h,
// valid_multiplier): a ratio of scales of 2^30 or more cannot be represented.
void check_multiplier(const LoweredOp& op, const QuantizedMultiplier& q) {
  if (q.multiplier < 0 || q.shift < -31 || q.shift > 30) {
    refuse(op, "its scales give a requantization factor of 2^" + std::to_string(q.shift) +
                   " or more, beyond the int8 kernels' range (below 2^30)");
  }
}

// The per-tensor scale and zero point of a quantized activation, and the
// integers its dtype holds.
struct Affine {
  float scale = 0;
  int32_t zero_point = 0;
  quant::IntRange bounds;
};

// `symmetric16`: an int16 (or int32) value must have zero point 0, as
// TFLite's 16x8 kernels assume; the few ops that take an offset there (SVDF's
// state, SOFTMAX's int16 output, QUANTIZE from int16) pass false.
Affine per_tensor(const LoweredModel& m, const LoweredOp& op, int v, const char* what, bool symmetric16 = true) {
  const Quantization& q = m.values[static_cast<size_t>(v)].quantization;
  if (q.scale.size() != 1 || q.zero_point.size() != 1) {
    refuse(op, std::string(what) + " '" + m.values[static_cast<size_t>(v)].name +
                   "' needs one scale and zero point");
  }
  if (!(q.scale[0] > 0) || !std::isfinite(q.scale[0])) refuse(op, std::string(what) + " scale must be > 0");
  const DType dtype = m.values[static_cast<size_t>(v)].dtype;
  if (dtype == DType::kInt16 || dtype == DType::kInt32) {
    // TFLite's 16x8 scheme is symmetric: its kernels apply no int16 offset.
    if (symmetric16 && q.zero_point[0] != 0) {
      refuse(op, std::string(what) + " '" + m.values[static_cast<size_t>(v)].name + "' is " + dtype_name(dtype) +
                     " with zero point " + std::to_string(q.zero_point[0]) + "; TFLite's 16x8 scheme needs 0");
    }
    const quant::IntRange bounds = dtype == DType::kInt16 ? quant::IntRange{-32768, 32767}
                                                          : quant::IntRange{INT32_MIN, INT32_MAX};
    if (q.zero_point[0] < bounds.min || q.zero_point[0] > bounds.max) {
      refuse(op, std::string(what) + " zero point outside " + dtype_name(dtype));
    }
    return {q.scale[0], static_cast<int32_t>(q.zero_point[0]), bounds};
  }
  if (q.zero_point[0] < -128 || q.zero_point[0] > 127) refuse(op, std::string(what) + " zero point outside int8");
  return {q.scale[0], static_cast<int32_t>(q.zero_point[0]), quant::IntRange{}};
}

quant::FusedActivation fused(schema::Activation a) {
  switch (a) {
    case schema::Activation::RELU: return quant::FusedActivation::kRelu;
    case schema::Activation::RELU6: return quant::FusedActivation::kRelu6;
    default: return quant::FusedActivation::kNone;
  }
}

std::shared_ptr<schema::RequantizationT> clamp_only(const Affine& out, schema::Activation act) {
  auto r = std::make_shared<schema::RequantizationT>();
  const quant::IntRange range = quant::activation_range(fused(act), out.scale, out.zero_point, out.bounds);
  r->output_offset = out.zero_point;
  r->activation_min = range.min;
  r->activation_max = range.max;
  return r;
}

// A 1-D constant of int32 or int16 values added to the model.
template <typename T>
int add_vector_constant(LoweredModel* m, const std::string& name, DType dtype, const std::vector<T>& data) {
  auto t = std::make_shared<HostTensor>();
  t->dtype = dtype;
  t->shape = {static_cast<int64_t>(data.size())};
  t->data.resize(data.size() * sizeof(T));
  std::memcpy(t->data.data(), data.data(), t->data.size());
  Value v;
  v.name = name;
  v.dtype = dtype;
  v.shape = t->shape;
  v.constant = std::move(t);
  return m->add_value(std::move(v));
}

int add_int32_constant(LoweredModel* m, const std::string& name, const std::vector<int32_t>& data) {
  return add_vector_constant(m, name, DType::kInt32, data);
}

// Weight scales, one per output channel or one, checked against the layout.
std::vector<float> weight_scales(const LoweredModel& m, const LoweredOp& op, int64_t channels,
                                 int32_t channel_dim) {
  const Value& w = m.values[static_cast<size_t>(op.inputs[1])];
  const Quantization& q = w.quantization;
  if (q.scale.empty()) refuse(op, "weights '" + w.name + "' are not quantized");
  for (int64_t zp : q.zero_point) {
    if (zp != 0 && op.opcode != schema::OpCode::MATMUL) refuse(op, "weights must be symmetric (zero point 0)");
  }
  if (q.scale.size() > 1 && (static_cast<int64_t>(q.scale.size()) != channels || q.dimension != channel_dim)) {
    refuse(op, "per-channel weight scales must follow the output channels");
  }
  for (float s : q.scale) {
    if (!(s > 0) || !std::isfinite(s)) refuse(op, "weight scales must be > 0");
  }
  return q.scale;
}

void check_bias(const LoweredModel& m, const LoweredOp& op, int64_t channels) {
  if (op.inputs.size() < 3 || op.inputs[2] < 0) return;
  const Value& b = m.values[static_cast<size_t>(op.inputs[2])];
  if (b.dtype != DType::kInt32 || b.shape.size() != 1 || b.shape[0] != channels) {
    refuse(op, "bias must be int32 [" + std::to_string(channels) + "]");
  }
}

// 16x8 ops accumulate in int64 with an int64 bias; an int32 bias (which
// TFLite also accepts) is widened once here, so the kernel has one form.
void widen_bias(LoweredModel* m, LoweredOp& op, int64_t channels) {
  if (op.inputs.size() < 3 || op.inputs[2] < 0) return;
  const Value& b = m->values[static_cast<size_t>(op.inputs[2])];
  if ((b.dtype != DType::kInt64 && b.dtype != DType::kInt32) || b.shape.size() != 1 || b.shape[0] != channels ||
      !b.is_constant()) {
    refuse(op, "bias must be a constant int64 (or int32) [" + std::to_string(channels) + "]");
  }
  if (b.dtype == DType::kInt64) return;
  auto t = std::make_shared<HostTensor>();
  t->dtype = DType::kInt64;
  t->shape = b.shape;
  t->data.resize(static_cast<size_t>(channels) * sizeof(int64_t));
  for (int64_t c = 0; c < channels; ++c) {
    const int64_t v = b.constant->as<int32_t>()[c];
    std::memcpy(&t->data[static_cast<size_t>(c) * sizeof(int64_t)], &v, sizeof(v));
  }
  Value wide = b;
  wide.name = b.name + "/int64";
  wide.dtype = DType::kInt64;
  wide.constant = std::move(t);
  op.inputs[2] = m->add_value(std::move(wide));
}

// CONV2D, DEPTHWISE_CONV2D, MATMUL: offsets, clamp range, and the per-channel
// multiplier/shift arrays as constant inputs 3 and 4.
void weighted(LoweredModel* m, LoweredOp& op) {
  const Affine in = per_tensor(*m, op, op.inputs[0], "input");
  const Affine out = per_tensor(*m, op, op.outputs[0], "output");
  if (!is_int8(*m, op.inputs[1])) refuse(op, "weights must be int8");
  const bool wide = is_int16(*m, op.inputs[0]);
  if (wide != is_int16(*m, op.outputs[0])) refuse(op, "input and output must both be int16 (16x8) or both int8");
  if (!wide && op.opcode == schema::OpCode::TRANSPOSE_CONV2D) refuse(op, "floe has no int8 kernel for this op yet");
  int64_t channels = 0;
  int32_t channel_dim = 0;
  if (op.opcode == schema::OpCode::TRANSPOSE_CONV2D) {  // HWOI, as the float op
    const Value& w = m->values[static_cast<size_t>(op.inputs[1])];
    if (w.shape.size() != 4 || !w.is_constant()) refuse(op, "filter must be a constant 4-D tensor");
    channels = w.shape[2];
    channel_dim = 2;
  } else if (op.opcode == schema::OpCode::CONV2D) {  // HWIO, as the float op
    const Value& w = m->values[static_cast<size_t>(op.inputs[1])];
    if (w.shape.size() != 4 || !w.is_constant()) refuse(op, "filter must be a constant 4-D tensor");
    channels = w.shape[3];
    channel_dim = 3;
  } else if (op.opcode == schema::OpCode::DEPTHWISE_CONV2D) {
    const Value& w = m->values[static_cast<size_t>(op.inputs[1])];
    if (w.shape.size() != 4 || !w.is_constant()) refuse(op, "filter must be a constant 4-D tensor");
    // [kh, kw, c, mult]: output channel c * mult + k. Per-channel scales run
    // along that flattened axis, which is axis 2 (mult 1) or 3 (one channel).
    channels = w.shape[2] * w.shape[3];
    channel_dim = w.shape[3] == 1 ? 2 : 3;
    if (w.quantization.scale.size() > 1 && w.shape[2] > 1 && w.shape[3] > 1) {
      refuse(op, "per-channel depthwise scales over channels and multipliers at once");
    }
  } else {  // MATMUL: weights [N, K] (transpose_b), as TFLite's FULLY_CONNECTED
    auto* o = op.options.AsMatMulOptions();
    if (o == nullptr || o->transpose_a) refuse(op, "int8 MATMUL needs an untransposed input");
    Value& w = m->values[static_cast<size_t>(op.inputs[1])];
    if (w.shape.size() != 2) refuse(op, "weights must be 2-D");
    if (!o->transpose_b) {
      if (!w.is_constant()) refuse(op, "int8 MATMUL needs constant weights");
      const int64_t k = w.shape[0], n = w.shape[1];
      auto t = std::make_shared<HostTensor>(*w.constant);
      for (int64_t r = 0; r < k; ++r)
        for (int64_t c = 0; c < n; ++c) t->as<int8_t>()[c * k + r] = w.constant->as<int8_t>()[r * n + c];
      t->shape = {n, k};
      Value nk = w;
      nk.name = w.name + "/nk";
      nk.shape = t->shape;
      nk.constant = std::move(t);
      if (nk.quantization.scale.size() > 1) nk.quantization.dimension = 0;
      op.inputs[1] = m->add_value(std::move(nk));
      o->transpose_b = true;
    }
    channels = m->values[static_cast<size_t>(op.inputs[1])].shape[0];
  }
  const std::vector<float> scales = weight_scales(*m, op, channels, channel_dim);
  if (wide) {
    widen_bias(m, op, channels);
  } else {
    check_bias(*m, op, channels);
  }

  std::vector<QuantizedMultiplier> q;
  if (op.opcode == schema::OpCode::MATMUL && scales.size() == 1) {
    q = {quant::fully_connected_multiplier(in.scale, scales[0], out.scale)};
  } else {
    q = quant::channel_multipliers(in.scale, scales, out.scale);
  }
  std::vector<int32_t> mult, shift;
  for (const QuantizedMultiplier& c : q) {
    check_multiplier(op, c);
    // The 64-bit requantization shifts right by 15 - shift (>= 8).
    if (wide && c.shift > 7) refuse(op, "its scales give a requantization factor of 2^" + std::to_string(c.shift) +
                                            " or more, beyond the 16x8 kernels' range (below 2^7)");
    mult.push_back(c.multiplier);
    shift.push_back(c.shift);
  }
  auto r = clamp_only(out, activation_of(op));
  r->input_offsets = {-in.zero_point};
  if (op.opcode == schema::OpCode::MATMUL) {
    const Quantization& wq = m->values[static_cast<size_t>(op.inputs[1])].quantization;
    if (wq.zero_point.size() > 1) {
      for (int64_t zp : wq.zero_point) {
        if (zp != wq.zero_point[0]) refuse(op, "per-channel weight zero points must be equal");
      }
    }
    r->input_offsets.push_back(-static_cast<int32_t>(wq.zero_point.empty() ? 0 : wq.zero_point[0]));
  }
  r->output_multiplier = mult[0];
  r->output_shift = shift[0];
  op.requantization = std::move(r);
  op.inputs.resize(3, -1);
  op.inputs.push_back(add_int32_constant(m, op.node_name + "/requant_multiplier", mult));
  op.inputs.push_back(add_int32_constant(m, op.node_name + "/requant_shift", shift));
}

void same_quantization(const LoweredModel& m, const LoweredOp& op, int a, int b) {
  const Affine qa = per_tensor(m, op, a, "input");
  const Affine qb = per_tensor(m, op, b, "output");
  if (qa.scale != qb.scale || qa.zero_point != qb.zero_point) {
    refuse(op, "input and output must share scale and zero point");
  }
}

void add_sub_mul(const LoweredModel& m, LoweredOp& op) {
  const Affine a = per_tensor(m, op, op.inputs[0], "input 1");
  const Affine b = per_tensor(m, op, op.inputs[1], "input 2");
  const Affine out = per_tensor(m, op, op.outputs[0], "output");
  const bool wide = is_int16(m, op.outputs[0]);
  if (wide != is_int16(m, op.inputs[0]) || wide != is_int16(m, op.inputs[1])) {
    refuse(op, "inputs and output must all be int16 or all int8");
  }
  auto r = clamp_only(out, schema::Activation::NONE);
  r->input_offsets = {-a.zero_point, -b.zero_point};
  if (op.opcode == schema::OpCode::MUL) {
    const QuantizedMultiplier q = quant::mul_multiplier(a.scale, b.scale, out.scale);
    check_multiplier(op, q);
    r->output_multiplier = q.multiplier;
    r->output_shift = q.shift;
  } else {
    // TFLM shifts int16 inputs left by 15 bits instead of 20.
    const quant::AddSubRequantization q = quant::add_sub_requantization(a.scale, b.scale, out.scale, wide ? 15 : 20);
    check_multiplier(op, q.input1);
    check_multiplier(op, q.input2);
    check_multiplier(op, q.output);
    r->left_shift = q.left_shift;
    r->input_multipliers = {q.input1.multiplier, q.input2.multiplier};
    r->input_shifts = {q.input1.shift, q.input2.shift};
    r->output_multiplier = q.output.multiplier;
    r->output_shift = q.output.shift;
  }
  op.requantization = std::move(r);
}

// A RELU/RELU6 that is the only reader of an int8 ADD/SUB/MUL result and
// keeps its quantization narrows that op's clamp range instead of running.
int fold_activations(LoweredModel* m) {
  std::vector<int> readers(m->values.size(), 0);
  for (const LoweredOp& op : m->ops)
    for (int v : op.inputs)
      if (v >= 0) ++readers[static_cast<size_t>(v)];
  for (int v : m->outputs) ++readers[static_cast<size_t>(v)];
  std::vector<int> producer(m->values.size(), -1);
  for (size_t i = 0; i < m->ops.size(); ++i)
    for (int v : m->ops[i].outputs) producer[static_cast<size_t>(v)] = static_cast<int>(i);

  int folded = 0;
  std::vector<bool> drop(m->ops.size(), false);
  for (size_t i = 0; i < m->ops.size(); ++i) {
    LoweredOp& act = m->ops[i];
    const bool relu = act.opcode == schema::OpCode::RELU || act.opcode == schema::OpCode::RELU6;
    if (!relu || act.inputs.size() != 1 || !is_int8(*m, act.inputs[0])) continue;
    const int in = act.inputs[0], out = act.outputs[0];
    const int p = producer[static_cast<size_t>(in)];
    if (p < 0 || readers[static_cast<size_t>(in)] != 1) continue;
    LoweredOp& src = m->ops[static_cast<size_t>(p)];
    if (!src.requantization || src.outputs.size() != 1) continue;
    const Quantization& qi = m->values[static_cast<size_t>(in)].quantization;
    const Quantization& qo = m->values[static_cast<size_t>(out)].quantization;
    if (qi.scale != qo.scale || qi.zero_point != qo.zero_point || qi.scale.size() != 1) continue;
    const quant::IntRange r = quant::activation_range(
        act.opcode == schema::OpCode::RELU ? quant::FusedActivation::kRelu : quant::FusedActivation::kRelu6,
        qo.scale[0], static_cast<int32_t>(qo.zero_point[0]));
    src.requantization->activation_min = std::max(src.requantization->activation_min, r.min);
    src.requantization->activation_max = std::min(src.requantization->activation_max, r.max);
    src.outputs[0] = out;
    drop[i] = true;
    ++folded;
  }
  std::vector<LoweredOp> kept;
  for (size_t i = 0; i < m->ops.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(m->ops[i]));
  m->ops = std::move(kept);
  return folded;
}

}  // namespace

// int8 SVDF: the input's projection onto the state (input x weights_feature
// scales / state scale) and the state's onto the output (state x weights_time
// / output), each scale product in float as TFLM's Prepare computes it. Both
// weights are per tensor with zero point 0; the output is clamped to int8
// only (TFLM applies no activation).
void svdf(const LoweredModel& m, LoweredOp& op) {
  const Affine in = per_tensor(m, op, op.inputs[0], "input");
  const Affine out = per_tensor(m, op, op.outputs[0], "output");
  const Affine state = per_tensor(m, op, op.inputs[4], "state", /*symmetric16=*/false);
  float weight_scale[2];
  for (int k : {1, 2}) {
    const Value& w = m.values[static_cast<size_t>(op.inputs[static_cast<size_t>(k)])];
    if (w.quantization.scale.size() != 1 || w.quantization.zero_point.size() != 1 || w.quantization.zero_point[0] != 0) {
      refuse(op, (k == 1 ? "weights_feature '" : "weights_time '") + w.name +
                     "' must be quantized per tensor with zero point 0");
    }
    weight_scale[k - 1] = w.quantization.scale[0];
  }
  const float to_state = in.scale * weight_scale[0] / state.scale;
  const float to_output = state.scale * weight_scale[1] / out.scale;
  const QuantizedMultiplier q_state = quant::quantize_multiplier(static_cast<double>(to_state));
  const QuantizedMultiplier q_output = quant::quantize_multiplier(static_cast<double>(to_output));
  check_multiplier(op, q_state);
  check_multiplier(op, q_output);
  auto r = clamp_only(out, schema::Activation::NONE);
  r->input_offsets = {-in.zero_point};
  r->input_multipliers = {q_state.multiplier};
  r->input_shifts = {q_state.shift};
  r->output_multiplier = q_output.multiplier;
  r->output_shift = q_output.shift;
  op.requantization = std::move(r);
}

// TFLite's CheckedLog2: log2(x) computed in float, rounded; whether x is a
// power of two within 1e-3 of an octave.
bool checked_log2(float x, int* log2) {
  const float exact = std::log(x) * (1.0f / std::log(2.0f));
  const float rounded = std::round(exact);
  *log2 = static_cast<int>(rounded);
  return std::fabs(exact - rounded) < 1e-3f;
}

// int8 UNIDIRECTIONAL_SEQUENCE_LSTM, TFLite's 8x8_16 form (its
// PopulateQuantizedLstmParams8x8_16): every gate's input and recurrent
// products requantized to Q3.12 (2^-12: TFLite's gate scale without layer
// normalization), o * tanh(c) (Q0.30) to the output state, scale ratios in
// float as TFLite computes them; the int16 cell state's scale a power of two
// (TFLite's CheckedLog2), its clip in cell steps, truncated as TFLite does.
void lstm(const LoweredModel& m, LoweredOp& op) {
  constexpr int kOutputState = 18, kCellState = 19;
  const Affine in = per_tensor(m, op, op.inputs[0], "input");
  const Affine state = per_tensor(m, op, op.inputs[kOutputState], "output state");
  const Affine cell = per_tensor(m, op, op.inputs[kCellState], "cell state");
  // TFLite subtracts this zero point where TFLM adds it: only 0 means one thing.
  if (state.zero_point != 0) refuse(op, "int8 LSTM output state zero point must be 0");
  const float gate_scale = std::pow(2.0f, -12.0f);
  auto r = clamp_only(state, schema::Activation::NONE);
  r->input_offsets = {-in.zero_point, -state.zero_point};
  r->input_multipliers.assign(8, 0);
  r->input_shifts.assign(8, 0);
  for (int g = 0; g < 4; ++g) {
    for (int path = 0; path < 2; ++path) {
      const int w = op.inputs[static_cast<size_t>(1 + 4 * path + g)];
      if (w < 0) continue;  // CIFG: no input gate
      const Quantization& q = m.values[static_cast<size_t>(w)].quantization;
      if (q.scale.size() != 1 || q.zero_point.size() != 1 || q.zero_point[0] != 0) {
        refuse(op, "weights '" + m.values[static_cast<size_t>(w)].name + "' must be quantized per tensor with zero point 0");
      }
      const float scale = q.scale[0] * (path == 0 ? in.scale : state.scale) / gate_scale;
      const QuantizedMultiplier qm = quant::quantize_multiplier(static_cast<double>(scale));
      check_multiplier(op, qm);
      r->input_multipliers[static_cast<size_t>(2 * g + path)] = qm.multiplier;
      r->input_shifts[static_cast<size_t>(2 * g + path)] = qm.shift;
    }
  }
  const float hidden = std::pow(2.0f, -15.0f) / state.scale * std::pow(2.0f, -15.0f);
  const QuantizedMultiplier qh = quant::quantize_multiplier(static_cast<double>(hidden));
  check_multiplier(op, qh);
  r->output_multiplier = qh.multiplier;
  r->output_shift = qh.shift;
  int exponent = 0;
  if (!checked_log2(cell.scale, &exponent) || exponent < -15 || exponent > -9) {
    refuse(op, "int8 LSTM cell state scale must be a power of two from 2^-15 to 2^-9");
  }
  auto* options = op.options.AsLstmOptions();
  options->cell_scale_log2 = static_cast<int32_t>(exponent);
  options->quantized_cell_clip =
      options->cell_clip > 0 ? static_cast<int16_t>(std::min(std::max(options->cell_clip / cell.scale, -32768.0f), 32767.0f))
                             : 0;
  op.requantization = std::move(r);
}


// int16 LOGISTIC and TANH (TFLite's and TFLM's prepare): the input rescaled
// to steps of 1/(3 * 4096) for the sigmoid table. A power-of-two input scale
// of 2^-12 (TANH also 2^-11) keeps multiplier 0 (the kernel's 3 << shift);
// any other scale gets the multiplier in (2^14, 2^15) and its right shift.
// The output is Q0.15: scale 2^-15, zero point 0.
void activation_s16(const LoweredModel& m, LoweredOp& op) {
  const Affine in = per_tensor(m, op, op.inputs[0], "input");
  const Affine out = per_tensor(m, op, op.outputs[0], "output");
  if (!is_int16(m, op.outputs[0])) refuse(op, "an int16 input needs an int16 output");
  int out_log2 = 0;
  if (!checked_log2(out.scale, &out_log2) || out_log2 != -15) {
    refuse(op, "int16 LOGISTIC and TANH need an output scale of 2^-15");
  }
  int in_log2 = 0;
  bool power_of_two = checked_log2(in.scale, &in_log2);
  int32_t shift = 12 + in_log2, multiplier = 0;  // (15 - 3 integer bits) + log2
  const bool tanh = op.opcode == schema::OpCode::TANH;
  power_of_two = power_of_two && (shift == 0 || (tanh && shift == 1));
  if (!power_of_two) {
    double scaled = static_cast<double>(in.scale) * 4096.0 * 3.0;
    shift = 0;
    while (scaled <= 32767.0 / 2.0 && shift <= 30) {
      ++shift;
      scaled *= 2.0;
    }
    if (scaled > 32767.0) refuse(op, "int16 input scale too large for the sigmoid table (above 8 / 3)");
    multiplier = static_cast<int32_t>(scaled);
  }
  auto r = clamp_only(out, schema::Activation::NONE);
  r->output_multiplier = multiplier;
  r->output_shift = shift;
  op.requantization = std::move(r);
}

// TFLM's gen_lut for an int16 table (float arithmetic, as TFLM's prepare
// computes it on the device): 512 intervals over [lo, hi] of func in Q0.15,
// each sample biased by half its interval's midpoint error so the
// interpolation is centred, plus the end value for the last slope.
template <typename Func>
std::vector<int16_t> int16_table(Func func, float lo, float hi) {
  constexpr int kSteps = 512;
  const float step = (hi - lo) / kSteps, half_step = step / 2;
  const float scale = 65536.0f / 2.0f;  // output range [-1, 1] onto int16
  auto clamp16 = [](float v) { return static_cast<int16_t>(std::min(std::max(v, -32768.0f), 32767.0f)); };
  std::vector<int16_t> table(kSteps + 1);
  for (int i = 0; i < kSteps; ++i) {
    const float value = func(lo + static_cast<float>(i) * step);
    const float midpoint = func(lo + static_cast<float>(i) * step + half_step);
    const float next = func(lo + static_cast<float>(i + 1) * step);
    const float sample = std::round(value * scale);
    const float interpolated = std::round((next * scale + std::round(value * scale)) / 2);
    const float bias = std::round((interpolated - std::round(midpoint * scale)) / 2);
    table[static_cast<size_t>(i)] = clamp16(sample - bias);
  }
  table[kSteps] = clamp16(std::round(func(hi) * scale));
  return table;
}

// One constant int16 [513] table per name, shared by every op that reads it.
int int16_table_constant(LoweredModel* m, const std::string& name, const std::vector<int16_t>& data) {
  for (size_t v = 0; v < m->values.size(); ++v) {
    if (m->values[v].name == name && m->values[v].is_constant()) return static_cast<int>(v);
  }
  return add_vector_constant(m, name, DType::kInt16, data);
}

// int16 SOFTMAX (TFLM's CalculateSoftmaxParams and SoftmaxInt16): zero
// points 0, output scale 1/32768 (within TFLM's 0.1%); the input difference
// scaled so [-65535, 0] spans [-10, 0] (input scale x beta / (10 / 65535), in
// double); the exp and 1 / (1 + x) tables as constant inputs 1 and 2.
void softmax_s16(LoweredModel* m, LoweredOp& op) {
  const Affine in = per_tensor(*m, op, op.inputs[0], "input");
  const Affine out = per_tensor(*m, op, op.outputs[0], "output");
  if (!is_int16(*m, op.outputs[0])) refuse(op, "an int16 input needs an int16 output");
  if (std::fabs(out.scale - 1.0f / 32768.0f) > 0.001f / 32768.0f) refuse(op, "int16 SOFTMAX output scale must be 1/32768");
  const auto* o = op.options.AsSoftmaxOptions();
  const double beta = o ? static_cast<double>(o->beta) : 1.0;
  const QuantizedMultiplier q = quant::quantize_multiplier(static_cast<double>(in.scale) * beta / (10.0 / 65535.0));
  check_multiplier(op, q);
  auto r = clamp_only(out, schema::Activation::NONE);
  r->output_multiplier = q.multiplier;
  r->output_shift = q.shift;
  op.requantization = std::move(r);
  static const std::vector<int16_t> exp_table = int16_table([](float x) { return std::exp(x); }, -10.0f, 0.0f);
  static const std::vector<int16_t> reciprocal_table =
      int16_table([](float x) { return 1.0f / (1.0f + x); }, 0.0f, 1.0f);
  op.inputs.resize(1);
  op.inputs.push_back(int16_table_constant(m, "softmax_int16/exp_table", exp_table));
  op.inputs.push_back(int16_table_constant(m, "softmax_int16/reciprocal_table", reciprocal_table));
}

// A quantized RELU / RELU6 no producer absorbed (fold_activations) runs as
// TFLM's ReluQuantized computes it: output zero point + the input's offset
// value requantized (input scale / output scale, in double), clamped to the
// quantized [0, inf) or [0, 6]. That is the quantized LEAKY_RELU's arithmetic
// with a zero negative slope, so it runs as one (int8 and int16). RELU6 must
// keep its quantization (TFLM's Relu6 clamps the input's integers).
void relu_as_leaky_relu(LoweredModel& m) {
  for (LoweredOp& op : m.ops) {
    const bool relu6 = op.opcode == schema::OpCode::RELU6;
    if ((op.opcode != schema::OpCode::RELU && !relu6) || op.inputs.size() != 1 || op.outputs.size() != 1) continue;
    if (!is_quantized_int8(m, op.inputs[0]) && !is_quantized_int16(m, op.inputs[0])) continue;
    const Affine in = per_tensor(m, op, op.inputs[0], "input");
    const Affine out = per_tensor(m, op, op.outputs[0], "output");
    if (in.bounds.max != out.bounds.max) refuse(op, "input and output must have one dtype");
    if (relu6) same_quantization(m, op, op.inputs[0], op.outputs[0]);
    const QuantizedMultiplier identity =
        quant::quantize_multiplier(static_cast<double>(in.scale) / static_cast<double>(out.scale));
    check_multiplier(op, identity);
    auto r = clamp_only(out, relu6 ? schema::Activation::RELU6 : schema::Activation::RELU);
    r->input_offsets = {-in.zero_point};
    r->input_multipliers = {identity.multiplier, 0};
    r->input_shifts = {identity.shift, 0};
    schema::LeakyReluOptionsT options;
    options.alpha = 0.0f;
    op.opcode = schema::OpCode::LEAKY_RELU;
    op.options.Set(std::move(options));
    op.requantization = std::move(r);
  }
}

Int8ArithmeticStats derive_int8_arithmetic(LoweredModel* model) {
  Int8ArithmeticStats stats;
  LoweredModel& m = *model;
  for (size_t i = 0; i < m.ops.size(); ++i) {
    LoweredOp& op = m.ops[i];
    if (op.inputs.empty() || op.outputs.empty()) continue;
    const int in0 = op.inputs[0], out0 = op.outputs[0];
    const bool requantize = op.opcode == schema::OpCode::QUANTIZE;
    const bool quantized_in = is_quantized_int8(m, in0) || is_quantized_int16(m, in0) ||
                              (requantize && is_quantized_int32(m, in0));
    // int16 -> int32 is a QUANTIZE TFLite has (a quantized int32 output).
    const bool quantized_out = is_quantized_int8(m, out0) || is_quantized_int16(m, out0) ||
                               (requantize && is_quantized_int16(m, in0) && is_quantized_int32(m, out0));
    if (!quantized_in || !quantized_out) {
      continue;  // float ops, QUANTIZE (float -> int8/int16) and DEQUANTIZE read their tensors' quantization
    }
    // SOFTMAX from int8 to int16 is TFLite's (int16 output at 1/65536, -32768).
    const bool softmax_to_int16 = op.opcode == schema::OpCode::SOFTMAX && is_int8(m, in0) && is_int16(m, out0);
    if ((is_int16(m, in0) || is_int16(m, out0)) && !softmax_to_int16) {
      switch (op.opcode) {
        case schema::OpCode::CONV2D:
        case schema::OpCode::DEPTHWISE_CONV2D:
        case schema::OpCode::MATMUL:
        case schema::OpCode::TRANSPOSE_CONV2D:
        case schema::OpCode::ADD:
        case schema::OpCode::SUB:
        case schema::OpCode::MUL:
        case schema::OpCode::LEAKY_RELU:
        case schema::OpCode::QUANTIZE:
        case schema::OpCode::RESHAPE:
        case schema::OpCode::PAD:
        case schema::OpCode::STRIDED_SLICE:
        case schema::OpCode::TRANSPOSE:
        case schema::OpCode::RESIZE_NEAREST:
        case schema::OpCode::MEAN:
        case schema::OpCode::MAXIMUM:
        case schema::OpCode::MINIMUM:
        case schema::OpCode::CONCAT:
        case schema::OpCode::MAX_POOL2D:
        case schema::OpCode::AVG_POOL2D:
        case schema::OpCode::SIGMOID:
        case schema::OpCode::TANH:
        case schema::OpCode::SOFTMAX:
        case schema::OpCode::RELU:
        case schema::OpCode::RELU6:
          break;
        default:
          refuse(op, "floe has no int16 kernel for this op yet");
      }
    }
    switch (op.opcode) {
      case schema::OpCode::CONV2D:
      case schema::OpCode::DEPTHWISE_CONV2D:
      case schema::OpCode::MATMUL:
      case schema::OpCode::TRANSPOSE_CONV2D:
        weighted(&m, op);
        break;
      case schema::OpCode::LEAKY_RELU: {
        const Affine in = per_tensor(m, op, op.inputs[0], "input");
        const Affine out = per_tensor(m, op, op.outputs[0], "output");
        if (in.bounds.max != out.bounds.max) refuse(op, "input and output must have one dtype");
        const auto* o = op.options.AsLeakyReluOptions();
        const float alpha = o ? o->alpha : 0.2f;
        // TFLM divides the float scales in float before widening.
        const QuantizedMultiplier identity = quant::quantize_multiplier(static_cast<double>(in.scale / out.scale));
        const QuantizedMultiplier negative =
            quant::quantize_multiplier(static_cast<double>(in.scale * alpha / out.scale));
        check_multiplier(op, identity);
        check_multiplier(op, negative);
        auto r = clamp_only(out, schema::Activation::NONE);
        r->input_offsets = {-in.zero_point};
        r->input_multipliers = {identity.multiplier, negative.multiplier};
        r->input_shifts = {identity.shift, negative.shift};
        op.requantization = std::move(r);
        break;
      }
      case schema::OpCode::MAX_POOL2D:
      case schema::OpCode::AVG_POOL2D:
        same_quantization(m, op, op.inputs[0], op.outputs[0]);
        op.requantization = clamp_only(per_tensor(m, op, op.outputs[0], "output"), activation_of(op));
        break;
      case schema::OpCode::ADD:
      case schema::OpCode::SUB:
      case schema::OpCode::MUL:
        add_sub_mul(m, op);
        break;
      case schema::OpCode::SOFTMAX: {
        if (is_int16(m, in0)) {
          softmax_s16(&m, op);
          break;
        }
        const Affine in = per_tensor(m, op, op.inputs[0], "input");
        const Affine out = per_tensor(m, op, op.outputs[0], "output", /*symmetric16=*/false);
        // An int16 output is Q0.16 offset by -32768 whatever scale it records
        // (TFLite and TFLM check only its zero point).
        if (softmax_to_int16 ? out.zero_point != -32768 : out.scale != 1.0f / 256.0f || out.zero_point != -128) {
          refuse(op, softmax_to_int16 ? "SOFTMAX to int16 must have output zero point -32768"
                                      : "int8 SOFTMAX output must have scale 1/256 and zero point -128");
        }
        const auto* o = op.options.AsSoftmaxOptions();
        const quant::SoftmaxRequantization q = quant::softmax_requantization(o ? o->beta : 1.0f, in.scale);
        // The kernel's fixed point needs a left shift in [0, 31] (TFLM asserts
        // the beta multiplier exceeds 1): refuse here what its prepare would.
        if (q.input_left_shift < 0 || q.input_left_shift > 31 || q.input_multiplier < 0 || q.diff_min > 0) {
          refuse(op, "int8 SOFTMAX input scale x beta is outside what the fixed-point kernel represents");
        }
        auto r = clamp_only(out, schema::Activation::NONE);
        r->output_multiplier = q.input_multiplier;  // the input's beta multiplier
        r->output_shift = q.input_left_shift;
        r->diff_min = q.diff_min;
        op.requantization = std::move(r);
        break;
      }
      case schema::OpCode::SIGMOID:
      case schema::OpCode::TANH: {
        if (is_int16(m, in0)) {
          activation_s16(m, op);
          break;
        }
        const Affine in = per_tensor(m, op, op.inputs[0], "input");
        const Affine out = per_tensor(m, op, op.outputs[0], "output");
        const bool logistic = op.opcode == schema::OpCode::SIGMOID;
        if (logistic ? (out.scale != 1.0f / 256.0f || out.zero_point != -128)
                     : (out.scale != 1.0f / 128.0f || out.zero_point != 0)) {
          refuse(op, logistic ? "int8 LOGISTIC output must have scale 1/256 and zero point -128"
                              : "int8 TANH output must have scale 1/128 and zero point 0");
        }
        const quant::SigmoidRequantization q = quant::sigmoid_requantization(in.scale);
        if (q.input_left_shift < 0 || q.input_left_shift > 31 || q.input_multiplier < 0 || q.input_range_radius < 0) {
          refuse(op, "int8 input scale is outside what the fixed-point LOGISTIC/TANH kernel represents");
        }
        auto r = clamp_only(out, schema::Activation::NONE);
        r->input_offsets = {-in.zero_point};
        r->output_multiplier = q.input_multiplier;
        r->output_shift = q.input_left_shift;
        r->input_range_radius = q.input_range_radius;
        op.requantization = std::move(r);
        break;
      }
      // int8 -> int8 QUANTIZE (requantize) and MEAN (TFLM rescales the sum; the
      // kernel folds in the count): one multiplier, input scale / output scale.
      case schema::OpCode::QUANTIZE:
      case schema::OpCode::MEAN: {
        // TFLite requantizes an int16 with any zero point, except into int16.
        const bool offset_input = requantize && is_int16(m, in0) && !is_int16(m, out0);
        const Affine in = per_tensor(m, op, op.inputs[0], "input", !offset_input);
        const Affine out = per_tensor(m, op, op.outputs[0], "output");
        const QuantizedMultiplier q = quant::quantize_multiplier(static_cast<double>(in.scale) /
                                                                 static_cast<double>(out.scale));
        check_multiplier(op, q);
        auto r = clamp_only(out, schema::Activation::NONE);
        r->input_offsets = {-in.zero_point};
        r->output_multiplier = q.multiplier;
        r->output_shift = q.shift;
        op.requantization = std::move(r);
        break;
      }
      case schema::OpCode::SVDF:
        svdf(m, op);
        break;
      case schema::OpCode::UNIDIRECTIONAL_SEQUENCE_LSTM:
        lstm(m, op);
        break;
      case schema::OpCode::MAXIMUM:
      case schema::OpCode::MINIMUM:
        // TFLite requires one quantization for both inputs and the output:
        // the stored integers compare like the reals (the typed kernel runs).
        same_quantization(m, op, op.inputs[0], op.outputs[0]);
        same_quantization(m, op, op.inputs[1], op.outputs[0]);
        break;
      case schema::OpCode::RESHAPE:
      case schema::OpCode::PAD:
      case schema::OpCode::STRIDED_SLICE:
      case schema::OpCode::TRANSPOSE:
      case schema::OpCode::RESIZE_NEAREST:
        same_quantization(m, op, op.inputs[0], op.outputs[0]);
        op.requantization = clamp_only(per_tensor(m, op, op.outputs[0], "output"), schema::Activation::NONE);
        break;
      case schema::OpCode::CONCAT:
        for (int v : op.inputs) same_quantization(m, op, v, op.outputs[0]);
        op.requantization = clamp_only(per_tensor(m, op, op.outputs[0], "output"), schema::Activation::NONE);
        break;
      default:
        continue;  // no int8 kernel: listed below, after folding
    }
    ++stats.ops;
  }
  stats.folded_activations = fold_activations(&m);
  relu_as_leaky_relu(m);
  // Whatever quantized op is left without its integers has no int8 kernel:
  // one refusal naming all of them, rather than a model the runtime refuses.
  std::map<std::string, std::vector<std::string>> unsupported;
  for (const LoweredOp& op : m.ops) {
    // A WHILE copies its variables' bytes, ASSIGN_VARIABLE the value's into
    // the variable (each pair shares its quantization: the .tflite importer
    // checks it).
    if (op.requantization || op.opcode == schema::OpCode::QUANTIZE || op.opcode == schema::OpCode::DEQUANTIZE ||
        op.opcode == schema::OpCode::MAXIMUM || op.opcode == schema::OpCode::MINIMUM ||
        op.opcode == schema::OpCode::WHILE || op.opcode == schema::OpCode::ASSIGN_VARIABLE) {
      continue;
    }
    bool quantized = false, quantized16 = false, plain_int8 = false;
    for (const std::vector<int>* list : {&op.inputs, &op.outputs}) {
      for (int v : *list) {
        quantized |= is_quantized_int8(m, v);
        quantized16 |= is_quantized_int16(m, v);
        plain_int8 |= is_int8(m, v) && !is_quantized_int8(m, v);
      }
    }
    if (quantized16 && !quantized) {
      unsupported[std::string(schema::EnumNameOpCode(op.opcode)) + " (int16)"].push_back(op.node_name);
      continue;
    }
    // Plain int8 integers are moved (reshape, slice, concat...), cast and
    // compared by MAXIMUM/MINIMUM; no other element-wise or weighted kernel
    // computes on them.
    const OpTraits traits = op_traits(op.opcode);
    const bool arithmetic = (traits.elementwise_unary() && op.opcode != schema::OpCode::CAST) ||
                            traits.elementwise_binary() || traits.weights != OpWeights::NONE;
    if (quantized || (plain_int8 && arithmetic)) {
      unsupported[std::string(schema::EnumNameOpCode(op.opcode)) + " (int8)"].push_back(op.node_name);
    }
  }
  if (!unsupported.empty()) {
    std::ostringstream text;
    text << unsupported.size() << " quantized op kind(s) have no kernel for their dtype in floe:";
    for (const auto& [kind, nodes] : unsupported) {
      text << " " << kind << " x" << nodes.size() << " (" << nodes.front() << (nodes.size() > 1 ? ", ..." : "")
           << ");";
    }
    ErrorLocation where;
    where.node = unsupported.begin()->second.front();
    where.op = unsupported.begin()->first;
    ConvertError error(text.str(), ErrorCategory::kUnsupported, where);
    throw error;
  }
  return stats;
}

}  // namespace floe::conv
