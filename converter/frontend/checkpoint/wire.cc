// SPDX-License-Identifier: Apache-2.0
// Protobuf wire decoding for the bundle index. Field numbers come from
// tensor_bundle.proto, tensor_shape.proto, tensor_slice.proto and versions.proto
// (tf-formats.md §2, §11.4, §11.5, §11.8). Last occurrence of a scalar wins and
// repeated sub-messages append, as protobuf's own parser does.
#include "converter/frontend/checkpoint/wire.h"

#include <utility>

#include "converter/ir/error.h"

namespace floe::conv::ckpt {
namespace {

constexpr size_t kMaxVarintBytes = 10;
// Groups are never written by TF; bound the recursion used to skip them anyway.
constexpr int kMaxGroupDepth = 32;

const char* wire_type_name(WireType type) {
  switch (type) {
    case WireType::kVarint:
      return "varint";
    case WireType::kFixed64:
      return "fixed64";
    case WireType::kLengthDelimited:
      return "length-delimited";
    case WireType::kStartGroup:
      return "start-group";
    case WireType::kEndGroup:
      return "end-group";
    case WireType::kFixed32:
      return "fixed32";
  }
  return "?";
}

}  // namespace

WireReader::WireReader(std::string_view message, std::string context)
    : data_(message), context_(std::move(context)) {}

void WireReader::fail(const std::string& what) const {
  throw ConvertError(context_ + ": " + what + " at byte " + std::to_string(pos_));
}

uint64_t WireReader::decode_varint() {
  uint64_t value = 0;
  for (size_t i = 0; i < kMaxVarintBytes; ++i) {
    if (pos_ >= data_.size()) fail("truncated varint");
    const uint8_t byte = static_cast<uint8_t>(data_[pos_++]);
    value |= uint64_t(byte & 0x7Fu) << (7 * i);
    if ((byte & 0x80u) == 0) return value;
  }
  fail("varint longer than 10 bytes");
}

bool WireReader::next_field() {
  if (pos_ >= data_.size()) return false;
  tag_offset_ = pos_;
  const uint64_t tag = decode_varint();
  const uint64_t field = tag >> 3;
  const uint32_t type = static_cast<uint32_t>(tag & 7u);
  if (field == 0 || field > 0x1FFFFFFFu) {
    pos_ = tag_offset_;
    fail("invalid field number " + std::to_string(field));
  }
  if (type > 5) {
    pos_ = tag_offset_;
    fail("invalid wire type " + std::to_string(type) + " for field " + std::to_string(field));
  }
  field_number_ = static_cast<uint32_t>(field);
  wire_type_ = static_cast<WireType>(type);
  return true;
}

void WireReader::expect(WireType type, const char* reader_name) const {
  if (wire_type_ == type) return;
  throw ConvertError(context_ + ": field " + std::to_string(field_number_) + " has wire type " +
                     wire_type_name(wire_type_) + ", expected " + wire_type_name(type) + " (" +
                     reader_name + ") at byte " + std::to_string(tag_offset_));
}

uint64_t WireReader::read_varint() {
  expect(WireType::kVarint, "varint");
  return decode_varint();
}

uint32_t WireReader::read_fixed32() {
  expect(WireType::kFixed32, "fixed32");
  if (data_.size() - pos_ < 4) fail("truncated fixed32");
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= uint32_t(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
  pos_ += 4;
  return value;
}

uint64_t WireReader::read_fixed64() {
  expect(WireType::kFixed64, "fixed64");
  if (data_.size() - pos_ < 8) fail("truncated fixed64");
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= uint64_t(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
  pos_ += 8;
  return value;
}

std::string_view WireReader::read_bytes() {
  expect(WireType::kLengthDelimited, "length-delimited");
  const size_t length_offset = pos_;
  const uint64_t length = decode_varint();
  if (length > data_.size() - pos_) {
    pos_ = length_offset;
    fail("length " + std::to_string(length) + " of field " + std::to_string(field_number_) +
         " runs past the end of the message (" + std::to_string(data_.size()) + " bytes)");
  }
  std::string_view value = data_.substr(pos_, static_cast<size_t>(length));
  pos_ += static_cast<size_t>(length);
  return value;
}

void WireReader::read_repeated_int64(std::vector<int64_t>& out) {
  if (wire_type_ == WireType::kVarint) {
    out.push_back(read_int64());
    return;
  }
  if (wire_type_ != WireType::kLengthDelimited) expect(WireType::kVarint, "repeated varint");
  const size_t run_offset = pos_;
  std::string_view run = read_bytes();
  WireReader packed(run, context_ + ": packed field " + std::to_string(field_number_) +
                             " starting at byte " + std::to_string(run_offset));
  while (packed.pos_ < run.size()) out.push_back(static_cast<int64_t>(packed.decode_varint()));
}

void WireReader::skip_value(WireType type, uint32_t field, int depth) {
  switch (type) {
    case WireType::kVarint:
      decode_varint();
      return;
    case WireType::kFixed64:
      if (data_.size() - pos_ < 8) fail("truncated fixed64");
      pos_ += 8;
      return;
    case WireType::kFixed32:
      if (data_.size() - pos_ < 4) fail("truncated fixed32");
      pos_ += 4;
      return;
    case WireType::kLengthDelimited: {
      const uint64_t length = decode_varint();
      if (length > data_.size() - pos_) fail("length-delimited field runs past the end");
      pos_ += static_cast<size_t>(length);
      return;
    }
    case WireType::kStartGroup: {
      if (depth >= kMaxGroupDepth) fail("groups nested too deeply");
      while (true) {
        if (!next_field()) fail("unterminated group " + std::to_string(field));
        if (wire_type_ == WireType::kEndGroup) {
          if (field_number_ != field) fail("mismatched end-group");
          return;
        }
        skip_value(wire_type_, field_number_, depth + 1);
      }
    }
    case WireType::kEndGroup:
      fail("unexpected end-group for field " + std::to_string(field));
  }
}

void WireReader::skip_field() { skip_value(wire_type_, field_number_, 0); }

void merge_tensor_shape(std::string_view bytes, const std::string& context, TensorShape& shape) {
  WireReader r(bytes, context + ": TensorShapeProto");
  while (r.next_field()) {
    if (r.field_number() == 2) {  // dim (field 1 is unused)
      WireReader dim(r.read_bytes(), r.context() + ".dim");
      int64_t size = 0;
      while (dim.next_field()) {
        if (dim.field_number() == 1)
          size = dim.read_int64();
        else
          dim.skip_field();  // name
      }
      shape.dims.push_back(size);
    } else if (r.field_number() == 3) {
      shape.unknown_rank = r.read_bool();
    } else {
      r.skip_field();
    }
  }
}

TensorShape decode_tensor_shape(std::string_view bytes, const std::string& context) {
  TensorShape shape;
  merge_tensor_shape(bytes, context, shape);
  return shape;
}

TensorSlice decode_tensor_slice(std::string_view bytes, const std::string& context) {
  TensorSlice slice;
  WireReader r(bytes, context + ": TensorSliceProto");
  while (r.next_field()) {
    if (r.field_number() != 1) {
      r.skip_field();
      continue;
    }
    SliceExtent extent;
    WireReader e(r.read_bytes(), r.context() + ".extent");
    while (e.next_field()) {
      if (e.field_number() == 1) {
        extent.start = e.read_int64();
      } else if (e.field_number() == 2) {  // oneof has_length
        extent.length = e.read_int64();
        extent.has_length = true;
      } else {
        e.skip_field();
      }
    }
    slice.push_back(extent);
  }
  return slice;
}

namespace {

// A singular sub-message split over several occurrences is merged, not replaced.
void merge_version(std::string_view bytes, const std::string& context, VersionInfo& version) {
  WireReader r(bytes, context + ": VersionDef");
  while (r.next_field()) {
    switch (r.field_number()) {
      case 1:
        version.producer = r.read_int32();
        break;
      case 2:
        version.min_consumer = r.read_int32();
        break;
      case 3:
        r.read_repeated_int64(version.bad_consumers);
        break;
      default:
        r.skip_field();
    }
  }
}

}  // namespace

BundleHeader decode_bundle_header(std::string_view bytes, const std::string& context) {
  BundleHeader header;
  WireReader r(bytes, context + ": BundleHeaderProto");
  while (r.next_field()) {
    switch (r.field_number()) {
      case 1:
        header.num_shards = r.read_int32();
        break;
      case 2:
        header.endianness = r.read_int32();
        break;
      case 3:
        merge_version(r.read_bytes(), r.context(), header.version);
        break;
      default:
        r.skip_field();
    }
  }
  return header;
}

BundleEntry decode_bundle_entry(std::string_view bytes, const std::string& context) {
  BundleEntry entry;
  WireReader r(bytes, context + ": BundleEntryProto");
  while (r.next_field()) {
    switch (r.field_number()) {
      case 1:
        entry.dtype = r.read_int32();
        break;
      case 2:
        merge_tensor_shape(r.read_bytes(), r.context(), entry.shape);
        entry.has_shape = true;
        break;
      case 3:
        entry.shard_id = r.read_int32();
        break;
      case 4:
        entry.offset = r.read_int64();
        break;
      case 5:
        entry.size = r.read_int64();
        break;
      case 6:
        entry.masked_crc32c = r.read_fixed32();
        break;
      case 7:
        entry.slices.push_back(decode_tensor_slice(r.read_bytes(), r.context()));
        break;
      default:
        r.skip_field();
    }
  }
  return entry;
}

}  // namespace floe::conv::ckpt
