// SPDX-License-Identifier: Apache-2.0
// OrderedCode encoders used for slice keys. Only encoding is needed: the reader
// looks slices up by the key it computes from the full entry's `slices` list.
#include "converter/frontend/checkpoint/slice_key.h"

namespace floe::conv::ckpt {
namespace {

// Header bits XORed onto the first byte(s) of an n-byte signed number, n = 1..10:
// n leading one bits (sign bit plus n-1 length bits), per tf-formats.md §11.8.
constexpr uint8_t kSignedHeader[11][2] = {
    {0x00, 0x00}, {0x80, 0x00}, {0xC0, 0x00}, {0xE0, 0x00}, {0xF0, 0x00}, {0xF8, 0x00},
    {0xFC, 0x00}, {0xFE, 0x00}, {0xFF, 0x00}, {0xFF, 0x80}, {0xFF, 0xC0},
};

}  // namespace

void append_ordered_uint(std::string& out, uint64_t value) {
  uint8_t bytes[8];
  int length = 0;
  for (uint64_t v = value; v != 0; v >>= 8) bytes[length++] = static_cast<uint8_t>(v & 0xFFu);
  out += static_cast<char>(length);
  for (int i = length - 1; i >= 0; --i) out += static_cast<char>(bytes[i]);
}

void append_ordered_int(std::string& out, int64_t value) {
  // n bytes hold [-2^(7n-1), 2^(7n-1)); the one's complement of a negative value
  // has the same magnitude bits, which makes the size test symmetric.
  const uint64_t magnitude =
      value < 0 ? ~static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  int n = 1;
  while (n < 10 && (magnitude >> (7 * n - 1)) != 0) ++n;
  uint8_t bytes[10];
  for (int i = 0; i < n; ++i) {
    const int shift = 8 * (n - 1 - i);  // big-endian, sign-extended beyond 64 bits
    bytes[i] = shift >= 64 ? (value < 0 ? 0xFF : 0x00)
                           : static_cast<uint8_t>(static_cast<uint64_t>(value) >> shift);
  }
  bytes[0] ^= kSignedHeader[n][0];
  if (n > 1) bytes[1] ^= kSignedHeader[n][1];
  out.append(reinterpret_cast<const char*>(bytes), static_cast<size_t>(n));
}

void append_ordered_string(std::string& out, const std::string& value) {
  for (char c : value) {
    const auto byte = static_cast<uint8_t>(c);
    if (byte == 0x00) {
      out += '\x00';
      out += '\xFF';
    } else if (byte == 0xFF) {
      out += '\xFF';
      out += '\x00';
    } else {
      out += c;
    }
  }
  out += '\x00';
  out += '\x01';
}

std::string encode_slice_key(const std::string& tensor_name, const std::vector<SliceRange>& slice) {
  std::string key;
  append_ordered_uint(key, 0);  // every slice key starts with increasing-number 0
  append_ordered_string(key, tensor_name);
  append_ordered_uint(key, slice.size());
  for (const SliceRange& range : slice) {
    append_ordered_int(key, range.start);
    append_ordered_int(key, range.length);
  }
  return key;
}

}  // namespace floe::conv::ckpt
