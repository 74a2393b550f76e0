// SPDX-License-Identifier: Apache-2.0
// Built-in table of TensorFlow op attr defaults (tf-formats §14), used when an
// attr is absent and no stripped_op_list says otherwise. Entries are text-format
// AttrValues, parsed once on first use. Only defaults we are sure of are listed:
// a wrong default silently changes numerics, a missing one fails loudly.
#include <google/protobuf/text_format.h>

#include <map>
#include <string>
#include <utility>

#include "converter/ir/attrs.h"
#include "converter/ir/error.h"

namespace floe::conv {
namespace {

struct DefaultEntry {
  const char* ops;    // space-separated op names sharing the default
  const char* attr;
  const char* value;  // AttrValue in text format
};

// ✓ in tf-formats §14 = checked against TF op-history definitions.
constexpr DefaultEntry kDefaults[] = {
    // Convolutions ✓ (Conv2D, DepthwiseConv2dNative); backprop-input mirrors Conv2D.
    {"Conv2D Conv2DBackpropInput", "use_cudnn_on_gpu", "b: true"},
    {"Conv2D Conv2DBackpropInput DepthwiseConv2dNative", "explicit_paddings", "list { }"},
    {"Conv2D Conv2DBackpropInput DepthwiseConv2dNative", "data_format", "s: 'NHWC'"},
    {"Conv2D Conv2DBackpropInput DepthwiseConv2dNative", "dilations", "list { i: [1, 1, 1, 1] }"},
    {"Conv3D", "data_format", "s: 'NDHWC'"},
    {"Conv3D", "dilations", "list { i: [1, 1, 1, 1, 1] }"},
    // Matrix products ✓ (MatMul).
    {"MatMul", "transpose_a", "b: false"},
    {"MatMul", "transpose_b", "b: false"},
    {"BatchMatMul BatchMatMulV2", "adj_x", "b: false"},
    {"BatchMatMul BatchMatMulV2", "adj_y", "b: false"},
    {"BiasAdd", "data_format", "s: 'NHWC'"},
    // Batch norm ✓: is_training defaults to TRUE, the classic stripped-attr trap.
    {"FusedBatchNorm FusedBatchNormV2 FusedBatchNormV3", "epsilon", "f: 0.0001"},
    {"FusedBatchNorm FusedBatchNormV2 FusedBatchNormV3", "exponential_avg_factor", "f: 1.0"},
    {"FusedBatchNorm FusedBatchNormV2 FusedBatchNormV3", "data_format", "s: 'NHWC'"},
    {"FusedBatchNorm FusedBatchNormV2 FusedBatchNormV3", "is_training", "b: true"},
    // Pooling ✓ (MaxPool).
    {"MaxPool", "T", "type: DT_FLOAT"},
    {"MaxPool", "explicit_paddings", "list { }"},
    {"MaxPool AvgPool", "data_format", "s: 'NHWC'"},
    // Placeholder ✓: unknown rank (producer < 22 wrote an empty shape meaning the same).
    {"Placeholder", "shape", "shape { unknown_rank: true }"},
    // StridedSlice ✓, Squeeze ✓.
    {"StridedSlice", "begin_mask", "i: 0"},
    {"StridedSlice", "end_mask", "i: 0"},
    {"StridedSlice", "ellipsis_mask", "i: 0"},
    {"StridedSlice", "new_axis_mask", "i: 0"},
    {"StridedSlice", "shrink_axis_mask", "i: 0"},
    {"Squeeze", "squeeze_dims", "list { }"},
    // Resizing ✓ (ResizeBilinear).
    {"ResizeBilinear ResizeNearestNeighbor ResizeBicubic ResizeArea", "align_corners", "b: false"},
    {"ResizeBilinear ResizeNearestNeighbor ResizeBicubic", "half_pixel_centers", "b: false"},
    {"LeakyRelu", "alpha", "f: 0.2"},
    // Variables ✓ (VarHandleOp).
    {"VarHandleOp VariableV2", "container", "s: ''"},
    {"VarHandleOp VariableV2", "shared_name", "s: ''"},
    {"VarHandleOp", "allowed_devices", "list { }"},
    {"VarHandleOp", "debug_name", "s: ''"},
    // Index / shape type attrs.
    {"Reshape", "Tshape", "type: DT_INT32"},
    {"ConcatV2", "Tidx", "type: DT_INT32"},
    {"Mean Sum Max Min Prod", "keep_dims", "b: false"},
    {"Mean Sum Max Min Prod", "Tidx", "type: DT_INT32"},
    {"Pad PadV2 MirrorPad", "Tpaddings", "type: DT_INT32"},
    {"ExpandDims", "Tdim", "type: DT_INT32"},
    {"Transpose", "Tperm", "type: DT_INT32"},
    {"Cast", "Truncate", "b: false"},
    {"Shape", "out_type", "type: DT_INT32"},
    {"Pack Unpack", "axis", "i: 0"},
    {"ArgMax ArgMin", "Tidx", "type: DT_INT32"},
    {"ArgMax ArgMin", "output_type", "type: DT_INT64"},
    {"GatherV2", "batch_dims", "i: 0"},
    {"Fill", "index_type", "type: DT_INT32"},
    {"LRN", "depth_radius", "i: 5"},
    {"LRN", "bias", "f: 1.0"},
    {"LRN", "alpha", "f: 1.0"},
    {"LRN", "beta", "f: 0.5"},
    {"TopKV2", "sorted", "b: true"},
    // Image, detection and 3-D pooling ops (TF's op definitions).
    {"CropAndResize", "method", "s: 'bilinear'"},
    {"CropAndResize", "extrapolation_value", "f: 0"},
    {"NonMaxSuppressionV4 NonMaxSuppressionV5", "pad_to_max_output_size", "b: false"},
    {"NonMaxSuppressionV2 NonMaxSuppressionV3 NonMaxSuppressionV4", "T_threshold", "type: DT_FLOAT"},
    {"NonMaxSuppressionV2 NonMaxSuppressionV3 NonMaxSuppressionV4 NonMaxSuppressionV5", "T", "type: DT_FLOAT"},
    {"MaxPool3D AvgPool3D", "data_format", "s: 'NDHWC'"},
    {"MaxPoolWithArgmax", "Targmax", "type: DT_INT64"},
    {"MaxPoolWithArgmax", "include_batch_in_index", "b: false"},
    {"ImageProjectiveTransformV3", "fill_mode", "s: 'CONSTANT'"},
};

using DefaultTable = std::map<std::pair<std::string, std::string>, AttrValue>;

DefaultTable build_table() {
  DefaultTable table;
  for (const DefaultEntry& entry : kDefaults) {
    AttrValue value;
    if (!google::protobuf::TextFormat::ParseFromString(entry.value, &value)) {
      // A typo in the table above: fail every lookup loudly rather than guess.
      throw ConvertError(std::string("internal: bad default attr table entry ") + entry.attr +
                         " = " + entry.value);
    }
    std::string ops = entry.ops;
    size_t begin = 0;
    while (begin < ops.size()) {
      size_t end = ops.find(' ', begin);
      if (end == std::string::npos) end = ops.size();
      table[{ops.substr(begin, end - begin), entry.attr}] = value;
      begin = end + 1;
    }
  }
  return table;
}

}  // namespace

const AttrValue* builtin_default_attr(const std::string& op, const std::string& name) {
  static const DefaultTable table = build_table();  // thread-safe static init
  auto it = table.find({op, name});
  return it == table.end() ? nullptr : &it->second;
}

}  // namespace floe::conv
