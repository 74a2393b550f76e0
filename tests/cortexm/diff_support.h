// SPDX-License-Identifier: Apache-2.0
// What the int8 and int16x8 kernel differential tests (s8_kernel_diff.cc,
// s16_kernel_diff.cc) share: their seeded generator and the bit-exact output
// comparison with its failure line. Freestanding, like the tests.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tests/cortexm/diff_text.h"

namespace floe::testing {

// A linear congruential generator: the same cases on every board.
struct DiffRandom {
  uint32_t state;
  uint32_t next() { return state = state * 1664525u + 1013904223u; }
  int32_t range(int32_t lo, int32_t hi) {  // inclusive
    return lo + static_cast<int32_t>((next() >> 4) % static_cast<uint32_t>(hi - lo + 1));
  }
};

// Whether opt equals ref in all n outputs; else logs the first difference as
// "MISMATCH seed S <kernel> case I out[k] ref R opt O".
template <typename T>
bool same_outputs(const T* ref, const T* opt, size_t n, uint32_t seed, const char* kernel, int case_index,
                  void (*log)(const char*)) {
  for (size_t k = 0; k < n; ++k) {
    if (ref[k] != opt[k]) {
      Text t;
      t.s("MISMATCH seed ").i(seed).s(" ").s(kernel).s(" case ").i(case_index).s(" out[").i(static_cast<int64_t>(k))
          .s("] ref ").i(ref[k]).s(" opt ").i(opt[k]);
      log(t.buffer);
      return false;
    }
  }
  return true;
}

}  // namespace floe::testing
