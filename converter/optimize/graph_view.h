// SPDX-License-Identifier: Apache-2.0
// Shared helpers for the optimization passes over a LoweredModel: who produces
// and who reads each value, whether a value is a graph input/output, per-channel
// and uniform constants, and op removal that keeps execution order. Invariant
// the passes rely on: `ops` stays topologically ordered, and a value a pass
// stops using is left for dead-code elimination (never freed in place).
#pragma once

#include <string>
#include <vector>

#include "converter/ir/lowered.h"

namespace floe::conv::opt {

struct Use {
  int op = -1;
  int slot = -1;  // index into that op's inputs
};

// Producer and consumers of every value; rebuild after editing the model.
class GraphView {
 public:
  explicit GraphView(const LoweredModel& model);

  int producer(int value) const { return producer_[static_cast<size_t>(value)]; }
  const std::vector<Use>& uses(int value) const { return uses_[static_cast<size_t>(value)]; }
  bool is_graph_output(int value) const { return graph_output_[static_cast<size_t>(value)]; }
  // The op that alone reads `value`, when the value is no graph output (a pass
  // may then absorb that consumer and drop the value); -1 otherwise.
  int sole_consumer(int value) const;

 private:
  std::vector<int> producer_;
  std::vector<std::vector<Use>> uses_;
  std::vector<bool> graph_output_;
};

bool is_float32_constant(const LoweredModel& model, int value);

// Float values of a float32 constant that broadcasts against `shape` along its
// last axis only (shape [], [1], [C] or [1,..,1,C] with rank <= shape's rank),
// expanded to the C = shape.back() channel values. False otherwise.
bool per_channel_values(const LoweredModel& model, int value, const std::vector<int64_t>& shape,
                        std::vector<float>* channels);

// The one value of a float32 constant whose elements are all equal and that does
// not enlarge `shape` when broadcast against it. False otherwise.
bool uniform_value(const LoweredModel& model, int value, const std::vector<int64_t>& shape,
                   float* out);

int add_float_constant(LoweredModel& model, const std::string& name, std::vector<int64_t> shape,
                       const std::vector<float>& values);

// Removes the flagged ops, keeping the order of the others.
void erase_ops(LoweredModel& model, const std::vector<bool>& remove);

// Replaces every read of `from` (op inputs and graph outputs) with `to`.
void replace_uses(LoweredModel& model, int from, int to);

// The op's traits (schemas/contract/ops.def, schemas/contract/op_traits.h):
// element-wise with one input, element-wise with two broadcast inputs,
bool is_unary_elementwise(schema::OpCode code);
bool is_binary_elementwise(schema::OpCode code);
// and input 1 weights with an optional input 2 bias of one value per output
// channel (the output's last dim): CONV2D, DEPTHWISE_CONV2D, MATMUL.
bool has_weights(schema::OpCode code);
// Current bias of a weighted op as floats (zeros when absent); false when the
// bias is present but not a float32 constant.
bool bias_values(const LoweredModel& model, const LoweredOp& op, int64_t channels,
                 std::vector<float>* bias);
// Gives a weighted op the bias `values` (a new constant named after the op).
void set_bias(LoweredModel& model, LoweredOp& op, const std::vector<float>& values);
// Index in `op.inputs` holding `value` when exactly one input does, else -1.
int input_slot(const LoweredOp& op, int value);

}  // namespace floe::conv::opt
