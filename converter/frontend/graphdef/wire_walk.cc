// SPDX-License-Identifier: Apache-2.0
// Wire-format walker (tf-formats §0). diagnose_wire follows the schema through
// protobuf's descriptors, so it descends into exactly the messages the real
// parser would (nodes, attrs, tensors ...). When a length-delimited message runs
// past the end of the file, it still walks the prefix that IS there: that is how
// a truncated file is pinned to "inside node #17 'x'" rather than "byte 13".
#include "converter/frontend/graphdef/wire_walk.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include <map>

namespace floe::conv {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

enum class Varint { kOk, kTruncated, kTooLong };

Varint read_varint(const uint8_t* data, size_t& pos, size_t end, uint64_t* out) {
  uint64_t value = 0;
  for (int i = 0; i < 10; ++i) {
    if (pos >= end) return Varint::kTruncated;
    const uint8_t byte = data[pos++];
    value |= uint64_t{byte & 0x7Fu} << (7 * i);
    if ((byte & 0x80) == 0) {
      *out = value;
      return Varint::kOk;
    }
  }
  return Varint::kTooLong;
}

// Names from a corrupt file may be binary: show them escaped and bounded.
std::string printable(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size() && out.size() < 80; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F && c != '\'') {
      out += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (out.size() >= 80) out += "...";
  return out;
}

// One enclosing message on the way down: "node #17 'x'", "attr['value']", "tensor".
struct Frame {
  std::string field;
  int index = -1;  // occurrence number for repeated fields
  bool map_entry = false;
  std::string name;  // the message's `name` field or the map key, once seen
  bool hidden = false;  // a map entry's `value`: "attr['value'] > tensor", not "... > value > tensor"
};

std::string render(const Frame& f) {
  if (f.map_entry) {
    return f.name.empty() ? f.field + " #" + std::to_string(f.index)
                          : f.field + "['" + printable(f.name) + "']";
  }
  std::string text = f.field;
  if (f.index >= 0) text += " #" + std::to_string(f.index);
  if (!f.name.empty()) text += " '" + printable(f.name) + "'";
  return text;
}

std::string describe(uint32_t number, const FieldDescriptor* field) {
  return "field " + std::to_string(number) + " (" +
         (field ? field->name() : std::string("not in floe's schema")) + ")";
}

size_t packed_element_size(const FieldDescriptor* field) {
  switch (field->type()) {
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32:
    case FieldDescriptor::TYPE_FLOAT: return 4;
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64:
    case FieldDescriptor::TYPE_DOUBLE: return 8;
    default: return 0;  // varint-encoded
  }
}

// Where the bytes of the message being walked stop: the file, or an enclosing
// message (named when the error is reported, by which time its name is known).
struct End {
  bool is_file = true;
  size_t byte = 0;
  size_t frame = 0;  // index into Walker::frames_ of the enclosing message
};

class Walker {
 public:
  Walker(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  std::optional<WireFault> run(const Descriptor* type) {
    size_t pos = 0;
    walk(pos, size_, type, 0, End{true, size_, 0}, 0);
    return fault_;
  }

 private:
  static constexpr int kMaxDepth = 100;  // protobuf's own recursion limit

  std::string end_text(const End& end) const {
    if (end.is_file) return "end of file (" + std::to_string(size_) + " bytes)";
    return "the end of its enclosing " + render(frames_[end.frame]) + " (byte " + std::to_string(end.byte) + ")";
  }
  std::string past(const End& end) const { return "past " + end_text(end); }

  bool fail(size_t offset, const std::string& problem) {
    if (!fault_) {
      WireFault fault;
      fault.offset = offset;
      fault.problem = problem;
      for (const Frame& frame : frames_) {
        if (frame.hidden) continue;
        if (!fault.path.empty()) fault.path += " > ";
        fault.path += render(frame);
      }
      fault_ = fault;
    }
    return false;
  }

  // Walks fields in data[pos, end) as message `type` (nullptr = unknown message
  // or group contents). `group_number` != 0 means we are inside a group and stop
  // at its end-group tag. Returns false once a fault is recorded.
  bool walk(size_t& pos, size_t end, const Descriptor* type, int depth, const End& end_what,
            uint32_t group_number) {
    if (depth > kMaxDepth) return fail(pos, "messages nested deeper than " + std::to_string(kMaxDepth));
    std::map<uint32_t, int> occurrences;
    Frame last_done;  // most recent complete element of a repeated message field
    while (pos < end) {
      const size_t tag_pos = pos;
      uint64_t tag = 0;
      if (Varint v = read_varint(data_, pos, end, &tag); v != Varint::kOk) {
        return fail(tag_pos, v == Varint::kTruncated ? "field tag runs " + past(end_what)
                                                     : "field tag is a varint longer than 10 bytes");
      }
      const uint64_t number64 = tag >> 3;
      const int wire_type = static_cast<int>(tag & 7);
      if (number64 == 0 || number64 > 0x1FFFFFFF) {
        return fail(tag_pos, "invalid field number " + std::to_string(number64) + " (wire type " +
                                 std::to_string(wire_type) + ")");
      }
      const auto number = static_cast<uint32_t>(number64);
      const FieldDescriptor* field = type ? type->FindFieldByNumber(static_cast<int>(number)) : nullptr;
      const std::string what = describe(number, field);
      switch (wire_type) {
        case 0: {
          uint64_t value = 0;
          if (Varint v = read_varint(data_, pos, end, &value); v != Varint::kOk) {
            return fail(tag_pos, "varint " + what + (v == Varint::kTruncated
                                                         ? " runs " + past(end_what)
                                                         : " is longer than 10 bytes"));
          }
          break;
        }
        case 1:
        case 5: {
          const size_t width = wire_type == 1 ? 8 : 4;
          if (end - pos < width) {
            return fail(tag_pos, std::to_string(width) + "-byte " + what + " runs " + past(end_what));
          }
          pos += width;
          break;
        }
        case 2:
          if (!walk_length_delimited(pos, end, type, field, number, tag_pos, depth, end_what,
                                     occurrences, last_done)) {
            return false;
          }
          break;
        case 3: {
          // Groups: obsolete, never written by TF, skipped like protobuf does.
          if (!walk(pos, end, nullptr, depth + 1, end_what, number)) return false;
          break;
        }
        case 4:
          if (group_number == number) return true;
          return fail(tag_pos, "end-group tag for " + what + " without a matching start-group");
        default:
          return fail(tag_pos, "invalid wire type " + std::to_string(wire_type) + " for " + what);
      }
    }
    if (group_number != 0) {
      return fail(pos, "group field " + std::to_string(group_number) + " is not closed by an end-group tag before " +
                           end_text(end_what));
    }
    return true;
  }

  bool walk_length_delimited(size_t& pos, size_t end, const Descriptor* type,
                             const FieldDescriptor* field, uint32_t number, size_t tag_pos, int depth,
                             const End& end_what, std::map<uint32_t, int>& occurrences,
                             Frame& last_done) {
    const std::string what = describe(number, field);
    uint64_t length = 0;
    if (Varint v = read_varint(data_, pos, end, &length); v != Varint::kOk) {
      return fail(tag_pos, "length of " + what + (v == Varint::kTruncated ? " runs " + past(end_what)
                                                                         : " is a varint longer than 10 bytes"));
    }
    const size_t payload = pos;
    const bool overrun = length > end - payload;
    const size_t payload_end = overrun ? end : payload + static_cast<size_t>(length);
    const std::string overrun_problem = "length-delimited " + what + " of " + std::to_string(length) +
                                        " bytes runs " + past(end_what);

    if (field != nullptr && field->type() == FieldDescriptor::TYPE_MESSAGE) {
      Frame frame;
      frame.field = field->name();
      frame.map_entry = field->is_map();
      if (field->is_repeated()) frame.index = occurrences[number]++;
      frame.hidden = type->options().map_entry() && number == 2;
      frames_.push_back(frame);
      // A message cut short by the end of the file: walk the part that exists,
      // where the innermost broken field (and the node name) can be found.
      const End child_end = overrun ? end_what : End{false, payload_end, frames_.size() - 1};
      size_t child_pos = payload;
      const bool ok = walk(child_pos, payload_end, field->message_type(), depth + 1, child_end, 0);
      const Frame done = frames_.back();
      frames_.pop_back();
      if (!ok) {
        const bool node_list = field->name() == "node" || field->name() == "node_def";
        if (node_list && fault_->last_complete.empty() && last_done.field == field->name()) {
          fault_->last_complete = render(last_done);
        }
        return false;
      }
      if (overrun) {
        return fail(tag_pos, "length-delimited field " + std::to_string(number) + " (" + render(done) +
                                 ") of " + std::to_string(length) + " bytes runs " + past(end_what));
      }
      if (field->is_repeated()) last_done = done;
      pos = payload_end;
      return true;
    }

    if (overrun) return fail(tag_pos, overrun_problem);
    if (field != nullptr && field->type() == FieldDescriptor::TYPE_STRING) {
      if (!is_valid_utf8(data_ + payload, payload_end - payload)) {
        return fail(tag_pos, "string " + what + " is not valid UTF-8 (proto3 rejects it)");
      }
      // Remember the enclosing message's name (NodeDef.name) or map key for the path.
      const bool is_name = field->name() == "name" || (type->options().map_entry() && number == 1);
      if (is_name && !frames_.empty()) {
        frames_.back().name.assign(reinterpret_cast<const char*>(data_ + payload), payload_end - payload);
      }
    } else if (field != nullptr && field->is_packable()) {
      const size_t width = packed_element_size(field);
      if (width != 0 && (payload_end - payload) % width != 0) {
        return fail(tag_pos, "packed " + what + " is " + std::to_string(payload_end - payload) +
                                 " bytes, not a multiple of " + std::to_string(width));
      }
      for (size_t p = payload; width == 0 && p < payload_end;) {
        uint64_t ignored = 0;
        if (read_varint(data_, p, payload_end, &ignored) != Varint::kOk) {
          return fail(tag_pos, "packed " + what + " holds a malformed varint at byte " + std::to_string(p));
        }
      }
    }
    pos = payload_end;
    return true;
  }

  const uint8_t* data_;
  size_t size_;
  std::vector<Frame> frames_;
  std::optional<WireFault> fault_;
};

}  // namespace

std::vector<WireField> scan_fields(const uint8_t* data, size_t begin, size_t end, bool* complete) {
  std::vector<WireField> fields;
  *complete = false;
  size_t pos = begin;
  while (pos < end) {
    WireField field;
    field.offset = pos;
    uint64_t tag = 0;
    if (read_varint(data, pos, end, &tag) != Varint::kOk) return fields;
    field.number = static_cast<uint32_t>(tag >> 3);
    field.wire_type = static_cast<int>(tag & 7);
    if (field.number == 0 || (tag >> 3) > 0x1FFFFFFF) return fields;
    switch (field.wire_type) {
      case 0:
        if (read_varint(data, pos, end, &field.varint) != Varint::kOk) return fields;
        break;
      case 1:
      case 5: {
        const size_t width = field.wire_type == 1 ? 8 : 4;
        if (end - pos < width) return fields;
        pos += width;
        break;
      }
      case 2: {
        uint64_t length = 0;
        if (read_varint(data, pos, end, &length) != Varint::kOk) return fields;
        field.payload_begin = pos;
        if (length > end - pos) {
          field.payload_end = end;
          field.truncated = true;
          fields.push_back(field);
          return fields;
        }
        field.payload_end = pos + static_cast<size_t>(length);
        pos = field.payload_end;
        break;
      }
      default:
        return fields;  // groups and invalid wire types: TF never writes them
    }
    fields.push_back(field);
  }
  *complete = true;
  return fields;
}

std::optional<WireFault> diagnose_wire(const uint8_t* data, size_t size, const Descriptor* type) {
  return Walker(data, size).run(type);
}

bool is_valid_utf8(const uint8_t* bytes, size_t size) {
  size_t i = 0;
  while (i < size) {
    const uint8_t c = bytes[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t extra = 0;
    uint32_t code = 0;
    if ((c & 0xE0) == 0xC0) {
      extra = 1;
      code = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      code = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      code = c & 0x07;
    } else {
      return false;
    }
    if (size - i <= extra) return false;
    for (size_t k = 1; k <= extra; ++k) {
      if ((bytes[i + k] & 0xC0) != 0x80) return false;
      code = (code << 6) | (bytes[i + k] & 0x3F);
    }
    static const uint32_t kMinForLength[4] = {0, 0x80, 0x800, 0x10000};
    if (code < kMinForLength[extra] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      return false;  // overlong, out of range, or a surrogate
    }
    i += extra + 1;
  }
  return true;
}

}  // namespace floe::conv
