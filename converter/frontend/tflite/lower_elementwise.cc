// SPDX-License-Identifier: Apache-2.0
// Element-wise .tflite ops needing more than a one-to-one mapping:
// DEQUANTIZE, CAST, DIV and the comparisons.
#include "converter/frontend/tflite/importer.h"

namespace floe::conv::tflite_detail {

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


}  // namespace floe::conv::tflite_detail
