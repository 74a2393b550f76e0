// SPDX-License-Identifier: Apache-2.0
// Byte-level tests of the checkpoint reader's building blocks against values
// stated in tf-formats.md: CRC32C check values, protobuf wire quirks, the §11.9
// worked example, OrderedCode slice keys, multi-block tables and slice assembly.
#include <gtest/gtest.h>

#include <cstring>

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/frontend/checkpoint/checkpoint_state.h"
#include "converter/frontend/checkpoint/crc32c.h"
#include "converter/frontend/checkpoint/slice_key.h"
#include "converter/frontend/checkpoint/table_reader.h"
#include "converter/ir/tf_dtype.h"
#include "converter/frontend/checkpoint/wire.h"
#include "tests/converter/support/checkpoint_test_util.h"

namespace floe::conv {
namespace {

using floe::testing::convert_error_of;
using floe::testing::TempDir;

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out += static_cast<char>(v);
  return out;
}

TEST(Crc32c, CheckValueAndMask) {
  EXPECT_EQ(ckpt::crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(ckpt::crc32c_mask(0xE3069283u), 0xC78AB0E5u);
  EXPECT_EQ(ckpt::crc32c_unmask(0xC78AB0E5u), 0xE3069283u);
  EXPECT_EQ(ckpt::crc32c("", 0), 0u);
}

TEST(Crc32c, ExtendMatchesOneShotAcrossAllSplits) {
  std::string data;
  for (int i = 0; i < 100; ++i) data += static_cast<char>(i * 37 + 11);
  const uint32_t whole = ckpt::crc32c(data.data(), data.size());
  for (size_t split = 0; split <= data.size(); ++split) {
    const uint32_t first = ckpt::crc32c(data.data(), split);
    EXPECT_EQ(ckpt::crc32c_extend(first, data.data() + split, data.size() - split), whole) << split;
  }
}

TEST(Wire, NegativeDimIsTenByteVarint) {
  // dim { size: -1 } exactly as real files encode it.
  const std::string shape =
      bytes({0x12, 0x0b, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
  const ckpt::TensorShape decoded = ckpt::decode_tensor_shape(shape, "test");
  ASSERT_EQ(decoded.dims.size(), 1u);
  EXPECT_EQ(decoded.dims[0], -1);
}

TEST(Wire, NegativeInt32FieldTruncatesTenByteVarint) {
  // BundleEntryProto.shard_id (int32) = -1 written as a 10-byte varint.
  const std::string entry =
      bytes({0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
  EXPECT_EQ(ckpt::decode_bundle_entry(entry, "test").shard_id, -1);
}

TEST(Wire, RepeatedScalarsPackedUnpackedAndMixed) {
  // BundleHeaderProto.version.bad_consumers: unpacked 5, packed [7, 300], unpacked 9.
  const std::string version =
      bytes({0x08, 0x01, 0x18, 0x05, 0x1a, 0x03, 0x07, 0xac, 0x02, 0x18, 0x09});
  std::string header = bytes({0x08, 0x02, 0x1a});
  header += static_cast<char>(version.size());
  header += version;
  const ckpt::BundleHeader h = ckpt::decode_bundle_header(header, "test");
  EXPECT_EQ(h.num_shards, 2);
  EXPECT_EQ(h.version.producer, 1);
  EXPECT_EQ(h.version.bad_consumers, (std::vector<int64_t>{5, 7, 300, 9}));
}

TEST(Wire, UnknownFieldsOfEveryWireTypeAreSkipped) {
  std::string entry;
  entry += bytes({0x78, 0x2a});                          // field 15 varint
  entry += bytes({0x81, 0x01, 1, 2, 3, 4, 5, 6, 7, 8});  // field 16 fixed64
  entry += bytes({0x8a, 0x01, 0x03, 'a', 'b', 'c'});     // field 17 bytes
  entry += bytes({0x95, 0x01, 1, 2, 3, 4});              // field 18 fixed32
  entry += bytes({0x9b, 0x01, 0x08, 0x01, 0x9c, 0x01});  // field 19 group {1: 1}
  entry +=
      bytes({0x08, 0x01, 0x12, 0x00, 0x28, 0x04, 0x35, 1, 2, 3, 4});  // dtype, shape, size, crc
  const ckpt::BundleEntry e = ckpt::decode_bundle_entry(entry, "test");
  EXPECT_EQ(e.dtype, 1);
  EXPECT_TRUE(e.has_shape);
  EXPECT_TRUE(e.shape.dims.empty());
  EXPECT_EQ(e.size, 4);
  EXPECT_EQ(e.masked_crc32c, 0x04030201u);
}

TEST(Wire, SplitSubMessageIsMerged) {
  // shape given twice: protobuf merges, so dims accumulate.
  const std::string entry =
      bytes({0x12, 0x04, 0x12, 0x02, 0x08, 0x02, 0x12, 0x04, 0x12, 0x02, 0x08, 0x03});
  EXPECT_EQ(ckpt::decode_bundle_entry(entry, "test").shape.dims, (std::vector<int64_t>{2, 3}));
}

TEST(Wire, MalformedMessagesThrowWithOffsets) {
  const std::vector<std::string> bad = {
      bytes({0x08}),              // truncated varint
      bytes({0x12, 0x05, 0x00}),  // length past end
      bytes({0x35, 0x01, 0x02}),  // truncated fixed32
      bytes({0x00, 0x00}),        // field number 0
      bytes({0x0f}),              // wire type 7
      bytes({0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
             0x01}),                          // 11-byte varint
      bytes({0x0d, 0x01, 0x02, 0x03, 0x04}),  // dtype (varint field) sent as fixed32
      bytes({0x9b, 0x01, 0x08, 0x01}),        // unterminated group
  };
  for (const std::string& message : bad) {
    const std::string error = convert_error_of([&] { ckpt::decode_bundle_entry(message, "ctx"); });
    EXPECT_NE(error.find("ctx: BundleEntryProto"), std::string::npos) << error;
    EXPECT_NE(error.find("at byte"), std::string::npos) << error;
  }
}

// tf-formats.md §11.9, byte for byte.
const char kWorkedIndex[] =
    "\x00\x00\x06\x08\x01\x1a\x02\x08\x01\x00\x01\x0f\x77\x08\x01\x12"
    "\x04\x12\x02\x08\x02\x28\x08\x35\x59\x3c\xe5\x35\x00\x00\x00\x00"
    "\x01\x00\x00\x00\x00\x09\x21\xad\xc3\x00\x00\x00\x00\x01\x00\x00"
    "\x00\x00\xc0\xf2\xa1\xb0\x00\x01\x02\x78\x00\x24\x00\x00\x00\x00"
    "\x01\x00\x00\x00\x00\xab\x30\x70\x7f\x29\x08\x36\x0e\x00\x00\x00"
    "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x57\xfb\x80\x8b\x24\x75\x47\xdb";
const char kWorkedData[] = "\x00\x00\x80\x3f\x00\x00\x00\x40";

TEST(WorkedExample, ReadsTensorW) {
  TempDir dir;
  const std::string index(kWorkedIndex, sizeof(kWorkedIndex) - 1);
  ASSERT_EQ(index.size(), 121u);
  testing::write_file_bytes(dir.file("model.index"), index);
  testing::write_file_bytes(dir.file("model.data-00000-of-00001"), std::string(kWorkedData, 8));

  const CheckpointReader reader = CheckpointReader::open(dir.file("model"));
  EXPECT_EQ(reader.prefix(), dir.file("model"));
  EXPECT_EQ(reader.num_shards(), 1);
  EXPECT_EQ(reader.keys(), std::vector<std::string>{"w"});
  const CheckpointEntry& e = reader.entry("w");
  EXPECT_EQ(e.tf_dtype, kTfFloat);
  EXPECT_EQ(e.shape, std::vector<int64_t>{2});
  EXPECT_EQ(e.size, 8u);
  EXPECT_EQ(e.offset, 0u);
  EXPECT_EQ(e.masked_crc32c, 0x35e53c59u);
  EXPECT_FALSE(e.partitioned);

  const HostTensor w = reader.read("w");
  EXPECT_EQ(w.dtype, DType::kFloat32);
  ASSERT_EQ(w.shape, std::vector<int64_t>{2});
  ASSERT_EQ(w.data.size(), 8u);
  EXPECT_EQ(w.as<float>()[0], 1.0f);
  EXPECT_EQ(w.as<float>()[1], 2.0f);
  EXPECT_EQ(reader.verify_all(), 1u);
}

// Corpus-free versions of the corruption checks, so they run without ../shared.
TEST(WorkedExample, CorruptionIsReportedWithFileKeyAndOffset) {
  TempDir dir;
  const std::string index(kWorkedIndex, sizeof(kWorkedIndex) - 1);
  testing::write_file_bytes(dir.file("model.index"), index);
  testing::write_file_bytes(dir.file("model.data-00000-of-00001"),
                            std::string("\x00\x00\x80\x3f\x00\x01\x00\x40", 8));
  const CheckpointReader reader = CheckpointReader::open(dir.file("model"));
  std::string error = convert_error_of([&] { reader.read("w"); });
  EXPECT_NE(error.find(dir.file("model.data-00000-of-00001") +
                       ": tensor 'w' at offset 0 size 8: CRC32C mismatch (stored 0x"),
            std::string::npos)
      << error;
  error = convert_error_of([&] { reader.read("foo"); });
  EXPECT_NE(error.find("': no tensor named 'foo' (available: w)"), std::string::npos) << error;

  std::string damaged = index;
  damaged[12] = 'v';  // the key "w"
  testing::write_file_bytes(dir.file("model.index"), damaged);
  error = convert_error_of([&] { CheckpointReader::open(dir.file("model")); });
  EXPECT_NE(error.find(dir.file("model.index") +
                       ": data block at offset 0 (size 36): CRC mismatch (stored 0x1b189095, "
                       "computed 0x"),
            std::string::npos)
      << error;
}

TEST(WorkedExample, EveryPathFormResolvesToThePrefix) {
  TempDir dir;
  testing::write_file_bytes(dir.file("model.index"),
                            std::string(kWorkedIndex, sizeof(kWorkedIndex) - 1));
  testing::write_file_bytes(dir.file("model.data-00000-of-00001"), std::string(kWorkedData, 8));
  const std::string prefix = dir.file("model");
  EXPECT_EQ(resolve_checkpoint_prefix(prefix + ".index"), prefix);
  EXPECT_EQ(resolve_checkpoint_prefix(prefix + ".meta"), prefix);  // need not exist
  EXPECT_EQ(resolve_checkpoint_prefix(prefix + ".data-00000-of-00001"), prefix);
  EXPECT_EQ(resolve_checkpoint_prefix(dir.path()), prefix);  // single .index, no state file
  // A state file with a relative path, comments and a Windows-style stale absolute path.
  testing::write_file_bytes(
      dir.file("checkpoint"),
      "# written elsewhere\nmodel_checkpoint_path: \"C:\\\\Users\\\\me\\\\model\"\n"
      "all_model_checkpoint_timestamps: 1601611588.861176\n");
  EXPECT_EQ(resolve_checkpoint_prefix(dir.path()), prefix);
  EXPECT_EQ(resolve_checkpoint_prefix(dir.file("checkpoint")), prefix);
  testing::write_file_bytes(dir.file("checkpoint"), "model_checkpoint_path: 'mo' \"del\"\n");
  EXPECT_EQ(resolve_checkpoint_prefix(dir.path() + "/"), prefix);
}

TEST(CheckpointState, ParsesTextFormatVariants) {
  const ckpt::CheckpointState state = ckpt::parse_checkpoint_state(
      "model_checkpoint_path: \"a\\101\\x42\\n\"\n"
      "all_model_checkpoint_paths: [\"p1\", 'p2']\n"
      "all_model_checkpoint_paths: \"p3\";\n"
      "last_preserved_timestamp: 1.5e9\n"
      "future_field { nested: 1 }\n",
      "checkpoint");
  EXPECT_EQ(state.model_checkpoint_path, "aAB\n");
  EXPECT_EQ(state.all_model_checkpoint_paths, (std::vector<std::string>{"p1", "p2", "p3"}));
  const std::string error = convert_error_of(
      [] { ckpt::parse_checkpoint_state("model_checkpoint_path: \"x\n", "ckpt"); });
  EXPECT_NE(error.find("ckpt:1: unterminated string"), std::string::npos) << error;
}

TEST(TfDtype, NamesAndMapping) {
  EXPECT_EQ(tf_dtype_name(1), "DT_FLOAT");
  EXPECT_EQ(tf_dtype_name(107), "DT_STRING_REF");
  EXPECT_EQ(tf_dtype_name(999), "DataType(999)");
  EXPECT_EQ(tf_dtype_from_name("DT_HALF"), 19);
  EXPECT_EQ(tf_dtype_from_name("DT_INT32_REF"), 103);
  EXPECT_EQ(tf_dtype_from_name("DT_NOPE"), -1);
  EXPECT_EQ(tf_dtype_to_floe(kTfBFloat16), DType::kBFloat16);
  EXPECT_EQ(tf_dtype_to_floe(kTfString), DType::kInvalid);
  EXPECT_EQ(tf_dtype_to_floe(kTfUInt32), DType::kInvalid);
  for (int t = 1; t <= kTfLastBaseType; ++t) {
    const DType d = tf_dtype_to_floe(t);
    if (d != DType::kInvalid) {
      EXPECT_EQ(dtype_size(d), tf_dtype_fixed_size(t)) << t;
    }
  }
}

TEST(SliceKey, OrderedCodeExamplesFromTheSpec) {
  std::string s;
  ckpt::append_ordered_int(s, 0);
  ckpt::append_ordered_int(s, 5);
  ckpt::append_ordered_int(s, -1);
  ckpt::append_ordered_int(s, 63);
  ckpt::append_ordered_int(s, -64);
  EXPECT_EQ(s, bytes({0x80, 0x85, 0x7f, 0xbf, 0x40}));
  s.clear();
  ckpt::append_ordered_int(s, 64);   // two bytes: 0x0040 ^ 0xC000
  ckpt::append_ordered_int(s, -65);  // 0xFFBF ^ 0xC000
  EXPECT_EQ(s, bytes({0xc0, 0x40, 0x3f, 0xbf}));
  s.clear();
  ckpt::append_ordered_uint(s, 2);
  ckpt::append_ordered_uint(s, 0);
  ckpt::append_ordered_uint(s, 0x1234);
  EXPECT_EQ(s, bytes({0x01, 0x02, 0x00, 0x02, 0x12, 0x34}));
  // Ordering property: encodings of increasing numbers compare increasing bytewise.
  std::string previous;
  for (int64_t v : {int64_t(INT64_MIN), -(int64_t(1) << 40), int64_t(-70000), int64_t(-65),
                    int64_t(-1), int64_t(0), int64_t(1), int64_t(64), int64_t(8191), int64_t(8192),
                    int64_t(1) << 40, int64_t(INT64_MAX)}) {
    std::string encoded;
    ckpt::append_ordered_int(encoded, v);
    EXPECT_LT(previous, encoded) << v;
    previous = encoded;
  }
  const std::string key = ckpt::encode_slice_key(std::string("a\0\xff", 3), {{0, -1}, {5, 3}});
  EXPECT_EQ(key, bytes({0x00, 'a', 0x00, 0xff, 0xff, 0x00, 0x00, 0x01, 0x01, 0x02, 0x80, 0x7f, 0x85,
                        0x83}));
}

}  // namespace
}  // namespace floe::conv
