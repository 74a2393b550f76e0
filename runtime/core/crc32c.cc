// SPDX-License-Identifier: Apache-2.0
// CRC32C, four bits at a time. A nibble table keeps the footprint at 64 bytes
// (Cortex-M flash) at two lookups per byte; a model is checked once, at load.
#include "runtime/core/crc32c.h"

namespace floe {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;  // reflected Castagnoli

struct NibbleTable {
  uint32_t entry[16];
};

constexpr NibbleTable make_table() {
  NibbleTable t{};
  for (uint32_t n = 0; n < 16; ++n) {
    uint32_t c = n;
    for (int bit = 0; bit < 4; ++bit) c = (c & 1u) ? (c >> 1) ^ kPolynomial : c >> 1;
    t.entry[n] = c;
  }
  return t;
}

constexpr NibbleTable kTable = make_table();

}  // namespace

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  for (size_t i = 0; i < size; ++i) {
    c ^= p[i];
    c = (c >> 4) ^ kTable.entry[c & 0xFu];
    c = (c >> 4) ^ kTable.entry[c & 0xFu];
  }
  return ~c;
}

}  // namespace floe
