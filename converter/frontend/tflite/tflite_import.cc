// SPDX-License-Identifier: Apache-2.0
// .tflite -> lowered model (see tflite_import.h). The buffer is checked by the
// FlatBuffers verifier first; after that every index, shape, buffer size and
// quantization record is checked here before it is used, so a hostile file
// ends in one ConvertError (file, op, byte offset), never a crash.
#include "converter/frontend/tflite/tflite_import.h"

#include <algorithm>
#include <cstring>

#include "converter/frontend/tflite/importer.h"
#include "converter/ir/limits.h"

namespace floe::conv::tflite_detail {

const char* activation_name(int8_t a) {
  switch (a) {
    case 2: return "RELU_N1_TO_1";
    case 4: return "TANH";
    case 5: return "SIGN_BIT";
    default: return "unknown";
  }
}

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

std::string short_name(const std::string& name) {
  std::string s = name.substr(0, name.find(';'));
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}


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

std::string Importer::custom_code(const fb::Operator* op) const {
  const fb::OperatorCode* c = model_->operator_codes()->Get(op->opcode_index());
  return c->custom_code() ? c->custom_code()->str() : std::string();
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


}  // namespace floe::conv::tflite_detail

namespace floe::conv {

bool is_tflite(const std::string& bytes) { return bytes.size() >= 8 && std::memcmp(bytes.data() + 4, "TFL3", 4) == 0; }

TfliteImport import_tflite(const std::string& bytes, const std::string& path, const TfliteOptions& options) {
  return tflite_detail::Importer(bytes, path, options).run();
}

}  // namespace floe::conv
