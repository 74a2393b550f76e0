// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the optimization passes (see graph_view.h).
#include "converter/optimize/graph_view.h"

#include <algorithm>

namespace floe::conv::opt {

GraphView::GraphView(const LoweredModel& model)
    : producer_(model.values.size(), -1), uses_(model.values.size()),
      graph_output_(model.values.size(), false) {
  for (size_t i = 0; i < model.ops.size(); ++i) {
    const LoweredOp& op = model.ops[i];
    for (size_t s = 0; s < op.inputs.size(); ++s) {
      if (op.inputs[s] >= 0) uses_[static_cast<size_t>(op.inputs[s])].push_back({static_cast<int>(i), static_cast<int>(s)});
    }
    for (int v : op.outputs) producer_[static_cast<size_t>(v)] = static_cast<int>(i);
  }
  for (int v : model.outputs) graph_output_[static_cast<size_t>(v)] = true;
}

int GraphView::sole_consumer(int value) const {
  if (is_graph_output(value)) return -1;
  const std::vector<Use>& u = uses(value);
  if (u.empty()) return -1;
  for (const Use& use : u) {
    if (use.op != u[0].op) return -1;  // read by two different ops
  }
  return u[0].op;
}

bool is_float32_constant(const LoweredModel& model, int value) {
  if (value < 0) return false;
  const Value& v = model.values[static_cast<size_t>(value)];
  return v.is_constant() && v.dtype == DType::kFloat32 && v.constant->dtype == DType::kFloat32;
}

bool per_channel_values(const LoweredModel& model, int value, const std::vector<int64_t>& shape,
                        std::vector<float>* channels) {
  if (!is_float32_constant(model, value) || shape.empty()) return false;
  const Value& v = model.values[static_cast<size_t>(value)];
  if (v.shape.size() > shape.size()) return false;
  const int64_t c = shape.back();
  for (size_t d = 0; d + 1 < v.shape.size(); ++d) {
    if (v.shape[d] != 1) return false;
  }
  const int64_t n = v.constant->num_elements();
  if (n != 1 && (v.shape.empty() || v.shape.back() != c)) return false;
  const float* data = v.constant->as<float>();
  channels->assign(static_cast<size_t>(c), data[0]);
  if (n != 1) channels->assign(data, data + c);
  return true;
}

bool uniform_value(const LoweredModel& model, int value, const std::vector<int64_t>& shape,
                   float* out) {
  if (!is_float32_constant(model, value)) return false;
  const Value& v = model.values[static_cast<size_t>(value)];
  if (v.shape.size() > shape.size()) return false;
  for (size_t i = 0; i < v.shape.size(); ++i) {
    const int64_t d = v.shape[v.shape.size() - 1 - i];
    if (d != 1 && d != shape[shape.size() - 1 - i]) return false;
  }
  const int64_t n = v.constant->num_elements();
  if (n == 0) return false;
  const float* data = v.constant->as<float>();
  for (int64_t i = 1; i < n; ++i) {
    if (!(data[i] == data[0])) return false;
  }
  *out = data[0];
  return true;
}

int add_float_constant(LoweredModel& model, const std::string& name, std::vector<int64_t> shape,
                       const std::vector<float>& values) {
  auto tensor = std::make_shared<HostTensor>();
  tensor->dtype = DType::kFloat32;
  tensor->shape = shape;
  tensor->data.resize(values.size() * sizeof(float));
  std::copy(values.begin(), values.end(), tensor->as<float>());
  Value v;
  v.name = name;
  v.dtype = DType::kFloat32;
  v.shape = std::move(shape);
  v.constant = std::move(tensor);
  return model.add_value(std::move(v));
}

void erase_ops(LoweredModel& model, const std::vector<bool>& remove) {
  std::vector<LoweredOp> kept;
  kept.reserve(model.ops.size());
  for (size_t i = 0; i < model.ops.size(); ++i) {
    if (!remove[i]) kept.push_back(std::move(model.ops[i]));
  }
  model.ops = std::move(kept);
}

void replace_uses(LoweredModel& model, int from, int to) {
  for (LoweredOp& op : model.ops) {
    for (int& v : op.inputs) {
      if (v == from) v = to;
    }
  }
  for (int& v : model.outputs) {
    if (v == from) v = to;
  }
}

bool is_unary_elementwise(schema::OpCode code) { return op_traits(code).elementwise_unary(); }

bool is_binary_elementwise(schema::OpCode code) { return op_traits(code).elementwise_binary(); }

bool has_weights(schema::OpCode code) { return op_traits(code).weights == OpWeights::WEIGHTS_BIAS; }

bool bias_values(const LoweredModel& model, const LoweredOp& op, int64_t channels,
                 std::vector<float>* bias) {
  const int b = op.inputs.size() > 2 ? op.inputs[2] : -1;
  if (b < 0) {
    bias->assign(static_cast<size_t>(channels), 0.0f);
    return true;
  }
  if (!is_float32_constant(model, b) || model.values[static_cast<size_t>(b)].constant->num_elements() != channels) {
    return false;
  }
  const float* data = model.values[static_cast<size_t>(b)].constant->as<float>();
  bias->assign(data, data + channels);
  return true;
}

void set_bias(LoweredModel& model, LoweredOp& op, const std::vector<float>& values) {
  const int id = add_float_constant(model, op.node_name + "/fused_bias",
                                    {static_cast<int64_t>(values.size())}, values);
  if (op.inputs.size() < 3) op.inputs.resize(3, -1);
  op.inputs[2] = id;
}

int input_slot(const LoweredOp& op, int value) {
  int slot = -1;
  for (size_t s = 0; s < op.inputs.size(); ++s) {
    if (op.inputs[s] != value) continue;
    if (slot >= 0) return -1;
    slot = static_cast<int>(s);
  }
  return slot;
}

}  // namespace floe::conv::opt
