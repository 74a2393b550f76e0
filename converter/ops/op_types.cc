// SPDX-License-Identifier: Apache-2.0
// Input dtypes checked as TensorFlow checks them (see check_input_types in
// op_registry.h). Each row is the input list of the op's OpDef: per input the
// type attr that governs it, or a fixed type. TF refuses a graph whose
// tensors disagree with these at import; a handler downstream would otherwise
// lower the node on a wrong assumption and emit a model the runtime refuses.
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "converter/ir/split.h"
#include "converter/ir/tf_dtype.h"
#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

// One entry per input: a type attr ("T", "Tindices", ...), a fixed type
// ("int32", "float", "bool", "int64"), or "*" (not checked: a list of mixed
// types). A trailing "*" on an attr ("T*") takes as many inputs as the node
// has beyond the other entries (AddN, Pack, ConcatV2's values).
struct OpInputTypes {
  const char* ops;     // space-separated TF op names sharing the signature
  const char* inputs;  // comma-separated input entries
};

constexpr OpInputTypes kOpInputTypes[] = {
    // Unary elementwise and activations: x:T.
    {"Abs Acos Acosh Asin Asinh Atan Atanh Ceil Cos Cosh Exp Expm1 Floor Inv Log Log1p Neg Reciprocal Rint "
     "Round Rsqrt Sigmoid Sign Sin Sinh Sqrt Square Tan Tanh Relu Relu6 Elu Selu Softplus Softsign LeakyRelu "
     "Softmax LogSoftmax IsFinite IsInf IsNan OnesLike ZerosLike Identity Snapshot StopGradient PreventGradient "
     "CheckNumerics InvertPermutation Where Squeeze Shape Size Rank Unpack SpaceToDepth DepthToSpace "
     "ExtractImagePatches AvgPool MaxPool LRN Diag DiagPart MatrixDiag MatrixDiagPart",
     "T"},
    {"LogicalNot", "bool"},
    {"LogicalAnd LogicalOr", "bool,bool"},
    // Binary elementwise: x:T, y:T.
    {"Add AddV2 Sub Mul Div RealDiv FloorDiv FloorMod Mod TruncateDiv Maximum Minimum Pow Atan2 "
     "SquaredDifference Equal NotEqual Greater GreaterEqual Less LessEqual BiasAdd BiasAddV1 MatMul BatchMatMul "
     "BatchMatMulV2 Conv2D DepthwiseConv2dNative DepthwiseConv2d Conv1D Conv3D SoftmaxCrossEntropyWithLogits Cross",
     "T,T"},
    {"Select SelectV2", "bool,T,T"},
    {"AddN Pack ParallelConcat", "T*"},
    {"ConcatV2", "T*,Tidx"},
    {"Concat", "int32,T*"},
    {"Cast", "SrcT"},
    {"Conv2DBackpropInput", "int32,T,T"},
    {"FusedBatchNorm", "T,T,T,T,T"},
    {"FusedBatchNormV2 FusedBatchNormV3", "T,U,U,U,U"},
    {"Reshape", "T,Tshape"},
    {"ExpandDims", "T,Tdim"},
    {"Transpose", "T,Tperm"},
    {"Tile", "T,Tmultiples"},
    {"Pad MirrorPad", "T,Tpaddings"},
    {"PadV2", "T,Tpaddings,T"},
    {"Fill", "index_type,T"},
    {"Range", "Tidx,Tidx,Tidx"},
    {"LinSpace", "T,T,Tidx"},
    {"Slice", "T,Index,Index"},
    {"StridedSlice", "T,Index,Index,Index"},
    {"Split", "int32,T"},
    {"SplitV", "T,Tlen,int32"},
    {"ReverseV2", "T,Tidx"},
    {"ReverseSequence", "T,Tlen"},
    {"MatrixDiagV2 MatrixDiagV3", "T,int32,int32,int32,T"},
    {"MatrixDiagPartV2 MatrixDiagPartV3", "T,int32,T"},
    {"Reverse", "T,bool"},
    {"Gather GatherNd", "Tparams,Tindices"},
    {"GatherV2", "Tparams,Tindices,Taxis"},
    {"ScatterNd", "Tindices,T,Tindices"},
    {"TensorScatterUpdate TensorScatterAdd TensorScatterSub TensorScatterMin TensorScatterMax ScatterNdUpdate "
     "ScatterNdAdd ScatterNdSub ScatterUpdate ScatterAdd ScatterSub ScatterMul ScatterDiv ScatterMin ScatterMax",
     "T,Tindices,T"},
    {"OneHot", "TI,int32,T,T"},
    {"RandomUniform", "T"},
    {"TopKV2", "T,int32"},
    {"Cumsum Cumprod ArgMax ArgMin Sum Mean Max Min Prod EuclideanNorm", "T,Tidx"},
    {"All Any", "bool,Tidx"},
    {"DynamicPartition", "T,int32"},
    {"SpaceToBatchND", "T,Tblock_shape,Tpaddings"},
    {"BatchToSpaceND", "T,Tblock_shape,Tcrops"},
    {"ResizeBilinear ResizeNearestNeighbor ResizeBicubic ResizeArea", "T,int32"},
    {"FakeQuantWithMinMaxArgs", "float"},
    {"FakeQuantWithMinMaxVars FakeQuantWithMinMaxVarsPerChannel", "float,float,float"},
    {"AudioSpectrogram", "float"},
    {"Mfcc", "float,int32"},
    {"BlockLSTM", "int64,T,T,T,T,T,T,T,T"},
    {"LSTMBlockCell", "T,T,T,T,T,T,T,T"},
    {"GRUBlockCell", "T,T,T,T,T,T"},
    {"PlaceholderWithDefault", "dtype"},
    // Image, detection and 3-D pooling ops.
    {"CropAndResize", "T,float,int32,int32"},
    {"NonMaxSuppressionV2", "T,T,int32,T_threshold"},
    {"NonMaxSuppressionV3 NonMaxSuppressionV4", "T,T,int32,T_threshold,T_threshold"},
    {"NonMaxSuppressionV5", "T,T,int32,T,T,T"},
    {"Dilation2D", "T,T"},
    {"MaxPool3D AvgPool3D MaxPoolWithArgmax", "T"},
    {"ImageProjectiveTransformV3", "dtype,float,int32,float"},
    // Complex inputs are float pairs checked by the spectral handlers ("*").
    {"FFT IFFT Real Imag ComplexAbs", "*"},
    {"RFFT IRFFT", "*,int32"},
    {"Complex", "T,T"},
    {"LowerBound UpperBound", "T,T"},
    {"Bincount", "int32,int32,T"},
    {"DenseBincount", "Tidx,Tidx,T"},
    {"BroadcastArgs", "T,T"},
    {"BitwiseAnd", "T,T"},
};

// Index-like type attrs and the types their OpDefs allow.
const std::map<std::string, std::set<DType>>& allowed_index_types() {
  static const std::map<std::string, std::set<DType>> allowed = [] {
    std::map<std::string, std::set<DType>> m;
    for (const char* name : {"Tindices", "Tidx", "Taxis", "Tperm", "Tpaddings", "Tmultiples", "Index", "Tshape",
                             "Tdim", "Tlen", "Tblock_shape", "Tcrops", "index_type"}) {
      m[name] = {DType::kInt32, DType::kInt64};
    }
    m["TI"] = {DType::kUInt8, DType::kInt32, DType::kInt64};
    return m;
  }();
  return allowed;
}

const std::unordered_map<std::string, std::vector<std::string>>& input_type_table() {
  static const std::unordered_map<std::string, std::vector<std::string>> table = [] {
    std::unordered_map<std::string, std::vector<std::string>> t;
    for (const OpInputTypes& row : kOpInputTypes) {
      const std::vector<std::string> inputs = split_nonempty(row.inputs, ',');
      for (const std::string& op : split_nonempty(row.ops, ' ')) t.emplace(op, inputs);
    }
    return t;
  }();
  return table;
}

DType fixed_type(const std::string& entry) {
  if (entry == "float") return DType::kFloat32;
  if (entry == "int32") return DType::kInt32;
  if (entry == "int64") return DType::kInt64;
  if (entry == "bool") return DType::kBool;
  return DType::kInvalid;
}

}  // namespace

bool has_input_type_signature(const std::string& tf_op) { return input_type_table().count(tf_op) != 0; }

int tf_output_count(const tfproto::NodeDef& node) {
  const std::string& op = node.op();
  if (op == "Placeholder" || op == "PlaceholderV2" || op == "Const" || op == "VariableV2" || op == "Variable" ||
      op == "VarHandleOp") {
    return 1;
  }
  // Ops with several outputs (the number from an attr where TF takes it from one).
  if (op == "Split" || op == "SplitV") return static_cast<int>(attr_int(node, "num_split", -1));
  if (op == "Unpack") return static_cast<int>(attr_int(node, "num", -1));
  if (op == "DynamicPartition") return static_cast<int>(attr_int(node, "num_partitions", -1));
  if (op == "IdentityN") return -1;  // as many as its inputs
  if (op == "TopKV2" || op == "SoftmaxCrossEntropyWithLogits") return 2;
  if (op == "GRUBlockCell") return 4;
  if (op == "NonMaxSuppressionV4" || op == "MaxPoolWithArgmax") return 2;
  if (op == "NonMaxSuppressionV5") return 3;
  if (op == "FusedBatchNorm" || op == "FusedBatchNormV2") return 5;
  if (op == "FusedBatchNormV3") return 6;
  if (op == "LSTMBlockCell" || op == "BlockLSTM") return 7;
  return has_input_type_signature(op) ? 1 : -1;
}

void check_input_types(const NodeContext& ctx) {
  const auto it = input_type_table().find(ctx.node().op());
  if (it == input_type_table().end()) return;
  const std::vector<std::string>& entries = it->second;
  // Which entry governs input i (a variadic entry takes the surplus inputs).
  const int count = ctx.input_count();
  const int fixed = static_cast<int>(entries.size()) - 1;
  std::vector<std::string> governing;
  for (const std::string& e : entries) {
    if (!e.empty() && e.back() == '*' && e.size() > 1) {
      for (int k = 0; k < count - fixed; ++k) governing.push_back(e.substr(0, e.size() - 1));
    } else {
      governing.push_back(e);
    }
  }
  // The first input seen for each attr: inputs sharing an attr share a type.
  std::map<std::string, int> first_input;
  for (int i = 0; i < count && i < static_cast<int>(governing.size()); ++i) {
    const std::string& entry = governing[static_cast<size_t>(i)];
    const DType got = compute_dtype(ctx.input(i).dtype);
    if (entry == "*" || got == DType::kInvalid) continue;
    const std::string tensor = ctx.graph().tensor_name(ctx.node().inputs[static_cast<size_t>(i)]);
    const std::string which = "input " + std::to_string(i) + " ('" + tensor + "')";
    const DType fixed_dtype = fixed_type(entry);
    if (fixed_dtype != DType::kInvalid) {
      if (got != fixed_dtype) {
        ctx.fail(which + " is " + dtype_name(got) + "; the op's definition requires " + dtype_name(fixed_dtype));
      }
      continue;
    }
    const tfproto::AttrValue* attr = find_attr(ctx.node().def, entry);
    if (attr != nullptr && attr->value_case() == tfproto::AttrValue::kType) {
      const int tf_type = tf_dtype_base(attr->type());
      const DType declared = compute_dtype(tf_dtype_to_floe(tf_type));
      if (declared != got) {
        ctx.fail("attr '" + entry + "' is " + tf_dtype_name(tf_type) + " but " + which + " is " + dtype_name(got));
      }
    }
    const auto allowed = allowed_index_types().find(entry);
    if (allowed != allowed_index_types().end() && allowed->second.count(got) == 0) {
      std::string names;
      for (DType t : allowed->second) names += (names.empty() ? "" : " or ") + std::string(dtype_name(t));
      ctx.fail(which + " is " + dtype_name(got) + "; attr '" + entry + "' allows " + names);
    }
    const auto first = first_input.emplace(entry, i);
    if (!first.second) {
      const DType other = compute_dtype(ctx.input(first.first->second).dtype);
      if (other != got) {
        const std::string other_tensor =
            ctx.graph().tensor_name(ctx.node().inputs[static_cast<size_t>(first.first->second)]);
        ctx.fail(which + " is " + dtype_name(got) + " but input " + std::to_string(first.first->second) + " ('" +
                 other_tensor + "') is " + dtype_name(other) + "; both are attr '" + entry + "'");
      }
    }
  }
}

}  // namespace floe::conv
