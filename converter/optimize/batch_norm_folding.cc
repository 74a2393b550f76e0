// SPDX-License-Identifier: Apache-2.0
// Batch-norm folding. Inference-mode batch norm reaches the lowered model as a
// per-channel scale and shift after a convolution or matmul: MUL + ADD from
// FusedBatchNorm's lowering, or MUL/ADD (with SUB) from the unfused
// moments/Rsqrt form once its constant parts are folded. A chain of such ops
// (each the sole reader of the previous value, none a graph output, at least one
// scale) is the affine map y = S*x + B per output channel, so
//   y = S*(W x + b) + B' = (S*W) x + (S*b + B')
// folds into new weights (each output channel's filter scaled) and a new bias.
// Only ops without a fused activation qualify (the activation comes after).
#include <cmath>
#include <string>

#include "converter/optimize/graph_view.h"
#include "converter/optimize/passes.h"

namespace floe::conv::opt {
namespace {

struct Step {
  int op = -1;
  bool scale = false;           // MUL/DIV (else ADD/SUB)
  std::vector<float> values;    // per channel: multiplier, or addend
};

// The per-channel affine op reading `value` alone, as a Step; false when the
// consumer is not one.
bool affine_step(const LoweredModel& model, const GraphView& view, int value, Step* step) {
  const int c = view.sole_consumer(value);
  if (c < 0) return false;
  const LoweredOp& u = model.ops[static_cast<size_t>(c)];
  const int slot = input_slot(u, value);
  if (slot < 0 || u.inputs.size() != 2 || u.outputs.size() != 1) return false;
  const std::vector<int64_t>& shape = model.values[static_cast<size_t>(value)].shape;
  if (model.values[static_cast<size_t>(u.outputs[0])].shape != shape) return false;
  const int other = u.inputs[static_cast<size_t>(1 - slot)];
  std::vector<float> values;
  if (!per_channel_values(model, other, shape, &values)) return false;
  step->op = c;
  switch (u.opcode) {
    case schema::OpCode::MUL:
      step->scale = true;
      break;
    case schema::OpCode::DIV:  // x / c only
      if (slot != 0) return false;
      step->scale = true;
      for (float& v : values) v = 1.0f / v;
      break;
    case schema::OpCode::ADD:
      step->scale = false;
      break;
    case schema::OpCode::SUB:  // x - c only
      if (slot != 0) return false;
      step->scale = false;
      for (float& v : values) v = -v;
      break;
    default:
      return false;
  }
  step->values = std::move(values);
  return true;
}

// New weights with output channel c scaled by scale[c].
std::vector<float> scaled_weights(const LoweredModel& model, const LoweredOp& op,
                                  const std::vector<float>& scale) {
  const Value& w = model.values[static_cast<size_t>(op.inputs[1])];
  const float* data = w.constant->as<float>();
  const size_t n = static_cast<size_t>(w.constant->num_elements());
  const size_t channels = scale.size();
  std::vector<float> out(data, data + n);
  const bool channel_major = op.opcode == schema::OpCode::MATMUL && op.options.AsMatMulOptions()->transpose_b;
  if (channel_major) {  // [N, K]: row c belongs to output channel c
    const size_t k = n / channels;
    for (size_t c = 0; c < channels; ++c) {
      for (size_t i = 0; i < k; ++i) out[c * k + i] *= scale[c];
    }
  } else {  // HWIO, [kh,kw,in,mult] or [K,N]: channel is the flattened trailing index
    for (size_t i = 0; i < n; ++i) out[i] *= scale[i % channels];
  }
  return out;
}

// Weights fake-quantized in training (their grid in Value::quantization) are
// integer multiples of the grid's scale; scaling channel c by s[c] keeps them
// multiples of scale * |s[c]| (the sign goes into the multiple). A grid per
// channel on another axis is dropped, and the weights are then quantized from
// their values.
Quantization folded_grid(const LoweredModel& model, const LoweredOp& op, const Quantization& grid,
                         const std::vector<float>& channel_scale) {
  Quantization folded;
  if (grid.empty()) return folded;
  const Value& w = model.values[static_cast<size_t>(op.inputs[1])];
  const bool channel_major = op.opcode == schema::OpCode::MATMUL && op.options.AsMatMulOptions()->transpose_b;
  const int channel_axis = channel_major ? 0 : static_cast<int>(w.shape.size()) - 1;
  const bool per_tensor = grid.scale.size() == 1;
  if (!per_tensor && (grid.dimension != channel_axis || grid.scale.size() != channel_scale.size())) return folded;
  folded.dimension = channel_axis;
  for (size_t c = 0; c < channel_scale.size(); ++c) {
    if (!(std::fabs(channel_scale[c]) > 0)) return Quantization{};
    folded.scale.push_back((per_tensor ? grid.scale[0] : grid.scale[c]) * std::fabs(channel_scale[c]));
    folded.zero_point.push_back(0);
  }
  return folded;
}

}  // namespace

int fold_batch_norms(LoweredModel& model, PassLog& log) {
  const GraphView view(model);
  std::vector<bool> remove(model.ops.size(), false);
  int folds = 0;
  for (size_t i = 0; i < model.ops.size(); ++i) {
    LoweredOp& op = model.ops[i];
    if (!has_weights(op.opcode) || op.outputs.size() != 1 || op.inputs.size() < 2) continue;
    if (*activation_field(op) != schema::Activation::NONE) continue;
    if (!is_float32_constant(model, op.inputs[1])) continue;
    const Value& out = model.values[static_cast<size_t>(op.outputs[0])];
    if (out.shape.empty()) continue;
    const int64_t channels = out.shape.back();
    const Value& weights = model.values[static_cast<size_t>(op.inputs[1])];
    if (channels <= 0 || weights.constant->num_elements() % channels != 0) continue;
    std::vector<float> bias;
    if (!bias_values(model, op, channels, &bias)) continue;

    std::vector<Step> chain;
    int value = op.outputs[0];
    Step step;
    while (affine_step(model, view, value, &step)) {
      chain.push_back(step);
      value = model.ops[static_cast<size_t>(step.op)].outputs[0];
    }
    bool any_scale = false;
    for (const Step& s : chain) any_scale = any_scale || s.scale;
    if (!any_scale) continue;  // shifts alone are fuse_bias_activation's

    std::vector<float> scale(static_cast<size_t>(channels), 1.0f);
    std::string absorbed;
    for (const Step& s : chain) {
      for (size_t c = 0; c < scale.size(); ++c) {
        if (s.scale) {
          scale[c] *= s.values[c];
          bias[c] *= s.values[c];
        } else {
          bias[c] += s.values[c];
        }
      }
      const LoweredOp& absorbed_op = model.ops[static_cast<size_t>(s.op)];
      absorbed += std::string(absorbed.empty() ? "" : ", ") + schema::EnumNameOpCode(absorbed_op.opcode) +
                  " '" + absorbed_op.node_name + "'";
      remove[static_cast<size_t>(s.op)] = true;
    }
    const std::vector<int64_t> weight_shape = weights.shape;  // add_float_constant may move values
    const Quantization trained_grid = weights.quantization;
    const std::vector<float> new_weights = scaled_weights(model, op, scale);
    const int w = add_float_constant(model, op.node_name + "/folded_weights", weight_shape, new_weights);
    model.values[static_cast<size_t>(w)].quantization = folded_grid(model, op, trained_grid, scale);
    op.inputs[1] = w;
    set_bias(model, op, bias);
    op.outputs[0] = value;
    ++folds;
    log.push_back(std::string(schema::EnumNameOpCode(op.opcode)) + " '" + op.node_name + "' <- " + absorbed);
  }
  if (folds > 0) erase_ops(model, remove);
  return folds;
}

}  // namespace floe::conv::opt
