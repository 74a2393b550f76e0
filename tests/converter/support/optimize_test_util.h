// SPDX-License-Identifier: Apache-2.0
// Helpers for the optimization-pass tests: a tiny builder for LoweredModels,
// and "run before, rewrite, run after" comparisons through the real runtime
// (emit -> Model::Load -> Interpreter), so a pass is checked by what the device
// would compute, not by inspecting its own bookkeeping.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "converter/pipeline/convert.h"
#include "converter/ir/lowered.h"
#include "tests/support/model_runner.h"

namespace floe::testing {

using conv::LoweredModel;
using conv::LoweredOp;
namespace schema = conv::schema;

class ModelBuilder {
 public:
  int input(const std::string& name, std::vector<int64_t> shape) {
    const int id = value(name, std::move(shape));
    model.inputs.push_back(id);
    return id;
  }
  int constant(const std::string& name, std::vector<int64_t> shape, std::vector<float> values) {
    conv::Value v;
    v.name = name;
    v.dtype = DType::kFloat32;
    v.shape = shape;
    auto t = std::make_shared<HostTensor>(make_f32(shape, values));
    v.constant = t;
    return model.add_value(std::move(v));
  }
  int random_constant(const std::string& name, std::vector<int64_t> shape, uint32_t seed, float lo = -1.0f,
                      float hi = 1.0f) {
    return constant(name, shape, as_floats(random_f32(shape, seed, lo, hi)));
  }
  int value(const std::string& name, std::vector<int64_t> shape) {
    conv::Value v;
    v.name = name;
    v.dtype = DType::kFloat32;
    v.shape = std::move(shape);
    return model.add_value(std::move(v));
  }
  // Appends an op writing a new value of `shape`; returns that value.
  int op(schema::OpCode code, std::vector<int> inputs, std::vector<int64_t> shape,
         schema::OpOptionsUnion options = {}, const std::string& name = "") {
    const std::string node = name.empty() ? std::string(schema::EnumNameOpCode(code)) + std::to_string(model.ops.size()) : name;
    const int out = value(node + ":0", std::move(shape));
    LoweredOp o;
    o.opcode = code;
    o.inputs = std::move(inputs);
    o.outputs = {out};
    o.options = std::move(options);
    o.node_name = node;
    model.ops.push_back(std::move(o));
    return out;
  }
  void output(int v) { model.outputs.push_back(v); }

  template <typename T>
  static schema::OpOptionsUnion options(T value) {
    schema::OpOptionsUnion u;
    u.Set(std::move(value));
    return u;
  }

  LoweredModel model;
};

inline schema::OpOptionsUnion conv_options(int stride = 1, int pad_top = 0, int pad_left = 0, int pad_bottom = 0,
                                           int pad_right = 0) {
  schema::Conv2DOptionsT o;
  o.stride_h = o.stride_w = stride;
  o.pad_top = pad_top;
  o.pad_left = pad_left;
  o.pad_bottom = pad_bottom;
  o.pad_right = pad_right;
  return ModelBuilder::options(o);
}

inline schema::OpOptionsUnion transpose_options(std::vector<int32_t> perm) {
  schema::TransposeOptionsT o;
  o.perm = std::move(perm);
  return ModelBuilder::options(o);
}

// Random inputs for every graph input of `model` (seeded by input index).
inline std::map<std::string, HostTensor> random_inputs(const LoweredModel& model, uint32_t seed) {
  std::map<std::string, HostTensor> inputs;
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    const conv::Value& v = model.values[static_cast<size_t>(model.inputs[i])];
    inputs[v.name] = random_f32(v.shape, seed * 31u + static_cast<uint32_t>(i), -2.0f, 2.0f);
  }
  return inputs;
}

inline std::vector<std::vector<float>> run_lowered_model(const LoweredModel& model,
                                                         const std::map<std::string, HostTensor>& inputs) {
  std::vector<std::vector<float>> out;
  for (const HostTensor& t : run_model(conv::plan_and_emit(model, "optimize test"), inputs)) out.push_back(as_floats(t));
  return out;
}

inline int count_ops(const LoweredModel& model, schema::OpCode code) {
  int n = 0;
  for (const LoweredOp& op : model.ops) n += op.opcode == code;
  return n;
}

// Runs `model` on random inputs, applies `pass`, runs again: outputs must agree
// within `tolerance` (max abs difference). Returns the pass's rewrite count.
template <typename Pass>
int expect_same_outputs(LoweredModel& model, Pass pass, float tolerance, uint32_t seed = 7) {
  const auto inputs = random_inputs(model, seed);
  const auto before = run_lowered_model(model, inputs);
  std::vector<std::string> log;
  const int rewrites = pass(model, log);
  std::string trace;
  for (const std::string& line : log) trace += "\n  " + line;
  SCOPED_TRACE("pass log:" + trace);
  const auto after = run_lowered_model(model, inputs);
  EXPECT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size() && i < after.size(); ++i) {
    EXPECT_EQ(before[i].size(), after[i].size()) << "output " << i;
    EXPECT_LE(max_abs_diff(before[i], after[i]), tolerance) << "output " << i;
  }
  return rewrites;
}

}  // namespace floe::testing
