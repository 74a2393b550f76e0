// SPDX-License-Identifier: Apache-2.0
// Malformed and unsupported inputs: corrupted data and index bytes (on copies in a
// temp dir, never under ../shared), truncation at every length, byte flips at every
// position, missing keys and prefixes, and a non-checkpoint file (not called V1).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include <algorithm>

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/frontend/checkpoint/crc32c.h"
#include "tests/converter/support/checkpoint_test_util.h"
#include "tests/support/corpus.h"

namespace floe::conv {
namespace {

using floe::testing::convert_error_of;
using floe::testing::corpus_path;
using floe::testing::TempDir;

constexpr const char* kRegression = "tf2onnx/models/regression/checkpoint";

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Opens and reads everything; any failure must be a ConvertError (never a crash).
// Every tensor's dtype, shape and bytes, by key, after the reader's own checks.
std::map<std::string, std::string> open_and_read_all(const std::string& prefix) {
  const CheckpointReader reader = CheckpointReader::open(prefix);
  std::map<std::string, std::string> tensors;
  for (const std::string& key : reader.keys()) {
    const HostTensor t = reader.read(key);
    std::string value = std::to_string(static_cast<int>(t.dtype)) + ":";
    for (int64_t d : t.shape) value += std::to_string(d) + ",";
    tensors[key] = value + ":" + std::string(t.data.begin(), t.data.end());
  }
  reader.verify_all();
  return tensors;
}

TEST(CheckpointCorruption, FlippedDataByteNamesKeyFileAndOffset) {
  FLOE_REQUIRE_CORPUS(std::string(kRegression) + "/model.index");
  TempDir dir;
  testing::copy_dir_files(corpus_path(kRegression), dir.path());
  const CheckpointReader reader = CheckpointReader::open(dir.path());
  const CheckpointEntry& b = reader.entry("b");  // data file holds W then b (4 bytes each)
  std::string data = testing::read_file_bytes(dir.file("model.data-00000-of-00001"));
  data[b.offset] ^= 0x01;
  testing::write_file_bytes(dir.file("model.data-00000-of-00001"), data);

  const std::string error = convert_error_of([&] { reader.read("b"); });
  EXPECT_TRUE(contains(error, dir.file("model.data-00000-of-00001") + ": tensor 'b' at offset " +
                                  std::to_string(b.offset) + " size 4: CRC32C mismatch"))
      << error;
  const std::string verify_error = convert_error_of([&] { reader.verify_all(); });
  EXPECT_TRUE(contains(verify_error, "tensor 'b'")) << verify_error;
  EXPECT_NO_THROW(reader.read("W"));
}

TEST(CheckpointCorruption, FlippedIndexByteNamesBlockOffset) {
  FLOE_REQUIRE_CORPUS(std::string(kRegression) + "/model.index");
  TempDir dir;
  testing::copy_dir_files(corpus_path(kRegression), dir.path());
  std::string index = testing::read_file_bytes(dir.file("model.index"));
  index[12] ^= 0x20;  // inside key "W" of the only data block
  testing::write_file_bytes(dir.file("model.index"), index);
  const std::string error = convert_error_of([&] { CheckpointReader::open(dir.path()); });
  EXPECT_TRUE(contains(error, "model.index: data block at offset 0 (size ")) << error;
  EXPECT_TRUE(contains(error, "CRC mismatch (stored 0x")) << error;
}

TEST(CheckpointCorruption, TruncatedIndexAtEveryLengthFailsCleanly) {
  FLOE_REQUIRE_CORPUS(std::string(kRegression) + "/model.index");
  TempDir dir;
  testing::copy_dir_files(corpus_path(kRegression), dir.path());
  const std::string index = testing::read_file_bytes(dir.file("model.index"));
  for (size_t length = 0; length < index.size(); ++length) {
    testing::write_file_bytes(dir.file("model.index"), index.substr(0, length));
    const std::string error = convert_error_of([&] { CheckpointReader::open(dir.file("model")); });
    EXPECT_TRUE(contains(error, "model.index")) << length << ": " << error;
  }
  testing::write_file_bytes(dir.file("model.index"), index.substr(0, 100));
  const std::string error = convert_error_of([&] { CheckpointReader::open(dir.file("model")); });
  EXPECT_TRUE(contains(error, "bad table magic")) << error;
}

TEST(CheckpointCorruption, TruncatedDataFileFailsAtOpen) {
  FLOE_REQUIRE_CORPUS(std::string(kRegression) + "/model.index");
  TempDir dir;
  testing::copy_dir_files(corpus_path(kRegression), dir.path());
  testing::write_file_bytes(
      dir.file("model.data-00000-of-00001"),
      testing::read_file_bytes(dir.file("model.data-00000-of-00001")).substr(0, 6));
  const std::string error = convert_error_of([&] { CheckpointReader::open(dir.path()); });
  EXPECT_TRUE(
      contains(error, "model.data-00000-of-00001: tensor 'b' at offset 4 size 4 runs past the end"))
      << error;
}

// Every single-byte corruption of an index (plain and Snappy) is refused with
// a ConvertError, or harmless: the reader then gives every tensor unchanged.
TEST(CheckpointCorruption, EveryIndexByteFlipIsHandled) {
  for (const std::string& rel : {std::string(kRegression) + "/model",
                                 std::string("tensorflow_serving/servables/tensorflow/testdata/"
                                             "saved_model_half_plus_two_cpu/00000123/"
                                             "variables/variables")}) {
    FLOE_REQUIRE_CORPUS(rel + ".index");
    TempDir dir;
    const std::string source_dir = corpus_path(rel.substr(0, rel.find_last_of('/')));
    const std::string stem = rel.substr(rel.find_last_of('/') + 1);
    testing::copy_dir_files(source_dir, dir.path());
    const std::map<std::string, std::string> original = open_and_read_all(dir.file(stem));
    const std::string index = testing::read_file_bytes(dir.file(stem + ".index"));
    size_t refused = 0, harmless = 0;
    for (size_t pos = 0; pos < index.size(); ++pos) {
      for (int mask : {0x01, 0x80, 0xFF}) {
        std::string damaged = index;
        damaged[pos] = static_cast<char>(damaged[pos] ^ mask);
        testing::write_file_bytes(dir.file(stem + ".index"), damaged);
        try {
          EXPECT_EQ(open_and_read_all(dir.file(stem)), original) << rel << ": byte " << pos << " ^ " << mask;
          ++harmless;
        } catch (const ConvertError&) {
          ++refused;
        }
      }
    }
    // The block CRCs cover the entries: most flips must be refused.
    EXPECT_GT(refused, harmless) << rel;
    std::printf("%s: %zu flips refused, %zu harmless\n", rel.c_str(), refused, harmless);
  }
}

// Same, but the block trailer CRC is recomputed so the damage reaches the block,
// Snappy and protobuf decoders instead of stopping at the CRC check.
TEST(CheckpointCorruption, EveryBlockByteFlipBehindAValidCrcIsHandled) {
  for (const std::string& rel : {std::string(kRegression) + "/model",
                                 std::string("tensorflow_serving/servables/tensorflow/testdata/"
                                             "saved_model_half_plus_two_cpu/00000123/"
                                             "variables/variables"),
                                 std::string("mlperf_tiny_qualcomm/KWS/trained_models/kws.ckpt")}) {
    FLOE_REQUIRE_CORPUS(rel + ".index");
    TempDir dir;
    const std::string stem = rel.substr(rel.find_last_of('/') + 1);
    testing::copy_dir_files(corpus_path(rel.substr(0, rel.find_last_of('/'))), dir.path());
    const std::string index = testing::read_file_bytes(dir.file(stem + ".index"));
    // Every corpus index is one data block at offset 0, followed by its trailer and
    // the metaindex block, whose offset is the footer's first varint.
    size_t metaindex_offset = 0;
    for (size_t i = index.size() - 48, shift = 0;; ++i, shift += 7) {
      metaindex_offset |= size_t(static_cast<uint8_t>(index[i]) & 0x7F) << shift;
      if ((static_cast<uint8_t>(index[i]) & 0x80) == 0) break;
    }
    const size_t data_block_size = metaindex_offset - 5;
    ASSERT_LT(data_block_size, index.size());
    // KWS: the first 600 bytes already span several entries and a restart point.
    for (size_t pos = 0; pos < std::min<size_t>(data_block_size, 600); ++pos) {
      for (int mask : {0x01, 0x40, 0x80, 0xFF}) {
        std::string damaged = index;
        damaged[pos] = static_cast<char>(damaged[pos] ^ mask);
        const uint32_t crc =
            ckpt::crc32c(damaged.data(), data_block_size + 1);  // contents + type byte
        std::string trailer_crc;
        testing::put_le32(trailer_crc, ckpt::crc32c_mask(crc));
        damaged.replace(data_block_size + 1, 4, trailer_crc);
        testing::write_file_bytes(dir.file(stem + ".index"), damaged);
        try {
          // Reading 290 KB of KWS tensors per mutation would dominate; the index is the target.
          if (data_block_size > 1000) {
            CheckpointReader::open(dir.file(stem));
          } else {
            open_and_read_all(dir.file(stem));
          }
        } catch (const ConvertError&) {
        }
      }
    }
  }
}

TEST(CheckpointCorruption, MissingKeyListsAvailableKeys) {
  FLOE_REQUIRE_CORPUS(std::string(kRegression) + "/model.index");
  const CheckpointReader reader = CheckpointReader::open(corpus_path(kRegression));
  const std::string error = convert_error_of([&] { reader.read("foo"); });
  EXPECT_TRUE(contains(error, "checkpoint '" + corpus_path(kRegression) +
                                  "/model': no tensor named 'foo' (available: W, b)"))
      << error;
  EXPECT_FALSE(reader.contains("foo"));
  EXPECT_EQ(convert_error_of([&] { reader.entry("foo"); }), error);
}

TEST(CheckpointCorruption, NonexistentPrefixIsNamed) {
  TempDir dir;
  const std::string prefix = dir.file("nope/model.ckpt-1000");
  const std::string error = convert_error_of([&] { CheckpointReader::open(prefix); });
  EXPECT_TRUE(contains(error, "checkpoint prefix '" + prefix + "' not found")) << error;
  const std::string from_index =
      convert_error_of([&] { CheckpointReader::open(prefix + ".index"); });
  EXPECT_TRUE(contains(from_index, prefix + ".index' does not exist")) << from_index;
  const std::string empty_dir = convert_error_of([&] { CheckpointReader::open(dir.path()); });
  EXPECT_TRUE(contains(empty_dir, "no 'checkpoint' state file")) << empty_dir;
}

TEST(CheckpointCorruption, StateFileNamingMissingCheckpoint) {
  TempDir dir;
  testing::write_file_bytes(dir.file("checkpoint"),
                            "model_checkpoint_path: \"/elsewhere/model.ckpt-5\"\n");
  const std::string error = convert_error_of([&] { CheckpointReader::open(dir.path()); });
  EXPECT_TRUE(contains(error, "names checkpoint '/elsewhere/model.ckpt-5'")) << error;
  EXPECT_TRUE(contains(error, dir.file("model.ckpt-5.index"))) << error;
}

TEST(CheckpointV1, NonCheckpointFileIsNotCalledV1) {
  FLOE_REQUIRE_CORPUS("tensorflow_haskell/tensorflow-mnist/data/MNIST.pb");
  const std::string error = convert_error_of([&] {
    CheckpointReader::open(corpus_path("tensorflow_haskell/tensorflow-mnist/data/MNIST.pb"));
  });
  EXPECT_TRUE(contains(error, "is not a checkpoint")) << error;
  EXPECT_FALSE(contains(error, "V1")) << error;
}

}  // namespace
}  // namespace floe::conv
