// SPDX-License-Identifier: Apache-2.0
// Per-TensorFlow-op handlers. Each op lives in one place: its shape/dtype
// inference and its lowering to floe operators sit side by side in the same
// family file. The driver (lower_graph.cc) walks the graph in topological
// order, calls infer, folds the node when every input is constant (by running
// the lowered ops through the runtime's reference kernels), else lowers it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "converter/ir/graph.h"
#include "converter/ir/lowered.h"

namespace floe::conv {

// floe computes float64 graphs in float32 (Cortex-M FPUs are single precision;
// TFLite makes the same choice): every float64 tensor is narrowed on entry.
DType compute_dtype(DType t);
std::shared_ptr<const HostTensor> narrow_float64(std::shared_ptr<const HostTensor> value);

// What the converter knows about one TF tensor.
struct TensorInfo {
  DType dtype = DType::kInvalid;
  std::vector<int64_t> shape;                // fully known (the converter resolves every dim)
  std::shared_ptr<const HostTensor> value;   // set when the tensor is a known constant
  // A complex64 tensor (floe has no complex dtype; see spectral_ops.cc): dtype
  // float32, the shape TF's plus a last dim of 2 holding (real, imaginary).
  bool complex = false;

  // From a constant value (float64 values are narrowed to float32).
  static TensorInfo of(std::shared_ptr<const HostTensor> value);
};

class NodeContext {
 public:
  NodeContext(const Graph& graph, const Node& node, std::vector<const TensorInfo*> inputs)
      : graph_(graph), node_(node), inputs_(std::move(inputs)) {}
  virtual ~NodeContext() = default;

  const Node& node() const { return node_; }
  const Graph& graph() const { return graph_; }
  int input_count() const { return static_cast<int>(inputs_.size()); }
  const TensorInfo& input(int i) const;
  // The constant value of input i; fails naming the node when it is not constant.
  const HostTensor& constant_input(int i, const char* what) const;
  // Constant integer vector (int32/int64) input, e.g. a shape or axes.
  std::vector<int64_t> constant_ints(int i, const char* what) const;
  // Fails unless input_count() is in [min, max].
  void expect_inputs(int min, int max) const;
  void expect_rank(int i, int rank) const;

  // "<file>: node 'x' (op Y): <message>"
  [[noreturn]] void fail(const std::string& message) const;

 private:
  const Graph& graph_;
  const Node& node_;
  std::vector<const TensorInfo*> inputs_;
};

class LowerContext : public NodeContext {
 public:
  LowerContext(const Graph& graph, const Node& node, std::vector<const TensorInfo*> inputs,
               const std::vector<TensorInfo>& outputs, LoweredModel& model,
               std::vector<int> input_values)
      : NodeContext(graph, node, std::move(inputs)),
        outputs_(outputs), model_(model), input_values_(std::move(input_values)),
        output_values_(outputs.size(), -1) {}

  // Value id of data input i (constants become constant values on first use).
  int input_value(int i);
  // Value id of output `port`, created on first use from the inferred info.
  int output_value(int port);
  // Output `port` is the same tensor as `value` (Identity-like ops: no op emitted).
  void alias_output(int port, int value);
  // A new constant value owned by this node (e.g. a reshaped bias).
  int constant_value(const std::string& suffix, HostTensor tensor);
  // A new non-constant value owned by this node, for ops lowered to several floe
  // ops (e.g. FusedBatchNorm -> MUL then ADD): named "<node>/<suffix>".
  int intermediate_value(const std::string& suffix, DType dtype, std::vector<int64_t> shape);

  void add_op(schema::OpCode opcode, std::vector<int> inputs, std::vector<int> outputs,
              schema::OpOptionsUnion options = {});
  // A new non-constant helper value named "<node>/<suffix>".
  int new_value(DType dtype, std::vector<int64_t> shape, const std::string& suffix);
  // `value` with a new shape (a RESHAPE op into a new helper value).
  int reshaped_value(int value, std::vector<int64_t> shape, const std::string& suffix);
  // `value` with its dims permuted by `perm` (a TRANSPOSE op into a new helper value).
  int transposed_value(int value, const std::vector<int32_t>& perm, const std::string& suffix);
  // dtype/shape of a value of the model being built.
  const Value& value_info(int value) const { return model_.values[static_cast<size_t>(value)]; }
  // Options of one type, wrapped: add_op(code, in, out, options(schema::Conv2DOptionsT{...})).
  template <typename T>
  static schema::OpOptionsUnion options(T value) {
    schema::OpOptionsUnion u;
    u.Set(std::move(value));
    return u;
  }

  const std::vector<int>& output_values() const { return output_values_; }
  // The model being built (run-time loop nodes edit their WHILE op).
  LoweredModel& model() { return model_; }
  const TensorInfo& output_info(int port) const { return outputs_[static_cast<size_t>(port)]; }

 private:
  const std::vector<TensorInfo>& outputs_;
  LoweredModel& model_;
  std::vector<int> input_values_;   // -1 = not materialized yet (constant)
  std::vector<int> output_values_;
};

using InferFn = std::vector<TensorInfo> (*)(const NodeContext&);
using LowerFn = void (*)(LowerContext&);

struct OpHandler {
  const char* tf_op;
  InferFn infer;
  LowerFn lower;  // nullptr: the op is always folded at conversion time (Shape, Const, ...)
  bool never_fold = false;  // lowered even over constants (run-time loop nodes)
  // When the handler refuses some of the op's uses at lowering: why, for
  // --list-ops --all; `refuses_every_use` when no use is lowered.
  const char* refusal = nullptr;
  bool refuses_every_use = false;
};

// nullptr when floe does not support `tf_op`.
const OpHandler* find_handler(const std::string& tf_op);
// Every handler, sorted by TF op name (floe-convert --list-ops --all).
std::vector<const OpHandler*> registered_handlers();

// The node's input dtypes against its op's definition, as TF checks them at
// import (ops/op_types.cc): each input against the type attr that governs it
// (T, Tindices, Tidx, SrcT, ...) when the node sets it, inputs sharing an attr
// against each other, index attrs against the types they allow, fixed-type
// inputs against that type. Fails naming the node, the attr and both types.
void check_input_types(const NodeContext& ctx);
bool has_input_type_signature(const std::string& tf_op);
// How many outputs TF gives the node (its OpDef's output list), or -1 when
// floe does not know the op's definition.
int tf_output_count(const tfproto::NodeDef& node);

// Shared by family files: fails the node unless its output 0 is float32 (ops
// whose kernels are float-only); MatMul's output shape from inputs 0 and 1
// (matmul_ops.cc; _FusedMatMul in conv_ops.cc carries more inputs).
void require_float32_output(LowerContext& ctx);
std::vector<TensorInfo> matmul_output(const NodeContext& ctx);

// Family tables (one file each).
const std::vector<OpHandler>& elementwise_handlers();
const std::vector<OpHandler>& shape_handlers();
const std::vector<OpHandler>& source_handlers();
const std::vector<OpHandler>& loop_handlers();
const std::vector<OpHandler>& if_handlers();
const std::vector<OpHandler>& math_handlers();
const std::vector<OpHandler>& reduce_handlers();
const std::vector<OpHandler>& slice_handlers();
const std::vector<OpHandler>& gather_handlers();
const std::vector<OpHandler>& scatter_handlers();
const std::vector<OpHandler>& matmul_handlers();
const std::vector<OpHandler>& conv_handlers();
const std::vector<OpHandler>& pool_handlers();
const std::vector<OpHandler>& random_handlers();
const std::vector<OpHandler>& normalization_handlers();
const std::vector<OpHandler>& topk_handlers();
const std::vector<OpHandler>& cumulative_handlers();
const std::vector<OpHandler>& fake_quant_handlers();
const std::vector<OpHandler>& resize_handlers();
const std::vector<OpHandler>& space_depth_handlers();
const std::vector<OpHandler>& rnn_cell_handlers();
const std::vector<OpHandler>& index_handlers();
const std::vector<OpHandler>& batch_norm_handlers();
const std::vector<OpHandler>& composite_handlers();
const std::vector<OpHandler>& layout_handlers();
const std::vector<OpHandler>& audio_handlers();
const std::vector<OpHandler>& image_handlers();
const std::vector<OpHandler>& spectral_handlers();
const std::vector<OpHandler>& counting_handlers();
// Whether `tf_op` may read complex tensors (the spectral family).
bool reads_complex(const std::string& tf_op);
// Why floe has no handler for `tf_op` when the reason is the op's nature (its
// output size depends on the values: Unique, ListDiff), or nullptr.
const char* refusal_reason(const std::string& tf_op);
// The ops refusal_reason explains (listed by --list-ops --all).
const std::vector<const char*>& data_dependent_shape_ops();

// Shared helpers for handlers.
std::vector<int64_t> broadcast_shapes(const NodeContext& ctx, const std::vector<int64_t>& a,
                                      const std::vector<int64_t>& b);
int64_t normalize_axis(const NodeContext& ctx, int64_t axis, int64_t rank);
DType dtype_attr(const NodeContext& ctx, const char* name);
// A reduction's axes (input 1) as TF checks them: each in [-rank, rank) (so a
// scalar has none to reduce over), returned sorted, unique and non-negative.
std::vector<int32_t> reduction_axes(const NodeContext& ctx);
// Output of a reduction of input 0 over reduction_axes(), with the keep_dims attr.
std::vector<TensorInfo> infer_reduction(const NodeContext& ctx);

}  // namespace floe::conv
