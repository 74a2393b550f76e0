// SPDX-License-Identifier: Apache-2.0
// Builds small .tflite files for tests (and the fuzz seeds) with the
// converter's own TFLite schema subset: tensors with optional constant data
// and quantization, operators by builtin code with their options, and more
// subgraphs (for WHILE and IF) after the main one.
#pragma once

#include <cstring>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "converter/frontend/tflite/tflite_import.h"
#include "converter/frontend/tflite/tflite_subset_generated.h"
#include "converter/ir/error.h"

namespace floe::testing {

namespace tfl = ::floe::tflite_schema;

// TensorType values.
constexpr int8_t kTflFloat32 = 0, kTflFloat16 = 1, kTflInt32 = 2, kTflBool = 6, kTflInt8 = 9, kTflResource = 13;

struct TflTensor {
  std::vector<int32_t> shape;
  int8_t type = kTflFloat32;
  std::vector<uint8_t> data;  // empty: an activation
  std::string name;
  std::vector<float> scale;  // empty: not quantized
  std::vector<int64_t> zero_point;
  int32_t quantized_dimension = 0;
  bool variable = false;  // TFLite's is_variable (state such as SVDF's)
};

template <typename T>
std::vector<uint8_t> raw(const std::vector<T>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

using OptionsFn = std::function<flatbuffers::Offset<void>(flatbuffers::FlatBufferBuilder&)>;

struct TflOp {
  int32_t code = 0;
  std::vector<int32_t> inputs, outputs;
  tfl::BuiltinOptions options_type = tfl::BuiltinOptions::NONE;
  OptionsFn options;
  std::string custom_code;
  std::vector<int32_t> intermediates;  // TFLite's (e.g. an int8 LSTM's five)
  std::vector<uint8_t> custom_options;  // a custom op's FlexBuffer map of attributes
};

class TfliteBuilder {
 public:
  // Ends the current subgraph (its tensors, ops, inputs and outputs) and
  // starts the next; returns the new one's index. Tensor indices restart at 0.
  int next_subgraph() {
    done_.push_back(Subgraph{std::move(tensors_), std::move(ops_), std::move(inputs), std::move(outputs)});
    tensors_.clear();
    ops_.clear();
    inputs.clear();
    outputs.clear();
    return static_cast<int>(done_.size());
  }
  int tensor(TflTensor t) {
    if (t.name.empty()) t.name = "t" + std::to_string(tensors_.size());
    tensors_.push_back(std::move(t));
    return static_cast<int>(tensors_.size()) - 1;
  }
  void op(TflOp op) { ops_.push_back(std::move(op)); }
  std::vector<int32_t> inputs, outputs;
  // Files written before the extended builtin_code field carry only the
  // deprecated byte; newer ones both (127 in the byte for codes >= 127).
  bool old_style_codes = false;

  std::string build() const {
    flatbuffers::FlatBufferBuilder b;
    std::vector<flatbuffers::Offset<tfl::Buffer>> buffers = {tfl::CreateBuffer(b)};  // buffer 0: empty sentinel
    std::map<std::string, uint32_t> code_index;
    std::vector<flatbuffers::Offset<tfl::OperatorCode>> codes;
    std::vector<flatbuffers::Offset<tfl::SubGraph>> graphs;
    std::vector<Subgraph> all = done_;
    all.push_back(Subgraph{tensors_, ops_, inputs, outputs});
    for (size_t g = 0; g < all.size(); ++g) {
      graphs.push_back(build_subgraph(b, all[g], g == 0 ? "main" : "subgraph" + std::to_string(g), buffers,
                                      code_index, codes));
    }
    const auto model = tfl::CreateModel(b, 3, b.CreateVector(codes), b.CreateVector(graphs),
                                        b.CreateString("floe test"), b.CreateVector(buffers));
    tfl::FinishModelBuffer(b, model);
    return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
  }

 private:
  struct Subgraph {
    std::vector<TflTensor> tensors;
    std::vector<TflOp> ops;
    std::vector<int32_t> inputs, outputs;
  };

  flatbuffers::Offset<tfl::SubGraph> build_subgraph(flatbuffers::FlatBufferBuilder& b, const Subgraph& graph,
                                                    const std::string& name,
                                                    std::vector<flatbuffers::Offset<tfl::Buffer>>& buffers,
                                                    std::map<std::string, uint32_t>& code_index,
                                                    std::vector<flatbuffers::Offset<tfl::OperatorCode>>& codes) const {
    std::vector<flatbuffers::Offset<tfl::Tensor>> tensors;
    for (const TflTensor& t : graph.tensors) {
      uint32_t buffer = 0;
      if (!t.data.empty()) {
        b.ForceVectorAlignment(t.data.size(), 1, 16);
        const auto data = b.CreateVector(t.data);
        buffers.push_back(tfl::CreateBuffer(b, data));
        buffer = static_cast<uint32_t>(buffers.size() - 1);
      }
      flatbuffers::Offset<tfl::QuantizationParameters> q = 0;
      if (!t.scale.empty()) {
        q = tfl::CreateQuantizationParameters(b, 0, 0, b.CreateVector(t.scale), b.CreateVector(t.zero_point),
                                              tfl::QuantizationDetails::NONE, 0, t.quantized_dimension);
      }
      tensors.push_back(
          tfl::CreateTensor(b, b.CreateVector(t.shape), t.type, buffer, b.CreateString(t.name), q, t.variable));
    }
    std::vector<flatbuffers::Offset<tfl::Operator>> ops;
    for (const TflOp& op : graph.ops) {
      const std::string key = std::to_string(op.code) + "/" + op.custom_code;
      if (!code_index.count(key)) {
        code_index[key] = static_cast<uint32_t>(codes.size());
        const int8_t deprecated = static_cast<int8_t>(op.code < 127 ? op.code : 127);
        codes.push_back(tfl::CreateOperatorCode(b, deprecated,
                                                op.custom_code.empty() ? 0 : b.CreateString(op.custom_code), 1,
                                                old_style_codes ? 0 : op.code));
      }
      const flatbuffers::Offset<void> options = op.options ? op.options(b) : 0;
      ops.push_back(tfl::CreateOperator(b, code_index[key], b.CreateVector(op.inputs), b.CreateVector(op.outputs),
                                        op.options ? op.options_type : tfl::BuiltinOptions::NONE, options,
                                        op.custom_options.empty() ? 0 : b.CreateVector(op.custom_options), 0, 0,
                                        op.intermediates.empty() ? 0 : b.CreateVector(op.intermediates)));
    }
    return tfl::CreateSubGraph(b, b.CreateVector(tensors), b.CreateVector(graph.inputs),
                               b.CreateVector(graph.outputs), b.CreateVector(ops), b.CreateString(name));
  }

  std::vector<Subgraph> done_;  // subgraphs 0 .. n-1 before the current one
  std::vector<TflTensor> tensors_;
  std::vector<TflOp> ops_;
};

// Options helpers.
inline OptionsFn conv_options(int8_t padding, int stride_h, int stride_w, int8_t activation = 0) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return tfl::CreateConv2DOptions(b, padding, stride_w, stride_h, activation).Union();
  };
}
inline OptionsFn depthwise_options(int8_t padding, int stride, int multiplier, int8_t activation = 0) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return tfl::CreateDepthwiseConv2DOptions(b, padding, stride, stride, multiplier, activation).Union();
  };
}
inline OptionsFn fc_options(int8_t activation = 0, bool keep_num_dims = false) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return tfl::CreateFullyConnectedOptions(b, activation, 0, keep_num_dims).Union();
  };
}
inline OptionsFn pool_options(int8_t padding, int stride, int filter, int8_t activation = 0) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return tfl::CreatePool2DOptions(b, padding, stride, stride, filter, filter, activation).Union();
  };
}
inline OptionsFn svdf_options(int rank, int8_t activation = 0) {
  return [=](flatbuffers::FlatBufferBuilder& b) { return tfl::CreateSVDFOptions(b, rank, activation).Union(); };
}
inline OptionsFn lstm_options(float cell_clip, float projection_clip, bool time_major) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return tfl::CreateUnidirectionalSequenceLSTMOptions(b, /*TANH*/ 4, cell_clip, projection_clip, time_major).Union();
  };
}
inline OptionsFn while_options(int cond, int body) {
  return [=](flatbuffers::FlatBufferBuilder& b) { return tfl::CreateWhileOptions(b, cond, body).Union(); };
}
inline OptionsFn if_options(int then_branch, int else_branch) {
  return [=](flatbuffers::FlatBufferBuilder& b) { return tfl::CreateIfOptions(b, then_branch, else_branch).Union(); };
}
inline OptionsFn call_once_options(int init_subgraph) {
  return [=](flatbuffers::FlatBufferBuilder& b) { return tfl::CreateCallOnceOptions(b, init_subgraph).Union(); };
}
inline OptionsFn var_handle_options(const std::string& container, const std::string& shared_name) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return tfl::CreateVarHandleOptions(b, b.CreateString(container), b.CreateString(shared_name)).Union();
  };
}

// What a .tflite means to floe, independent of how its FlatBuffer was laid
// out: the builder's byte order follows the compiler's argument evaluation
// order (GCC and Clang differ), so seeds are compared by their import.
inline std::string imported_content(const std::string& bytes, const conv::TfliteOptions& options = {}) {
  std::ostringstream text;
  try {
    const conv::LoweredModel m = conv::import_tflite(bytes, "seed", options).model;
    for (const conv::Value& v : m.values) {
      text << v.name << " " << static_cast<int>(v.dtype) << " " << conv::shape_to_string(v.shape) << " q"
           << v.quantization.dimension;
      for (float f : v.quantization.scale) text << " " << f;
      for (int64_t z : v.quantization.zero_point) text << " " << z;
      if (v.constant) text << " c" << std::string(v.constant->data.begin(), v.constant->data.end());
      text << "\n";
    }
    for (const conv::LoweredOp& op : m.ops) {
      text << static_cast<int>(op.opcode) << " " << static_cast<int>(op.options.type);
      for (int i : op.inputs) text << " " << i;
      text << " ->";
      for (int o : op.outputs) text << " " << o;
      text << " loop " << op.loop << (op.loop_cond ? "c" : "") << " if " << op.if_id << (op.if_then ? "t" : "");
      text << "\n";
    }
  } catch (const conv::ConvertError& e) {
    // Without the byte offset: the builder's layout may differ between builds (ASan's).
    text << "refused: " << std::regex_replace(e.what(), std::regex(" \\(byte offset [0-9]+\\)"), "");
  }
  return text.str();
}

}  // namespace floe::testing
