// SPDX-License-Identifier: Apache-2.0
// Overflow-safe range checks for offsets and sizes read from untrusted models.
#pragma once

#include <stdint.h>

namespace floe {

// True when [offset, offset + size) lies inside [0, limit).
inline bool range_fits(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

}  // namespace floe
