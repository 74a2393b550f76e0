// SPDX-License-Identifier: Apache-2.0
// Status codes returned by every fallible runtime call. No exceptions: errors are
// values. Codes are stable and grouped; messages are static strings that
// FLOE_STRIP_MESSAGES removes from the binary (the code and indices remain).
#pragma once

#include <stdint.h>

namespace floe {

enum class Status : uint8_t {
  kOk = 0,
  // Model file problems (the model is untrusted input).
  kInvalidModel = 10,
  kUnsupportedVersion = 11,
  kUnsupportedOp = 12,
  kMisalignedModel = 13,
  kChecksumMismatch = 14,  // LoadOptions::verify_checksum: payload_crc32c absent or wrong
  // Caller problems.
  kArenaTooSmall = 20,
  kMisalignedArena = 21,
  kInvalidArgument = 22,
  kNotFound = 23,
  kNotInitialized = 24,
  // Data-dependent kernel failures (e.g. an index out of range).
  kKernelError = 30,
  // A WHILE op's condition still held after its bound of iterations.
  kLoopBoundExceeded = 31,
  // An index from run-time data outside the dimension it addresses (GATHER,
  // GATHER_ND, SCATTER_ND_*, CROP_AND_RESIZE): Error::index says which.
  kIndexOutOfRange = 32,
};

#if defined(FLOE_STRIP_MESSAGES)
#define FLOE_MSG(text) ""
#else
#define FLOE_MSG(text) text
#endif

// The index of Status::kIndexOutOfRange (Interpreter::index_fault()): element
// `position` (row-major) of the op's indices tensor holds `value`, not in
// [0, bound). TF's message says the same ("indices[3] = 7 is not in [0, 5)").
// position is -1 otherwise. Kernels that return kIndexOutOfRange write it at
// the start of their params block, where it stays until the next Invoke().
struct IndexFault {
  int64_t value = 0;
  int32_t position = -1;
  int32_t bound = 0;
};

// What went wrong, where. `op` / `tensor` are -1 when not applicable.
struct Error {
  Status status = Status::kOk;
  const char* message = "";
  int32_t op = -1;
  int32_t tensor = -1;
};

const char* status_name(Status status);

}  // namespace floe

// Return early from a function returning Status.
#define FLOE_RETURN_IF_ERROR(expr)                   \
  do {                                               \
    const ::floe::Status floe_status_ = (expr);      \
    if (floe_status_ != ::floe::Status::kOk) return floe_status_; \
  } while (0)
