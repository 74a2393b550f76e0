// SPDX-License-Identifier: Apache-2.0
// Small helpers shared by the checkpoint reader's sources: how shapes, keys and
// slices appear in messages, and the checked element count of a shape.
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "converter/frontend/checkpoint/checkpoint_reader.h"

namespace floe::conv::ckpt {

inline std::string render_shape(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out + "]";
}

// Keys may hold any byte (slice keys do); keep messages printable.
inline std::string printable_key(const std::string& key) {
  std::string out;
  for (unsigned char c : key) {
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

// Element count of a fully known shape; false on a negative dim or int64 overflow.
inline bool element_count(const std::vector<int64_t>& shape, uint64_t& count) {
  count = 1;
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d != 0 && count > uint64_t(std::numeric_limits<int64_t>::max()) / uint64_t(d)) return false;
    count *= uint64_t(d);
  }
  return true;
}

// "0,2:-" (start,length per dimension; "-" = full), as TF writes slice specs.
inline std::string render_slice(const std::vector<CheckpointSliceExtent>& slice) {
  std::string out;
  for (size_t d = 0; d < slice.size(); ++d) {
    if (d) out += ":";
    out += slice[d].length < 0 ? "-" : std::to_string(slice[d].start) + "," + std::to_string(slice[d].length);
  }
  return out;
}

}  // namespace floe::conv::ckpt
