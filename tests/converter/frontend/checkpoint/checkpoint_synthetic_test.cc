// SPDX-License-Identifier: Apache-2.0
// Bundles built in the test for layouts the corpus lacks: multi-block indexes with
// sparse restarts, several shards, and partitioned variables assembled from
// OrderedCode slice keys. The table writer is test-only (checkpoint_test_util.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/frontend/checkpoint/slice_key.h"
#include "converter/ir/tf_dtype.h"
#include "tests/converter/support/checkpoint_test_util.h"

namespace floe::conv {
namespace {

using floe::testing::convert_error_of;
using floe::testing::TempDir;
using Items = std::vector<std::pair<std::string, std::string>>;

std::string float_bytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

TEST(SyntheticBundle, ManyBlocksSparseRestartsTwoShards) {
  TempDir dir;
  std::map<std::string, std::string> sorted;
  std::string shard0, shard1;
  std::string header;
  testing::put_tag(header, 1, 0);
  testing::put_varint(header, 2);  // num_shards
  sorted[""] = header;
  for (int i = 0; i < 200; ++i) {
    const std::string name = "layer_" + std::to_string(i / 10) + "/kernel_" + std::to_string(i);
    const std::string data = float_bytes({float(i), float(-i)});
    std::string& shard = (i % 2) ? shard1 : shard0;
    sorted[name] = testing::entry_proto(kTfFloat, {2}, i % 2, shard.size(), data);
    shard += data;
  }
  testing::write_file_bytes(dir.file("m.index"),
                            testing::build_table(Items(sorted.begin(), sorted.end()), 7, 3));
  testing::write_file_bytes(dir.file("m.data-00000-of-00002"), shard0);
  testing::write_file_bytes(dir.file("m.data-00001-of-00002"), shard1);

  const CheckpointReader reader = CheckpointReader::open(dir.file("m"));
  EXPECT_EQ(reader.num_shards(), 2);
  const std::vector<std::string> keys = reader.keys();
  ASSERT_EQ(keys.size(), 200u);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_EQ(reader.verify_all(), 200u);
  const HostTensor t = reader.read("layer_13/kernel_137");
  EXPECT_EQ(t.as<float>()[0], 137.0f);
  EXPECT_EQ(t.as<float>()[1], -137.0f);
  EXPECT_EQ(reader.entry("layer_13/kernel_137").shard_id, 1);
}

// emb: float [4,3], stored as rows 0..1 and rows 2..3 (dimension 1 full).
Items partitioned_items(std::string& data, bool drop_second_slice) {
  std::vector<float> full(12);
  for (int i = 0; i < 12; ++i) full[i] = float(i) + 0.5f;
  std::map<std::string, std::string> sorted;
  sorted[""] = testing::single_shard_header();

  std::string full_entry;
  testing::put_tag(full_entry, 1, 0);
  testing::put_varint(full_entry, kTfFloat);
  testing::put_len_field(full_entry, 2, testing::shape_proto({4, 3}));
  for (int part = 0; part < 2; ++part) {
    std::string extent0, extent1, slice;
    if (part == 1) {
      testing::put_tag(extent0, 1, 0);
      testing::put_varint(extent0, 2);
    }
    testing::put_tag(extent0, 2, 0);
    testing::put_varint(extent0, 2);
    testing::put_len_field(slice, 1, extent0);
    testing::put_len_field(slice, 1, extent1);  // full dimension: empty extent
    testing::put_len_field(full_entry, 7, slice);
    if (part == 1 && drop_second_slice) continue;
    const std::string bytes =
        float_bytes(std::vector<float>(full.begin() + part * 6, full.begin() + part * 6 + 6));
    const std::string key = ckpt::encode_slice_key("emb", {{part * 2, 2}, {0, -1}});
    sorted[key] = testing::entry_proto(kTfFloat, {2, 3}, 0, data.size(), bytes);
    data += bytes;
  }
  sorted["emb"] = full_entry;
  return Items(sorted.begin(), sorted.end());
}

TEST(SyntheticBundle, PartitionedVariableIsAssembled) {
  TempDir dir;
  std::string data;
  testing::write_file_bytes(dir.file("p.index"),
                            testing::build_table(partitioned_items(data, false)));
  testing::write_file_bytes(dir.file("p.data-00000-of-00001"), data);
  const CheckpointReader reader = CheckpointReader::open(dir.file("p"));
  EXPECT_EQ(reader.keys(), std::vector<std::string>{"emb"});
  const CheckpointEntry& e = reader.entry("emb");
  EXPECT_TRUE(e.partitioned);
  ASSERT_EQ(e.slices.size(), 2u);
  EXPECT_EQ(e.slices[1][0].start, 2);
  EXPECT_EQ(e.slices[1][1].length, -1);
  const HostTensor t = reader.read("emb");
  ASSERT_EQ(t.shape, (std::vector<int64_t>{4, 3}));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(t.as<float>()[i], float(i) + 0.5f) << i;
  EXPECT_EQ(reader.verify_all(), 2u);  // the two slice entries
}

TEST(SyntheticBundle, PartitionedVariableWithMissingSliceFails) {
  TempDir dir;
  std::string data;
  testing::write_file_bytes(dir.file("p.index"),
                            testing::build_table(partitioned_items(data, true)));
  testing::write_file_bytes(dir.file("p.data-00000-of-00001"), data);
  const CheckpointReader reader = CheckpointReader::open(dir.file("p"));
  const std::string error = convert_error_of([&] { reader.read("emb"); });
  EXPECT_NE(error.find("partitioned tensor 'emb' slice 2,2:-: slice entry missing"),
            std::string::npos)
      << error;
}

TEST(SyntheticBundle, MissingDataShardIsNamed) {
  TempDir dir;
  std::map<std::string, std::string> sorted{{"", testing::single_shard_header()}};
  sorted["x"] = testing::entry_proto(kTfFloat, {1}, 0, 0, float_bytes({1.0f}));
  testing::write_file_bytes(dir.file("q.index"),
                            testing::build_table(Items(sorted.begin(), sorted.end())));
  const std::string error = convert_error_of([&] { CheckpointReader::open(dir.file("q")); });
  EXPECT_NE(error.find("q.data-00000-of-00001: cannot open data file"), std::string::npos) << error;
}

TEST(SyntheticBundle, SizeNotMatchingShapeIsRejected) {
  TempDir dir;
  std::map<std::string, std::string> sorted{{"", testing::single_shard_header()}};
  sorted["x"] = testing::entry_proto(kTfFloat, {3}, 0, 0, float_bytes({1.0f, 2.0f}));
  testing::write_file_bytes(dir.file("q.index"),
                            testing::build_table(Items(sorted.begin(), sorted.end())));
  testing::write_file_bytes(dir.file("q.data-00000-of-00001"), float_bytes({1.0f, 2.0f}));
  const CheckpointReader reader = CheckpointReader::open(dir.file("q"));
  const std::string error = convert_error_of([&] { reader.read("x"); });
  EXPECT_NE(error.find("tensor 'x' at offset 0 size 8: size does not match DT_FLOAT[3]"),
            std::string::npos)
      << error;
}

TEST(SyntheticBundle, HeaderValidation) {
  TempDir dir;
  testing::write_file_bytes(dir.file("h.data-00000-of-2147483647"), float_bytes({1.0f}));
  auto write_index = [&](const std::string& header) {
    std::map<std::string, std::string> sorted{{"", header}};
    sorted["x"] = testing::entry_proto(kTfFloat, {1}, 0, 0, float_bytes({1.0f}));
    testing::write_file_bytes(dir.file("h.index"),
                              testing::build_table(Items(sorted.begin(), sorted.end())));
  };
  auto open_with_header = [&](const std::string& header) {
    write_index(header);
    return convert_error_of([&] { CheckpointReader::open(dir.file("h")); });
  };
  // num_shards = INT32_MAX must not size any allocation; the shard file name widens past 5 digits.
  std::string huge;
  testing::put_tag(huge, 1, 0);
  testing::put_varint(huge, 0x7FFFFFFF);
  write_index(huge);
  const CheckpointReader reader = CheckpointReader::open(dir.file("h"));
  EXPECT_EQ(reader.num_shards(), 0x7FFFFFFF);
  EXPECT_EQ(reader.read("x").as<float>()[0], 1.0f);
  std::string error;
  EXPECT_NE(open_with_header("").find("header has num_shards = 0"), std::string::npos);
  // min_consumer 2 (VersionDef field 2) is a bundle from a future writer.
  error = open_with_header(std::string("\x08\x01\x1a\x02\x10\x02", 6));
  EXPECT_NE(error.find("is newer than this reader"), std::string::npos) << error;
}

}  // namespace
}  // namespace floe::conv
