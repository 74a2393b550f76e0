// SPDX-License-Identifier: Apache-2.0
// V1 checkpoints (tensor-slices tables): hand-built files for every dtype,
// partitioned variables, sharded saves, Snappy blocks and damaged inputs; the
// V1 files of ../shared/corpus listed by `floe-convert --info`; and freezing,
// which must give the same model from a V1 file as from a V2 bundle holding the
// same values.
#include <gtest/gtest.h>
#include <snappy.h>

#include <cstring>
#include <fstream>

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/ir/tf_dtype.h"
#include "tests/converter/frontend/checkpoint/checkpoint_v1_util.h"
#include "tests/converter/support/checkpoint_test_util.h"
#include "tests/converter/support/tf1_test_util.h"
#include "tests/support/corpus.h"

namespace floe::testing {
namespace {

using conv::CheckpointFormat;
using conv::CheckpointReader;
using conv::HostTensor;

// "?????" (spelled out: "??-" would be a trigraph).
const std::string kAnyShard(5, '?');

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string snappy_block(const std::string& block) {
  std::string out;
  snappy::Compress(block.data(), block.size(), &out);
  return out;
}

template <typename T>
std::vector<T> values_of(const HostTensor& t) {
  std::vector<T> out(t.data.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), t.data.data(), out.size() * sizeof(T));
  return out;
}

std::vector<float> iota_floats(size_t n, float from) {
  std::vector<float> v;
  for (size_t i = 0; i < n; ++i) v.push_back(from + float(i));
  return v;
}

// "emb" float [4,3] = 0 .. 11 stored as rows [0,2) and [2,4); "cols" float [2,4]
// = 0 .. 7 stored as columns [0,1), [1,4); "scale" a scalar.
std::map<std::string, std::string> partitioned_entries() {
  std::map<std::string, std::string> e;
  e[""] = v1_meta_value({{"emb", 1, {4, 3}, {{{0, 2}, {0, -1}}, {{2, 2}, {0, -1}}}},
                         {"cols", 1, {2, 4}, {{{0, -1}, {0, 1}}, {{0, -1}, {1, 3}}}},
                         {"scale", 1, {}, {{}}}});
  e[v1_slice_key("emb", {{0, 2}, {0, -1}})] =
      v1_slice_value("emb", {{0, 2}, {0, -1}}, v1_float_values(iota_floats(6, 0)));
  e[v1_slice_key("emb", {{2, 2}, {0, -1}})] =
      v1_slice_value("emb", {{2, 2}, {0, -1}}, v1_float_values(iota_floats(6, 6)));
  e[v1_slice_key("cols", {{0, -1}, {0, 1}})] = v1_slice_value("cols", {{0, -1}, {0, 1}}, v1_float_values({0, 4}));
  e[v1_slice_key("cols", {{0, -1}, {1, 3}})] =
      v1_slice_value("cols", {{0, -1}, {1, 3}}, v1_float_values({1, 2, 3, 5, 6, 7}));
  e[v1_slice_key("scale", {})] = v1_slice_value("scale", {}, v1_float_values({2.5f}));
  return e;
}

void expect_partitioned_values(const CheckpointReader& r) {
  EXPECT_EQ(r.keys(), (std::vector<std::string>{"cols", "emb", "scale"}));
  const HostTensor emb = r.read("emb");
  EXPECT_EQ(emb.shape, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(values_of<float>(emb), iota_floats(12, 0));
  EXPECT_TRUE(r.entry("emb").partitioned);
  EXPECT_EQ(r.entry("emb").slices.size(), 2u);
  const HostTensor cols = r.read("cols");
  EXPECT_EQ(cols.shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(values_of<float>(cols), iota_floats(8, 0));
  const HostTensor scale = r.read("scale");
  EXPECT_TRUE(scale.shape.empty());
  EXPECT_EQ(values_of<float>(scale), std::vector<float>{2.5f});
  EXPECT_FALSE(r.entry("scale").partitioned);
}

TEST(CheckpointV1Synthetic, PartitionedVariablesAreAssembledFromTheirSlices) {
  TempDir dir;
  write_file_bytes(dir.file("model.ckpt"), v1_table(partitioned_entries()));
  const CheckpointReader r = CheckpointReader::open(dir.file("model.ckpt"));
  EXPECT_EQ(r.format(), CheckpointFormat::kV1Table);
  expect_partitioned_values(r);
  EXPECT_EQ(r.verify_all(), 5u);  // stored slices
}

TEST(CheckpointV1Synthetic, SnappyBlocksAndManyBlocks) {
  TempDir dir;
  std::map<std::string, std::string> entries = partitioned_entries();
  write_file_bytes(dir.file("model.ckpt"), v1_table(entries, 2, snappy_block));
  const std::string bytes = read_file_bytes(dir.file("model.ckpt"));
  EXPECT_NE(bytes, v1_table(entries, 2));  // really compressed
  expect_partitioned_values(CheckpointReader::open(dir.file("model.ckpt")));
}

TEST(CheckpointV1Synthetic, EveryDtypeV2SupportsReadsBack) {
  struct Case {
    const char* name;
    int dtype;
    uint32_t field;
    std::vector<int64_t> stored;
    std::vector<uint8_t> bytes;  // expected little-endian memory image
  };
  const std::vector<Case> cases = {
      {"i8", conv::kTfInt8, 7, {-2, 127}, {0xFE, 0x7F}},
      {"u8", conv::kTfUInt8, 7, {255, 1}, {0xFF, 0x01}},
      {"i16", conv::kTfInt16, 7, {-2, 300}, {0xFE, 0xFF, 0x2C, 0x01}},
      {"u16", conv::kTfUInt16, 7, {65535, 2}, {0xFF, 0xFF, 0x02, 0x00}},
      {"i32", conv::kTfInt32, 7, {-1, 70000}, {0xFF, 0xFF, 0xFF, 0xFF, 0x70, 0x11, 0x01, 0x00}},
      {"i64", conv::kTfInt64, 10, {-3, 1}, {0xFD, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0, 0, 0, 0, 0}},
      {"b", conv::kTfBool, 11, {5, 0}, {1, 0}},  // any non-zero varint is true
      {"h", conv::kTfHalf, 13, {0x3C00, 0xC000}, {0x00, 0x3C, 0x00, 0xC0}},
      {"bf", conv::kTfBFloat16, 13, {0x3F80, 0x4000}, {0x80, 0x3F, 0x00, 0x40}},
  };
  std::map<std::string, std::string> entries;
  std::vector<V1TensorMeta> metas;
  for (const Case& c : cases) {
    metas.push_back({c.name, c.dtype, {2}, {{{0, -1}}}});
    entries[v1_slice_key(c.name, {{0, -1}})] =
        v1_slice_value(c.name, {{0, -1}}, v1_varint_values(c.dtype, c.field, c.stored));
  }
  // double_val: fixed64, here unpacked (one tagged value each).
  metas.push_back({"f64", conv::kTfDouble, {2}, {{{0, -1}}}});
  std::string doubles;
  for (double d : {1.5, -2.0}) {
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    put_tag(doubles, 6, 1);
    for (int i = 0; i < 8; ++i) doubles += static_cast<char>(bits >> (8 * i));
  }
  entries[v1_slice_key("f64", {{0, -1}})] = v1_slice_value("f64", {{0, -1}}, doubles);
  // tensor_content (raw little-endian bytes) is accepted in place of the typed field.
  metas.push_back({"raw", conv::kTfInt32, {2}, {{{0, -1}}}});
  std::string raw;
  put_tag(raw, 1, 0);
  put_varint(raw, conv::kTfInt32);
  put_len_field(raw, 4, std::string("\x07\x00\x00\x00\xff\xff\xff\xff", 8));
  entries[v1_slice_key("raw", {{0, -1}})] = v1_slice_value("raw", {{0, -1}}, raw);
  // Strings are listed but not usable for inference.
  metas.push_back({"names", conv::kTfString, {2}, {{{0, -1}}}});
  std::string strings;
  put_len_field(strings, 8, "ab");
  put_len_field(strings, 8, "c");
  entries[v1_slice_key("names", {{0, -1}})] = v1_slice_value("names", {{0, -1}}, strings);
  entries[""] = v1_meta_value(metas);

  TempDir dir;
  write_file_bytes(dir.file("all.ckpt"), v1_table(entries));
  const CheckpointReader r = CheckpointReader::open(dir.file("all.ckpt"));
  for (const Case& c : cases) {
    const HostTensor t = r.read(c.name);
    EXPECT_EQ(t.dtype, conv::tf_dtype_to_floe(c.dtype)) << c.name;
    EXPECT_EQ(t.shape, std::vector<int64_t>{2}) << c.name;
    EXPECT_EQ(t.data, c.bytes) << c.name;
  }
  EXPECT_EQ(values_of<double>(r.read("f64")), (std::vector<double>{1.5, -2.0}));
  EXPECT_EQ(values_of<int32_t>(r.read("raw")), (std::vector<int32_t>{7, -1}));
  EXPECT_EQ(r.entry("names").tf_dtype, conv::kTfString);
  EXPECT_TRUE(has(convert_error_of([&] { r.read("names"); }), "DT_STRING"));
  EXPECT_EQ(r.verify_all(), cases.size() + 3);
}

// Two shards as a sharded V1 Saver writes them: "emb" split over both files.
void write_sharded(const TempDir& dir, bool both = true) {
  std::map<std::string, std::string> shard0, shard1;
  shard0[""] = v1_meta_value({{"emb", 1, {4, 3}, {{{0, 2}, {0, -1}}}}, {"scale", 1, {}, {{}}}});
  shard0[v1_slice_key("emb", {{0, 2}, {0, -1}})] =
      v1_slice_value("emb", {{0, 2}, {0, -1}}, v1_float_values(iota_floats(6, 0)));
  shard0[v1_slice_key("scale", {})] = v1_slice_value("scale", {}, v1_float_values({2.5f}));
  shard1[""] = v1_meta_value({{"emb", 1, {4, 3}, {{{2, 2}, {0, -1}}}}, {"cols", 1, {2, 4}, {{{0, -1}, {0, -1}}}}});
  shard1[v1_slice_key("emb", {{2, 2}, {0, -1}})] =
      v1_slice_value("emb", {{2, 2}, {0, -1}}, v1_float_values(iota_floats(6, 6)));
  shard1[v1_slice_key("cols", {{0, -1}, {0, -1}})] =
      v1_slice_value("cols", {{0, -1}, {0, -1}}, v1_float_values(iota_floats(8, 0)));
  write_file_bytes(dir.file("model.ckpt-00000-of-00002"), v1_table(shard0));
  if (both) write_file_bytes(dir.file("model.ckpt-00001-of-00002"), v1_table(shard1));
}

TEST(CheckpointV1Synthetic, ShardedSaveIsFoundFromEveryPathForm) {
  TempDir dir;
  write_sharded(dir);
  write_file_bytes(dir.file("checkpoint"), "model_checkpoint_path: \"/gone/model.ckpt-" + kAnyShard + "-of-00002\"\n");
  for (const std::string& path : {dir.file("model.ckpt"), dir.file("model.ckpt-00001-of-00002"),
                                  dir.file("model.ckpt-" + kAnyShard + "-of-00002"), dir.file("model.ckpt-" + kAnyShard + "-of-" + kAnyShard),
                                  dir.file("checkpoint"), dir.path(), dir.file("model.ckpt.meta")}) {
    SCOPED_TRACE(path);
    const CheckpointReader r = CheckpointReader::open(path);
    EXPECT_EQ(r.format(), CheckpointFormat::kV1Table);
    EXPECT_EQ(r.num_shards(), 2);
    expect_partitioned_values(r);
  }
}

TEST(CheckpointV1Synthetic, MissingShardIsNamed) {
  TempDir dir;
  write_sharded(dir, false);
  const std::string error = convert_error_of([&] { CheckpointReader::open(dir.file("model.ckpt")); });
  EXPECT_TRUE(has(error, "has 1 of its 2 shard files")) << error;
}

TEST(CheckpointV1Synthetic, DirectoryWithoutStateFileTakesItsOnlyV1Save) {
  TempDir dir;
  write_file_bytes(dir.file("export"), v1_table(partitioned_entries()));
  write_file_bytes(dir.file("export.meta"), "not a table");
  const CheckpointReader r = CheckpointReader::open(dir.path());
  EXPECT_EQ(r.prefix(), dir.file("export"));
  write_file_bytes(dir.file("other.ckpt"), v1_table(partitioned_entries()));
  const std::string error = convert_error_of([&] { CheckpointReader::open(dir.path()); });
  EXPECT_TRUE(has(error, "several V1 checkpoints (export, other.ckpt)")) << error;
}

std::string open_error(const std::map<std::string, std::string>& entries, bool read_all = true) {
  TempDir dir;
  write_file_bytes(dir.file("bad.ckpt"), v1_table(entries));
  return convert_error_of([&] {
    const CheckpointReader r = CheckpointReader::open(dir.file("bad.ckpt"));
    if (read_all)
      for (const std::string& key : r.keys()) r.read(key);
  });
}

TEST(CheckpointV1Synthetic, MissingCoverageNamesTheTensor) {
  std::map<std::string, std::string> e = partitioned_entries();
  e[""] = v1_meta_value({{"emb", 1, {4, 3}, {{{0, 2}, {0, -1}}}}});
  const std::string error = open_error(e);
  EXPECT_TRUE(has(error, "partitioned tensor 'emb' is not fully covered by its 1 slice(s) (6 of 12 elements stored)"))
      << error;
}

TEST(CheckpointV1Synthetic, OverlappingSlicesAreRefused) {
  std::map<std::string, std::string> e;
  e[""] = v1_meta_value({{"v", 1, {3}, {{{0, 2}}, {{1, 2}}}}});
  e[v1_slice_key("v", {{0, 2}})] = v1_slice_value("v", {{0, 2}}, v1_float_values({1, 2}));
  e[v1_slice_key("v", {{1, 2}})] = v1_slice_value("v", {{1, 2}}, v1_float_values({2, 3}));
  const std::string error = open_error(e);
  EXPECT_TRUE(has(error, "tensor 'v' slice 1,2: overlaps another slice")) << error;
}

TEST(CheckpointV1Synthetic, InconsistentEntriesGetOneClearError) {
  const auto base = partitioned_entries();
  const std::string emb0 = v1_slice_key("emb", {{0, 2}, {0, -1}});
  {  // a slice the meta lists but the table lacks
    auto e = base;
    e.erase(emb0);
    const std::string error = open_error(e);
    EXPECT_TRUE(has(error, "bad.ckpt: meta entry (key ''), tensor 0 'emb': slice 0,2:- has no entry (key '\\x00emb"))
        << error;
  }
  {  // fewer values than the slice's shape
    auto e = base;
    e[emb0] = v1_slice_value("emb", {{0, 2}, {0, -1}}, v1_float_values(iota_floats(5, 0)));
    const std::string error = open_error(e);
    EXPECT_TRUE(has(error, "bad.ckpt: tensor 'emb' slice 0,2:- (key '\\x00emb")) << error;
    EXPECT_TRUE(has(error, "TensorProto holds 5 values, the slice needs 6")) << error;
  }
  {  // a TensorProto of another dtype
    auto e = base;
    e[emb0] = v1_slice_value("emb", {{0, 2}, {0, -1}}, v1_varint_values(conv::kTfInt32, 7, {1 << 30, 2 << 28, 3 << 28, 4 << 28, 5 << 28, 6 << 27}));
    const std::string error = open_error(e);
    EXPECT_TRUE(has(error, "TensorProto dtype DT_INT32 differs from the meta's DT_FLOAT at byte")) << error;
  }
  {  // a stored slice naming another tensor
    auto e = base;
    e[emb0] = v1_slice_value("cols", {{0, 2}, {0, -1}}, v1_float_values(iota_floats(6, 0)));
    EXPECT_TRUE(has(open_error(e), "stored slice names tensor 'cols'"));
  }
  {  // no meta entry
    auto e = base;
    e.erase("");
    EXPECT_TRUE(has(open_error(e), "bad.ckpt: V1 checkpoint table has no meta entry (empty key)"));
  }
  {  // a slice of the wrong rank
    auto e = base;
    e[""] = v1_meta_value({{"emb", 1, {4, 3}, {{{0, 2}}}}});
    EXPECT_TRUE(has(open_error(e), "tensor 0 'emb': slice of rank 1 for a tensor of shape [4,3]"));
  }
  {  // a newer format
    auto e = base;
    e[""] = v1_meta_value({{"scale", 1, {}, {{}}}}, 7, 5);
    EXPECT_TRUE(has(open_error(e), "checkpoint version (producer 7, min_consumer 5) is newer than this reader"));
  }
  {  // a huge shape the stored values cannot back
    auto e = base;
    e[""] = v1_meta_value({{"emb", 1, {int64_t(1) << 40, 3}, {{{0, 2}, {0, -1}}, {{2, 2}, {0, -1}}}}});
    EXPECT_TRUE(has(open_error(e), "is not fully covered by its 2 slice(s) (12 of 3298534883328 elements stored)"));
  }
  {  // a slice whose declared size exceeds what its message can hold
    auto e = base;
    e[""] = v1_meta_value({{"scale", 1, {int64_t(1) << 40}, {{{0, -1}}}}});
    e[v1_slice_key("scale", {{0, -1}})] = v1_slice_value("scale", {{0, -1}}, v1_float_values({1}));
    EXPECT_TRUE(has(open_error(e), "1099511627776 elements of DT_FLOAT cannot fit in a TensorProto of"));
  }
}

// Truncations and single-byte damage of a whole file: one ConvertError each (never
// a crash, never another exception); the common cases name the file and offset.
TEST(CheckpointV1Synthetic, TruncatedAndCorruptFilesGetOneClearError) {
  TempDir dir;
  const std::string good = v1_table(partitioned_entries(), 2);
  const std::string path = dir.file("model.ckpt");
  for (size_t keep : {size_t(0), size_t(10), size_t(47), good.size() / 2, good.size() - 1}) {
    write_file_bytes(path, good.substr(0, keep));
    const std::string error = convert_error_of([&] { CheckpointReader::open(path); });
    EXPECT_TRUE(has(error, path)) << keep << ": " << error;
  }
  // The first block's CRC: flip one byte of the first entry's value.
  std::string damaged = good;
  damaged[20] = static_cast<char>(damaged[20] ^ 0x40);
  write_file_bytes(path, damaged);
  const std::string crc_error = convert_error_of([&] { CheckpointReader::open(path); });
  EXPECT_TRUE(has(crc_error, path) && has(crc_error, "CRC")) << crc_error;
  size_t accepted = 0;
  for (size_t pos = 0; pos < good.size(); ++pos) {
    damaged = good;
    damaged[pos] = static_cast<char>(damaged[pos] ^ 0x01);
    write_file_bytes(path, damaged);
    try {
      const CheckpointReader r = CheckpointReader::open(path);
      for (const std::string& key : r.keys()) r.read(key);
      r.verify_all();
      ++accepted;
    } catch (const conv::ConvertError&) {
    }
  }
  EXPECT_LT(accepted, good.size() / 4);  // most damage is caught by the block CRCs
}

// ---- freezing: V1 and V2 give the same model -------------------------------

// y = x * w + b with w [2,3], b [3]; a V1-style saver (RestoreSlice per tensor)
// whose keys differ from the variable names.
std::string v1_saver_graph() {
  auto variable = [](const std::string& name, const std::string& dims) {
    return "node { name: '" + name + "' op: 'VariableV2' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: "
           "'shape' value { shape { " + dims + " } } } }\n" + unary(name + "/read", "Identity", name);
  };
  auto string_scalar = [](const std::string& name, const std::string& value) {
    return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_STRING } } attr { key: "
           "'value' value { tensor { dtype: DT_STRING tensor_shape { } string_val: '" + value + "' } } } }\n";
  };
  std::string g = placeholder("x", "DT_FLOAT", "dim { size: 1 } dim { size: 2 }") +
                   variable("w", "dim { size: 2 } dim { size: 3 }") + variable("b", "dim { size: 3 }") +
                   "node { name: 'mm' op: 'MatMul' input: 'x' input: 'w/read' attr { key: 'T' value { type: DT_FLOAT } } }\n" +
                   binary("y", "Add", "mm", "b/read") + string_scalar("save/Const", "model");
  int i = 0;
  for (const auto& [variable_name, key] : {std::pair<std::string, std::string>{"w", "layer/weights"}, {"b", "layer/bias"}}) {
    const std::string op = "save/restore_slice" + std::string(i ? "_1" : "");
    g += string_scalar(op + "/tensor_name", key) + string_scalar(op + "/shape_and_slice", "") +
         "node { name: '" + op + "' op: 'RestoreSlice' input: 'save/Const' input: '" + op + "/tensor_name' input: '" + op +
         "/shape_and_slice' attr { key: 'dt' value { type: DT_FLOAT } } }\n"
         "node { name: 'save/Assign" + std::string(i ? "_1" : "") + "' op: 'Assign' input: '" + variable_name +
         "' input: '" + op + "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    ++i;
  }
  return g;
}

const std::vector<float> kWeights = {0.5f, -1, 2, 1.5f, 0.25f, -3};
const std::vector<float> kBias = {0.125f, 1, -2};

std::string write_v2_bundle(const TempDir& dir) {
  std::map<std::string, std::string> sorted{{"", single_shard_header()}};
  const std::string w(reinterpret_cast<const char*>(kWeights.data()), kWeights.size() * 4);
  const std::string b(reinterpret_cast<const char*>(kBias.data()), kBias.size() * 4);
  sorted["layer/bias"] = entry_proto(conv::kTfFloat, {3}, 0, 0, b);
  sorted["layer/weights"] = entry_proto(conv::kTfFloat, {2, 3}, 0, b.size(), w);
  write_file_bytes(dir.file("v2.index"), build_table({sorted.begin(), sorted.end()}));
  write_file_bytes(dir.file("v2.data-00000-of-00001"), b + w);
  return dir.file("v2");
}

std::string write_v1_file(const TempDir& dir) {
  std::map<std::string, std::string> e;
  // The weights partitioned by rows, as tf.train.Saver(write_version=V1) stores a partitioned variable.
  e[""] = v1_meta_value({{"layer/bias", 1, {3}, {{{0, -1}}}}, {"layer/weights", 1, {2, 3}, {{{0, 1}, {0, -1}}, {{1, 1}, {0, -1}}}}});
  e[v1_slice_key("layer/bias", {{0, -1}})] = v1_slice_value("layer/bias", {{0, -1}}, v1_float_values(kBias));
  e[v1_slice_key("layer/weights", {{0, 1}, {0, -1}})] =
      v1_slice_value("layer/weights", {{0, 1}, {0, -1}}, v1_float_values({kWeights.begin(), kWeights.begin() + 3}));
  e[v1_slice_key("layer/weights", {{1, 1}, {0, -1}})] =
      v1_slice_value("layer/weights", {{1, 1}, {0, -1}}, v1_float_values({kWeights.begin() + 3, kWeights.end()}));
  write_file_bytes(dir.file("v1.ckpt"), v1_table(e, 1000, snappy_block));
  return dir.file("v1.ckpt");
}

TEST(CheckpointV1Freeze, SameModelAsFromTheV2Bundle) {
  TempDir dir;
  conv::ConvertOptions options = text_graph_options(v1_saver_graph(), {"y"});
  options.checkpoint_path = write_v2_bundle(dir);
  const ConvertOutcome from_v2 = try_convert(options);
  ASSERT_TRUE(from_v2.error.empty()) << from_v2.error;
  options.checkpoint_path = write_v1_file(dir);
  const ConvertOutcome from_v1 = try_convert(options);
  ASSERT_TRUE(from_v1.error.empty()) << from_v1.error;
  EXPECT_EQ(from_v1.model, from_v2.model);
  const auto out = run_model(from_v1.model, {{"x", make_f32({1, 2}, {1, 2})}});
  ASSERT_EQ(out.size(), 1u);
  // [1,2] x [[0.5,-1,2],[1.5,0.25,-3]] + [0.125,1,-2]
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{3.625f, 0.5f, -6.0f}));
}

// ---- the corpus' V1 files ------------------------------------------------------

struct CorpusV1File {
  const char* path;
  std::vector<std::string> listing;  // "name  DTYPE shape" lines of --info
};

const std::vector<CorpusV1File>& corpus_v1_files() {
  static const std::vector<CorpusV1File> files = {
      {"tensorflow_haskell/tensorflow-mnist/data/MNISTWts.ckpt", {"weights  DT_FLOAT [784,10]"}},
      {"tensorflow_haskell/tensorflow-mnist/data/MNISTBias.ckpt", {"bias  DT_FLOAT [10]"}},
      {"tensorflow_serving/servables/tensorflow/testdata/bad_half_plus_two/00000123/export",
       {"Variable  DT_FLOAT []", "Variable_1  DT_FLOAT []"}},
      {"tensorflow_serving/session_bundle/testdata/half_plus_two/00000123/export-00000-of-00001",
       {"a  DT_FLOAT []", "b  DT_FLOAT []"}},
  };
  return files;
}

TEST(CheckpointV1Corpus, InfoListsEveryTensorOfEachV1File) {
  for (const CorpusV1File& f : corpus_v1_files()) {
    FLOE_REQUIRE_CORPUS(f.path);
    const CommandResult r = run_command(tool_path("floe-convert") + " --info --checkpoint " + corpus_path(f.path) + " 2>&1");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(has(r.output, "(V1, 1 file(s), " + std::to_string(f.listing.size()) + " tensors)")) << r.output;
    for (const std::string& line : f.listing) EXPECT_TRUE(has(r.output, "\n  " + line + "\n")) << line << "\n" << r.output;
  }
}

TEST(CheckpointV1Corpus, ValuesAndEveryPathForm) {
  const std::string bad = "tensorflow_serving/servables/tensorflow/testdata/bad_half_plus_two/00000123";
  const std::string bundle = "tensorflow_serving/session_bundle/testdata/half_plus_two/00000123";
  FLOE_REQUIRE_CORPUS(bad + "/export");
  FLOE_REQUIRE_CORPUS(bundle + "/export-00000-of-00001");
  // The state file holds the writer's absolute /tmp path: found beside it.
  for (const std::string& path : {bad, bad + "/checkpoint", bad + "/export", bad + "/export.meta"}) {
    const CheckpointReader r = CheckpointReader::open(corpus_path(path));
    EXPECT_EQ(values_of<float>(r.read("Variable")), std::vector<float>{0.5f}) << path;
    EXPECT_EQ(values_of<float>(r.read("Variable_1")), std::vector<float>{2.0f}) << path;
  }
  for (const std::string& path : {bundle, bundle + "/export", bundle + "/export-00000-of-00001",
                                  bundle + "/export-" + kAnyShard + "-of-" + kAnyShard, bundle + "/export.meta"}) {
    const CheckpointReader r = CheckpointReader::open(corpus_path(path));
    EXPECT_EQ(r.prefix(), corpus_path(bundle + "/export")) << path;
    EXPECT_EQ(values_of<float>(r.read("a")), std::vector<float>{0.5f}) << path;
    EXPECT_EQ(values_of<float>(r.read("b")), std::vector<float>{2.0f}) << path;
  }
  const std::string mnist = "tensorflow_haskell/tensorflow-mnist/data/MNISTWts.ckpt";
  FLOE_REQUIRE_CORPUS(mnist);
  const CheckpointReader r = CheckpointReader::open(corpus_path(mnist));
  const HostTensor weights = r.read("weights");
  EXPECT_EQ(weights.shape, (std::vector<int64_t>{784, 10}));
  EXPECT_EQ(weights.data.size(), 7840u * 4);
}

// The serving export frozen from its V1 file, and from a V2 bundle written here
// with the same values: the same model, computing y = 0.5 x + 2.
TEST(CheckpointV1Corpus, FreezesLikeTheSameValuesAsV2) {
  const std::string dir = "tensorflow_serving/servables/tensorflow/testdata/bad_half_plus_two/00000123";
  FLOE_REQUIRE_CORPUS(dir + "/export.meta");
  conv::ConvertOptions options;
  options.graph_path = corpus_path(dir + "/export.meta");
  options.outputs = {"Add"};
  const ConvertOutcome from_v1 = try_convert(options);  // the checkpoint beside the .meta
  ASSERT_TRUE(from_v1.error.empty()) << from_v1.error;

  TempDir v2;
  std::map<std::string, std::string> sorted{{"", single_shard_header()}};
  const float a = 0.5f, b = 2.0f;
  const std::string a_bytes(reinterpret_cast<const char*>(&a), 4), b_bytes(reinterpret_cast<const char*>(&b), 4);
  sorted["Variable"] = entry_proto(conv::kTfFloat, {}, 0, 0, a_bytes);
  sorted["Variable_1"] = entry_proto(conv::kTfFloat, {}, 0, 4, b_bytes);
  write_file_bytes(v2.file("v2.index"), build_table({sorted.begin(), sorted.end()}));
  write_file_bytes(v2.file("v2.data-00000-of-00001"), a_bytes + b_bytes);
  options.checkpoint_path = v2.file("v2");
  const ConvertOutcome from_v2 = try_convert(options);
  ASSERT_TRUE(from_v2.error.empty()) << from_v2.error;
  EXPECT_EQ(from_v1.model, from_v2.model);

  for (float x : {0.0f, 1.0f, 4.0f}) {
    const auto out = run_model(from_v1.model, {{"Placeholder", make_f32({}, {x})}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(as_floats(out[0]), std::vector<float>{0.5f * x + 2.0f}) << x;
  }
}

// ---- fuzz_ckpt_v1 seeds ----------------------------------------------------------

// The conv_seed example's variable "kernel" float [3,3,3,1] in the V1 forms the
// fuzz harness starts from: whole, partitioned, Snappy blocks, beside other dtypes.
// FLOE_WRITE_FUZZ_SEEDS=1 rewrites tests/fuzz/corpus/fuzz_ckpt_v1, otherwise the
// committed files must be this writer's output.
TEST(CheckpointV1Synthetic, FuzzSeedsAreTheWritersOutput) {
  const std::string dir = std::string(FLOE_SOURCE_DIR) + "/tests/fuzz/corpus/fuzz_ckpt_v1/";
  const std::vector<float> kernel = iota_floats(27, -13);
  std::map<std::string, std::string> whole;
  whole[""] = v1_meta_value({{"kernel", 1, {3, 3, 3, 1}, {{{0, -1}, {0, -1}, {0, -1}, {0, -1}}}}});
  whole[v1_slice_key("kernel", {{0, -1}, {0, -1}, {0, -1}, {0, -1}})] =
      v1_slice_value("kernel", {{0, -1}, {0, -1}, {0, -1}, {0, -1}}, v1_float_values(kernel));
  std::map<std::string, std::string> parts;
  parts[""] = v1_meta_value(
      {{"kernel", 1, {3, 3, 3, 1}, {{{0, 1}, {0, -1}, {0, -1}, {0, -1}}, {{1, 2}, {0, -1}, {0, -1}, {0, -1}}}}});
  parts[v1_slice_key("kernel", {{0, 1}, {0, -1}, {0, -1}, {0, -1}})] = v1_slice_value(
      "kernel", {{0, 1}, {0, -1}, {0, -1}, {0, -1}}, v1_float_values({kernel.begin(), kernel.begin() + 9}));
  parts[v1_slice_key("kernel", {{1, 2}, {0, -1}, {0, -1}, {0, -1}})] = v1_slice_value(
      "kernel", {{1, 2}, {0, -1}, {0, -1}, {0, -1}}, v1_float_values({kernel.begin() + 9, kernel.end()}));
  std::map<std::string, std::string> mixed = whole;
  mixed[""] = v1_meta_value({{"kernel", 1, {3, 3, 3, 1}, {{{0, -1}, {0, -1}, {0, -1}, {0, -1}}}},
                             {"step", conv::kTfInt64, {}, {{}}},
                             {"half", conv::kTfHalf, {2}, {{{0, -1}}}},
                             {"flags", conv::kTfBool, {2}, {{{0, -1}}}}});
  mixed[v1_slice_key("step", {})] = v1_slice_value("step", {}, v1_varint_values(conv::kTfInt64, 10, {1234}));
  mixed[v1_slice_key("half", {{0, -1}})] =
      v1_slice_value("half", {{0, -1}}, v1_varint_values(conv::kTfHalf, 13, {0x3C00, 0xC000}));
  mixed[v1_slice_key("flags", {{0, -1}})] =
      v1_slice_value("flags", {{0, -1}}, v1_varint_values(conv::kTfBool, 11, {1, 0}));
  const std::vector<std::pair<std::string, std::string>> seeds = {
      {"kernel_whole.ckpt", v1_table(whole)},
      {"kernel_two_slices.ckpt", v1_table(parts, 1)},
      {"kernel_snappy.ckpt", v1_table(parts, 2, snappy_block)},
      {"kernel_and_other_dtypes.ckpt", v1_table(mixed, 2)},
  };
  const bool write = std::getenv("FLOE_WRITE_FUZZ_SEEDS") != nullptr;
  for (const auto& [name, bytes] : seeds) {
    if (write) write_file_bytes(dir + name, bytes);
    EXPECT_EQ(read_file_bytes(dir + name), bytes) << name << " differs from the writer's output (FLOE_WRITE_FUZZ_SEEDS=1 rewrites it)";
    // Each seed is a valid checkpoint holding the kernel.
    TempDir scratch;
    write_file_bytes(scratch.file("model.ckpt"), bytes);
    EXPECT_EQ(values_of<float>(CheckpointReader::open(scratch.file("model.ckpt")).read("kernel")), kernel) << name;
  }
}

// The TF Serving session bundle (export.meta + the sharded V1 export-00000-of-00001):
// fed at x (its tf_example parsing is not converted), y = 0.5 x + 2.
TEST(CheckpointV1Corpus, SessionBundleConvertsFromItsShardedV1Save) {
  const std::string meta = "tensorflow_serving/session_bundle/testdata/half_plus_two/00000123/export.meta";
  FLOE_REQUIRE_CORPUS(meta);
  conv::ConvertOptions options;
  options.graph_path = corpus_path(meta);
  options.outputs = {"y"};
  options.inputs = {"x"};
  const ConvertOutcome r = try_convert(options);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(has(r.summary, "froze 2 variable(s)")) << r.summary;
  const auto out = run_model(r.model, {{"x", make_f32({1, 1}, {3})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(as_floats(out[0]), std::vector<float>{3.5f});
}

}  // namespace
}  // namespace floe::testing
