// SPDX-License-Identifier: Apache-2.0
// A small protobuf wire-format decoder (tf-formats.md §0) and the four messages
// the bundle index needs: BundleHeaderProto, BundleEntryProto, TensorShapeProto,
// TensorSliceProto. Every read is bounds-checked; errors carry `context` and the
// byte offset inside the message. No zigzag: TF never uses sint32/sint64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace floe::conv::ckpt {

enum class WireType : uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

// Walks the fields of one serialized message. Typical use:
//   WireReader r(bytes, "model.index: entry 'w'");
//   while (r.next_field()) switch (r.field_number()) { case 1: x = r.read_varint(); break;
//                                                     default: r.skip_field(); }
class WireReader {
 public:
  WireReader(std::string_view message, std::string context);

  // Advances to the next field's tag; false at the end of the message.
  bool next_field();
  uint32_t field_number() const { return field_number_; }
  WireType wire_type() const { return wire_type_; }

  // Value readers: each requires the matching wire type and consumes the value.
  uint64_t read_varint();
  int64_t read_int64() { return static_cast<int64_t>(read_varint()); }
  // int32 fields hold negative values as 10-byte sign-extended varints: truncate.
  int32_t read_int32() { return static_cast<int32_t>(static_cast<uint32_t>(read_varint())); }
  bool read_bool() { return read_varint() != 0; }
  uint32_t read_fixed32();
  uint64_t read_fixed64();
  std::string_view read_bytes();  // string, bytes, sub-message, packed run

  // Appends one repeated integer field occurrence, packed (wire type 2) or not.
  void read_repeated_int64(std::vector<int64_t>& out);
  void skip_field();

  // Throws ConvertError("<context>: <what> at byte <offset>").
  [[noreturn]] void fail(const std::string& what) const;
  const std::string& context() const { return context_; }
  size_t offset() const { return pos_; }

 private:
  void expect(WireType type, const char* reader_name) const;
  uint64_t decode_varint();
  void skip_value(WireType type, uint32_t field, int depth);

  std::string_view data_;
  std::string context_;
  size_t pos_ = 0;
  size_t tag_offset_ = 0;
  uint32_t field_number_ = 0;
  WireType wire_type_ = WireType::kVarint;
};

struct TensorShape {
  std::vector<int64_t> dims;  // -1 = unknown dimension
  bool unknown_rank = false;
};

// TensorSliceProto.Extent: `length` absent means the full dimension.
struct SliceExtent {
  int64_t start = 0;
  int64_t length = -1;
  bool has_length = false;
};
using TensorSlice = std::vector<SliceExtent>;

struct VersionInfo {
  int32_t producer = 0;
  int32_t min_consumer = 0;
  std::vector<int64_t> bad_consumers;
};

struct BundleHeader {
  int32_t num_shards = 0;
  int32_t endianness = 0;  // 0 = LITTLE, 1 = BIG
  VersionInfo version;
};

struct BundleEntry {
  int32_t dtype = 0;
  TensorShape shape;
  bool has_shape = false;
  int32_t shard_id = 0;
  int64_t offset = 0;
  int64_t size = 0;
  uint32_t masked_crc32c = 0;
  std::vector<TensorSlice> slices;
};

TensorShape decode_tensor_shape(std::string_view bytes, const std::string& context);
// Protobuf merge semantics: dims append, unknown_rank overwrites.
void merge_tensor_shape(std::string_view bytes, const std::string& context, TensorShape& shape);
TensorSlice decode_tensor_slice(std::string_view bytes, const std::string& context);
BundleHeader decode_bundle_header(std::string_view bytes, const std::string& context);
BundleEntry decode_bundle_entry(std::string_view bytes, const std::string& context);

}  // namespace floe::conv::ckpt
