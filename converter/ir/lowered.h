// SPDX-License-Identifier: Apache-2.0
// The lowered model: floe tensors ("values") and floe operators in execution
// order, before memory planning and serialization. Options are the schema's
// object-API structs (floe::schema_obj), so passes can read and rewrite them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "converter/ir/host_tensor.h"
#include "schemas/contract/op_traits.h"
#include "schemas/floe_obj_generated.h"

namespace floe::conv {

// Inside the converter, `schema` is the mutable object-API flavour of floe.fbs.
namespace schema = ::floe::schema_obj;

// An op's traits (schemas/contract/ops.def, schemas/contract/op_traits.h); the object
// API's enums carry the schema's values.
inline OpTraits op_traits(schema::OpCode code) {
  return ::floe::op_traits(static_cast<::floe::schema::OpCode>(code));
}
inline bool runs_on(schema::OpCode code, schema::Backend backend) {
  return op_traits(code).runs_on(static_cast<::floe::schema::Backend>(backend));
}

// Affine quantization of an integer value: real = scale * (q - zero_point),
// one entry per tensor or one per index of `dimension`. Empty = not quantized.
struct Quantization {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int32_t dimension = 0;

  bool empty() const { return scale.empty(); }
};

struct Value {
  std::string name;  // TF tensor name ("node:k") or a derived name for helper tensors
  DType dtype = DType::kInvalid;
  std::vector<int64_t> shape;
  std::shared_ptr<const HostTensor> constant;  // set for constants
  Quantization quantization;                   // .tflite int8 tensors
  DType source_dtype = DType::kInvalid;        // inputs: the TF graph's dtype when it differs (float64)
  // State kept across Invoke() (a TFLite variable tensor): the op whose state
  // it is reads and rewrites it in place, or (a resource variable)
  // ASSIGN_VARIABLE writes it and RESHAPE copies read it. Planned live the
  // whole run in bytes of its own; reset at Init() by the op that owns it.
  bool variable = false;

  bool is_constant() const { return constant != nullptr; }
  uint64_t byte_size() const {
    uint64_t n = dtype_size(dtype);
    for (int64_t d : shape) n *= static_cast<uint64_t>(d);
    return n;
  }
};

struct LoweredOp {
  schema::OpCode opcode = schema::OpCode::INVALID;
  schema::OpOptionsUnion options;  // type NONE for ops without options
  std::vector<int> inputs;       // value ids; -1 = optional input absent
  std::vector<int> outputs;
  std::string node_name;         // originating TF node
  schema::Backend backend = schema::Backend::REFERENCE;  // set by lower/backend_xnnpack.cc
  bool single_threaded = false;  // XNNPACK op too small for a thread pool (same file)
  // int8 CORTEX_M ops: the kernel and operand layout chosen (lower/backend_cortexm.cc).
  schema::CortexMKernel cortexm_kernel = schema::CortexMKernel::NONE;
  // int8 ops: the kernel's integers, set by converter/quantize (shared: ops are copied).
  std::shared_ptr<schema::RequantizationT> requantization;
  // Run-time loops (LoweredModel::loops): the loop whose condition (loop_cond)
  // or body this op is part of, -1 outside loops; for a WHILE op, the loop it
  // runs. Passes copy ops, so the tags follow them; plan/loops.h turns them
  // into WhileOptions' op ranges after the last pass.
  int loop = -1;
  bool loop_cond = false;
  int runs_loop = -1;
  // Run-time ifs, the same way: the if whose then (if_then) or else branch this
  // op is part of (-1: none); for an IF op, the if it runs (plan/ifs.h).
  int if_id = -1;
  bool if_then = false;
  int runs_if = -1;
};

// A TF1 while loop the runtime runs (WHILE op): its name and bound.
// A run-time loop with no bound of its own (its variables have fixed shapes, so
// its memory does not depend on its trip count, and TF runs it unbounded): the
// WHILE allows as many bodies as its uint32 counter holds.
constexpr uint32_t kUnboundedLoopIterations = UINT32_MAX;

struct RuntimeLoop {
  std::string name;             // the loop's name scope ("while")
  uint32_t max_iterations = 0;  // bodies allowed; more fail Invoke()
  std::string bound_source;     // where the bound came from (summary)
};

// The fused-activation field of an op's options (CONV2D, DEPTHWISE_CONV2D,
// MATMUL, pooling: the ops whose kernels clamp their output); nullptr otherwise.
// `Op` is LoweredOp or const LoweredOp (then the field is read-only).
template <typename Op>
auto activation_field(Op& op) -> decltype(&op.options.AsConv2DOptions()->activation) {
  switch (op.opcode) {
    case schema::OpCode::CONV2D:
      return &op.options.AsConv2DOptions()->activation;
    case schema::OpCode::DEPTHWISE_CONV2D:
      return &op.options.AsDepthwiseConv2DOptions()->activation;
    case schema::OpCode::MATMUL:
      return &op.options.AsMatMulOptions()->activation;
    case schema::OpCode::MAX_POOL2D:
    case schema::OpCode::AVG_POOL2D:
      return &op.options.AsPool2DOptions()->activation;
    default:
      return nullptr;
  }
}
inline schema::Activation activation_of(const LoweredOp& op) {
  const schema::Activation* field = activation_field(op);
  return field != nullptr ? *field : schema::Activation::NONE;
}

// A Conv2D filter rewrite (HWIO -> OHWI) the runtime does at Init while
// XNNPACK packs the filter: its bytes, and the XNNPACK region (budget units,
// alignment reservation included) Init needs when the rewrite sits at the
// region's top because the activations are smaller than it.
struct XnnpackRewrite {
  uint64_t bytes = 0;
  uint64_t region_bytes = 0;
};

struct LoweredModel {
  std::vector<Value> values;
  std::vector<LoweredOp> ops;
  std::vector<int> inputs;
  std::vector<int> outputs;
  // Backend plan (converter/lower/backend_xnnpack.h): the target the ops were
  // assigned for, XNNPACK's persistent arena budget, and the weight rewrites
  // XNNPACK ops need as Init-time scratch (taken from the activations when
  // they are large enough, else from the region, which emit grows to fit).
  std::string target;
  uint64_t xnnpack_budget = 0;
  std::vector<XnnpackRewrite> xnnpack_rewrites;
  std::vector<RuntimeLoop> loops;  // indexed by LoweredOp::loop / runs_loop
  // Complex64 inputs and outputs (float32 pairs in a last dim of 2), by their
  // position in `inputs` / `outputs`: passes may replace an output's value, never
  // its position. Shorter than the list = the rest are real.
  std::vector<bool> complex_inputs;
  std::vector<bool> complex_outputs;
  bool input_is_complex(size_t i) const { return i < complex_inputs.size() && complex_inputs[i]; }
  bool output_is_complex(size_t i) const { return i < complex_outputs.size() && complex_outputs[i]; }
  std::vector<std::string> ifs;    // run-time ifs' names, indexed by LoweredOp::if_id / runs_if

  int add_value(Value value) {
    values.push_back(std::move(value));
    return static_cast<int>(values.size()) - 1;
  }
  // An op that writes a variable (a resource variable's assignment) has an
  // effect beyond its outputs' readers: passes keep it, in its place.
  bool writes_variable(const LoweredOp& op) const {
    for (int v : op.outputs) {
      if (v >= 0 && values[static_cast<size_t>(v)].variable) return true;
    }
    return false;
  }
  bool has_variable_writes() const {
    for (const LoweredOp& op : ops) {
      if (writes_variable(op)) return true;
    }
    return false;
  }
};

}  // namespace floe::conv
