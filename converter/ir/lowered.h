// SPDX-License-Identifier: Apache-2.0
// The lowered model: floe tensors ("values") and floe operators in execution
// order, before memory planning and serialization. Options are kept as a
// builder callback so each op's options are written in exactly one place.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "converter/ir/host_tensor.h"
#include "schemas/floe_generated.h"

namespace floe::conv {

struct Value {
  std::string name;  // TF tensor name ("node:k") or a derived name for helper tensors
  DType dtype = DType::kInvalid;
  std::vector<int64_t> shape;
  std::shared_ptr<const HostTensor> constant;  // set for constants

  bool is_constant() const { return constant != nullptr; }
  uint64_t byte_size() const;
};

using OptionsBuilder = std::function<flatbuffers::Offset<void>(flatbuffers::FlatBufferBuilder&)>;

struct LoweredOp {
  schema::OpCode opcode = schema::OpCode::INVALID;
  schema::OpOptions options_type = schema::OpOptions::NONE;
  OptionsBuilder build_options;  // empty when options_type is NONE
  std::vector<int> inputs;       // value ids; -1 = optional input absent
  std::vector<int> outputs;
  std::string node_name;         // originating TF node
};

struct LoweredModel {
  std::vector<Value> values;
  std::vector<LoweredOp> ops;
  std::vector<int> inputs;
  std::vector<int> outputs;

  int add_value(Value value) {
    values.push_back(std::move(value));
    return static_cast<int>(values.size()) - 1;
  }
};

}  // namespace floe::conv
