// SPDX-License-Identifier: Apache-2.0
// The on-device self-test both halves agree on. floe-convert --selftest-input
// runs the finished model on the host's reference kernels and stores, as
// constant tensors no operator reads (names below): the inputs, the outputs
// it computed, and a digest of every operator's outputs. floe::SelfTest
// (runtime/core/selftest.h) recomputes each digest on the device as the op
// finishes and names the first op whose outputs leave their tolerance:
//   - outputs of any type but float32: their bytes' CRC32C, equal or not
//     (int8 arithmetic is exact everywhere);
//   - float32 outputs: |sum(device) - sum(host)| <= tolerance * sum(max(1, |host|)),
//     the sum of the elementwise rule |d - h| <= tolerance * max(1, |h|)
//     (kernels may add in another order, or fuse multiply-adds, on a device).
// Freestanding: no library calls, no allocation.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "schemas/contract/checksum.h"
#include "schemas/contract/dtype.h"

namespace floe::selftest {

inline constexpr char kPrefix[] = "floe.selftest/";
inline constexpr char kInputPrefix[] = "floe.selftest/input:";    // + k: model input k (its dtype, shape)
inline constexpr char kOutputPrefix[] = "floe.selftest/output:";  // + k: model output k, as the host computed it
inline constexpr char kOpCrc32c[] = "floe.selftest/op_crc32c";    // int32 [ops]: CRC32C of the non-float32 outputs
inline constexpr char kOpSums[] = "floe.selftest/op_sums";        // float32 [ops, 2]: sum, sum of max(1, |x|)
inline constexpr char kTolerance[] = "floe.selftest/tolerance";   // float32 [1]
// Float32 tolerance floe-convert states (the firmware examples' rule).
constexpr float kFloatTolerance = 1e-4f;

struct Digest {
  uint32_t crc32c = 0;  // over the op's non-float32 outputs, in output order
  double sum = 0.0;     // of its float32 elements
  double bound = 0.0;   // sum of max(1, |x|) over them
};

inline void add_output(Digest* digest, DType dtype, const void* data, size_t bytes) {
  if (dtype != DType::kFloat32) {
    digest->crc32c = crc32c_extend(digest->crc32c, data, bytes);
    return;
  }
  const float* values = static_cast<const float*>(data);
  for (size_t i = 0; i < bytes / sizeof(float); ++i) {
    const double v = values[i];
    digest->sum += v;
    const double magnitude = v < 0.0 ? -v : v;
    digest->bound += magnitude > 1.0 ? magnitude : 1.0;
  }
}

// `device` against the stored host digest; NaN or infinity never passes.
inline bool within(const Digest& device, uint32_t host_crc32c, float host_sum, float host_bound, float tolerance) {
  if (device.crc32c != host_crc32c) return false;
  const double diff = device.sum > host_sum ? device.sum - host_sum : host_sum - device.sum;
  return diff <= static_cast<double>(tolerance) * host_bound;
}

}  // namespace floe::selftest
