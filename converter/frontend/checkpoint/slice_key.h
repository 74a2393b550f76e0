// SPDX-License-Identifier: Apache-2.0
// Checkpoint keys of partitioned-variable slices: TF's OrderedCode encoding of
// (0, tensor name, rank, start/length per dimension), tf-formats.md §11.8.
// Every such key starts with byte 0x00, so it sorts before all real tensor keys.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace floe::conv::ckpt {

// One dimension of a slice; length -1 (with start 0) means the full dimension.
struct SliceRange {
  int64_t start = 0;
  int64_t length = -1;
};

// OrderedCode "increasing number": one length byte, then big-endian bytes without leading zeros.
void append_ordered_uint(std::string& out, uint64_t value);
// OrderedCode "signed increasing number" (sign/length header bits, then two's complement).
void append_ordered_int(std::string& out, int64_t value);
// OrderedCode string: 0x00 -> 00 FF, 0xFF -> FF 00, terminated by 00 01.
void append_ordered_string(std::string& out, const std::string& value);

std::string encode_slice_key(const std::string& tensor_name, const std::vector<SliceRange>& slice);

}  // namespace floe::conv::ckpt
