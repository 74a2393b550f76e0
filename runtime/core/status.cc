// SPDX-License-Identifier: Apache-2.0
// Names for status codes and dtypes (for tools and logs).
#include "runtime/core/status.h"

#include "runtime/core/tensor.h"

namespace floe {

const char* status_name(Status status) {
  // One string per code, in kCodes order, back to back (no pointer table:
  // Status codes are sparse and this is linked into every firmware).
  static constexpr uint8_t kCodes[] = {0, 10, 11, 12, 13, 14, 20, 21, 22, 23, 24, 30, 31, 32};
  static constexpr char kNames[] =
      "ok\0invalid model\0unsupported model version\0unsupported op\0"
      "model buffer not 16-byte aligned\0model checksum mismatch\0arena too small\0"
      "arena not 16-byte aligned\0invalid argument\0not found\0not initialized\0"
      "kernel error\0loop bound exceeded\0index out of range\0unknown status";
  static_assert(static_cast<int>(Status::kIndexOutOfRange) == 32, "update kCodes and kNames");
  const char* name = kNames;
  for (const uint8_t code : kCodes) {
    if (static_cast<uint8_t>(status) == code) return name;
    while (*name++ != '\0') {
    }
  }
  return name;
}

}  // namespace floe
