// SPDX-License-Identifier: Apache-2.0
// Names for status codes and dtypes (for tools and logs).
#include "runtime/core/status.h"

#include "runtime/core/tensor.h"

namespace floe {

const char* status_name(Status status) {
  switch (status) {
    case Status::kOk: return "ok";
    case Status::kInvalidModel: return "invalid model";
    case Status::kUnsupportedVersion: return "unsupported model version";
    case Status::kUnsupportedOp: return "unsupported op";
    case Status::kMisalignedModel: return "model buffer not 16-byte aligned";
    case Status::kChecksumMismatch: return "model checksum mismatch";
    case Status::kArenaTooSmall: return "arena too small";
    case Status::kMisalignedArena: return "arena not 16-byte aligned";
    case Status::kInvalidArgument: return "invalid argument";
    case Status::kNotFound: return "not found";
    case Status::kNotInitialized: return "not initialized";
    case Status::kKernelError: return "kernel error";
  }
  return "unknown status";
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kInvalid: return "invalid";
    case DType::kFloat32: return "float32";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat64: return "float64";
    case DType::kInt8: return "int8";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kUInt8: return "uint8";
    case DType::kUInt16: return "uint16";
    case DType::kBool: return "bool";
  }
  return "unknown";
}

}  // namespace floe
