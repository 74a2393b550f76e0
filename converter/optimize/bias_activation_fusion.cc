// SPDX-License-Identifier: Apache-2.0
// Bias and activation fusion. After CONV2D / DEPTHWISE_CONV2D / MATMUL (which
// take an optional bias and apply it before their activation, like TF's
// Conv2D -> BiasAdd -> Relu), ADD/SUB of per-channel constants become the bias.
// Then a chain of clamps (RELU, RELU6, MINIMUM/MAXIMUM by a uniform constant),
// after those ops or a pooling op, becomes the fused activation. A clamp chain
// maps the op's value range [lo, hi] through max/min with constants; composing
// monotone clamps is again a clamp, so the chain is exactly clamp(z, lo', hi'),
// fusable when [lo', hi'] is (-inf,inf), [0,inf) or [0,6] (NONE / RELU / RELU6).
// Keras' relu6 (Relu -> Minimum(6) -> Maximum(0)) is such a chain. Every absorbed
// op is the sole reader of the previous value, which is no graph output.
#include <cmath>
#include <limits>
#include <string>

#include "converter/optimize/graph_view.h"
#include "converter/optimize/passes.h"

namespace floe::conv::opt {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

struct Range {
  float lo = -kInf, hi = kInf;
};

Range range_of(schema::Activation a) {
  switch (a) {
    case schema::Activation::RELU:
      return {0.0f, kInf};
    case schema::Activation::RELU6:
      return {0.0f, 6.0f};
    default:
      return {};
  }
}

bool activation_of(const Range& r, schema::Activation* a) {
  if (r.lo == -kInf && r.hi == kInf) {
    *a = schema::Activation::NONE;
  } else if (r.lo == 0.0f && r.hi == kInf) {
    *a = schema::Activation::RELU;
  } else if (r.lo == 0.0f && r.hi == 6.0f) {
    *a = schema::Activation::RELU6;
  } else {
    return false;
  }
  return true;
}

Range clamp_below(Range r, float c) { return {std::max(r.lo, c), std::max(r.hi, c)}; }  // max(y, c)
Range clamp_above(Range r, float c) { return {std::min(r.lo, c), std::min(r.hi, c)}; }  // min(y, c)

// The clamp op reading `value` alone, applied to `range`; -1 when the consumer is
// not a clamp.
int clamp_step(const LoweredModel& model, const GraphView& view, int value, Range* range) {
  const int c = view.sole_consumer(value);
  if (c < 0) return -1;
  const LoweredOp& u = model.ops[static_cast<size_t>(c)];
  if (u.outputs.size() != 1) return -1;
  const std::vector<int64_t>& shape = model.values[static_cast<size_t>(value)].shape;
  if (model.values[static_cast<size_t>(u.outputs[0])].shape != shape) return -1;
  switch (u.opcode) {
    case schema::OpCode::RELU:
      *range = clamp_below(*range, 0.0f);
      return c;
    case schema::OpCode::RELU6:
      *range = clamp_above(clamp_below(*range, 0.0f), 6.0f);
      return c;
    case schema::OpCode::MAXIMUM:
    case schema::OpCode::MINIMUM: {
      const int slot = input_slot(u, value);
      float k = 0.0f;
      if (slot < 0 || u.inputs.size() != 2 ||
          !uniform_value(model, u.inputs[static_cast<size_t>(1 - slot)], shape, &k) || std::isnan(k)) {
        return -1;
      }
      *range = u.opcode == schema::OpCode::MAXIMUM ? clamp_below(*range, k) : clamp_above(*range, k);
      return c;
    }
    default:
      return -1;
  }
}

// ADD / SUB(x - c) of a per-channel constant reading `value` alone: its op index
// and addend; -1 otherwise.
int bias_step(const LoweredModel& model, const GraphView& view, int value, std::vector<float>* addend) {
  const int c = view.sole_consumer(value);
  if (c < 0) return -1;
  const LoweredOp& u = model.ops[static_cast<size_t>(c)];
  const int slot = input_slot(u, value);
  if (slot < 0 || u.inputs.size() != 2 || u.outputs.size() != 1) return -1;
  if (u.opcode != schema::OpCode::ADD && !(u.opcode == schema::OpCode::SUB && slot == 0)) return -1;
  const std::vector<int64_t>& shape = model.values[static_cast<size_t>(value)].shape;
  if (model.values[static_cast<size_t>(u.outputs[0])].shape != shape) return -1;
  if (!per_channel_values(model, u.inputs[static_cast<size_t>(1 - slot)], shape, addend)) return -1;
  if (u.opcode == schema::OpCode::SUB) {
    for (float& v : *addend) v = -v;
  }
  return c;
}

std::string describe(const LoweredOp& op) {
  return std::string(schema::EnumNameOpCode(op.opcode)) + " '" + op.node_name + "'";
}

}  // namespace

int fuse_bias_activation(LoweredModel& model, PassLog& log) {
  const GraphView view(model);
  std::vector<bool> remove(model.ops.size(), false);
  int fusions = 0;
  for (size_t i = 0; i < model.ops.size(); ++i) {
    LoweredOp& op = model.ops[i];
    schema::Activation* activation = activation_field(op);
    if (activation == nullptr || op.outputs.size() != 1) continue;
    int value = op.outputs[0];
    std::string absorbed;

    // Bias: only before any activation (the kernels add the bias first).
    const Value& out = model.values[static_cast<size_t>(value)];
    std::vector<float> bias;
    if (has_weights(op.opcode) && *activation == schema::Activation::NONE && !out.shape.empty() &&
        bias_values(model, op, out.shape.back(), &bias)) {
      std::vector<float> addend;
      bool changed = false;
      for (int c; (c = bias_step(model, view, value, &addend)) >= 0;) {
        for (size_t k = 0; k < bias.size(); ++k) bias[k] += addend[k];
        remove[static_cast<size_t>(c)] = true;
        absorbed += (absorbed.empty() ? "bias from " : ", ") + describe(model.ops[static_cast<size_t>(c)]);
        value = model.ops[static_cast<size_t>(c)].outputs[0];
        changed = true;
      }
      if (changed) set_bias(model, op, bias);
    }

    // Activation: the longest clamp chain that composes to a fusable clamp.
    Range range = range_of(*activation);
    std::vector<int> chain;
    size_t best = 0;
    schema::Activation best_activation = *activation;
    for (int v = value, c; (c = clamp_step(model, view, v, &range)) >= 0;) {
      chain.push_back(c);
      v = model.ops[static_cast<size_t>(c)].outputs[0];
      schema::Activation a;
      if (activation_of(range, &a)) {
        best = chain.size();
        best_activation = a;
      }
    }
    if (best > 0) {
      std::string clamps;
      for (size_t k = 0; k < best; ++k) {
        const LoweredOp& u = model.ops[static_cast<size_t>(chain[k])];
        clamps += (k ? ", " : "") + describe(u);
        remove[static_cast<size_t>(chain[k])] = true;
      }
      value = model.ops[static_cast<size_t>(chain[best - 1])].outputs[0];
      *activation = best_activation;
      absorbed += std::string(absorbed.empty() ? "" : "; ") + "activation " +
                  schema::EnumNameActivation(best_activation) + " from " + clamps;
    }
    if (absorbed.empty()) continue;
    op.outputs[0] = value;
    ++fusions;
    log.push_back(describe(op) + " <- " + absorbed);
  }
  if (fusions > 0) erase_ops(model, remove);
  return fusions;
}

}  // namespace floe::conv::opt
