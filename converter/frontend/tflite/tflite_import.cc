// SPDX-License-Identifier: Apache-2.0
// .tflite -> lowered model (see tflite_import.h). The buffer is checked by the
// FlatBuffers verifier first; after that every index, shape, buffer size and
// quantization record is checked here before it is used, so a hostile file
// ends in one ConvertError (file, op, byte offset), never a crash.
#include "converter/frontend/tflite/tflite_import.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "converter/frontend/tflite/custom_options.h"
#include "converter/frontend/tflite/tflite_subset_generated.h"
#include "converter/ir/error.h"
#include "converter/ir/limits.h"
#include "converter/ops/strided_slice_spec.h"

namespace floe::conv {
namespace {

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

const char* activation_name(int8_t a) {
  switch (a) {
    case 2: return "RELU_N1_TO_1";
    case 4: return "TANH";
    case 5: return "SIGN_BIT";
    default: return "unknown";
  }
}

// TensorType -> floe dtype; kInvalid for types floe has no tensors of.
DType tflite_dtype(int8_t type) {
  switch (type) {
    case 0: return DType::kFloat32;
    case 1: return DType::kFloat16;
    case 2: return DType::kInt32;
    case 3: return DType::kUInt8;
    case 4: return DType::kInt64;
    case 6: return DType::kBool;
    case 7: return DType::kInt16;
    case 9: return DType::kInt8;
    case 10: return DType::kFloat64;
    case 12: return DType::kUInt64;
    case 15: return DType::kUInt32;
    default: return DType::kInvalid;
  }
}

template <typename T>
schema::OpOptionsUnion wrap(T value) {
  schema::OpOptionsUnion u;
  u.Set(std::move(value));
  return u;
}

// Up to the first ';' (TFLite joins every fused TF name into one), at most 80 chars.
std::string short_name(const std::string& name) {
  std::string s = name.substr(0, name.find(';'));
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

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

const fb::Tensor* Importer::tflite_tensor(int32_t index, const char* role) const {
  const auto* tensors = graph_->tensors();
  if (index < 0 || tensors == nullptr || static_cast<uint32_t>(index) >= tensors->size()) {
    const std::string what = std::string(role) + " tensor index " + std::to_string(index) + " is out of range (" +
                             std::to_string(tensors ? tensors->size() : 0) + " tensors)";
    if (op_ != nullptr) fail_op(what);
    fail(what, graph_);
  }
  return tensors->Get(static_cast<uint32_t>(index));
}

Quantization Importer::read_quantization(const fb::Tensor* t, const std::vector<int64_t>& shape,
                                         const std::string& name) {
  Quantization q;
  const fb::QuantizationParameters* p = t->quantization();
  if (p == nullptr || p->scale() == nullptr || p->scale()->size() == 0) return q;  // min/max only, or empty
  if (p->details_type() != fb::QuantizationDetails::NONE) {
    fail("tensor '" + short_name(name) + "' uses custom quantization, which floe does not read", t);
  }
  const uint32_t count = p->scale()->size();
  if (p->zero_point() == nullptr || p->zero_point()->size() != count) {
    fail("tensor '" + short_name(name) + "' has " + std::to_string(count) + " scale(s) but " +
             std::to_string(p->zero_point() ? p->zero_point()->size() : 0) + " zero point(s)",
         p);
  }
  for (uint32_t i = 0; i < count; ++i) {
    const float s = p->scale()->Get(i);
    if (!(s > 0.0f && s <= 3.402823466e38f)) {
      fail("tensor '" + short_name(name) + "' has scale " + std::to_string(s) + " (must be finite and > 0)", p);
    }
    q.scale.push_back(s);
    // The verifier aligns vectors to 4 bytes only: read the int64 bytewise.
    int64_t zero_point;
    std::memcpy(&zero_point, p->zero_point()->Data() + sizeof(int64_t) * i, sizeof zero_point);
    q.zero_point.push_back(zero_point);
  }
  int64_t dim = p->quantized_dimension();
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (shape.size() == 1 && dim != 0) {
    // Meaningless on a 1-D tensor (only axis 0 exists); TFLite Micro ignores
    // it, full TFLite refuses the file. Read it as 0 and say so.
    normalized_dims_.push_back(short_name(name) + "': " + std::to_string(dim));
    dim = 0;
  } else if (count == 1 && (dim < 0 || dim >= std::max<int64_t>(rank, 1))) {
    dim = 0;  // per tensor: the dimension is not used
  }
  if (dim < 0 || (count > 1 && dim >= rank)) {
    fail("tensor '" + short_name(name) + "' has quantized_dimension " + std::to_string(dim) + " for rank " +
             std::to_string(rank),
         p);
  }
  if (count > 1 && shape[static_cast<size_t>(dim)] != static_cast<int64_t>(count)) {
    fail("tensor '" + short_name(name) + "' has " + std::to_string(count) + " scales for dimension " +
             std::to_string(dim) + " of shape " + shape_to_string(shape),
         p);
  }
  q.dimension = static_cast<int32_t>(dim);
  return q;
}

std::shared_ptr<const HostTensor> Importer::read_constant(const fb::Tensor* t, DType dtype,
                                                          const std::vector<int64_t>& shape, const std::string& name) {
  const auto* buffers = model_->buffers();
  if (buffers == nullptr || t->buffer() >= buffers->size()) {
    fail("tensor '" + short_name(name) + "' names buffer " + std::to_string(t->buffer()) + " of " +
             std::to_string(buffers ? buffers->size() : 0),
         t);
  }
  const fb::Buffer* buffer = buffers->Get(t->buffer());
  const uint8_t* data = nullptr;
  uint64_t bytes = 0;
  if (buffer->data() != nullptr && buffer->data()->size() > 0) {
    data = buffer->data()->data();
    bytes = buffer->data()->size();
  } else if (buffer->offset() > 1) {  // kept outside the FlatBuffer (models over 2 GB)
    if (buffer->offset() > size_ || buffer->size() > size_ - buffer->offset()) {
      fail("tensor '" + short_name(name) + "': buffer " + std::to_string(t->buffer()) + " lies outside the file",
           buffer);
    }
    data = base_ + buffer->offset();
    bytes = buffer->size();
  }
  if (data == nullptr) return nullptr;  // an activation
  auto host = std::make_shared<HostTensor>();
  host->dtype = dtype;
  host->shape = shape;
  const uint64_t expected = static_cast<uint64_t>(host->num_elements()) * dtype_size(dtype);
  if (bytes != expected) {
    fail("constant tensor '" + short_name(name) + "' " + shape_to_string(shape) + " " + dtype_name(dtype) + " has " +
             std::to_string(bytes) + " bytes, expected " + std::to_string(expected),
         buffer);
  }
  host->data.assign(data, data + bytes);
  return host;
}

int Importer::value_of(int32_t index) {
  const fb::Tensor* t = tflite_tensor(index, "operand");
  int& slot = values_[static_cast<size_t>(index)];
  if (slot >= 0) return slot;
  Value v;
  v.name = prefix_ + (t->name() ? t->name()->str() : "tensor_" + std::to_string(index));
  v.dtype = tflite_dtype(t->type());
  if (t->type() == kTypeResource) {
    const std::string what = "tensor '" + short_name(v.name) +
                             "' is a resource handle; floe follows handles from VAR_HANDLE into READ_VARIABLE, "
                             "ASSIGN_VARIABLE and the inputs of IF branches only";
    if (op_ != nullptr) fail_unsupported(what);
    fail(what, t);
  }
  if (v.dtype == DType::kInvalid) {
    fail("tensor '" + short_name(v.name) + "' has TFLite type " + std::to_string(t->type()) +
             ", which floe has no tensors of",
         t);
  }
  if (t->sparsity() != nullptr) fail("tensor '" + short_name(v.name) + "' is sparse; floe reads dense tensors", t);
  int64_t elements = 1;
  if (t->shape() != nullptr) {
    if (t->shape()->size() > 6) fail("tensor '" + short_name(v.name) + "' has rank > 6", t);
    for (const int32_t d : *t->shape()) {
      if (d < 0) fail("tensor '" + short_name(v.name) + "' has a dynamic dimension; floe needs static shapes", t);
      elements *= d == 0 ? 1 : d;
      if (elements > (int64_t{1} << 31)) fail("tensor '" + short_name(v.name) + "' has over 2^31 elements", t);
      v.shape.push_back(d);
    }
  }
  v.quantization = read_quantization(t, v.shape, v.name);
  // Only integer tensors are quantized; a record on anything else means nothing.
  if (v.dtype != DType::kInt8 && v.dtype != DType::kUInt8 && v.dtype != DType::kInt16 && v.dtype != DType::kInt32) {
    v.quantization = {};
  }
  for (const int64_t zero_point : v.quantization.zero_point) {
    const int64_t lo = v.dtype == DType::kInt8 ? -128 : v.dtype == DType::kUInt8 ? 0 : v.dtype == DType::kInt16 ? -32768 : INT32_MIN;
    const int64_t hi = v.dtype == DType::kInt8 ? 127 : v.dtype == DType::kUInt8 ? 255 : v.dtype == DType::kInt16 ? 32767 : INT32_MAX;
    if (zero_point < lo || zero_point > hi) {
      fail("tensor '" + short_name(v.name) + "' has zero point " + std::to_string(zero_point) + ", outside " +
               dtype_name(v.dtype),
           t);
    }
  }
  v.constant = read_constant(t, v.dtype, v.shape, v.name);
  if (t->is_variable()) {
    // TFLite starts a variable at zero (its zero point when int8) whatever
    // its buffer holds, and so does floe; it is readable from the start.
    v.constant = nullptr;
    v.variable = true;
  }
  slot = out_.model.add_value(std::move(v));
  written_.push_back(out_.model.values.back().is_constant() || out_.model.values.back().variable);
  return slot;
}

bool Importer::has_input(int k) const {
  const auto* inputs = op_->inputs();
  return inputs != nullptr && k < static_cast<int>(inputs->size()) && inputs->Get(static_cast<uint32_t>(k)) >= 0;
}

int Importer::input(int k) {
  if (!has_input(k)) fail_op("input " + std::to_string(k) + " is missing");
  const int id = value_of(op_->inputs()->Get(static_cast<uint32_t>(k)));
  if (value(id).variable) {
    fail_op("reads variable tensor '" + short_name(value(id).name) +
            "' as an ordinary input; floe keeps variable tensors only as the state of SVDF and "
            "UNIDIRECTIONAL_SEQUENCE_LSTM");
  }
  if (!written_[static_cast<size_t>(id)]) {
    fail_op("reads tensor '" + short_name(value(id).name) + "' before any operator writes it");
  }
  return id;
}

int Importer::state_input(int k) {
  if (!has_input(k)) fail_op("state input " + std::to_string(k) + " is missing");
  const int id = value_of(op_->inputs()->Get(static_cast<uint32_t>(k)));
  if (!value(id).variable) {
    fail_op("state input " + std::to_string(k) + " '" + short_name(value(id).name) + "' is not a variable tensor");
  }
  return id;
}

int Importer::output(int k) {
  const auto* outputs = op_->outputs();
  if (outputs == nullptr || k >= static_cast<int>(outputs->size())) {
    fail_op("output " + std::to_string(k) + " is missing");
  }
  const int id = value_of(outputs->Get(static_cast<uint32_t>(k)));
  if (written_[static_cast<size_t>(id)]) {
    fail_op("writes tensor '" + short_name(value(id).name) + "', which is a constant, an input or already written");
  }
  return id;
}

int Importer::derived(const Value& like, std::vector<int64_t> shape, const std::string& suffix) {
  Value v;
  v.name = short_name(like.name) + "/" + suffix;
  v.dtype = like.dtype;
  v.shape = std::move(shape);
  v.quantization = like.quantization;
  if (v.quantization.scale.size() > 1) {
    fail_op("tensor '" + short_name(like.name) + "' would need a per-channel axis after reshaping");
  }
  v.quantization.dimension = 0;
  const int id = out_.model.add_value(std::move(v));
  written_.push_back(false);
  return id;
}

void Importer::add_op(schema::OpCode code, std::vector<int> inputs, std::vector<int> outputs,
                      schema::OpOptionsUnion options) {
  LoweredOp op;
  op.opcode = code;
  op.options = std::move(options);
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  op.node_name = node_name_;
  op.loop = loop_;
  op.loop_cond = loop_cond_;
  op.if_id = if_id_;
  op.if_then = if_then_;
  for (int o : op.outputs) written_[static_cast<size_t>(o)] = true;
  out_.model.ops.push_back(std::move(op));
}

schema::Activation Importer::fused(int8_t activation) const {
  switch (activation) {
    case kActNone: return schema::Activation::NONE;
    case kActRelu: return schema::Activation::RELU;
    case kActRelu6: return schema::Activation::RELU6;
    default: fail_op(std::string("fused activation ") + activation_name(activation) + " is not supported");
  }
}

void Importer::with_activation(schema::OpCode code, std::vector<int> inputs, int8_t activation,
                               schema::OpOptionsUnion options) {
  const int out = output();
  const schema::Activation act = fused(activation);
  if (act == schema::Activation::NONE) {
    add_op(code, std::move(inputs), {out}, std::move(options));
    return;
  }
  // A quantized op clamps in its output's quantization: the value before the
  // clamp shares it.
  const Value& like = value(out);
  const int pre = derived(like, like.shape, "pre_activation");
  add_op(code, std::move(inputs), {pre}, std::move(options));
  add_op(act == schema::Activation::RELU ? schema::OpCode::RELU : schema::OpCode::RELU6, {pre}, {out});
}

Axis Importer::axis(int64_t in, int64_t k, int64_t stride, int64_t dilation, int8_t padding) const {
  if (stride < 1 || dilation < 1 || k < 1) fail_op("strides, dilations and window sizes must be >= 1");
  const int64_t effective = (k - 1) * dilation + 1;
  Axis a;
  if (padding == kPaddingSame) {
    a.out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((a.out - 1) * stride + effective - in, 0);
    a.before = total / 2;  // the odd pixel goes after, as in TF
    a.after = total - a.before;
  } else if (padding == kPaddingValid) {
    if (in < effective) fail_op("VALID window larger than the input");
    a.out = (in - effective) / stride + 1;
  } else {
    fail_op("unknown padding " + std::to_string(padding));
  }
  return a;
}

void Importer::expect_shape(int id, const std::vector<int64_t>& shape) const {
  if (value(id).shape != shape) {
    fail_op("tensor '" + short_name(value(id).name) + "' has shape " + shape_to_string(value(id).shape) +
            ", the operator computes " + shape_to_string(shape));
  }
}

std::vector<int64_t> Importer::int_constant(int id, const char* what) const {
  const Value& v = value(id);
  if (!v.is_constant() || (v.dtype != DType::kInt32 && v.dtype != DType::kInt64)) {
    fail_op(std::string(what) + " must be a constant int32/int64 tensor");
  }
  std::vector<int64_t> out;
  for (int64_t i = 0; i < v.constant->num_elements(); ++i) {
    out.push_back(v.dtype == DType::kInt32 ? v.constant->as<int32_t>()[i] : v.constant->as<int64_t>()[i]);
  }
  return out;
}

// Numpy broadcasting of two shapes (what ADD/SUB/MUL compute).
std::vector<int64_t> Importer::broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) const {
  std::vector<int64_t> out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (da != db && da != 1 && db != 1) fail_op("shapes " + shape_to_string(a) + " and " + shape_to_string(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void Importer::expect_dtype(int id, DType dtype, const char* role) const {
  if (value(id).dtype != dtype) {
    fail_op(std::string(role) + " '" + short_name(value(id).name) + "' is " + dtype_name(value(id).dtype) +
            ", expected " + dtype_name(dtype));
  }
}

void Importer::check_weighted(int x, int w, int bias, int out) const {
  const DType t = value(x).dtype;
  if (t != DType::kFloat32 && t != DType::kInt8 && t != DType::kInt16) {
    fail_op(std::string("input is ") + dtype_name(t) + ", not float32, int8 or int16");
  }
  expect_dtype(w, t == DType::kInt16 ? DType::kInt8 : t, "weights");
  if (bias >= 0 && t == DType::kInt16) {
    if (value(bias).dtype != DType::kInt64 && value(bias).dtype != DType::kInt32) {
      fail_op("bias '" + short_name(value(bias).name) + "' is " + dtype_name(value(bias).dtype) +
              ", expected int64 or int32 (16x8 quantization)");
    }
  } else if (bias >= 0) {
    expect_dtype(bias, t == DType::kFloat32 ? DType::kFloat32 : DType::kInt32, "bias");
  }
  expect_dtype(out, t, "output");
}

// Rewrites a quantization's per-channel axis for a transpose: new axis j holds old axis perm[j].
Quantization permuted(Quantization q, const std::vector<int>& perm) {
  if (q.scale.size() > 1) {
    for (size_t j = 0; j < perm.size(); ++j) {
      if (perm[j] == q.dimension) {
        q.dimension = static_cast<int32_t>(j);
        break;
      }
    }
  }
  return q;
}

// out[i0..i3] = in[index along perm] for 4-D, any element size.
std::shared_ptr<const HostTensor> transpose4(const HostTensor& in, const std::vector<int>& perm) {
  auto out = std::make_shared<HostTensor>();
  out->dtype = in.dtype;
  for (int p : perm) out->shape.push_back(in.shape[static_cast<size_t>(p)]);
  const size_t esize = dtype_size(in.dtype);
  out->data.resize(in.data.size());
  int64_t in_stride[4];
  in_stride[3] = 1;
  for (int d = 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * in.shape[static_cast<size_t>(d + 1)];
  const auto& s = out->shape;
  size_t o = 0;
  for (int64_t a = 0; a < s[0]; ++a)
    for (int64_t b = 0; b < s[1]; ++b)
      for (int64_t c = 0; c < s[2]; ++c)
        for (int64_t d = 0; d < s[3]; ++d, ++o) {
          const int64_t idx[4] = {a, b, c, d};
          int64_t src = 0;
          for (int j = 0; j < 4; ++j) src += idx[j] * in_stride[perm[static_cast<size_t>(j)]];
          std::memcpy(&out->data[o * esize], &in.data[static_cast<size_t>(src) * esize], esize);
        }
  return out;
}

// A float16 or quantized integer constant as float32; nullptr for other constants.
std::shared_ptr<const HostTensor> dequantized(const Value& in) {
  auto result = std::make_shared<HostTensor>();
  result->dtype = DType::kFloat32;
  result->shape = in.shape;
  const int64_t n = in.constant->num_elements();
  result->data.resize(static_cast<size_t>(n) * 4);
  float* dst = result->as<float>();
  if (in.dtype == DType::kFloat16) {
    for (int64_t i = 0; i < n; ++i) {
      const uint16_t h = in.constant->as<uint16_t>()[i];
      const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1F, frac = h & 0x3FF;
      float f;
      if (exp == 0) {
        f = static_cast<float>(frac) * (1.0f / 16777216.0f);  // subnormal: frac * 2^-24
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        bits |= sign;
        std::memcpy(&f, &bits, 4);
      } else {
        const uint32_t bits = sign | (exp == 31 ? 0x7F800000u | (frac << 13) : ((exp + 112) << 23) | (frac << 13));
        std::memcpy(&f, &bits, 4);
      }
      dst[i] = f;
    }
  } else if ((in.dtype == DType::kInt8 || in.dtype == DType::kUInt8 || in.dtype == DType::kInt16) &&
             !in.quantization.empty()) {
    const Quantization& q = in.quantization;
    int64_t inner = 1, channels = 1;
    if (q.scale.size() > 1) {
      channels = in.shape[static_cast<size_t>(q.dimension)];
      for (size_t d = static_cast<size_t>(q.dimension) + 1; d < in.shape.size(); ++d) inner *= in.shape[d];
    }
    for (int64_t i = 0; i < n; ++i) {
      const size_t c = static_cast<size_t>(channels > 1 ? (i / inner) % channels : 0);
      int64_t v = 0;
      switch (in.dtype) {
        case DType::kInt8: v = in.constant->as<int8_t>()[i]; break;
        case DType::kUInt8: v = in.constant->as<uint8_t>()[i]; break;
        default: v = in.constant->as<int16_t>()[i]; break;
      }
      // In double, like TFLite's reference, then rounded once to float.
      dst[i] = static_cast<float>(static_cast<double>(q.scale[c]) * static_cast<double>(v - q.zero_point[c]));
    }
  } else {
    return nullptr;
  }
  return result;
}

// Hybrid ops (float input, int8 weights, from dynamic-range quantization):
// floe computes them in float32 with the weights dequantized now. TFLite's
// hybrid kernels quantize the activations at run time instead, so results
// differ by that rounding.
int Importer::float_weights(int x, int w) {
  const Value& weights = value(w);
  if (value(x).dtype != DType::kFloat32 || weights.dtype == DType::kFloat32 || !weights.is_constant()) return w;
  std::shared_ptr<const HostTensor> data = dequantized(weights);
  if (data == nullptr) fail_op(std::string("float input with ") + dtype_name(weights.dtype) + " weights without quantization");
  Value v;
  v.name = weights.name + "/dequantized";
  v.dtype = DType::kFloat32;
  v.shape = weights.shape;
  v.constant = std::move(data);
  ++hybrid_ops_;
  const int id = out_.model.add_value(std::move(v));
  written_.push_back(true);
  return id;
}

void Importer::lower_conv() {
  const auto* o = op_->builtin_options_as_Conv2DOptions();
  if (o == nullptr) fail_op("Conv2DOptions are missing");
  const int x = input(0), w = float_weights(x, input(1));
  const std::vector<int64_t> xs = value(x).shape, ws = value(w).shape;
  if (xs.size() != 4 || ws.size() != 4) fail_op("input and filter must be 4-D (NHWC, OHWI)");
  if (ws[3] != xs[3]) {
    fail_op("filter " + shape_to_string(ws) + " does not match input channels " + std::to_string(xs[3]) +
            " (grouped convolutions are not supported)");
  }
  const Axis h = axis(xs[1], ws[1], o->stride_h(), o->dilation_h_factor(), o->padding());
  const Axis wd = axis(xs[2], ws[2], o->stride_w(), o->dilation_w_factor(), o->padding());
  schema::Conv2DOptionsT c;
  c.stride_h = o->stride_h();
  c.stride_w = o->stride_w();
  c.dilation_h = o->dilation_h_factor();
  c.dilation_w = o->dilation_w_factor();
  c.pad_top = static_cast<int32_t>(h.before);
  c.pad_bottom = static_cast<int32_t>(h.after);
  c.pad_left = static_cast<int32_t>(wd.before);
  c.pad_right = static_cast<int32_t>(wd.after);
  c.activation = fused(o->fused_activation_function());
  // OHWI -> HWIO: new axis j is old axis kToHwio[j].
  const std::vector<int> kToHwio = {1, 2, 3, 0};
  const Value& filter = value(w);
  Value hwio;
  hwio.name = filter.name + "/hwio";
  hwio.dtype = filter.dtype;
  hwio.shape = {ws[1], ws[2], ws[3], ws[0]};
  hwio.quantization = permuted(filter.quantization, kToHwio);
  int filter_id;
  if (filter.is_constant()) {
    hwio.constant = transpose4(*filter.constant, kToHwio);
    filter_id = out_.model.add_value(std::move(hwio));
    written_.push_back(true);
  } else {
    filter_id = out_.model.add_value(std::move(hwio));
    written_.push_back(false);
    schema::TransposeOptionsT t;
    t.perm = {1, 2, 3, 0};
    add_op(schema::OpCode::TRANSPOSE, {w}, {filter_id}, wrap(t));
  }
  std::vector<int> inputs = {x, filter_id};
  if (has_input(2)) inputs.push_back(input(2));
  const int out = output();
  check_weighted(x, filter_id, has_input(2) ? inputs[2] : -1, out);
  if (has_input(2)) expect_shape(inputs[2], {ws[0]});
  expect_shape(out, {xs[0], h.out, wd.out, ws[0]});
  add_op(schema::OpCode::CONV2D, std::move(inputs), {out}, wrap(c));
}

void Importer::lower_depthwise() {
  const auto* o = op_->builtin_options_as_DepthwiseConv2DOptions();
  if (o == nullptr) fail_op("DepthwiseConv2DOptions are missing");
  const int x = input(0), w = float_weights(x, input(1));
  const std::vector<int64_t> xs = value(x).shape, ws = value(w).shape;
  if (xs.size() != 4 || ws.size() != 4 || ws[0] != 1) fail_op("input must be 4-D NHWC and the filter [1,H,W,C*M]");
  const int64_t channels = xs[3];
  if (channels < 1 || ws[3] % channels != 0) {
    fail_op("filter " + shape_to_string(ws) + " is not a multiple of the " + std::to_string(channels) +
            " input channels");
  }
  // The multiplier follows from the shapes (the option is redundant and some
  // converters leave it 0).
  const int64_t multiplier = ws[3] / channels;
  const Axis h = axis(xs[1], ws[1], o->stride_h(), o->dilation_h_factor(), o->padding());
  const Axis wd = axis(xs[2], ws[2], o->stride_w(), o->dilation_w_factor(), o->padding());
  schema::DepthwiseConv2DOptionsT d;
  d.stride_h = o->stride_h();
  d.stride_w = o->stride_w();
  d.dilation_h = o->dilation_h_factor();
  d.dilation_w = o->dilation_w_factor();
  d.pad_top = static_cast<int32_t>(h.before);
  d.pad_bottom = static_cast<int32_t>(h.after);
  d.pad_left = static_cast<int32_t>(wd.before);
  d.pad_right = static_cast<int32_t>(wd.after);
  d.depth_multiplier = static_cast<int32_t>(multiplier);
  d.activation = fused(o->fused_activation_function());
  // [1,H,W,C*M] and floe's [H,W,C,M] have the same bytes (channel c*M + m).
  const Value& filter = value(w);
  Value hwcm;
  hwcm.name = filter.name + "/hwcm";
  hwcm.dtype = filter.dtype;
  hwcm.shape = {ws[1], ws[2], channels, multiplier};
  hwcm.quantization = filter.quantization;
  if (hwcm.quantization.scale.size() > 1) {
    if (multiplier == 1) {
      hwcm.quantization.dimension = 2;
    } else if (channels == 1) {
      hwcm.quantization.dimension = 3;
    } else {
      fail_op("per-channel weights over " + std::to_string(channels) + " channels x multiplier " +
              std::to_string(multiplier) + " span two of floe's filter dimensions");
    }
  }
  int filter_id;
  if (filter.is_constant()) {
    auto data = std::make_shared<HostTensor>(*filter.constant);
    data->shape = hwcm.shape;
    hwcm.constant = std::move(data);
    filter_id = out_.model.add_value(std::move(hwcm));
    written_.push_back(true);
  } else {
    filter_id = out_.model.add_value(std::move(hwcm));
    written_.push_back(false);
    add_op(schema::OpCode::RESHAPE, {w}, {filter_id});
  }
  std::vector<int> inputs = {x, filter_id};
  if (has_input(2)) inputs.push_back(input(2));
  const int out = output();
  check_weighted(x, filter_id, has_input(2) ? inputs[2] : -1, out);
  if (has_input(2)) expect_shape(inputs[2], {channels * multiplier});
  expect_shape(out, {xs[0], h.out, wd.out, channels * multiplier});
  add_op(schema::OpCode::DEPTHWISE_CONV2D, std::move(inputs), {out}, wrap(d));
}

void Importer::lower_fully_connected() {
  const auto* o = op_->builtin_options_as_FullyConnectedOptions();
  const int8_t activation = o ? o->fused_activation_function() : kActNone;
  const int x = input(0), w = float_weights(x, input(1));
  const std::vector<int64_t> ws = value(w).shape;
  if (ws.size() != 2 || ws[1] < 1) fail_op("weights must be 2-D [units, inputs], got " + shape_to_string(ws));
  const Value xv = value(x);
  int64_t elements = 1;
  for (int64_t d : xv.shape) elements *= d;
  if (elements % ws[1] != 0) {
    fail_op("input " + shape_to_string(xv.shape) + " is not a whole number of rows of " + std::to_string(ws[1]));
  }
  const int64_t rows = elements / ws[1], units = ws[0];
  int a = x;
  if (xv.shape != std::vector<int64_t>{rows, ws[1]}) {
    a = derived(xv, {rows, ws[1]}, "rows");
    add_op(schema::OpCode::RESHAPE, {x}, {a});
  }
  // TFLite's [units, inputs] weights are floe's B with transpose_b: no copy,
  // and a per-channel axis 0 stays the output-channel axis.
  schema::MatMulOptionsT m;
  m.transpose_b = true;
  m.activation = fused(activation);
  std::vector<int> inputs = {a, w};
  if (has_input(2)) inputs.push_back(input(2));
  const int out = output();
  check_weighted(x, w, has_input(2) ? inputs[2] : -1, out);
  if (has_input(2)) expect_shape(inputs[2], {units});
  int64_t out_elements = 1;
  for (int64_t d : value(out).shape) out_elements *= d;
  if (out_elements != rows * units) {
    fail_op("output " + shape_to_string(value(out).shape) + " does not hold " + std::to_string(rows) + " x " +
            std::to_string(units) + " values");
  }
  if (value(out).shape == std::vector<int64_t>{rows, units}) {
    add_op(schema::OpCode::MATMUL, std::move(inputs), {out}, wrap(m));
    return;
  }
  const int flat = derived(value(out), {rows, units}, "rows");  // keep_num_dims
  add_op(schema::OpCode::MATMUL, std::move(inputs), {flat}, wrap(m));
  add_op(schema::OpCode::RESHAPE, {flat}, {out});
}

void Importer::lower_pool(schema::OpCode code) {
  const auto* o = op_->builtin_options_as_Pool2DOptions();
  if (o == nullptr) fail_op("Pool2DOptions are missing");
  const int x = input(0);
  const std::vector<int64_t> xs = value(x).shape;
  if (xs.size() != 4) fail_op("input must be 4-D NHWC");
  const Axis h = axis(xs[1], o->filter_height(), o->stride_h(), 1, o->padding());
  const Axis w = axis(xs[2], o->filter_width(), o->stride_w(), 1, o->padding());
  schema::Pool2DOptionsT p;
  p.filter_h = o->filter_height();
  p.filter_w = o->filter_width();
  p.stride_h = o->stride_h();
  p.stride_w = o->stride_w();
  p.pad_top = static_cast<int32_t>(h.before);
  p.pad_bottom = static_cast<int32_t>(h.after);
  p.pad_left = static_cast<int32_t>(w.before);
  p.pad_right = static_cast<int32_t>(w.after);
  p.activation = fused(o->fused_activation_function());
  const int out = output();
  expect_dtype(out, value(x).dtype, "output");
  expect_shape(out, {xs[0], h.out, w.out, xs[3]});
  add_op(code, {x}, {out}, wrap(p));
}

void Importer::lower_mean() {
  const int x = input(0);
  const int64_t rank = static_cast<int64_t>(value(x).shape.size());
  std::set<int32_t> axes;
  for (int64_t a : int_constant(input(1), "the axes")) {
    if (a < -rank || a >= rank) fail_op("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    axes.insert(static_cast<int32_t>(a < 0 ? a + rank : a));
  }
  const auto* o = op_->builtin_options_as_ReducerOptions();
  schema::ReduceOptionsT r;
  r.axes.assign(axes.begin(), axes.end());
  r.keep_dims = o != nullptr && o->keep_dims();
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!axes.count(static_cast<int32_t>(d))) {
      shape.push_back(value(x).shape[static_cast<size_t>(d)]);
    } else if (r.keep_dims) {
      shape.push_back(1);
    }
  }
  const int out = output();
  expect_dtype(out, value(x).dtype, "output");
  expect_shape(out, shape);
  add_op(schema::OpCode::MEAN, {x}, {out}, wrap(r));
}

void Importer::lower_pad() {
  const int x = input(0);
  const std::vector<int64_t> xs = value(x).shape;
  const std::vector<int64_t> pads = int_constant(input(1), "the paddings");
  if (pads.size() != 2 * xs.size()) fail_op("paddings must be [rank, 2]");
  schema::PadOptionsT p;
  std::vector<int64_t> shape;
  for (size_t d = 0; d < xs.size(); ++d) {
    const int64_t before = pads[2 * d], after = pads[2 * d + 1];
    if (before < 0 || after < 0 || before > INT32_MAX || after > INT32_MAX) fail_op("paddings must be >= 0");
    p.paddings.push_back(static_cast<int32_t>(before));
    p.paddings.push_back(static_cast<int32_t>(after));
    shape.push_back(xs[d] + before + after);
  }
  p.mode = schema::PadMode::CONSTANT;
  p.constant_value = 0.0f;  // real zero: the zero point of a quantized tensor
  const int out = output();
  expect_dtype(out, value(x).dtype, "output");
  expect_shape(out, shape);
  add_op(schema::OpCode::PAD, {x}, {out}, wrap(p));
}

void Importer::lower_strided_slice() {
  const auto* o = op_->builtin_options_as_StridedSliceOptions();
  StridedSliceMasks masks;
  bool offset = false;
  if (o != nullptr) {
    masks.begin = o->begin_mask();
    masks.end = o->end_mask();
    masks.ellipsis = o->ellipsis_mask();
    masks.new_axis = o->new_axis_mask();
    masks.shrink = o->shrink_axis_mask();
    offset = o->offset();
  }
  const int x = input(0);
  const std::vector<int64_t> begin = int_constant(input(1), "begin");
  std::vector<int64_t> end = int_constant(input(2), "end");
  const std::vector<int64_t> strides = int_constant(input(3), "strides");
  if (offset) {  // end counts from begin
    if (end.size() != begin.size()) fail_op("begin and end lengths differ");
    for (size_t i = 0; i < end.size(); ++i) end[i] += begin[i];
  }
  SliceSpec spec;
  const std::string error = resolve_strided_slice(value(x).shape, begin, end, strides, masks, &spec);
  if (!error.empty()) fail_op(error);
  const int out = output();
  expect_dtype(out, value(x).dtype, "output");
  expect_shape(out, spec.final_shape);
  schema::StridedSliceOptionsT s;
  s.begin = spec.begin;
  s.stride = spec.stride;
  if (spec.counts == spec.final_shape) {
    add_op(schema::OpCode::STRIDED_SLICE, {x}, {out}, wrap(s));
    return;
  }
  const int mid = derived(value(out), spec.counts, "slice");
  add_op(schema::OpCode::STRIDED_SLICE, {x}, {mid}, wrap(s));
  add_op(schema::OpCode::RESHAPE, {mid}, {out});
}

// TRANSPOSE_CONV: inputs output_shape, weights [O, H, W, I], input, bias. The
// padding is that of the forward convolution from the output back to the
// input (TFLite computes it from the output's size).
void Importer::lower_transpose_conv() {
  const auto* o = op_->builtin_options_as_TransposeConvOptions();
  if (o == nullptr) fail_op("TransposeConvOptions are missing");
  // The output shape may be a model input (TFLM's SEANet layers feed it):
  // floe's shapes are static, so it is then the output tensor's shape.
  const int shape_input = input(0);
  const int out = output();
  std::vector<int64_t> out_shape;
  if (value(shape_input).is_constant()) {
    out_shape = int_constant(shape_input, "the output shape");
  } else {
    expect_dtype(shape_input, DType::kInt32, "output shape");
    expect_shape(shape_input, {4});
    out_shape = value(out).shape;
  }
  const int x = input(2), w = float_weights(x, input(1));
  const std::vector<int64_t> xs = value(x).shape, ws = value(w).shape;
  if (xs.size() != 4 || ws.size() != 4 || out_shape.size() != 4) {
    fail_op("input, filter and output shape must be 4-D (NHWC, OHWI)");
  }
  if (ws[3] != xs[3]) fail_op("filter " + shape_to_string(ws) + " does not match input channels " + std::to_string(xs[3]));
  if (out_shape[0] != xs[0] || out_shape[3] != ws[0]) {
    fail_op("output shape " + shape_to_string(out_shape) + " disagrees with the input batch or filter channels");
  }
  expect_shape(out, out_shape);
  const Axis h = axis(out_shape[1], ws[1], o->stride_h(), 1, o->padding());
  const Axis wd = axis(out_shape[2], ws[2], o->stride_w(), 1, o->padding());
  schema::Conv2DOptionsT c;
  c.stride_h = o->stride_h();
  c.stride_w = o->stride_w();
  c.dilation_h = 1;
  c.dilation_w = 1;
  c.pad_top = static_cast<int32_t>(h.before);
  c.pad_bottom = static_cast<int32_t>(h.after);
  c.pad_left = static_cast<int32_t>(wd.before);
  c.pad_right = static_cast<int32_t>(wd.after);
  // OHWI -> floe's HWOI: new axis j is old axis kToHwoi[j].
  const std::vector<int> kToHwoi = {1, 2, 0, 3};
  const Value& filter = value(w);
  if (!filter.is_constant()) fail_op("the filter must be a constant");
  Value hwoi;
  hwoi.name = filter.name + "/hwoi";
  hwoi.dtype = filter.dtype;
  hwoi.shape = {ws[1], ws[2], ws[0], ws[3]};
  hwoi.quantization = permuted(filter.quantization, kToHwoi);
  hwoi.constant = transpose4(*filter.constant, kToHwoi);
  const int filter_id = out_.model.add_value(std::move(hwoi));
  written_.push_back(true);
  const int bias = has_input(3) ? input(3) : -1;
  check_weighted(x, filter_id, bias, out);
  if (bias >= 0) expect_shape(bias, {ws[0]});
  const int8_t activation = o->fused_activation_function();
  if (value(x).dtype != DType::kFloat32) {
    // Quantized: the bias and the clamp are part of the op's requantization.
    c.activation = fused(activation);
    std::vector<int> inputs = {x, filter_id};
    if (bias >= 0) inputs.push_back(bias);
    add_op(schema::OpCode::TRANSPOSE_CONV2D, std::move(inputs), {out}, wrap(c));
    return;
  }
  // Float: floe's op has no bias, so the bias (and activation) follow it.
  if (bias < 0) {
    with_activation(schema::OpCode::TRANSPOSE_CONV2D, {x, filter_id}, activation, wrap(c));
    return;
  }
  const int conv = derived(value(out), value(out).shape, "transposed");
  add_op(schema::OpCode::TRANSPOSE_CONV2D, {x, filter_id}, {conv}, wrap(c));
  with_activation(schema::OpCode::ADD, {conv, bias}, activation);
}

void Importer::lower_concat() {
  const auto* o = op_->builtin_options_as_ConcatenationOptions();
  if (o == nullptr) fail_op("ConcatenationOptions are missing");
  const auto* list = op_->inputs();
  if (list == nullptr || list->size() == 0) fail_op("has no inputs");
  std::vector<int> inputs;
  for (uint32_t k = 0; k < list->size(); ++k) inputs.push_back(input(static_cast<int>(k)));
  const int64_t rank = static_cast<int64_t>(value(inputs[0]).shape.size());
  int64_t a = o->axis();
  if (a < -rank || a >= rank) fail_op("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
  if (a < 0) a += rank;
  std::vector<int64_t> shape = value(inputs[0]).shape;
  shape[static_cast<size_t>(a)] = 0;
  for (int v : inputs) {
    const std::vector<int64_t>& s = value(v).shape;
    if (static_cast<int64_t>(s.size()) != rank) fail_op("inputs differ in rank");
    expect_dtype(v, value(inputs[0]).dtype, "input");
    for (int64_t d = 0; d < rank; ++d) {
      if (d != a && s[static_cast<size_t>(d)] != value(inputs[0]).shape[static_cast<size_t>(d)]) {
        fail_op("inputs differ outside the concatenation axis");
      }
    }
    shape[static_cast<size_t>(a)] += s[static_cast<size_t>(a)];
  }
  expect_shape(output(), shape);
  expect_dtype(output(), value(inputs[0]).dtype, "output");
  schema::ConcatOptionsT c;
  c.axis = static_cast<int32_t>(a);
  with_activation(schema::OpCode::CONCAT, std::move(inputs), o->fused_activation_function(), wrap(c));
}

void Importer::lower_dequantize() {
  const int x = input(0);
  const Value in = value(x);
  const int out = output();
  if (value(out).dtype != DType::kFloat32) fail_op("output must be float32");
  if (value(out).shape != in.shape) expect_shape(out, in.shape);
  if (!in.is_constant()) {
    if (in.quantization.empty() || (in.dtype != DType::kInt8 && in.dtype != DType::kUInt8 && in.dtype != DType::kInt16)) {
      fail_op("input must be a quantized int8, uint8 or int16 tensor");
    }
    add_op(schema::OpCode::DEQUANTIZE, {x}, {out});
    return;
  }
  std::shared_ptr<const HostTensor> result = dequantized(in);
  if (result == nullptr) {
    fail_op(std::string("cannot dequantize a constant ") + dtype_name(in.dtype) + " tensor without quantization");
  }
  Value folded = value(out);
  folded.constant = std::move(result);
  folded.quantization = {};
  out_.model.values[static_cast<size_t>(out)] = std::move(folded);
  written_[static_cast<size_t>(out)] = true;
}

// The runtime's rule (Model::Load): an op that computes on real values, or
// that has any quantized operand, needs quantization on every int8 operand.
// CAST between any two of floe's dtypes (C++ conversions, as TFLite's
// kernel); a quantized operand's stored integers are not what CAST means.
void Importer::lower_cast() {
  const int x = input(0), out = output();
  expect_shape(out, value(x).shape);
  if (!value(x).quantization.empty() || !value(out).quantization.empty()) {
    fail_unsupported("CAST of a quantized tensor ('" + short_name(value(x).name) + "' " +
                     dtype_name(value(x).dtype) + " to " + dtype_name(value(out).dtype) + ")");
  }
  add_op(schema::OpCode::CAST, {x}, {out});
}

// DIV: float32 as floe's DIV; int32 is C's division, truncating toward zero
// (TFLite's and TFLite Micro's reference kernels), floe's TRUNCATE_DIV.
void Importer::lower_div() {
  const auto* o = op_->builtin_options_as_DivOptions();
  const int8_t activation = o ? o->fused_activation_function() : kActNone;
  const int a = input(0), b = input(1);
  const DType t = value(a).dtype;
  expect_dtype(b, t, "input");
  expect_dtype(output(), t, "output");
  expect_shape(output(), broadcast(value(a).shape, value(b).shape));
  if (t == DType::kFloat32) {
    with_activation(schema::OpCode::DIV, {a, b}, activation);
  } else if (t == DType::kInt32 && activation == kActNone) {
    add_op(schema::OpCode::TRUNCATE_DIV, {a, b}, {output()});
  } else {
    fail_unsupported(std::string("DIV of ") + dtype_name(t) + (activation != kActNone ? " with a fused activation" : "") +
                     " (float32, or int32 without an activation)");
  }
}

int64_t Importer::scalar_constant(int id, const char* what) const {
  const std::vector<int64_t> v = int_constant(id, what);
  if (v.size() != 1) fail_op(std::string(what) + " must hold one value, holds " + std::to_string(v.size()));
  return v[0];
}

// EXPAND_DIMS: a RESHAPE inserting a 1 at the axis (input 1).
void Importer::lower_expand_dims() {
  const int x = input(0), out = output();
  std::vector<int64_t> shape = value(x).shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = scalar_constant(input(1), "axis");
  if (axis < -rank - 1 || axis > rank) {
    fail_op("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  if (axis < 0) axis += rank + 1;
  shape.insert(shape.begin() + axis, 1);
  expect_dtype(out, value(x).dtype, "output");
  expect_shape(out, shape);
  expect_same_quantization(out, value(x), "output");
  add_op(schema::OpCode::RESHAPE, {x}, {out});
}

// SHAPE: floe's shapes are static, so its output is a constant.
void Importer::lower_shape() {
  const int x = input(0);
  const int out = output();
  const std::vector<int64_t> in = value(x).shape;
  Value& v = out_.model.values[static_cast<size_t>(out)];
  if (v.dtype != DType::kInt32 && v.dtype != DType::kInt64) fail_op("output must be int32 or int64");
  expect_shape(out, {static_cast<int64_t>(in.size())});
  auto host = std::make_shared<HostTensor>();
  host->dtype = v.dtype;
  host->shape = v.shape;
  host->data.resize(in.size() * dtype_size(v.dtype));
  for (size_t i = 0; i < in.size(); ++i) {
    if (v.dtype == DType::kInt32) {
      host->as<int32_t>()[i] = static_cast<int32_t>(in[i]);
    } else {
      host->as<int64_t>()[i] = in[i];
    }
  }
  v.constant = std::move(host);
  v.quantization = {};
  written_[static_cast<size_t>(out)] = true;
}

// PACK: each input reshaped with a 1 at the axis, then concatenated there.
// TFLite copies the stored values: every operand shares one quantization.
void Importer::lower_pack() {
  const auto* o = op_->builtin_options_as_PackOptions();
  if (o == nullptr) fail_op("PackOptions are missing");
  const auto* list = op_->inputs();
  if (list == nullptr || list->size() == 0) fail_op("has no inputs");
  if (o->values_count() != static_cast<int32_t>(list->size())) {
    fail_op("values_count " + std::to_string(o->values_count()) + " differs from its " +
            std::to_string(list->size()) + " inputs");
  }
  std::vector<int> inputs;
  for (uint32_t k = 0; k < list->size(); ++k) inputs.push_back(input(static_cast<int>(k)));
  const int out = output();
  const Value first = value(inputs[0]);  // a copy: derived() adds values
  const int64_t rank = static_cast<int64_t>(first.shape.size());
  int64_t axis = o->axis();
  if (axis < -rank - 1 || axis > rank) {
    fail_op("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  if (axis < 0) axis += rank + 1;
  std::vector<int64_t> one = first.shape, shape = first.shape;
  one.insert(one.begin() + axis, 1);
  shape.insert(shape.begin() + axis, static_cast<int64_t>(inputs.size()));
  for (int v : inputs) {
    expect_dtype(v, first.dtype, "input");
    expect_shape(v, first.shape);
    expect_same_quantization(v, first, "input");
  }
  expect_dtype(out, first.dtype, "output");
  expect_shape(out, shape);
  expect_same_quantization(out, first, "output");
  if (inputs.size() == 1) {
    add_op(schema::OpCode::RESHAPE, {inputs[0]}, {out});
    return;
  }
  std::vector<int> pieces;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const int piece = derived(value(inputs[k]), one, "pack" + std::to_string(k));
    add_op(schema::OpCode::RESHAPE, {inputs[k]}, {piece});
    pieces.push_back(piece);
  }
  schema::ConcatOptionsT c;
  c.axis = static_cast<int32_t>(axis);
  add_op(schema::OpCode::CONCAT, pieces, {out}, wrap(c));
}

// RESIZE_NEAREST_NEIGHBOR: NHWC, the new size a constant (input 1); values
// are copied, so input and output share one quantization.
void Importer::lower_resize_nearest() {
  const auto* o = op_->builtin_options_as_ResizeNearestNeighborOptions();
  const int x = input(0), out = output();
  const std::vector<int64_t> size = int_constant(input(1), "size");
  const std::vector<int64_t> in = value(x).shape;
  if (in.size() != 4 || size.size() != 2 || size[0] < 1 || size[1] < 1) {
    fail_op("input must be NHWC and size two positive extents, got " + shape_to_string(in) + " and " +
            std::to_string(size.size()) + " values");
  }
  expect_dtype(out, value(x).dtype, "output");
  expect_shape(out, {in[0], size[0], size[1], in[3]});
  expect_same_quantization(out, value(x), "output");
  schema::ResizeOptionsT r;
  r.align_corners = o != nullptr && o->align_corners();
  r.half_pixel_centers = o != nullptr && o->half_pixel_centers();
  add_op(schema::OpCode::RESIZE_NEAREST, {x}, {out}, wrap(r));
}

// REVERSE_V2: one STRIDED_SLICE walking the reversed axes (input 1) backwards.
void Importer::lower_reverse() {
  const int x = input(0), out = output(), axes = input(1);
  const std::vector<int64_t> in = value(x).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  schema::StridedSliceOptionsT s;
  s.begin.assign(in.size(), 0);
  s.stride.assign(in.size(), 1);
  for (int64_t axis : int_constant(axes, "axis")) {
    if (axis < -rank || axis >= rank) {
      fail_op("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    }
    if (axis < 0) axis += rank;
    const size_t a = static_cast<size_t>(axis);
    s.begin[a] = static_cast<int32_t>(in[a] > 0 ? in[a] - 1 : 0);
    s.stride[a] = -1;
  }
  expect_dtype(out, value(x).dtype, "output");
  expect_shape(out, in);
  expect_same_quantization(out, value(x), "output");
  add_op(schema::OpCode::STRIDED_SLICE, {x}, {out}, wrap(s));
}

std::string Importer::custom_code(const fb::Operator* op) const {
  const fb::OperatorCode* c = model_->operator_codes()->Get(op->opcode_index());
  return c->custom_code() ? c->custom_code()->str() : std::string();
}

namespace {

const char* const kSignalOps[] = {"SignalWindow",
                                  "SignalFftAutoScale",
                                  "SignalRfft",
                                  "SignalEnergy",
                                  "SignalFilterBank",
                                  "SignalFilterBankSquareRoot",
                                  "SignalFilterBankSpectralSubtraction",
                                  "SignalPCAN",
                                  "SignalFilterBankLog"};

bool is_signal_op(const std::string& name) {
  return std::find(std::begin(kSignalOps), std::end(kSignalOps), name) != std::end(kSignalOps);
}

}  // namespace

std::string Importer::custom_unsupported_reason(const fb::Operator* op) const {
  const std::string name = custom_code(op);
  if (!is_signal_op(name)) return "CUSTOM '" + name + "'";
  if (name == "SignalRfft" && op->custom_options() != nullptr) {
    // TFLM also has float32 and int32 forms; floe has the int16 one (an
    // unreadable map is reported when the op is lowered).
    try {
      const CustomOptions options(op->custom_options()->data(), op->custom_options()->size());
      if (options.has("T") && options.integer("T") != 7) {
        return "CUSTOM 'SignalRfft' (" + std::string(dtype_name(tflite_dtype(static_cast<int8_t>(options.integer("T"))))) +
               ": int16 only)";
      }
    } catch (const std::runtime_error&) {
    }
  }
  return "";
}

int Importer::add_constant(const std::string& name, DType dtype, std::vector<int64_t> shape, const void* data) {
  auto host = std::make_shared<HostTensor>();
  host->dtype = dtype;
  host->shape = shape;
  const size_t bytes = static_cast<size_t>(host->num_elements()) * dtype_size(dtype);
  host->data.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + bytes);
  Value v;
  v.name = name;
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.constant = std::move(host);
  const int id = out_.model.add_value(std::move(v));
  written_.push_back(true);
  return id;
}

// The Signal ops of TFLite Micro's audio front end, their attributes read
// from the custom options (signal_spectrum.h / signal_filter_bank.h in
// runtime/kernels/reference say what each computes). Shapes and tables are
// checked here for the message; the runtime's prepare checks them again.
void Importer::lower_signal(const std::string& name) {
  const auto* raw = op_->custom_options();
  auto options = [&]() {
    if (raw == nullptr) fail_op("custom options are missing (expected a FlexBuffer map of the op's attributes)");
    try {
      return CustomOptions(raw->data(), raw->size());
    } catch (const std::runtime_error& e) {
      fail_op(e.what());
    }
  };
  auto attribute = [&](const CustomOptions& o, const char* key, int64_t lo, int64_t hi) {
    int64_t v = 0;
    try {
      v = o.integer(key);
    } catch (const std::runtime_error& e) {
      fail_op(e.what());
    }
    if (v < lo || v > hi) {
      fail_op(std::string("attribute ") + key + " = " + std::to_string(v) + " is outside [" + std::to_string(lo) +
              ", " + std::to_string(hi) + "]");
    }
    return v;
  };
  auto outputs = [&](uint32_t n) {
    if (op_->outputs() == nullptr || op_->outputs()->size() != n) {
      fail_op("must have exactly " + std::to_string(n) + " output" + (n == 1 ? "" : "s"));
    }
  };
  auto vector_of = [&](int id, DType dtype, const char* role) {
    expect_dtype(id, dtype, role);
    if (value(id).shape.size() != 1) {
      fail_op(std::string(role) + " '" + short_name(value(id).name) + "' must be 1-D, is " +
              shape_to_string(value(id).shape));
    }
    return value(id).shape[0];
  };
  auto constant_of = [&](int id, const char* role) {
    if (!value(id).is_constant()) fail_op(std::string(role) + " '" + short_name(value(id).name) + "' must be a constant");
    return value(id).constant->as<int16_t>();
  };

  if (name == "SignalWindow") {
    outputs(1);
    const CustomOptions o = options();
    const int x = input(0), w = input(1), out = output();
    expect_dtype(x, DType::kInt16, "input");
    const int64_t n = vector_of(w, DType::kInt16, "weights");
    if (value(x).shape.empty() || value(x).shape.back() != n) {
      fail_op("input " + shape_to_string(value(x).shape) + " rows do not match " + std::to_string(n) + " weights");
    }
    expect_dtype(out, DType::kInt16, "output");
    expect_shape(out, value(x).shape);
    schema::SignalWindowOptionsT s;
    s.shift = static_cast<int32_t>(attribute(o, "shift", 0, 31));
    add_op(schema::OpCode::SIGNAL_WINDOW, {x, w}, {out}, wrap(s));
  } else if (name == "SignalFftAutoScale") {
    outputs(2);
    const int x = input(0), y = output(0), bits = output(1);
    const int64_t n = vector_of(x, DType::kInt16, "input");
    expect_dtype(y, DType::kInt16, "output");
    expect_shape(y, {n});
    expect_dtype(bits, DType::kInt32, "scale output");
    expect_shape(bits, {});
    add_op(schema::OpCode::SIGNAL_FFT_AUTO_SCALE, {x}, {y, bits});
  } else if (name == "SignalRfft") {
    outputs(1);
    const CustomOptions o = options();
    if (attribute(o, "T", 0, 127) != 7) fail_unsupported("SignalRfft computes int16 only here");
    const int64_t length = attribute(o, "fft_length", 4, 32768);
    if ((length & (length - 1)) != 0) fail_unsupported("fft_length " + std::to_string(length) + " is not a power of two");
    const int x = input(0), out = output();
    expect_dtype(x, DType::kInt16, "input");
    std::vector<int64_t> shape = value(x).shape;
    if (shape.empty() || shape.back() < 1 || shape.back() > length) {
      fail_op("input " + shape_to_string(shape) + " rows must hold 1.." + std::to_string(length) + " samples");
    }
    shape.back() = length + 2;
    expect_dtype(out, DType::kInt16, "output");
    expect_shape(out, shape);
    const std::vector<int16_t> tw = kissfft_twiddles(static_cast<int32_t>(length));
    const std::vector<int16_t> st = kissfft_super_twiddles(static_cast<int32_t>(length));
    const int twiddles = add_constant(short_name(value(out).name) + "/twiddles", DType::kInt16, {length / 2, 2}, tw.data());
    const int super_twiddles =
        add_constant(short_name(value(out).name) + "/super_twiddles", DType::kInt16, {length / 4, 2}, st.data());
    schema::SignalRfftOptionsT s;
    s.fft_length = static_cast<int32_t>(length);
    add_op(schema::OpCode::SIGNAL_RFFT, {x, twiddles, super_twiddles}, {out}, wrap(s));
  } else if (name == "SignalEnergy") {
    outputs(1);
    const CustomOptions o = options();
    const int x = input(0), out = output();
    const int64_t n = vector_of(x, DType::kInt16, "input");
    if (n % 2 != 0) fail_op("input holds " + std::to_string(n) + " values, not (re, im) pairs");
    expect_dtype(out, DType::kUInt32, "output");
    expect_shape(out, {n / 2});
    schema::SignalEnergyOptionsT s;
    s.start_index = static_cast<int32_t>(attribute(o, "start_index", 0, n / 2));
    s.end_index = static_cast<int32_t>(attribute(o, "end_index", s.start_index, n / 2));
    add_op(schema::OpCode::SIGNAL_ENERGY, {x}, {out}, wrap(s));
  } else if (name == "SignalFilterBank") {
    outputs(1);
    const CustomOptions o = options();
    const int x = input(0), out = output();
    std::vector<int> in{x};
    for (int k = 1; k <= 5; ++k) in.push_back(input(k));
    const int64_t bins = vector_of(x, DType::kUInt32, "input");
    const int64_t channels = attribute(o, "num_channels", 1, 32767);
    expect_dtype(out, DType::kUInt64, "output");
    expect_shape(out, {channels});
    const int64_t weights = vector_of(in[1], DType::kInt16, "weights");
    if (vector_of(in[2], DType::kInt16, "unweights") != weights) fail_op("weights and unweights differ in length");
    const char* roles[] = {"channel_frequency_starts", "channel_weight_starts", "channel_widths"};
    for (int k = 3; k <= 5; ++k) {
      if (vector_of(in[static_cast<size_t>(k)], DType::kInt16, roles[k - 3]) != channels + 1) {
        fail_op(std::string(roles[k - 3]) + " must hold num_channels + 1 = " + std::to_string(channels + 1) + " entries");
      }
    }
    const int16_t* freq = constant_of(in[3], roles[0]);
    const int16_t* start = constant_of(in[4], roles[1]);
    const int16_t* width = constant_of(in[5], roles[2]);
    constant_of(in[1], "weights");
    constant_of(in[2], "unweights");
    for (int64_t c = 0; c <= channels; ++c) {
      if (freq[c] < 0 || start[c] < 0 || width[c] < 0 || freq[c] + width[c] > bins || start[c] + width[c] > weights) {
        fail_op("channel " + std::to_string(c) + " (frequency start " + std::to_string(freq[c]) + ", weight start " +
                std::to_string(start[c]) + ", width " + std::to_string(width[c]) + ") reaches past " +
                std::to_string(bins) + " bins or " + std::to_string(weights) + " weights");
      }
    }
    add_op(schema::OpCode::SIGNAL_FILTER_BANK, in, {out});
  } else if (name == "SignalFilterBankSquareRoot") {
    outputs(1);
    const int x = input(0), bits = input(1), out = output();
    const int64_t c = vector_of(x, DType::kUInt64, "input");
    expect_dtype(bits, DType::kInt32, "scale_bits");
    if (value(bits).shape.size() > 1 || (value(bits).shape.size() == 1 && value(bits).shape[0] != 1)) {
      fail_op("scale_bits must be a scalar");
    }
    expect_dtype(out, DType::kUInt32, "output");
    expect_shape(out, {c});
    add_op(schema::OpCode::SIGNAL_FILTER_BANK_SQUARE_ROOT, {x, bits}, {out});
  } else if (name == "SignalFilterBankSpectralSubtraction") {
    outputs(2);
    const CustomOptions o = options();
    const int x = input(0), out = output(0), estimate = output(1);
    const int64_t c = vector_of(x, DType::kUInt32, "input");
    if (attribute(o, "num_channels", 0, INT32_MAX) != c) fail_op("num_channels differs from the input's length");
    for (int v : {out, estimate}) {
      expect_dtype(v, DType::kUInt32, "output");
      expect_shape(v, {c});
    }
    schema::SpectralSubtractionOptionsT s;
    s.smoothing = static_cast<uint32_t>(attribute(o, "smoothing", 0, UINT32_MAX));
    s.one_minus_smoothing = static_cast<uint32_t>(attribute(o, "one_minus_smoothing", 0, UINT32_MAX));
    s.alternate_smoothing = static_cast<uint32_t>(attribute(o, "alternate_smoothing", 0, UINT32_MAX));
    s.alternate_one_minus_smoothing =
        static_cast<uint32_t>(attribute(o, "alternate_one_minus_smoothing", 0, UINT32_MAX));
    s.smoothing_bits = static_cast<uint32_t>(attribute(o, "smoothing_bits", 0, 31));
    s.min_signal_remaining = static_cast<uint32_t>(attribute(o, "min_signal_remaining", 0, UINT32_MAX));
    s.spectral_subtraction_bits = static_cast<uint32_t>(attribute(o, "spectral_subtraction_bits", 0, 63));
    s.clamping = attribute(o, "clamping", 0, 1) != 0;
    // TFLM keeps the running noise estimate inside the op, zeroed at
    // AllocateTensors and by Reset(): floe's variable tensor behaves so.
    Value state;
    state.name = node_name_ + "/noise_estimate_state";
    state.dtype = DType::kUInt32;
    state.shape = {c};
    state.variable = true;
    const int state_id = out_.model.add_value(std::move(state));
    written_.push_back(true);
    add_op(schema::OpCode::SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION, {x, state_id}, {out, estimate}, wrap(s));
  } else if (name == "SignalPCAN") {
    outputs(1);
    const CustomOptions o = options();
    const int x = input(0), noise = input(1), lut = input(2), out = output();
    const int64_t c = vector_of(x, DType::kUInt32, "input");
    if (vector_of(noise, DType::kUInt32, "noise estimate") != c) fail_op("noise estimate differs from the input's length");
    if (vector_of(lut, DType::kInt16, "gain LUT") < 125) fail_op("gain LUT must hold 125 entries");
    expect_dtype(out, DType::kUInt32, "output");
    expect_shape(out, {c});
    schema::PcanOptionsT s;
    s.snr_shift = static_cast<int32_t>(attribute(o, "snr_shift", 0, 63));
    add_op(schema::OpCode::SIGNAL_PCAN, {x, noise, lut}, {out}, wrap(s));
  } else if (name == "SignalFilterBankLog") {
    outputs(1);
    const CustomOptions o = options();
    const int x = input(0), out = output();
    const int64_t c = vector_of(x, DType::kUInt32, "input");
    expect_dtype(out, DType::kInt16, "output");
    expect_shape(out, {c});
    schema::FilterBankLogOptionsT s;
    s.input_correction_bits = static_cast<int32_t>(attribute(o, "input_correction_bits", 0, 31));
    s.output_scale = static_cast<int32_t>(attribute(o, "output_scale", INT32_MIN, INT32_MAX));
    add_op(schema::OpCode::SIGNAL_FILTER_BANK_LOG, {x}, {out}, wrap(s));
  } else {
    fail_unsupported("custom op '" + name + "'");
  }
}

// SVDF: float throughout (hybrid int8 weights dequantized), or int8 input and
// output with int8 weights_feature, int16 or int8 weights_time and state and
// an int32 bias; the state a variable tensor (rank-2 shapes, svdf.h).
void Importer::lower_svdf() {
  const auto* o = op_->builtin_options_as_SVDFOptions();
  if (o == nullptr) fail_op("SVDFOptions are missing");
  const int x = input(0);
  const int wf = float_weights(x, input(1)), wt = float_weights(x, input(2));
  const int bias = has_input(3) ? input(3) : -1;
  const int state = state_input(4);
  const int out = output();
  const std::vector<int64_t> xs = value(x).shape, fs = value(wf).shape, ts = value(wt).shape;
  if (xs.size() != 2 || fs.size() != 2 || ts.size() != 2) {
    fail_op("input, weights_feature and weights_time must be 2-D, got " + shape_to_string(xs) + ", " +
            shape_to_string(fs) + ", " + shape_to_string(ts));
  }
  const int64_t rank = o->rank(), filters = fs[0], memory = ts[1];
  if (rank < 1 || filters % rank != 0 || memory < 1 || fs[1] != xs[1] || ts[0] != filters) {
    fail_op("rank " + std::to_string(rank) + ", weights_feature " + shape_to_string(fs) + " and weights_time " +
            shape_to_string(ts) + " do not fit input " + shape_to_string(xs) +
            " (rank must divide the filters, weights_feature [filters, input], weights_time [filters, memory >= 1])");
  }
  const int64_t units = filters / rank;
  expect_shape(state, {xs[0], filters * memory});
  expect_shape(out, {xs[0], units});
  if (bias >= 0) expect_shape(bias, {units});
  const DType t = value(x).dtype;
  if (t == DType::kFloat32) {
    for (int v : {wf, wt, state, out}) expect_dtype(v, DType::kFloat32, "operand");
    if (bias >= 0) expect_dtype(bias, DType::kFloat32, "bias");
  } else if (t == DType::kInt8) {
    expect_dtype(wf, DType::kInt8, "weights_feature");
    const DType s = value(state).dtype;
    if (s != DType::kInt16 && s != DType::kInt8) fail_op(std::string("state is ") + dtype_name(s) + ", not int16 or int8");
    expect_dtype(wt, s, "weights_time");
    if (bias >= 0) expect_dtype(bias, DType::kInt32, "bias");
    expect_dtype(out, DType::kInt8, "output");
  } else {
    fail_op(std::string("input is ") + dtype_name(t) + ", not float32 or int8");
  }
  schema::SvdfOptionsT options;
  options.rank = static_cast<int32_t>(rank);
  if (t == DType::kFloat32) options.activation = fused(o->fused_activation_function());
  add_op(schema::OpCode::SVDF, {x, wf, wt, bias, state}, {out}, wrap(options));
}

// UNIDIRECTIONAL_SEQUENCE_LSTM, float (hybrid int8 weights dequantized) or
// TFLite's 8x8_16 integer form (int8 input, weights, output state and output,
// int32 biases, int16 cell state; converter/quantize derives its integers):
// the operands stay in TFLite's 24 slots, the two states as variable tensors;
// floe adds a scratch output [5, cells] (int16 in int8). The runtime's
// prepare checks the shapes again; here they are checked for the message.
void Importer::lower_lstm() {
  const auto* o = op_->builtin_options_as_UnidirectionalSequenceLSTMOptions();
  if (o == nullptr) fail_op("UnidirectionalSequenceLSTMOptions are missing");
  const auto* slots = op_->inputs();
  if (slots == nullptr || slots->size() < 20 || slots->size() > 24) {
    fail_op("has " + std::to_string(slots ? slots->size() : 0) + " inputs, expected 20 to 24");
  }
  std::vector<int> inputs(24, -1);
  const int x = input(0);
  inputs[0] = x;
  for (int k = 1; k < 18; ++k) {
    if (has_input(k)) inputs[static_cast<size_t>(k)] = float_weights(x, input(k));
  }
  inputs[18] = state_input(18);
  inputs[19] = state_input(19);
  const std::vector<int64_t> xs = value(x).shape;
  if (xs.size() != 3) fail_op("input must be 3-D, got " + shape_to_string(xs));
  if (inputs[2] < 0 || inputs[3] < 0 || inputs[4] < 0 || inputs[6] < 0 || inputs[7] < 0 || inputs[8] < 0) {
    fail_op("the forget, cell and output gates' input and recurrent weights are required");
  }
  const std::vector<int64_t> forget = value(inputs[2]).shape;
  if (forget.size() != 2 || forget[1] != xs[2]) {
    fail_op("input_to_forget_weights " + shape_to_string(forget) + " do not match input " + shape_to_string(xs));
  }
  const int64_t batch = o->time_major() ? xs[1] : xs[0], cells = forget[0];
  if (inputs[16] >= 0 && value(inputs[16]).shape.size() != 2) {
    fail_op("projection_weights must be 2-D [outputs, cells], got " + shape_to_string(value(inputs[16]).shape));
  }
  const int64_t outputs = inputs[16] >= 0 ? value(inputs[16]).shape[0] : cells;
  expect_shape(inputs[18], {batch, outputs});
  expect_shape(inputs[19], {batch, cells});
  const int out = output();
  expect_shape(out, {xs[0], xs[1], outputs});
  const bool quantized = value(x).dtype == DType::kInt8;
  if (quantized) {
    check_lstm_8x8_16(inputs, out);
  } else {
    for (int v : inputs) {
      if (v >= 0) expect_dtype(v, DType::kFloat32, "operand");
    }
    expect_dtype(out, DType::kFloat32, "output");
  }
  Value scratch;
  scratch.name = short_name(value(out).name) + "/lstm_scratch";
  scratch.dtype = quantized ? DType::kInt16 : DType::kFloat32;
  scratch.shape = {5, cells};
  const int scratch_id = out_.model.add_value(std::move(scratch));
  written_.push_back(false);
  schema::LstmOptionsT options;
  options.cell_clip = o->cell_clip();
  options.projection_clip = o->proj_clip();
  options.time_major = o->time_major();
  if (!(options.cell_clip >= 0.0f) || !(options.projection_clip >= 0.0f)) fail_op("clips must be >= 0");
  add_op(schema::OpCode::UNIDIRECTIONAL_SEQUENCE_LSTM, std::move(inputs), {out, scratch_id}, wrap(options));
}

// The integer LSTM floe runs: TFLite's 8x8_16 form without peephole,
// projection or layer normalization (as TFLM's int8 LSTM; unsupported_reason
// lists those). The hidden
// intermediate (the op's fifth intermediate tensor) is what TFLite quantizes
// o * tanh(c) to and copies into the output state, so the two must agree.
void Importer::check_lstm_8x8_16(const std::vector<int>& inputs, int out) {
  for (int k = 1; k < 16; ++k) {
    const int v = inputs[static_cast<size_t>(k)];
    if (v >= 0 && k < 9) expect_dtype(v, DType::kInt8, "weights");
    if (v >= 0 && k >= 12) expect_dtype(v, DType::kInt32, "bias");
  }
  expect_dtype(inputs[18], DType::kInt8, "output state");
  expect_dtype(inputs[19], DType::kInt16, "cell state");
  expect_dtype(out, DType::kInt8, "output");
  const auto* intermediates = op_->intermediates();
  if (intermediates == nullptr || intermediates->size() != 5 || intermediates->Get(4) < 0 ||
      static_cast<uint32_t>(intermediates->Get(4)) >= graph_->tensors()->size()) {
    fail_op("int8 LSTM needs TFLite's five intermediate tensors (the fifth quantizes the hidden state)");
  }
  const fb::Tensor* hidden = graph_->tensors()->Get(static_cast<uint32_t>(intermediates->Get(4)));
  const Quantization q = read_quantization(hidden, {}, hidden->name() ? hidden->name()->str() : "hidden");
  const Quantization& state = value(inputs[18]).quantization;
  if (q.scale.size() != 1 || q.zero_point.size() != 1 || state.scale != q.scale || state.zero_point != q.zero_point) {
    fail_unsupported("int8 LSTM whose hidden intermediate is quantized unlike its output state");
  }
}

void Importer::check_quantized_operands() {
  for (const LoweredOp& op : out_.model.ops) {
    bool quantized = false;
    switch (op.opcode) {
      case schema::OpCode::CONV2D:
      case schema::OpCode::DEPTHWISE_CONV2D:
      case schema::OpCode::MATMUL:
      case schema::OpCode::AVG_POOL2D:
      case schema::OpCode::SOFTMAX:
      case schema::OpCode::SIGMOID:
      case schema::OpCode::TANH:
      case schema::OpCode::QUANTIZE:
      case schema::OpCode::DEQUANTIZE:
        quantized = true;
        break;
      default:
        break;
    }
    std::vector<int> operands = op.inputs;
    operands.insert(operands.end(), op.outputs.begin(), op.outputs.end());
    for (int v : operands) quantized = quantized || (v >= 0 && !value(v).quantization.empty());
    if (!quantized) continue;
    for (int v : operands) {
      if (v >= 0 && value(v).dtype == DType::kInt8 && value(v).quantization.empty()) {
        ErrorLocation where;
        where.file = path_;
        where.node = op.node_name;
        where.op = schema::EnumNameOpCode(op.opcode);
        throw ConvertError(path_ + ": the " + where.op + " computing '" + op.node_name + "' has int8 tensor '" +
                               short_name(value(v).name) + "' without quantization (scale and zero point)",
                           ErrorCategory::kInvalidInput, where);
      }
    }
  }
}

// Weights replaced by their floe-layout copies (and dequantized hybrid
// weights' int8 originals) are referenced by nothing: dropped here, so the
// model is the same with or without the optimizer's dead-code pass.
void Importer::drop_unused_values() {
  LoweredModel& m = out_.model;
  std::vector<int> remap(m.values.size(), -1);
  auto mark = [&](int v) {
    if (v >= 0) remap[static_cast<size_t>(v)] = 0;
  };
  for (const LoweredOp& op : m.ops) {
    for (int v : op.inputs) mark(v);
    for (int v : op.outputs) mark(v);
  }
  for (int v : m.inputs) mark(v);
  for (int v : m.outputs) mark(v);
  std::vector<Value> kept;
  for (size_t v = 0; v < m.values.size(); ++v) {
    if (remap[v] < 0) continue;
    remap[v] = static_cast<int>(kept.size());
    kept.push_back(std::move(m.values[v]));
  }
  m.values = std::move(kept);
  auto apply = [&](std::vector<int>& ids) {
    for (int& v : ids) v = v < 0 ? v : remap[static_cast<size_t>(v)];
  };
  for (LoweredOp& op : m.ops) {
    apply(op.inputs);
    apply(op.outputs);
  }
  apply(m.inputs);
  apply(m.outputs);
}

// "" when floe converts this operator, else how it is listed in the refusal.
int8_t Importer::input_type(const fb::Operator* op) const {
  const auto* tensors = graph_->tensors();
  const int32_t in = op->inputs() != nullptr && op->inputs()->size() > 0 ? op->inputs()->Get(0) : -1;
  return in >= 0 && tensors != nullptr && static_cast<uint32_t>(in) < tensors->size()
             ? tensors->Get(static_cast<uint32_t>(in))->type()
             : 0;
}

std::string Importer::unsupported_reason(const fb::Operator* op, int32_t code) const {
  auto activation_ok = [](int8_t a) { return a == kActNone || a == kActRelu || a == kActRelu6; };
  const std::string name = tflite_op_name(code);
  int8_t activation = kActNone;
  switch (code) {
    case kConv2D:
      if (const auto* o = op->builtin_options_as_Conv2DOptions()) activation = o->fused_activation_function();
      break;
    case kDepthwiseConv2D:
      if (const auto* o = op->builtin_options_as_DepthwiseConv2DOptions()) activation = o->fused_activation_function();
      break;
    case kAveragePool2D:
    case kMaxPool2D:
      if (const auto* o = op->builtin_options_as_Pool2DOptions()) activation = o->fused_activation_function();
      break;
    case kFullyConnected:
      if (const auto* o = op->builtin_options_as_FullyConnectedOptions()) {
        activation = o->fused_activation_function();
        if (o->weights_format() != 0) return name + " (shuffled weights)";
      }
      break;
    case kAdd:
      if (const auto* o = op->builtin_options_as_AddOptions()) activation = o->fused_activation_function();
      break;
    case kSub:
      if (const auto* o = op->builtin_options_as_SubOptions()) activation = o->fused_activation_function();
      break;
    case kMul:
      if (const auto* o = op->builtin_options_as_MulOptions()) activation = o->fused_activation_function();
      break;
    case kConcatenation:
      if (const auto* o = op->builtin_options_as_ConcatenationOptions()) activation = o->fused_activation_function();
      break;
    case kTransposeConv:
      if (const auto* o = op->builtin_options_as_TransposeConvOptions()) activation = o->fused_activation_function();
      break;
    case kDiv:
      if (const auto* o = op->builtin_options_as_DivOptions()) activation = o->fused_activation_function();
      break;
    case kCustom:
      return custom_unsupported_reason(op);
    case kUnidirectionalSequenceLstm: {
      // Float, or TFLite's 8x8_16 integer form without peephole or projection.
      const int8_t type = input_type(op);
      if (type != 0 && type != 9) return name + " (" + dtype_name(tflite_dtype(type)) + " input)";
      auto present = [&](uint32_t k) {
        return op->inputs() != nullptr && k < op->inputs()->size() && op->inputs()->Get(k) >= 0;
      };
      if (type == 9 && (present(9) || present(10) || present(11))) return name + " (int8 with peephole weights)";
      if (type == 9 && (present(16) || present(17))) return name + " (int8 with projection weights)";
      const auto* o = op->builtin_options_as_UnidirectionalSequenceLSTMOptions();
      if (o != nullptr && o->fused_activation_function() != kActTanh) {
        return name + " (cell activation " + activation_name(o->fused_activation_function()) + ": tanh only)";
      }
      for (uint32_t k = 20; op->inputs() != nullptr && k < op->inputs()->size(); ++k) {
        if (op->inputs()->Get(k) >= 0) return name + " (layer normalization)";
      }
      break;
    }
    case kSvdf: {
      // The integer kernel applies no activation (TFLM's neither).
      const auto* o = op->builtin_options_as_SVDFOptions();
      if (o != nullptr && input_type(op) == 0) activation = o->fused_activation_function();
      break;
    }
    case kSoftmax:
    case kLogistic:
    case kTanh:
    case kCast:
    case kMaximum:
    case kMinimum:
    case kExpandDims:
    case kShape:
    case kPack:
    case kResizeNearestNeighbor:
    case kReverseV2:
    case kMean:
    case kPad:
    case kStridedSlice:
    case kLeakyRelu:
    case kTranspose:
    case kReshape:
    case kQuantize:
    case kDequantize:
    case kRelu:
    case kRelu6:
    case kLess:
    case kGreater:
    case kGreaterEqual:
    case kLessEqual:
    case kEqual:
    case kNotEqual:
    case kLogicalAnd:
    case kLogicalOr:
    case kLogicalNot:
    case kWhile:
    case kIf:
    case kCallOnce:
    case kVarHandle:
    case kReadVariable:
    case kAssignVariable:
      break;
    default:
      return name;
  }
  if (!activation_ok(activation)) return name + " (fused " + activation_name(activation) + ")";
  return "";
}

void Importer::lower(const fb::Operator* op, int32_t code) {
  switch (code) {
    case kConv2D: lower_conv(); break;
    case kDepthwiseConv2D: lower_depthwise(); break;
    case kFullyConnected: lower_fully_connected(); break;
    case kSvdf: lower_svdf(); break;
    case kUnidirectionalSequenceLstm: lower_lstm(); break;
    case kAveragePool2D: lower_pool(schema::OpCode::AVG_POOL2D); break;
    case kMaxPool2D: lower_pool(schema::OpCode::MAX_POOL2D); break;
    case kMean: lower_mean(); break;
    case kPad: lower_pad(); break;
    case kStridedSlice: lower_strided_slice(); break;
    case kTransposeConv: lower_transpose_conv(); break;
    case kConcatenation: lower_concat(); break;
    case kCustom: lower_signal(custom_code(op)); break;
    case kCast: lower_cast(); break;
    case kDiv: lower_div(); break;
    case kExpandDims: lower_expand_dims(); break;
    case kShape: lower_shape(); break;
    case kPack: lower_pack(); break;
    case kResizeNearestNeighbor: lower_resize_nearest(); break;
    case kReverseV2: lower_reverse(); break;
    case kMaximum:
    case kMinimum: {
      const int a = input(0), b = input(1);
      expect_dtype(b, value(a).dtype, "input");
      const int out = output();
      expect_dtype(out, value(a).dtype, "output");
      expect_shape(out, broadcast(value(a).shape, value(b).shape));
      // TFLite compares the stored integers: every operand shares one quantization.
      expect_same_quantization(b, value(a), "input");
      expect_same_quantization(out, value(a), "output");
      add_op(code == kMaximum ? schema::OpCode::MAXIMUM : schema::OpCode::MINIMUM, {a, b}, {out});
      break;
    }
    case kDequantize: lower_dequantize(); break;
    case kWhile: lower_while(); break;
    case kIf: lower_if(); break;
    case kCallOnce: lower_call_once(); break;
    case kVarHandle: lower_var_handle(); break;
    case kReadVariable: lower_read_variable(); break;
    case kAssignVariable: lower_assign_variable(); break;
    case kLess: lower_comparison(schema::OpCode::LESS); break;
    case kLessEqual: lower_comparison(schema::OpCode::LESS_EQUAL); break;
    case kGreater: lower_comparison(schema::OpCode::GREATER); break;
    case kGreaterEqual: lower_comparison(schema::OpCode::GREATER_EQUAL); break;
    case kEqual: lower_comparison(schema::OpCode::EQUAL); break;
    case kNotEqual: lower_comparison(schema::OpCode::NOT_EQUAL); break;
    case kLogicalAnd:
    case kLogicalOr: {
      const int a = input(0), b = input(1);
      expect_dtype(a, DType::kBool, "input");
      expect_dtype(b, DType::kBool, "input");
      const int out = output();
      expect_dtype(out, DType::kBool, "output");
      expect_shape(out, broadcast(value(a).shape, value(b).shape));
      add_op(code == kLogicalAnd ? schema::OpCode::LOGICAL_AND : schema::OpCode::LOGICAL_OR, {a, b}, {out});
      break;
    }
    case kLogicalNot: {
      const int x = input(0);
      expect_dtype(x, DType::kBool, "input");
      const int out = output();
      expect_dtype(out, DType::kBool, "output");
      expect_shape(out, value(x).shape);
      add_op(schema::OpCode::LOGICAL_NOT, {x}, {out});
      break;
    }
    case kAdd:
    case kSub:
    case kMul: {
      int8_t activation = kActNone;
      if (code == kAdd && op->builtin_options_as_AddOptions()) {
        activation = op->builtin_options_as_AddOptions()->fused_activation_function();
      } else if (code == kSub && op->builtin_options_as_SubOptions()) {
        activation = op->builtin_options_as_SubOptions()->fused_activation_function();
      } else if (code == kMul && op->builtin_options_as_MulOptions()) {
        activation = op->builtin_options_as_MulOptions()->fused_activation_function();
      }
      const schema::OpCode floe_code =
          code == kAdd ? schema::OpCode::ADD : code == kSub ? schema::OpCode::SUB : schema::OpCode::MUL;
      const int a = input(0), b = input(1);
      expect_dtype(b, value(a).dtype, "input");
      expect_dtype(output(), value(a).dtype, "output");
      expect_shape(output(), broadcast(value(a).shape, value(b).shape));
      with_activation(floe_code, {a, b}, activation);
      break;
    }
    case kSoftmax: {
      const auto* o = op->builtin_options_as_SoftmaxOptions();
      schema::SoftmaxOptionsT s;
      s.beta = o ? o->beta() : 1.0f;
      const int x = input(0);
      if (value(x).shape.empty()) fail_op("input must have rank >= 1");
      const int out = output();
      // int8 in, int16 out is TFLite's too (a 16-bit probability).
      if (!(value(x).dtype == DType::kInt8 && value(out).dtype == DType::kInt16)) {
        expect_dtype(out, value(x).dtype, "output");
      }
      expect_shape(out, value(x).shape);
      add_op(schema::OpCode::SOFTMAX, {x}, {out}, wrap(s));
      break;
    }
    case kLogistic:
    case kTanh:
    case kRelu:
    case kRelu6: {
      const int x = input(0);
      const int out = output();
      expect_dtype(out, value(x).dtype, "output");
      expect_shape(out, value(x).shape);
      add_op(code == kLogistic ? schema::OpCode::SIGMOID
             : code == kTanh   ? schema::OpCode::TANH
             : code == kRelu   ? schema::OpCode::RELU
                               : schema::OpCode::RELU6,
             {x}, {out});
      break;
    }
    case kLeakyRelu: {
      const auto* o = op->builtin_options_as_LeakyReluOptions();
      schema::LeakyReluOptionsT l;
      l.alpha = o ? o->alpha() : 0.0f;  // TFLite's default alpha
      const int x = input(0);
      const int out = output();
      expect_dtype(out, value(x).dtype, "output");
      expect_shape(out, value(x).shape);
      add_op(schema::OpCode::LEAKY_RELU, {x}, {out}, wrap(l));
      break;
    }
    case kTranspose: {
      const int x = input(0);
      const std::vector<int64_t> perm = int_constant(input(1), "the permutation");
      const std::vector<int64_t>& xs = value(x).shape;
      if (perm.size() != xs.size()) fail_op("the permutation has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(xs.size()));
      schema::TransposeOptionsT t;
      std::vector<int64_t> shape;
      std::vector<bool> seen(xs.size(), false);
      for (int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(xs.size()) || seen[static_cast<size_t>(p)]) {
          fail_op("the permutation " + shape_to_string(perm) + " is not one of the input's dims");
        }
        seen[static_cast<size_t>(p)] = true;
        t.perm.push_back(static_cast<int32_t>(p));
        shape.push_back(xs[static_cast<size_t>(p)]);
      }
      const int out = output();
      expect_dtype(out, value(x).dtype, "output");
      expect_shape(out, shape);
      add_op(schema::OpCode::TRANSPOSE, {x}, {out}, wrap(t));
      break;
    }
    case kReshape: {
      const int x = input(0);
      const int out = output();
      int64_t a = 1, b = 1;
      for (int64_t d : value(x).shape) a *= d;
      for (int64_t d : value(out).shape) b *= d;
      if (a != b) fail_op("reshapes " + std::to_string(a) + " elements into " + std::to_string(b));
      expect_dtype(out, value(x).dtype, "output");
      add_op(schema::OpCode::RESHAPE, {x}, {out});
      break;
    }
    case kQuantize: {
      const int x = input(0);
      const int out = output();
      expect_shape(out, value(x).shape);
      if (value(out).quantization.empty()) fail_op("output has no quantization");
      const DType t = value(out).dtype;
      // int16 -> int32 is TFLite's requantization into a wider accumulator.
      const bool widened = t == DType::kInt32 && value(x).dtype == DType::kInt16;
      if (t != DType::kInt8 && t != DType::kUInt8 && t != DType::kInt16 && !widened) {
        fail_op("output must be int8, uint8 or int16 (int32 from int16)");
      }
      add_op(schema::OpCode::QUANTIZE, {x}, {out});
      break;
    }
    default:
      fail_op("internal error: no lowering");
  }
}

int32_t Importer::code_of(const fb::Operator* op) const {
  const auto* codes = model_->operator_codes();
  if (codes == nullptr || op->opcode_index() >= codes->size()) {
    fail("operator #" + std::to_string(op_index_) + subgraph_label() + " has opcode_index " +
             std::to_string(op->opcode_index()) + " of " + std::to_string(codes ? codes->size() : 0) +
             " operator codes",
         op);
  }
  return builtin_code(codes->Get(op->opcode_index()));
}

void Importer::enter_op(uint32_t index, int32_t code) {
  op_ = graph_->operators()->Get(index);
  op_index_ = static_cast<int>(index);
  op_name_ = code == kCustom ? custom_code(op_) : tflite_op_name(code);
  node_name_ = prefix_ + "op" + std::to_string(index);
  if (op_->outputs() && op_->outputs()->size() > 0) {
    const fb::Tensor* tensor = tflite_tensor(op_->outputs()->Get(0), "output");
    if (tensor->name()) node_name_ = prefix_ + short_name(tensor->name()->str());
  }
}

int Importer::called_subgraph(int32_t index, const char* role) const {
  const uint32_t count = model_->subgraphs()->size();
  if (index < 0 || static_cast<uint32_t>(index) >= count) {
    fail_op(std::string("names subgraph ") + std::to_string(index) + " as its " + role + "; the model has " +
            std::to_string(count) + " subgraphs");
  }
  if (index == 0) fail_op(std::string("calls subgraph 0, the main graph, as its ") + role + " (recursion)");
  return index;
}

void Importer::walk_calls(int index, int depth, std::vector<int>& state, std::vector<uint64_t>& inlined_ops,
                          std::vector<int>& height, std::map<std::string, std::vector<std::string>>& unsupported) {
  const size_t at = static_cast<size_t>(index);
  state[at] = 1;
  const fb::SubGraph* graph = model_->subgraphs()->Get(static_cast<uint32_t>(index));
  const auto* ops = graph->operators();
  const uint32_t op_count = ops ? ops->size() : 0;
  uint64_t total = op_count;
  for (uint32_t i = 0; i < op_count; ++i) {
    graph_ = graph;  // a callee's walk moved them
    subgraph_ = index;
    op_index_ = static_cast<int>(i);
    const fb::Operator* op = ops->Get(i);
    const int32_t code = code_of(op);
    const std::string reason = unsupported_reason(op, code);
    out_.op_counts[tflite_op_name(code)]++;
    if (!reason.empty()) {
      std::string node = (index == 0 ? "" : "subgraph " + std::to_string(index) + " ") + "#" + std::to_string(i);
      if (op->outputs() && op->outputs()->size() > 0) {
        const int32_t t = op->outputs()->Get(0);
        if (t >= 0 && graph->tensors() && static_cast<uint32_t>(t) < graph->tensors()->size() &&
            graph->tensors()->Get(static_cast<uint32_t>(t))->name()) {
          node += " '" + short_name(graph->tensors()->Get(static_cast<uint32_t>(t))->name()->str()) + "'";
        }
      }
      unsupported[reason].push_back(node);
      continue;
    }
    if (code != kWhile && code != kIf && code != kCallOnce) continue;
    enter_op(i, code);
    int callees[2];
    const char* roles[2];
    int callee_count = 2;
    if (code == kCallOnce) {
      const auto* o = op->builtin_options_as_CallOnceOptions();
      if (o == nullptr) fail_op("CallOnceOptions are missing");
      callees[0] = called_subgraph(o->init_subgraph_index(), "init");
      roles[0] = "init";
      callee_count = 1;
    } else if (code == kWhile) {
      const auto* o = op->builtin_options_as_WhileOptions();
      if (o == nullptr) fail_op("WhileOptions are missing");
      callees[0] = called_subgraph(o->cond_subgraph_index(), "condition");
      callees[1] = called_subgraph(o->body_subgraph_index(), "body");
      roles[0] = "condition";
      roles[1] = "body";
    } else {
      const auto* o = op->builtin_options_as_IfOptions();
      if (o == nullptr) fail_op("IfOptions are missing");
      callees[0] = called_subgraph(o->then_subgraph_index(), "then branch");
      callees[1] = called_subgraph(o->else_subgraph_index(), "else branch");
      roles[0] = "then branch";
      roles[1] = "else branch";
    }
    for (int k = 0; k < callee_count; ++k) {
      const size_t callee = static_cast<size_t>(callees[k]);
      if (state[callee] == 1) {
        fail_op(std::string("calls subgraph ") + std::to_string(callees[k]) + " as its " + roles[k] +
                ", which is already running: recursion, which floe cannot inline");
      }
      // The runtime keeps one frame per enclosing WHILE / IF (kMaxLoopNesting).
      if (depth + 1 > static_cast<int>(kMaxLoopNesting) ||
          (state[callee] == 2 && depth + 1 + height[callee] > static_cast<int>(kMaxLoopNesting))) {
        fail_op("nests WHILE / IF ops more than " + std::to_string(kMaxLoopNesting) +
                " deep, the most the runtime runs");
      }
      if (state[callee] == 0) {
        walk_calls(callees[k], depth + 1, state, inlined_ops, height, unsupported);
        graph_ = graph;
        subgraph_ = index;
        enter_op(i, code);
      }
      height[at] = std::max(height[at], 1 + height[callee]);
      total = std::min<uint64_t>(total + inlined_ops[callee], static_cast<uint64_t>(kMaxModelOps) + 1);
    }
  }
  inlined_ops[at] = total;
  if (total > static_cast<uint64_t>(kMaxModelOps)) {
    fail("subgraph " + std::to_string(index) + " with the subgraphs it calls inlined holds over " +
             std::to_string(kMaxModelOps) + " operators, more than a floe model may",
         graph);
  }
  state[at] = 2;
}

void Importer::lower_ops() {
  const auto* ops = graph_->operators();
  const uint32_t op_count = ops ? ops->size() : 0;
  for (uint32_t i = 0; i < op_count; ++i) {
    op_index_ = static_cast<int>(i);
    const int32_t code = code_of(ops->Get(i));
    enter_op(i, code);
    const bool no_outputs = code == kCallOnce || code == kAssignVariable;
    if (code != kWhile && code != kIf && code != kCustom &&
        (op_->outputs() == nullptr ? 0u : op_->outputs()->size()) != (no_outputs ? 0u : 1u)) {
      fail_op(no_outputs ? "must have no outputs" : "must have exactly one output");
    }
    // A CALL_ONCE init subgraph is folded into initial values: it may only
    // name variables and assign them.
    if (initializing_ >= 0 && code != kVarHandle && code != kAssignVariable) {
      fail_unsupported("computes in the init subgraph " + std::to_string(initializing_) +
                       " of a CALL_ONCE; floe folds an init subgraph that assigns constants to variables "
                       "(VAR_HANDLE, ASSIGN_VARIABLE) into their initial values");
    }
    lower(op_, code);
  }
  op_ = nullptr;
}

void Importer::expect_same_quantization(int id, const Value& like, const std::string& what) const {
  const Quantization& a = value(id).quantization;
  const Quantization& b = like.quantization;
  if (a.scale != b.scale || a.zero_point != b.zero_point || (a.scale.size() > 1 && a.dimension != b.dimension)) {
    fail_op(what + " '" + short_name(value(id).name) + "' and '" + short_name(like.name) +
            "' differ in quantization (scale, zero point)");
  }
}

std::vector<int> Importer::inline_subgraph(int index, const std::vector<int>& args, const std::string& role,
                                           const std::vector<int>& handles, std::vector<int>* result_handles) {
  const fb::SubGraph* graph = model_->subgraphs()->Get(static_cast<uint32_t>(index));
  const std::string callee = role + " subgraph " + std::to_string(index);
  const auto* inputs = graph->inputs();
  const uint32_t count = inputs ? inputs->size() : 0;
  if (count != args.size()) {
    fail_op(callee + " takes " + std::to_string(count) + " inputs, the " + op_name_ + " passes " +
            std::to_string(args.size()));
  }
  // Its input tensors stand for the caller's values: they must be the same tensors.
  const auto* tensors = graph->tensors();
  const uint32_t tensor_count = tensors ? tensors->size() : 0;
  std::vector<int> bound(tensor_count, -1), bound_handles(tensor_count, -1);
  for (uint32_t k = 0; k < count; ++k) {
    const int32_t t = inputs->Get(k);
    const std::string what = callee + " input " + std::to_string(k);
    if (t < 0 || static_cast<uint32_t>(t) >= tensor_count) {
      fail_op(what + " is tensor index " + std::to_string(t) + ", out of range (" + std::to_string(tensor_count) +
              " tensors)");
    }
    if (bound[static_cast<size_t>(t)] >= 0 || bound_handles[static_cast<size_t>(t)] >= 0) {
      fail_op(what + " is tensor " + std::to_string(t) + " again");
    }
    const fb::Tensor* tensor = tensors->Get(static_cast<uint32_t>(t));
    const std::string name = tensor->name() ? tensor->name()->str() : "tensor_" + std::to_string(t);
    const int handle = k < handles.size() ? handles[k] : -1;
    if ((tensor->type() == kTypeResource) != (handle >= 0)) {
      fail_op(what + " ('" + short_name(name) + "') is " + (handle >= 0 ? "not " : "") +
              "a resource handle, called with " + (handle >= 0 ? "one" : "a value"));
    }
    if (handle >= 0) {
      bound_handles[static_cast<size_t>(t)] = handle;
      continue;
    }
    const Value& arg = value(args[k]);
    std::vector<int64_t> shape;
    if (tensor->shape() != nullptr) {
      for (const int32_t d : *tensor->shape()) {
        if (d < 0) fail_op(what + " ('" + short_name(name) + "') has a dynamic dimension; floe needs static shapes");
        shape.push_back(d);
      }
    }
    const DType dtype = tflite_dtype(tensor->type());
    if (dtype != arg.dtype || shape != arg.shape) {
      fail_op(what + " ('" + short_name(name) + "') is " +
              (dtype == DType::kInvalid ? "TFLite type " + std::to_string(tensor->type()) : dtype_name(dtype)) +
              " " + shape_to_string(shape) + ", called with " + dtype_name(arg.dtype) + " " +
              shape_to_string(arg.shape) + " ('" + short_name(arg.name) +
              "'): floe inlines a called subgraph only with the dtypes and shapes it declares");
    }
    const auto* buffers = model_->buffers();
    if (buffers != nullptr && tensor->buffer() < buffers->size()) {
      const fb::Buffer* buffer = buffers->Get(tensor->buffer());
      if ((buffer->data() != nullptr && buffer->data()->size() > 0) || buffer->offset() > 1) {
        fail_op(what + " ('" + short_name(name) + "') is a constant");
      }
    }
    Quantization q = read_quantization(tensor, shape, name);
    if (dtype != DType::kInt8 && dtype != DType::kUInt8 && dtype != DType::kInt16 && dtype != DType::kInt32) q = {};
    if (q.scale != arg.quantization.scale || q.zero_point != arg.quantization.zero_point) {
      fail_op(what + " ('" + short_name(name) + "') differs from its argument '" + short_name(arg.name) +
              "' in quantization (scale, zero point)");
    }
    bound[static_cast<size_t>(t)] = args[k];
  }

  // Its ops, in the callee's own tensor space.
  const fb::SubGraph* saved_graph = graph_;
  const int saved_subgraph = subgraph_;
  std::string saved_prefix = std::move(prefix_);
  std::vector<int> saved_values = std::move(values_);
  std::vector<int> saved_handles = std::move(handles_);
  const fb::Operator* saved_op = op_;
  const int saved_index = op_index_;
  std::string saved_op_name = op_name_, saved_node = node_name_;
  graph_ = graph;
  subgraph_ = index;
  prefix_ = node_name_ + "/" + role + "/";
  values_ = std::move(bound);
  handles_ = std::move(bound_handles);
  lower_ops();
  std::vector<int> results;
  if (result_handles != nullptr) result_handles->clear();
  const auto* outputs = graph->outputs();
  for (uint32_t k = 0; outputs && k < outputs->size(); ++k) {
    const int32_t t = outputs->Get(k);
    if (t < 0 || static_cast<uint32_t>(t) >= tensor_count) {
      fail("subgraph " + std::to_string(index) + " output " + std::to_string(k) + " is tensor index " +
               std::to_string(t) + ", out of range (" + std::to_string(tensor_count) + " tensors)",
           graph);
    }
    if (tensors->Get(static_cast<uint32_t>(t))->type() == kTypeResource) {
      if (handles_[static_cast<size_t>(t)] < 0) {
        fail("subgraph " + std::to_string(index) + " output " + std::to_string(k) +
                 " is a resource handle no VAR_HANDLE or input gave",
             graph);
      }
      results.push_back(-1);
      if (result_handles != nullptr) result_handles->push_back(handles_[static_cast<size_t>(t)]);
      continue;
    }
    if (result_handles != nullptr) result_handles->push_back(-1);
    const int id = value_of(t);
    if (!written_[static_cast<size_t>(id)]) {
      fail("subgraph " + std::to_string(index) + " output tensor '" + short_name(value(id).name) +
               "' is written by no operator",
           graph);
    }
    results.push_back(id);
  }
  graph_ = saved_graph;
  subgraph_ = saved_subgraph;
  prefix_ = std::move(saved_prefix);
  values_ = std::move(saved_values);
  handles_ = std::move(saved_handles);
  op_ = saved_op;
  op_index_ = saved_index;
  op_name_ = std::move(saved_op_name);
  node_name_ = std::move(saved_node);
  return results;
}

// WHILE(v...) with cond(v...) -> bool and body(v...) -> v'...: floe's WHILE
// op (initial values -> variables = the WHILE's outputs), the condition's ops
// then the body's on the variables, and the body's results as next values.
void Importer::lower_while() {
  const auto* o = op_->builtin_options_as_WhileOptions();
  if (o == nullptr) fail_op("WhileOptions are missing");
  const int cond_index = called_subgraph(o->cond_subgraph_index(), "condition");
  const int body_index = called_subgraph(o->body_subgraph_index(), "body");
  const uint32_t n = op_->inputs() ? op_->inputs()->size() : 0;
  const uint32_t outs = op_->outputs() ? op_->outputs()->size() : 0;
  if (outs != n) {
    fail_op("has " + std::to_string(n) + " inputs and " + std::to_string(outs) +
            " outputs; a WHILE has one output per loop variable");
  }
  // A resource handle passes through the loop unchanged (a tf.while_loop
  // updating a tf.Variable): condition, body and the WHILE's output name the
  // same variable. The other positions are floe's loop variables.
  std::vector<int> handles(n, -1), args(n, -1);  // by position
  std::vector<int> inits, vars;                  // the loop variables
  for (uint32_t k = 0; k < n; ++k) {
    if (is_handle(static_cast<int>(k))) {
      handles[k] = handle_input(static_cast<int>(k));
      const int32_t t = op_->outputs()->Get(k);
      if (tflite_tensor(t, "output")->type() != kTypeResource) {
        fail_op("output " + std::to_string(k) + " is no resource handle; its input is one");
      }
      handles_[static_cast<size_t>(t)] = handles[k];
      continue;
    }
    const int init = input(static_cast<int>(k));
    const int var = output(static_cast<int>(k));
    if (std::find(vars.begin(), vars.end(), var) != vars.end()) fail_op("writes one tensor as two loop variables");
    expect_dtype(var, value(init).dtype, "output");
    expect_shape(var, value(init).shape);
    expect_same_quantization(var, value(init), "output " + std::to_string(k));
    inits.push_back(init);
    vars.push_back(var);
    args[k] = var;
  }
  if (options_.max_loop_iterations == 0) {
    throw op_error("runs at run time and a .tflite gives no bound on its iterations: pass "
                   "--max-loop-iterations N to bound it")
        .with_loop_bound();
  }
  const int id = static_cast<int>(out_.model.loops.size());
  RuntimeLoop loop;
  loop.name = node_name_;
  loop.max_iterations = options_.max_loop_iterations;
  loop.bound_source = "--max-loop-iterations";
  out_.model.loops.push_back(loop);
  // Outer loops and conds are listed before the ones they hold.
  out_.control_flow.push_back("loop '" + node_name_ + "': run-time WHILE, bound " +
                              std::to_string(options_.max_loop_iterations) +
                              " (--max-loop-iterations); condition subgraph " + std::to_string(cond_index) +
                              ", body subgraph " + std::to_string(body_index) + " inlined");
  const size_t while_at = out_.model.ops.size();
  add_op(schema::OpCode::WHILE, inits, vars, wrap(schema::WhileOptionsT{}));
  out_.model.ops.back().runs_loop = id;

  const int saved_loop = loop_;
  const bool saved_cond = loop_cond_;
  loop_ = id;
  loop_cond_ = true;
  std::vector<int> returned_handles;
  const std::vector<int> cond = inline_subgraph(cond_index, args, "cond", handles, &returned_handles);
  expect_no_handles(returned_handles, cond_index, "condition");
  if (cond.size() != 1 || value(cond[0]).dtype != DType::kBool || value(cond[0]).byte_size() != 1) {
    fail_op("condition subgraph " + std::to_string(cond_index) + " must return one bool, returns " +
            (cond.size() == 1 ? std::string(dtype_name(value(cond[0]).dtype)) + " " +
                                    shape_to_string(value(cond[0]).shape)
                              : std::to_string(cond.size()) + " values"));
  }
  loop_cond_ = false;
  const std::vector<int> results = inline_subgraph(body_index, args, "body", handles, &returned_handles);
  if (results.size() != n) {
    fail_op("body subgraph " + std::to_string(body_index) + " returns " + std::to_string(results.size()) +
            " values for " + std::to_string(n) + " loop variables");
  }
  std::vector<int> next;  // the loop variables' next values
  for (uint32_t k = 0; k < n; ++k) {
    if (returned_handles[k] != handles[k]) {
      fail_unsupported("body subgraph " + std::to_string(body_index) + " returns " +
                       (returned_handles[k] >= 0 ? "a resource handle" : "a value") + " as loop variable " +
                       std::to_string(k) + ", which enters as " + (handles[k] >= 0 ? "a handle" : "a value") +
                       "; floe passes a variable's handle through a loop unchanged");
    }
    if (handles[k] < 0) next.push_back(results[k]);
  }
  for (uint32_t k = 0; k < vars.size(); ++k) {
    const Value& var = value(vars[k]);
    const Value& v = value(next[k]);
    if (v.dtype != var.dtype || v.shape != var.shape) {
      fail_op("body subgraph " + std::to_string(body_index) + " returns loop variable " + std::to_string(k) + " as " +
              dtype_name(v.dtype) + " " + shape_to_string(v.shape) + ", it enters as " + dtype_name(var.dtype) + " " +
              shape_to_string(var.shape) + ": floe runs loops with fixed dtypes and shapes");
    }
    expect_same_quantization(next[k], var, "body result " + std::to_string(k));
    // The runtime copies next values into the variables in order: a variable
    // passed on to another position is copied first, or it would be overwritten.
    const auto j = std::find(vars.begin(), vars.end(), next[k]);
    if (j != vars.end() && static_cast<uint32_t>(j - vars.begin()) != k) {
      const int copy = derived(var, var.shape, "next" + std::to_string(k));
      add_op(schema::OpCode::RESHAPE, {next[k]}, {copy});
      next[k] = copy;
    }
  }
  loop_ = saved_loop;
  loop_cond_ = saved_cond;
  LoweredOp& w = out_.model.ops[while_at];
  w.inputs.insert(w.inputs.end(), next.begin(), next.end());
  w.inputs.push_back(cond[0]);
}

// IF(p, a...) with then(a...) -> r... and else(a...) -> r...: floe's IF op on
// p, each branch's ops, and each branch ending with copies of its results into
// the IF's outputs.
void Importer::lower_if() {
  const auto* o = op_->builtin_options_as_IfOptions();
  if (o == nullptr) fail_op("IfOptions are missing");
  const int branches[2] = {called_subgraph(o->then_subgraph_index(), "then branch"),
                           called_subgraph(o->else_subgraph_index(), "else branch")};
  const int pred = input(0);
  if (value(pred).dtype != DType::kBool || value(pred).byte_size() != 1) {
    fail_op("the condition '" + short_name(value(pred).name) + "' must be one bool, is " +
            dtype_name(value(pred).dtype) + " " + shape_to_string(value(pred).shape));
  }
  // Resource handles pass into the branches as handles: both name the same variables.
  std::vector<int> args, handles, results;
  for (uint32_t k = 1; k < op_->inputs()->size(); ++k) {
    const bool handle = is_handle(static_cast<int>(k));
    args.push_back(handle ? -1 : input(static_cast<int>(k)));
    handles.push_back(handle ? handle_input(static_cast<int>(k)) : -1);
  }
  const uint32_t outs = op_->outputs() ? op_->outputs()->size() : 0;
  for (uint32_t k = 0; k < outs; ++k) {
    const int r = output(static_cast<int>(k));
    if (std::find(results.begin(), results.end(), r) != results.end()) fail_op("writes one tensor as two results");
    results.push_back(r);
  }
  const int id = static_cast<int>(out_.model.ifs.size());
  out_.model.ifs.push_back(node_name_);
  out_.control_flow.push_back("cond '" + node_name_ + "': run-time IF, only the taken branch runs; then subgraph " +
                              std::to_string(branches[0]) + ", else subgraph " + std::to_string(branches[1]) +
                              " inlined");

  add_op(schema::OpCode::IF, {pred}, {}, wrap(schema::IfOptionsT{}));
  out_.model.ops.back().runs_if = id;
  const int saved_if = if_id_;
  const bool saved_then = if_then_;
  for (const bool then_side : {true, false}) {
    const int index = branches[then_side ? 0 : 1];
    if_id_ = id;
    if_then_ = then_side;
    std::vector<int> returned_handles;
    const std::vector<int> got =
        inline_subgraph(index, args, then_side ? "then" : "else", handles, &returned_handles);
    expect_no_handles(returned_handles, index, then_side ? "then branch" : "else branch");
    if (got.size() != results.size()) {
      fail_op(std::string(then_side ? "then" : "else") + " subgraph " + std::to_string(index) + " returns " +
              std::to_string(got.size()) + " values for " + std::to_string(results.size()) + " outputs");
    }
    for (size_t k = 0; k < got.size(); ++k) {
      const Value& r = value(results[k]);
      const Value& v = value(got[k]);
      if (v.dtype != r.dtype || v.shape != r.shape) {
        fail_op(std::string(then_side ? "then" : "else") + " subgraph " + std::to_string(index) + " returns " +
                dtype_name(v.dtype) + " " + shape_to_string(v.shape) + " for output " + std::to_string(k) + " ('" +
                short_name(r.name) + "', " + dtype_name(r.dtype) + " " + shape_to_string(r.shape) + ")");
      }
      expect_same_quantization(got[k], r, "branch result " + std::to_string(k));
      add_op(schema::OpCode::RESHAPE, {got[k]}, {results[k]});
    }
  }
  if_id_ = saved_if;
  if_then_ = saved_then;
}

void Importer::expect_no_handles(const std::vector<int>& result_handles, int index, const char* role) const {
  for (size_t k = 0; k < result_handles.size(); ++k) {
    if (result_handles[k] >= 0) {
      fail_unsupported(std::string(role) + " subgraph " + std::to_string(index) + " returns a resource handle (output " +
                       std::to_string(k) + "); floe passes handles into called subgraphs, and through WHILE loops");
    }
  }
}

// ---- resource variables
// TFLite names a variable by (container, shared_name) in VAR_HANDLE and
// passes the handle to READ_VARIABLE, ASSIGN_VARIABLE and into called
// subgraphs. floe gives each name one variable value (state in the arena,
// kept across Invoke()); a read is a RESHAPE copy out of it (a snapshot, as
// TFLite copies), an assignment floe's ASSIGN_VARIABLE, which also carries
// the initial value and resets the variable. The ops keep their order
// (passes and the scheduler leave variable writes in place).

bool Importer::is_handle(int k) const {
  if (!has_input(k)) return false;
  return tflite_tensor(op_->inputs()->Get(static_cast<uint32_t>(k)), "operand")->type() == kTypeResource;
}

int Importer::handle_input(int k) {
  if (!has_input(k)) fail_op("input " + std::to_string(k) + " (a resource handle) is missing");
  const int32_t t = op_->inputs()->Get(static_cast<uint32_t>(k));
  const fb::Tensor* tensor = tflite_tensor(t, "operand");
  const std::string name = tensor->name() ? tensor->name()->str() : "tensor_" + std::to_string(t);
  if (tensor->type() != kTypeResource) {
    fail_op("input " + std::to_string(k) + " '" + short_name(name) + "' is not a resource handle");
  }
  const int r = handles_[static_cast<size_t>(t)];
  if (r < 0) fail_op("uses resource handle '" + short_name(name) + "' before a VAR_HANDLE writes it");
  return r;
}

int Importer::variable_value(int r, const Value& like, const std::string& use) {
  ResourceVariable& variable = resources_[static_cast<size_t>(r)];
  const std::string name = variable.shared_name.empty() ? "resource_variable_" + std::to_string(r)
                                                         : variable.shared_name;
  if (variable.value < 0) {
    Value v;
    v.name = name;
    v.dtype = like.dtype;
    v.shape = like.shape;
    v.quantization = like.quantization;
    v.variable = true;
    variable.value = out_.model.add_value(std::move(v));
    written_.push_back(true);  // readable from the start: its initial value or zero point
    return variable.value;
  }
  const Value& v = value(variable.value);
  if (v.dtype != like.dtype || v.shape != like.shape) {
    fail_op(use + " '" + short_name(like.name) + "' is " + dtype_name(like.dtype) + " " + shape_to_string(like.shape) +
            "; resource variable '" + short_name(name) + "' is " + dtype_name(v.dtype) + " " +
            shape_to_string(v.shape) + " (floe keeps a variable's dtype and shape fixed)");
  }
  expect_same_quantization(variable.value, like, use);
  return variable.value;
}

void Importer::lower_var_handle() {
  const auto* o = op_->builtin_options_as_VarHandleOptions();
  const std::string container = o != nullptr && o->container() != nullptr ? o->container()->str() : "";
  const std::string shared_name = o != nullptr && o->shared_name() != nullptr ? o->shared_name()->str() : "";
  if (has_input(0)) fail_op("must have no inputs");
  const int32_t t = op_->outputs()->Get(0);
  const fb::Tensor* tensor = tflite_tensor(t, "output");
  if (tensor->type() != kTypeResource) fail_op("output is not a resource tensor (TFLite type 13)");
  if (handles_[static_cast<size_t>(t)] >= 0) fail_op("writes a resource handle a VAR_HANDLE already wrote");
  // As TFLM looks variables up: the same shared name, and the same container
  // unless the op names none.
  int r = -1;
  for (size_t i = 0; i < resources_.size() && r < 0; ++i) {
    const ResourceVariable& v = resources_[i];
    if (v.shared_name == shared_name && (container.empty() || v.container == container)) r = static_cast<int>(i);
  }
  if (r < 0) {
    r = static_cast<int>(resources_.size());
    ResourceVariable variable;
    variable.container = container;
    variable.shared_name = shared_name;
    resources_.push_back(std::move(variable));
  }
  handles_[static_cast<size_t>(t)] = r;
}

void Importer::lower_read_variable() {
  const int r = handle_input(0);
  const int out = output();
  const int variable = variable_value(r, value(out), "output");
  variables_used_ = true;
  resources_[static_cast<size_t>(r)].read = true;
  add_op(schema::OpCode::RESHAPE, {variable}, {out});
}

void Importer::lower_assign_variable() {
  const int r = handle_input(0);
  const int x = input(1);
  const int variable = variable_value(r, value(x), "value");
  ResourceVariable& resource = resources_[static_cast<size_t>(r)];
  if (initializing_ >= 0) {
    // An init subgraph has no inputs and only these ops: x is a constant.
    if (!value(x).is_constant()) fail_op("assigns '" + short_name(value(x).name) + "', which is no constant");
    resource.initial = value(x).constant;
    resource.initializer = initializing_;
    return;
  }
  variables_used_ = true;
  resource.assigned = true;
  // The initial value rides on every assignment: the op resets the variable.
  std::vector<int> inputs = {x};
  if (resource.initial) {
    Value initial = value(variable);
    initial.name = short_name(initial.name) + "/initial_value";
    initial.variable = false;
    initial.constant = resource.initial;
    inputs.push_back(out_.model.add_value(std::move(initial)));
    written_.push_back(true);
  }
  add_op(schema::OpCode::ASSIGN_VARIABLE, inputs, {variable});
}

// CALL_ONCE runs its init subgraph at the first Invoke() (TFLite's session
// initializer: constants assigned to variables). floe folds it into the
// variables' initial values, which Init() and ResetVariableTensors() restore.
void Importer::lower_call_once() {
  const auto* o = op_->builtin_options_as_CallOnceOptions();
  if (o == nullptr) fail_op("CallOnceOptions are missing");
  const int index = called_subgraph(o->init_subgraph_index(), "init");
  if (has_input(0)) fail_op("must have no inputs");
  if (loop_ >= 0 || if_id_ >= 0 || initializing_ >= 0) {
    fail_unsupported("runs inside a WHILE, IF or init subgraph; floe folds a CALL_ONCE of the main graph into "
                     "initial values");
  }
  if (variables_used_) {
    fail_unsupported("comes after operators that read or assign resource variables; floe folds a CALL_ONCE that "
                     "runs before them into initial values");
  }
  if (!initialized_by_.insert(index).second) return;  // it assigns the same constants again
  initializing_ = index;
  inline_subgraph(index, {}, "init");
  initializing_ = -1;
}

void Importer::lower_comparison(schema::OpCode code) {
  const int a = input(0), b = input(1);
  expect_dtype(b, value(a).dtype, "input");
  const DType t = value(a).dtype;
  if (t != DType::kFloat32 && t != DType::kInt32 && t != DType::kInt64) {
    fail_unsupported(std::string("compares ") + dtype_name(t) + " tensors; floe reads float32, int32 and int64 comparisons");
  }
  const int out = output();
  expect_dtype(out, DType::kBool, "output");
  expect_shape(out, broadcast(value(a).shape, value(b).shape));
  add_op(code, {a, b}, {out});
}

TfliteImport Importer::run() {
  flatbuffers::Verifier verifier(base_, size_);
  if (size_ < 8 || !fb::ModelBufferHasIdentifier(base_)) {
    fail("not a TensorFlow Lite model (no TFL3 identifier at bytes 4..7)");
  }
  if (!fb::VerifyModelBuffer(verifier)) {
    fail("FlatBuffers verifier failed: the file is truncated or corrupt (" + std::to_string(size_) + " bytes)");
  }
  model_ = fb::GetModel(base_);
  if (model_->version() != 3) fail("TFLite schema version " + std::to_string(model_->version()) + " (floe reads 3)");
  const auto* subgraphs = model_->subgraphs();
  if (subgraphs == nullptr || subgraphs->size() == 0) fail("the model has no subgraph");
  graph_ = subgraphs->Get(0);
  out_.tflite_operators = graph_->operators() ? graph_->operators()->size() : 0;

  // Every operator of subgraph 0 and of the subgraphs its WHILE / IF ops call
  // first: bad calls are refused before any op is lowered, and all
  // unsupported ops together.
  std::map<std::string, std::vector<std::string>> unsupported;
  std::vector<int> state(subgraphs->size(), 0);
  std::vector<uint64_t> inlined_ops(subgraphs->size(), 0);
  std::vector<int> height(subgraphs->size(), 0);
  walk_calls(0, 0, state, inlined_ops, height, unsupported);
  op_ = nullptr;
  graph_ = subgraphs->Get(0);
  subgraph_ = 0;
  if (!unsupported.empty()) throw unsupported_ops_error(path_, unsupported);
  const auto called = static_cast<size_t>(std::count(state.begin(), state.end(), 2)) - 1;
  out_.called_subgraphs = called;
  for (uint32_t g = 1; g < subgraphs->size(); ++g) {
    const auto* ops = subgraphs->Get(g)->operators();
    if (state[g] == 2 && ops != nullptr) out_.called_operators += ops->size();
  }
  if (subgraphs->size() > called + 1) {
    out_.notes.push_back("the model has " + std::to_string(subgraphs->size()) +
                         " subgraphs; floe converts subgraph 0 (the main graph)" +
                         (called > 0 ? " and the " + std::to_string(called) + " its WHILE / IF ops call" : ""));
  }
  values_.assign(graph_->tensors() ? graph_->tensors()->size() : 0, -1);
  handles_.assign(values_.size(), -1);

  // Graph inputs.
  if (graph_->inputs() != nullptr) {
    for (const int32_t t : *graph_->inputs()) {
      const int id = value_of(t);
      if (value(id).is_constant()) continue;  // a constant listed as an input feeds nothing
      if (value(id).variable) fail("input tensor '" + short_name(value(id).name) + "' is a variable tensor", graph_);
      written_[static_cast<size_t>(id)] = true;
      out_.model.inputs.push_back(id);
    }
  }
  lower_ops();
  op_ = nullptr;

  // Graph outputs: the subgraph's, or the tensors named by the options.
  std::vector<int32_t> outputs;
  if (options_.outputs.empty()) {
    if (graph_->outputs() != nullptr) outputs.assign(graph_->outputs()->begin(), graph_->outputs()->end());
  } else {
    for (const std::string& name : options_.outputs) {
      int32_t found = -1;
      const auto* tensors = graph_->tensors();
      for (uint32_t t = 0; tensors && t < tensors->size() && found < 0; ++t) {
        if (tensors->Get(t)->name() && tensors->Get(t)->name()->str() == name) found = static_cast<int32_t>(t);
      }
      // A nameless tensor goes by the name floe gives it, tensor_<index>.
      if (found < 0 && name.rfind("tensor_", 0) == 0 && name.size() > 7 && name.size() < 17 &&
          name.find_first_not_of("0123456789", 7) == std::string::npos) {
        const uint64_t index = std::stoull(name.substr(7));
        if (tensors && index < tensors->size() && tensors->Get(static_cast<uint32_t>(index))->name() == nullptr) {
          found = static_cast<int32_t>(index);
        }
      }
      if (found < 0) fail("--outputs names '" + name + "', which is no tensor of subgraph 0");
      outputs.push_back(found);
    }
  }
  if (outputs.empty()) fail("the subgraph has no outputs");
  for (const int32_t t : outputs) {
    const int id = value_of(t);
    if (!written_[static_cast<size_t>(id)] || value(id).is_constant() || value(id).variable) {
      fail("output tensor '" + short_name(value(id).name) + "' is written by no operator", graph_);
    }
    out_.model.outputs.push_back(id);
  }
  if (!normalized_dims_.empty()) {
    out_.notes.push_back(std::to_string(normalized_dims_.size()) + " 1-D tensor(s) (e.g. '" + normalized_dims_[0] +
                         ") carry a quantized_dimension other than 0, meaningless for a 1-D tensor: read as 0, "
                         "as TensorFlow Lite Micro does (full TFLite refuses such files)");
  }
  for (const ResourceVariable& r : resources_) {
    if (r.value < 0) continue;
    if (!r.assigned) {
      // Never written at run time: its reads are of a constant (the initial
      // value, else zeros / its zero point).
      Value& v = out_.model.values[static_cast<size_t>(r.value)];
      v.variable = false;
      auto constant = std::make_shared<HostTensor>();
      constant->dtype = v.dtype;
      constant->shape = v.shape;
      if (r.initial) {
        constant->data = r.initial->data;
      } else {
        const int64_t zero = v.dtype == DType::kInt8 && !v.quantization.empty() ? v.quantization.zero_point[0] : 0;
        constant->data.assign(v.byte_size(), static_cast<uint8_t>(zero));
      }
      v.constant = std::move(constant);
      if (r.read) {
        out_.notes.push_back("resource variable '" + short_name(v.name) +
                             "' is never assigned at run time: read as a constant");
      }
      continue;
    }
    const Value& v = value(r.value);
    out_.notes.push_back("resource variable '" + short_name(v.name) + "' " + dtype_name(v.dtype) + " " +
                         shape_to_string(v.shape) + ": kept in the arena across Invoke(), starting from " +
                         (r.initializer >= 0 ? "the constant CALL_ONCE's init subgraph " +
                                                   std::to_string(r.initializer) +
                                                   " assigns (folded; ResetVariableTensors() restores it)"
                                             : std::string("zero (its zero point)")));
  }
  if (hybrid_ops_ > 0) {
    out_.notes.push_back(std::to_string(hybrid_ops_) + " operator(s) with float inputs and int8 weights (dynamic-range "
                         "quantization): weights dequantized to float32, computed in float (TFLite's hybrid kernels "
                         "quantize the activations at run time, so outputs differ by that rounding)");
  }
  check_quantized_operands();
  drop_unused_values();
  auto used = [&](int v) { out_.quantized = out_.quantized || !value(v).quantization.empty(); };
  for (const LoweredOp& op : out_.model.ops) {
    for (int v : op.inputs) if (v >= 0) used(v);
    for (int v : op.outputs) used(v);
  }
  return std::move(out_);
}

}  // namespace

bool is_tflite(const std::string& bytes) { return bytes.size() >= 8 && std::memcmp(bytes.data() + 4, "TFL3", 4) == 0; }

TfliteImport import_tflite(const std::string& bytes, const std::string& path, const TfliteOptions& options) {
  return Importer(bytes, path, options).run();
}

}  // namespace floe::conv
