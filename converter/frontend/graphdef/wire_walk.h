// SPDX-License-Identifier: Apache-2.0
// A small protobuf wire-format walker, independent of protobuf's parser, for
// two jobs protobuf cannot do: (1) sniffing which message a binary file holds
// (scan_fields), and (2) saying WHERE a file is broken when ParseFromArray just
// returns false (diagnose_wire): the byte offset, the field, and the path of
// enclosing messages ("node #17 'hidden1/MatMul' > attr['value'] > tensor").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace google::protobuf {
class Descriptor;
}

namespace floe::conv {

// One top-level field as seen on the wire. For wire type 2, [payload_begin,
// payload_end) is the payload clamped to the scanned range; `truncated` says the
// declared length ran past it.
struct WireField {
  uint32_t number = 0;
  int wire_type = 0;
  size_t offset = 0;  // of the tag
  size_t payload_begin = 0;
  size_t payload_end = 0;
  uint64_t varint = 0;  // value for wire type 0
  bool truncated = false;
};

// Fields of the message occupying data[begin, end). Stops at the first malformed
// field (setting *complete = false); a length-delimited field running past `end`
// is still returned (truncated = true) so callers can peek into its prefix.
std::vector<WireField> scan_fields(const uint8_t* data, size_t begin, size_t end, bool* complete);

// Where decoding `data` as message `type` first breaks, or nullopt when the wire
// structure is sound (every length fits, varints terminate, strings are UTF-8).
struct WireFault {
  uint64_t offset = 0;        // absolute offset of the failing field's tag
  std::string path;           // enclosing messages, outermost first; "" = top level
  std::string problem;        // what is wrong with the field at `offset`
  std::string last_complete;  // "node #16 'hidden1/weights'": last fully decoded node, if any
};
std::optional<WireFault> diagnose_wire(const uint8_t* data, size_t size,
                                       const google::protobuf::Descriptor* type);

// True when bytes[begin, end) are well-formed UTF-8 (what proto3 `string` requires).
bool is_valid_utf8(const uint8_t* bytes, size_t size);

}  // namespace floe::conv
