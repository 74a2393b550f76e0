// SPDX-License-Identifier: Apache-2.0
// Builds small .tflite files for tests (and the fuzz seeds) with the
// converter's own TFLite schema subset: tensors with optional constant data
// and quantization, operators by builtin code with their options.
#pragma once

#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "converter/frontend/tflite/tflite_subset_generated.h"

namespace floe::testing {

namespace tfl = ::floe::tflite_schema;

// TensorType values.
constexpr int8_t kTflFloat32 = 0, kTflFloat16 = 1, kTflInt32 = 2, kTflInt8 = 9;

struct TflTensor {
  std::vector<int32_t> shape;
  int8_t type = kTflFloat32;
  std::vector<uint8_t> data;  // empty: an activation
  std::string name;
  std::vector<float> scale;  // empty: not quantized
  std::vector<int64_t> zero_point;
  int32_t quantized_dimension = 0;
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
};

class TfliteBuilder {
 public:
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
    std::vector<flatbuffers::Offset<tfl::Tensor>> tensors;
    for (const TflTensor& t : tensors_) {
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
      tensors.push_back(tfl::CreateTensor(b, b.CreateVector(t.shape), t.type, buffer, b.CreateString(t.name), q));
    }
    std::map<std::string, uint32_t> code_index;
    std::vector<flatbuffers::Offset<tfl::OperatorCode>> codes;
    std::vector<flatbuffers::Offset<tfl::Operator>> ops;
    for (const TflOp& op : ops_) {
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
                                        op.options ? op.options_type : tfl::BuiltinOptions::NONE, options));
    }
    const auto graph = tfl::CreateSubGraph(b, b.CreateVector(tensors), b.CreateVector(inputs), b.CreateVector(outputs),
                                           b.CreateVector(ops), b.CreateString("main"));
    const auto model = tfl::CreateModel(b, 3, b.CreateVector(codes), b.CreateVector(std::vector{graph}),
                                        b.CreateString("floe test"), b.CreateVector(buffers));
    tfl::FinishModelBuffer(b, model);
    return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
  }

 private:
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

}  // namespace floe::testing
