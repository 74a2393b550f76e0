// SPDX-License-Identifier: Apache-2.0
// The .tflite importer's state and its lowering steps, shared by the files that
// implement them: tflite_import.cc reads tensors and walks the operators,
// supported_ops.cc says which operators floe converts, and lower_*.cc lower
// each family (nn, shape, elementwise, rnn, signal, control flow, variables)
// straight into the lowered model. Internal to floe_tflite.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "converter/frontend/tflite/tflite_import.h"
#include "converter/frontend/tflite/tflite_subset_generated.h"
#include "converter/ir/error.h"

namespace floe::conv::tflite_detail {

namespace fb = ::floe::tflite_schema;

// BuiltinOperator codes floe converts.
enum Builtin : int32_t {
  kAdd = 0,
  kAveragePool2D = 1,
  kConcatenation = 2,
  kConv2D = 3,
  kDepthwiseConv2D = 4,
  kDequantize = 6,
  kFullyConnected = 9,
  kSvdf = 27,
  kUnidirectionalSequenceLstm = 44,
  kLogistic = 14,
  kMaxPool2D = 17,
  kMul = 18,
  kRelu = 19,
  kRelu6 = 21,
  kReshape = 22,
  kSoftmax = 25,
  kTanh = 28,
  kCustom = 32,
  kPad = 34,
  kTranspose = 39,
  kMean = 40,
  kSub = 41,
  kDiv = 42,
  kStridedSlice = 45,
  kCast = 53,
  kMaximum = 55,
  kMinimum = 57,
  kExpandDims = 70,
  kShape = 77,
  kPack = 83,
  kResizeNearestNeighbor = 97,
  kReverseV2 = 105,
  kLess = 58,
  kGreater = 61,
  kGreaterEqual = 62,
  kLessEqual = 63,
  kTransposeConv = 67,
  kEqual = 71,
  kNotEqual = 72,
  kLogicalOr = 84,
  kLogicalAnd = 86,
  kLogicalNot = 87,
  kLeakyRelu = 98,
  kQuantize = 114,
  kIf = 118,
  kWhile = 119,
  kCallOnce = 129,
  kVarHandle = 142,
  kReadVariable = 143,
  kAssignVariable = 144,
};

// TensorType RESOURCE: a resource variable's handle (VAR_HANDLE's output).
constexpr int8_t kTypeResource = 13;

// ActivationFunctionType and Padding values.
constexpr int8_t kActNone = 0, kActRelu = 1, kActRelu6 = 3, kActTanh = 4;
constexpr int8_t kPaddingSame = 0, kPaddingValid = 1;

// The name of a fused activation floe refuses (for messages).
const char* activation_name(int8_t a);

// TensorType -> floe dtype; kInvalid for types floe has no tensors of.
DType tflite_dtype(int8_t type);

template <typename T>
schema::OpOptionsUnion wrap(T value) {
  schema::OpOptionsUnion u;
  u.Set(std::move(value));
  return u;
}

// Up to the first ';' (TFLite joins every fused TF name into one), at most 80 chars.
std::string short_name(const std::string& name);

// A float16 or quantized integer constant as float32; nullptr for other constants.
std::shared_ptr<const HostTensor> dequantized(const Value& in);

// Output extent and explicit pads of one spatial axis, as TFLite computes them.
struct Axis {
  int64_t out = 0, before = 0, after = 0;
};

class Importer {
 public:
  Importer(const std::string& bytes, const std::string& path, const TfliteOptions& options)
      : base_(reinterpret_cast<const uint8_t*>(bytes.data())), size_(bytes.size()), path_(path), options_(options) {}

  TfliteImport run();

 private:
  // ---- errors
  [[noreturn]] void fail(const std::string& message, const void* at = nullptr) const {
    ErrorLocation where;
    where.file = path_;
    std::string text = path_ + ": " + message;
    if (at != nullptr) {
      where.byte_offset = reinterpret_cast<const uint8_t*>(at) - base_;
      text += " (byte offset " + std::to_string(where.byte_offset) + ")";
    }
    throw ConvertError(text, ErrorCategory::kInvalidInput, where);
  }
  [[noreturn]] void fail_op(const std::string& message) const { throw op_error(message); }
  // A valid operator floe has no kernel for (exit 2, "unsupported").
  [[noreturn]] void fail_unsupported(const std::string& message) const {
    const ConvertError e = op_error(message);
    throw ConvertError(e.what(), ErrorCategory::kUnsupported, e.where());
  }
  ConvertError op_error(const std::string& message) const {
    ErrorLocation where;
    where.file = path_;
    where.op = op_name_;
    where.node = node_name_;
    where.byte_offset = reinterpret_cast<const uint8_t*>(op_) - base_;
    return ConvertError(path_ + ": operator #" + std::to_string(op_index_) + " " + op_name_ + subgraph_label() +
                            " ('" + node_name_ + "'): " + message + " (byte offset " +
                            std::to_string(where.byte_offset) + ")",
                        ErrorCategory::kInvalidInput, where);
  }
  // " of subgraph N" for an operator of a called subgraph, "" in the main graph.
  std::string subgraph_label() const {
    return subgraph_ == 0 ? std::string() : " of subgraph " + std::to_string(subgraph_);
  }

  // ---- tensors
  int32_t builtin_code(const fb::OperatorCode* code) const {
    // Files before the extended field leave builtin_code 0; newer ones set
    // deprecated_builtin_code to PLACEHOLDER_FOR_GREATER_OP_CODES (127): the larger wins.
    return std::max<int32_t>(code->deprecated_builtin_code(), code->builtin_code());
  }
  const fb::Tensor* tflite_tensor(int32_t index, const char* role) const;
  int value_of(int32_t tensor);
  Quantization read_quantization(const fb::Tensor* t, const std::vector<int64_t>& shape, const std::string& name);
  std::shared_ptr<const HostTensor> read_constant(const fb::Tensor* t, DType dtype, const std::vector<int64_t>& shape,
                                                  const std::string& name);

  // ---- operators
  std::string unsupported_reason(const fb::Operator* op, int32_t code) const;
  // The TFLite type of the operator's input 0 (0, float32, when it has none
  // or names no tensor: lowering reports those).
  int8_t input_type(const fb::Operator* op) const;
  void lower(const fb::Operator* op, int32_t code);
  int input(int k);  // value of input k (must be present)
  bool has_input(int k) const;
  int output(int k = 0);
  const Value& value(int id) const { return out_.model.values[static_cast<size_t>(id)]; }
  int derived(const Value& like, std::vector<int64_t> shape, const std::string& suffix);
  void add_op(schema::OpCode code, std::vector<int> inputs, std::vector<int> outputs,
              schema::OpOptionsUnion options = {});
  schema::Activation fused(int8_t activation) const;
  // Writes op(inputs) into `out`, with the fused activation as its own op when
  // floe's op has no activation field.
  void with_activation(schema::OpCode code, std::vector<int> inputs, int8_t activation,
                       schema::OpOptionsUnion options = {});
  Axis axis(int64_t in, int64_t k, int64_t stride, int64_t dilation, int8_t padding) const;
  void expect_shape(int id, const std::vector<int64_t>& shape) const;
  std::vector<int64_t> int_constant(int id, const char* what) const;
  std::vector<int64_t> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) const;
  int float_weights(int x, int w);
  void expect_dtype(int id, DType dtype, const char* role) const;
  // The dtypes of a weighted op: float32 throughout, int8 activations and
  // weights with an int32 bias, or int16 activations with int8 weights and an
  // int64 (or int32) bias: TFLite's 16x8 scheme.
  void check_weighted(int x, int w, int bias, int out) const;

  // ---- control flow (subgraphs called by WHILE and IF, inlined)
  // The subgraphs subgraph `index` calls, checked (indices, recursion,
  // nesting, inlined size) and their unsupported ops collected, once each.
  // `state` per subgraph: 0 unseen, 1 being walked (a call to it recurses),
  // 2 done; `inlined_ops` its operators with its callees' inlined, `height`
  // the WHILE / IF ops nested in it at most.
  void walk_calls(int index, int depth, std::vector<int>& state, std::vector<uint64_t>& inlined_ops,
                  std::vector<int>& height, std::map<std::string, std::vector<std::string>>& unsupported);
  // Sets the operator being lowered (op_, op_index_, op_name_, node_name_).
  void enter_op(uint32_t index, int32_t code);
  int32_t code_of(const fb::Operator* op) const;
  // Subgraph `index` as the current WHILE / IF op's `role` subgraph, checked.
  int called_subgraph(int32_t index, const char* role) const;
  // Lowers the ops of subgraph `index` with its inputs bound to `args`
  // (checked against its input tensors); returns its outputs' values. An input
  // that is a resource handle is bound to `handles[k]` (a resource variable)
  // instead, args[k] then -1; an output that is one is -1 in the values and
  // its variable in `*result_handles` (-1 elsewhere), which callers check.
  std::vector<int> inline_subgraph(int index, const std::vector<int>& args, const std::string& role,
                                   const std::vector<int>& handles = {},
                                   std::vector<int>* result_handles = nullptr);
  // Fails unsupported when a called subgraph returned a resource handle.
  void expect_no_handles(const std::vector<int>& result_handles, int index, const char* role) const;
  void lower_ops();
  void lower_while();
  void lower_if();
  // ---- resource variables (one persistent variable value per shared name)
  bool is_handle(int k) const;  // input k is a resource handle tensor
  int handle_input(int k);      // the resource variable input k's handle names
  // The variable value of resource `r`, created with `like`'s dtype, shape and
  // quantization on first use; later uses must agree.
  int variable_value(int r, const Value& like, const std::string& use);
  void lower_var_handle();
  void lower_read_variable();
  void lower_assign_variable();
  void lower_call_once();
  void lower_comparison(schema::OpCode code);
  void expect_same_quantization(int id, const Value& like, const std::string& what) const;

  void check_quantized_operands();
  void drop_unused_values();
  void lower_conv();
  void lower_depthwise();
  void lower_fully_connected();
  void lower_pool(schema::OpCode code);
  void lower_mean();
  void lower_pad();
  void lower_strided_slice();
  void lower_transpose_conv();
  void lower_concat();
  void lower_dequantize();
  void lower_svdf();
  void lower_lstm();
  void lower_cast();
  void lower_div();
  void lower_expand_dims();
  void lower_shape();
  void lower_pack();
  void lower_resize_nearest();
  void lower_reverse();
  // A constant's single integer (a scalar or one-element axis operand).
  int64_t scalar_constant(int id, const char* what) const;
  // The custom code of the operator ("" when it names none).
  std::string custom_code(const fb::Operator* op) const;
  std::string custom_unsupported_reason(const fb::Operator* op) const;
  // TFLite Micro's Signal library ops (its audio front end).
  void lower_signal(const std::string& name);
  int add_constant(const std::string& name, DType dtype, std::vector<int64_t> shape, const void* data);
  void check_lstm_8x8_16(const std::vector<int>& inputs, int out);
  // Input k as the op's state: a variable tensor (input() refuses those).
  int state_input(int k);

  const uint8_t* base_;
  size_t size_;
  std::string path_;
  TfliteOptions options_;
  const fb::Model* model_ = nullptr;
  // The subgraph being lowered: the main graph, or a called one inlined.
  const fb::SubGraph* graph_ = nullptr;
  int subgraph_ = 0;
  std::string prefix_;          // prepended to an inlined subgraph's tensor names
  std::vector<int> values_;     // its TFLite tensor -> value id, -1 until used
  std::vector<bool> written_;   // by value id: a graph input or an earlier op's output
  std::vector<std::string> normalized_dims_;  // 1-D tensors whose quantized_dimension was read as 0
  int hybrid_ops_ = 0;                        // float ops whose int8 weights were dequantized
  TfliteImport out_;
  // The operator being lowered.
  const fb::Operator* op_ = nullptr;
  int op_index_ = 0;
  std::string op_name_, node_name_;
  // The run-time loop (and whether its condition) and the run-time if (and
  // whether its then branch) the ops being added belong to, innermost; -1: none.
  int loop_ = -1;
  bool loop_cond_ = false;
  int if_id_ = -1;
  bool if_then_ = false;
  // Resource variables by (container, shared_name); handles_ maps the current
  // subgraph's resource tensors to them (-1: no handle yet).
  struct ResourceVariable {
    std::string container, shared_name;
    int value = -1;        // the variable value, once a READ / ASSIGN / initializer gave its type
    int initializer = -1;  // the CALL_ONCE subgraph that assigned its initial value
    std::shared_ptr<const HostTensor> initial;  // what it assigned
    bool assigned = false;  // an ASSIGN_VARIABLE writes it at run time
    bool read = false;      // a READ_VARIABLE reads it
  };
  std::vector<ResourceVariable> resources_;
  std::vector<int> handles_;
  int initializing_ = -1;          // the CALL_ONCE subgraph being folded, -1: none
  bool variables_used_ = false;    // a READ / ASSIGN has been lowered (CALL_ONCE must come first)
  std::set<int> initialized_by_;   // CALL_ONCE subgraphs already folded
};

}  // namespace floe::conv::tflite_detail
