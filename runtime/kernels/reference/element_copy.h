// SPDX-License-Identifier: Apache-2.0
// Dtype-agnostic data movement: kernels that only move elements are written once
// as templates over an unsigned integer of the element's size, and dispatched
// by size once per call (1, 2, 4 or 8 bytes).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace floe::ref {

// Calls f.template operator()<U>() with U the unsigned type of `element_size`
// bytes; returns false for other sizes.
template <typename F>
bool with_element_type(size_t element_size, F&& f) {
  switch (element_size) {
    case 1: f(uint8_t{}); return true;
    case 2: f(uint16_t{}); return true;
    case 4: f(uint32_t{}); return true;
    case 8: f(uint64_t{}); return true;
    default: return false;
  }
}

}  // namespace floe::ref
