// SPDX-License-Identifier: Apache-2.0
// A fixed-size, heap-free text builder for the kernel differential tests'
// failure messages (they also run as bare-metal firmware, without printf).
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace floe::testing {

struct Text {
  char buffer[320];
  size_t length = 0;
  Text() { buffer[0] = '\0'; }
  Text& s(const char* t) {
    while (*t != '\0' && length + 1 < sizeof buffer) buffer[length++] = *t++;
    buffer[length] = '\0';
    return *this;
  }
  Text& i(int64_t v) {
    if (v < 0) {
      s("-");
      v = -v;
    }
    char d[24];
    int n = 0;
    do {
      d[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    char out[24];
    for (int k = 0; k < n; ++k) out[k] = d[n - 1 - k];
    out[n] = '\0';
    return s(out);
  }
  Text& bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    char out[11] = "0x";
    for (int k = 0; k < 8; ++k) out[2 + k] = "0123456789abcdef"[(u >> (28 - 4 * k)) & 15];
    out[10] = '\0';
    return s(out);
  }
};

}  // namespace floe::testing
