// SPDX-License-Identifier: Apache-2.0
// Which .tflite operators floe converts: the reason an operator is refused
// (listed all at once before anything is lowered).
#include "converter/frontend/tflite/importer.h"

#include "converter/frontend/tflite/custom_options.h"

namespace floe::conv::tflite_detail {

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


}  // namespace floe::conv::tflite_detail
