// SPDX-License-Identifier: Apache-2.0
// Overflow-checked arithmetic for sizes and offsets read from untrusted models.
// Every offset/size a model supplies passes through these before use.
#pragma once

#include <stdint.h>

namespace floe {

inline bool checked_add(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}
inline bool checked_mul(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
// True when [offset, offset + size) lies inside [0, limit).
inline bool range_fits(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

}  // namespace floe
