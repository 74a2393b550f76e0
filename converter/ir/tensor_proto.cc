// SPDX-License-Identifier: Apache-2.0
// TensorProto decoding (tf-formats §3). The typed-field path reproduces TF's
// Tensor::FromProto exactly, including the "repeat the last value" fill that
// Grappler-compressed constants rely on; readers that only handle n == 1 or
// n == N silently corrupt such constants.
#include "converter/ir/tensor_proto.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "converter/ir/limits.h"

#include "converter/ir/tf_dtype.h"
#include "converter/ir/error.h"

namespace floe::conv {
namespace tfp = floe::tfproto;

namespace {

// kMaxTensorBytes (converter/ir/limits.h): a Const holding more than a model
// can is no embedded model's weight; checked from the shape, before
// allocating, it also stops a 1-value broadcast fill with an absurd shape.

// host_tensor.h declares shape_to_string but nothing defines it yet; keep our own.
std::string dims_text(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

[[noreturn]] void fail(const std::string& context, const std::string& what) {
  throw ConvertError(context + ": " + what);
}

// Copies min(n, N) values and repeats the last one to fill N; zeros when n == 0
// (the buffer is zero-initialised by the caller).
template <typename Dst, typename Values, typename Convert>
void fill_typed(const Values& values, int64_t count, Dst* out, Convert convert) {
  const int64_t n = values.size();
  if (n == 0) return;
  const int64_t copied = std::min(n, count);
  for (int64_t i = 0; i < copied; ++i) out[i] = convert(values.Get(static_cast<int>(i)));
  const Dst last = out[copied - 1];
  for (int64_t i = copied; i < count; ++i) out[i] = last;
}

template <typename Dst, typename Values>
void fill_cast(const Values& values, int64_t count, Dst* out) {
  // Narrowing (int_val -> int8/uint8/int16/uint16) truncates like TF's static_cast.
  fill_typed(values, count, out, [](auto v) { return static_cast<Dst>(v); });
}

// Half and bfloat16 live as 16-bit patterns in int32s: reinterpret, never convert.
// Very old writers put bfloat16 (and, defensively, half) patterns in int_val.
void fill_16bit_patterns(const tfp::TensorProto& proto, int64_t count, uint16_t* out) {
  const auto& values = proto.half_val_size() > 0 ? proto.half_val() : proto.int_val();
  fill_typed(values, count, out, [](int32_t v) { return static_cast<uint16_t>(v & 0xFFFF); });
}

}  // namespace

std::vector<int64_t> dims_from_shape_proto(const tfp::TensorShapeProto& shape, bool* unknown_rank) {
  if (unknown_rank != nullptr) *unknown_rank = shape.unknown_rank();
  std::vector<int64_t> dims;
  dims.reserve(shape.dim_size());
  for (const auto& dim : shape.dim()) dims.push_back(dim.size());
  return dims;
}

HostTensor tensor_from_proto(const tfp::TensorProto& proto, const std::string& context) {
  const int tf_dtype = proto.dtype();
  const DType dtype = tf_dtype_to_floe(tf_dtype_base(tf_dtype));
  if (dtype == DType::kInvalid) {
    fail(context, "tensor of dtype " + tf_dtype_name(tf_dtype) +
                      " is not supported (floe handles float/double/half/bfloat16, "
                      "int8/16/32/64, uint8/16 and bool)");
  }

  HostTensor tensor;
  tensor.dtype = dtype;
  if (proto.tensor_shape().unknown_rank()) fail(context, "tensor_shape has unknown_rank set");
  if (proto.tensor_shape().dim_size() > kMaxTensorRank) {
    fail(context, "tensor_shape has rank " + std::to_string(proto.tensor_shape().dim_size()) + ", over floe's limit of " +
                      std::to_string(kMaxTensorRank));
  }
  tensor.shape = dims_from_shape_proto(proto.tensor_shape());

  const uint64_t elem_size = dtype_size(dtype);
  uint64_t count = 1;
  for (size_t i = 0; i < tensor.shape.size(); ++i) {
    const int64_t d = tensor.shape[i];
    if (d < 0) {
      fail(context, "tensor_shape " + dims_text(tensor.shape) + " has a negative dimension " +
                        std::to_string(d) + " at index " + std::to_string(i));
    }
    if (d != 0 && count > kMaxTensorBytes / elem_size / static_cast<uint64_t>(d)) {
      fail(context, "tensor_shape " + dims_text(tensor.shape) + " of " +
                        tf_dtype_name(tf_dtype) + " exceeds floe's limit of " +
                        std::to_string(kMaxTensorBytes) + " bytes for one constant");
    }
    count *= static_cast<uint64_t>(d);
  }
  const uint64_t byte_size = count * elem_size;
  tensor.data.assign(byte_size, 0);
  if (count == 0) return tensor;  // empty tensor: any payload is ignored, as in TF

  const std::string& content = proto.tensor_content();
  if (!content.empty()) {
    if (content.size() != byte_size) {
      fail(context, "tensor_content holds " + std::to_string(content.size()) + " bytes but " +
                        tf_dtype_name(tf_dtype) + " " + dims_text(tensor.shape) +
                        " needs " + std::to_string(byte_size));
    }
    std::memcpy(tensor.data.data(), content.data(), byte_size);
    if (dtype == DType::kBool) {
      for (uint64_t i = 0; i < count; ++i) {
        if (tensor.data[i] > 1) {
          fail(context, "bool tensor_content byte " + std::to_string(i) + " is " +
                            std::to_string(tensor.data[i]) + " (must be 0 or 1)");
        }
      }
    }
    return tensor;
  }

  const auto n = static_cast<int64_t>(count);
  switch (dtype) {
    case DType::kFloat32: fill_cast(proto.float_val(), n, tensor.as<float>()); break;
    case DType::kFloat64: fill_cast(proto.double_val(), n, tensor.as<double>()); break;
    case DType::kInt32: fill_cast(proto.int_val(), n, tensor.as<int32_t>()); break;
    case DType::kInt16: fill_cast(proto.int_val(), n, tensor.as<int16_t>()); break;
    case DType::kInt8: fill_cast(proto.int_val(), n, tensor.as<int8_t>()); break;
    case DType::kUInt8: fill_cast(proto.int_val(), n, tensor.as<uint8_t>()); break;
    case DType::kUInt16: fill_cast(proto.int_val(), n, tensor.as<uint16_t>()); break;
    case DType::kInt64: fill_cast(proto.int64_val(), n, tensor.as<int64_t>()); break;
    case DType::kBool:
      fill_typed(proto.bool_val(), n, tensor.as<uint8_t>(), [](bool b) { return uint8_t{b}; });
      break;
    case DType::kFloat16:
    case DType::kBFloat16: fill_16bit_patterns(proto, n, tensor.as<uint16_t>()); break;
    case DType::kUInt32: fill_cast(proto.uint32_val(), n, tensor.as<uint32_t>()); break;
    case DType::kUInt64: fill_cast(proto.uint64_val(), n, tensor.as<uint64_t>()); break;
    case DType::kInvalid: break;  // excluded above
  }
  return tensor;
}

}  // namespace floe::conv
