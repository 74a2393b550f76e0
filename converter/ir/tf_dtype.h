// SPDX-License-Identifier: Apache-2.0
// TensorFlow DataType enum numbers (types.proto, tf-formats.md §1): names for
// messages and text format, element sizes, and the mapping onto floe::DType.
// Shared by the checkpoint and graph readers. Reference types are base + 100.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "schemas/contract/dtype.h"

namespace floe::conv {

// Values as stored on disk; only the ones the converter names explicitly.
enum TfDataType : int {
  kTfInvalid = 0,
  kTfFloat = 1,
  kTfDouble = 2,
  kTfInt32 = 3,
  kTfUInt8 = 4,
  kTfInt16 = 5,
  kTfInt8 = 6,
  kTfString = 7,
  kTfComplex64 = 8,
  kTfInt64 = 9,
  kTfBool = 10,
  kTfQInt8 = 11,
  kTfQUInt8 = 12,
  kTfQInt32 = 13,
  kTfBFloat16 = 14,
  kTfQInt16 = 15,
  kTfQUInt16 = 16,
  kTfUInt16 = 17,
  kTfComplex128 = 18,
  kTfHalf = 19,
  kTfResource = 20,
  kTfVariant = 21,
  kTfUInt32 = 22,
  kTfUInt64 = 23,
};

constexpr int kTfRefOffset = 100;    // DT_FLOAT_REF = 101 ...
constexpr int kTfLastBaseType = 33;  // DT_FLOAT4_E2M1FN

namespace tf_dtype_detail {
// Indexed by base enum value; the order is types.proto's.
constexpr std::string_view kBaseNames[kTfLastBaseType + 1] = {
    "DT_INVALID",
    "DT_FLOAT",
    "DT_DOUBLE",
    "DT_INT32",
    "DT_UINT8",
    "DT_INT16",
    "DT_INT8",
    "DT_STRING",
    "DT_COMPLEX64",
    "DT_INT64",
    "DT_BOOL",
    "DT_QINT8",
    "DT_QUINT8",
    "DT_QINT32",
    "DT_BFLOAT16",
    "DT_QINT16",
    "DT_QUINT16",
    "DT_UINT16",
    "DT_COMPLEX128",
    "DT_HALF",
    "DT_RESOURCE",
    "DT_VARIANT",
    "DT_UINT32",
    "DT_UINT64",
    "DT_FLOAT8_E5M2",
    "DT_FLOAT8_E4M3FN",
    "DT_FLOAT8_E4M3FNUZ",
    "DT_FLOAT8_E4M3B11FNUZ",
    "DT_FLOAT8_E5M2FNUZ",
    "DT_INT4",
    "DT_UINT4",
    "DT_INT2",
    "DT_UINT2",
    "DT_FLOAT4_E2M1FN",
};
}  // namespace tf_dtype_detail

constexpr bool tf_dtype_is_ref(int tf_dtype) {
  return tf_dtype > kTfRefOffset && tf_dtype <= kTfRefOffset + kTfLastBaseType;
}

// DT_FLOAT_REF -> DT_FLOAT; other values unchanged.
constexpr int tf_dtype_base(int tf_dtype) {
  return tf_dtype_is_ref(tf_dtype) ? tf_dtype - kTfRefOffset : tf_dtype;
}

// "DT_FLOAT", "DT_FLOAT_REF", or "DataType(57)" for numbers TF never defined.
inline std::string tf_dtype_name(int tf_dtype) {
  const int base = tf_dtype_base(tf_dtype);
  if (base < 0 || base > kTfLastBaseType) return "DataType(" + std::to_string(tf_dtype) + ")";
  std::string name(tf_dtype_detail::kBaseNames[base]);
  if (tf_dtype_is_ref(tf_dtype)) name += "_REF";
  return name;
}

// Inverse of tf_dtype_name for the text format ("DT_HALF", "DT_INT32_REF"); -1 if unknown.
inline int tf_dtype_from_name(std::string_view name) {
  int offset = 0;
  constexpr std::string_view kRefSuffix = "_REF";
  if (name.size() > kRefSuffix.size() &&
      name.substr(name.size() - kRefSuffix.size()) == kRefSuffix) {
    name.remove_suffix(kRefSuffix.size());
    offset = kTfRefOffset;
  }
  for (int v = 0; v <= kTfLastBaseType; ++v) {
    if (tf_dtype_detail::kBaseNames[v] == name) return (offset != 0 && v == 0) ? -1 : v + offset;
  }
  return -1;
}

// Bytes per element of a fixed-width base type as TF lays it out in memory and in
// checkpoint data files; 0 for variable-size (string, variant), handles and unknown.
constexpr size_t tf_dtype_fixed_size(int tf_dtype) {
  switch (tf_dtype) {
    case kTfFloat:
    case kTfInt32:
    case kTfQInt32:
    case kTfUInt32:
      return 4;
    case kTfDouble:
    case kTfInt64:
    case kTfComplex64:
    case kTfUInt64:
      return 8;
    case kTfComplex128:
      return 16;
    case kTfInt16:
    case kTfBFloat16:
    case kTfQInt16:
    case kTfQUInt16:
    case kTfUInt16:
    case kTfHalf:
      return 2;
    case kTfUInt8:
    case kTfInt8:
    case kTfBool:
    case kTfQInt8:
    case kTfQUInt8:
    case 24:
    case 25:
    case 26:
    case 27:
    case 28:  // float8 variants
    case 29:
    case 30:
    case 31:
    case 32:
    case 33:  // int4/uint4/int2/uint2/float4, one per byte
      return 1;
    default:
      return 0;
  }
}

// The floe dtype holding the same values, or DType::kInvalid when floe cannot run it
// (strings, complex, quantized, unsigned 32/64, float8 ...). Pass base types only.
constexpr DType tf_dtype_to_floe(int tf_dtype) {
  switch (tf_dtype) {
    case kTfFloat:
      return DType::kFloat32;
    case kTfDouble:
      return DType::kFloat64;
    case kTfHalf:
      return DType::kFloat16;
    case kTfBFloat16:
      return DType::kBFloat16;
    case kTfInt8:
      return DType::kInt8;
    case kTfInt16:
      return DType::kInt16;
    case kTfInt32:
      return DType::kInt32;
    case kTfInt64:
      return DType::kInt64;
    case kTfUInt8:
      return DType::kUInt8;
    case kTfUInt16:
      return DType::kUInt16;
    case kTfBool:
      return DType::kBool;
    default:
      return DType::kInvalid;
  }
}

}  // namespace floe::conv
