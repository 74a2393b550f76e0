// SPDX-License-Identifier: Apache-2.0
// The checkpoint reader against real TensorFlow-written bundles from
// ../shared/corpus (see its MANIFEST.md): Snappy-compressed indexes, state files
// with relative and stale absolute paths, a two-shard save, string tensors.
#include <gtest/gtest.h>

#include <filesystem>

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/ir/tf_dtype.h"
#include "tests/converter/support/checkpoint_test_util.h"
#include "tests/support/corpus.h"

namespace floe::conv {
namespace {

using floe::testing::convert_error_of;
using floe::testing::corpus_path;

constexpr const char* kServingTestdata = "tensorflow_serving/servables/tensorflow/testdata";

std::string serving_variables(const std::string& model) {
  return std::string(kServingTestdata) + "/" + model + "/00000123/variables/variables";
}

float scalar_float(const CheckpointReader& reader, const std::string& key) {
  const HostTensor t = reader.read(key);
  EXPECT_EQ(t.dtype, DType::kFloat32) << key;
  EXPECT_TRUE(t.shape.empty()) << key;
  EXPECT_EQ(t.data.size(), 4u) << key;
  return t.data.size() == 4 ? t.as<float>()[0] : 0.0f;
}

// Reads every key: usable dtypes must load with the right byte count, the rest must
// fail with the dtype message. Returns how many loaded.
size_t read_every_key(const CheckpointReader& reader) {
  size_t loaded = 0;
  for (const std::string& key : reader.keys()) {
    const CheckpointEntry& e = reader.entry(key);
    if (tf_dtype_to_floe(e.tf_dtype) == DType::kInvalid) {
      const std::string error = convert_error_of([&] { reader.read(key); });
      EXPECT_NE(error.find("which floe cannot use for inference"), std::string::npos) << error;
      continue;
    }
    const HostTensor t = reader.read(key);
    EXPECT_EQ(t.shape, e.shape) << key;
    EXPECT_EQ(t.data.size(), size_t(t.num_elements()) * dtype_size(t.dtype)) << key;
    ++loaded;
  }
  return loaded;
}

TEST(CorpusCheckpoint, HalfPlusTwoSnappyIndex) {
  const std::string rel = serving_variables("saved_model_half_plus_two_cpu");
  FLOE_REQUIRE_CORPUS(rel + ".index");
  const CheckpointReader reader = CheckpointReader::open(corpus_path(rel));
  EXPECT_TRUE(reader.contains("a"));
  EXPECT_TRUE(reader.contains("b"));
  EXPECT_EQ(scalar_float(reader, "a"), 0.5f);
  EXPECT_EQ(scalar_float(reader, "b"), 2.0f);
  EXPECT_EQ(reader.verify_all(), reader.keys().size());
}

TEST(CorpusCheckpoint, EveryServingVariablesBundleVerifies) {
  FLOE_REQUIRE_CORPUS(kServingTestdata);
  size_t bundles = 0;
  for (const auto& item :
       std::filesystem::recursive_directory_iterator(corpus_path("tensorflow_serving"))) {
    const std::string path = item.path().string();
    if (item.path().filename() != "variables.index") continue;
    SCOPED_TRACE(path);
    const CheckpointReader reader = CheckpointReader::open(path);
    EXPECT_FALSE(reader.keys().empty());
    EXPECT_EQ(reader.verify_all(), reader.keys().size());
    EXPECT_GT(read_every_key(reader), 0u);
    ++bundles;
  }
  EXPECT_EQ(bundles, 10u);  // MANIFEST: the serving SavedModels with a variables/ bundle
}

TEST(CorpusCheckpoint, HalfPlusThreeValues) {
  const std::string rel = serving_variables("saved_model_half_plus_three");
  FLOE_REQUIRE_CORPUS(rel + ".index");
  const CheckpointReader reader = CheckpointReader::open(corpus_path(rel));
  EXPECT_EQ(scalar_float(reader, "a"), 0.5f);
  EXPECT_EQ(scalar_float(reader, "b"), 3.0f);
}

TEST(CorpusCheckpoint, Tf2SavedModelStringTensorIsVerifiedButNotLoadable) {
  const std::string rel = serving_variables("saved_model_half_plus_two_tf2_cpu");
  FLOE_REQUIRE_CORPUS(rel + ".index");
  const CheckpointReader reader = CheckpointReader::open(corpus_path(rel));
  const std::string graph_key = "_CHECKPOINTABLE_OBJECT_GRAPH";
  ASSERT_TRUE(reader.contains(graph_key));
  EXPECT_EQ(reader.entry(graph_key).tf_dtype, kTfString);
  EXPECT_EQ(reader.verify_all(), reader.keys().size());  // includes the string CRC rule
  const std::string error = convert_error_of([&] { reader.read(graph_key); });
  EXPECT_NE(
      error.find("tensor '_CHECKPOINTABLE_OBJECT_GRAPH' has dtype DT_STRING, which floe cannot use "
                 "for inference"),
      std::string::npos)
      << error;
}

TEST(CorpusCheckpoint, TensorflowRustBundles) {
  for (const char* rel : {"tensorflow_rust/examples/regression_savedmodel/variables/variables",
                          "tensorflow_rust/test_resources/regression-model/variables/variables"}) {
    FLOE_REQUIRE_CORPUS(std::string(rel) + ".index");
    SCOPED_TRACE(rel);
    const CheckpointReader reader = CheckpointReader::open(corpus_path(rel));
    EXPECT_EQ(reader.verify_all(), reader.keys().size());
    EXPECT_GT(read_every_key(reader), 0u);
  }
}

TEST(CorpusCheckpoint, SavedModelDirectoryResolvesToItsVariables) {
  const std::string rel = "tf2onnx/models/regression/saved_model";
  FLOE_REQUIRE_CORPUS(rel + "/variables/variables.index");
  EXPECT_EQ(resolve_checkpoint_prefix(corpus_path(rel)), corpus_path(rel) + "/variables/variables");
  EXPECT_EQ(resolve_checkpoint_prefix(corpus_path(rel + "/variables")),
            corpus_path(rel) + "/variables/variables");
}

TEST(CorpusCheckpoint, Tf2onnxDirectoryWithStateFile) {
  const std::string rel = "tf2onnx/models/regression/checkpoint";
  FLOE_REQUIRE_CORPUS(rel + "/checkpoint");
  const std::string dir = corpus_path(rel);
  EXPECT_EQ(resolve_checkpoint_prefix(dir), dir + "/model");
  EXPECT_EQ(resolve_checkpoint_prefix(dir + "/checkpoint"), dir + "/model");
  EXPECT_EQ(resolve_checkpoint_prefix(dir + "/model.meta"), dir + "/model");
  EXPECT_EQ(resolve_checkpoint_prefix(dir + "/model.data-00000-of-00001"), dir + "/model");
  const CheckpointReader reader = CheckpointReader::open(dir);
  EXPECT_EQ(reader.keys(), (std::vector<std::string>{"W", "b"}));
  EXPECT_EQ(read_every_key(reader), 2u);
  EXPECT_EQ(reader.verify_all(), 2u);
}

TEST(CorpusCheckpoint, Dl4jStaleAbsolutePathFallsBackToStateFileDir) {
  const std::string rel = "dl4j_tf_graphs/nd4j_convert/simple_graph";
  FLOE_REQUIRE_CORPUS(rel + "/checkpoint");
  const std::string dir = corpus_path(rel);
  ASSERT_NE(testing::read_file_bytes(dir + "/checkpoint").find("/home/agibsonccc/"),
            std::string::npos);
  EXPECT_EQ(resolve_checkpoint_prefix(dir), dir + "/data-all-1000");
  const CheckpointReader reader = CheckpointReader::open(dir);
  EXPECT_EQ(reader.prefix(), dir + "/data-all-1000");
  EXPECT_FALSE(reader.keys().empty());
  EXPECT_EQ(read_every_key(reader), reader.keys().size());
  EXPECT_EQ(reader.verify_all(), reader.keys().size());
}

TEST(CorpusCheckpoint, Tensor2tensorTwoShards) {
  const std::string rel = "tensor2tensor/transformer_test_ckpt";
  FLOE_REQUIRE_CORPUS(rel + "/model.ckpt-1.data-00001-of-00002");
  const CheckpointReader reader = CheckpointReader::open(corpus_path(rel));
  EXPECT_EQ(reader.prefix(), corpus_path(rel) + "/model.ckpt-1");
  EXPECT_EQ(reader.num_shards(), 2);
  const std::vector<std::string> keys = reader.keys();
  EXPECT_EQ(reader.verify_all(), keys.size());
  bool shard_used[2] = {false, false};
  for (const std::string& key : keys) shard_used[reader.entry(key).shard_id] = true;
  EXPECT_TRUE(shard_used[0]);
  EXPECT_TRUE(shard_used[1]);
  EXPECT_GT(read_every_key(reader), 0u);
}

TEST(CorpusCheckpoint, MlperfTinyKwsReadsAllKeys) {
  const std::string rel = "mlperf_tiny_qualcomm/KWS/trained_models";
  FLOE_REQUIRE_CORPUS(rel + "/kws.ckpt.index");
  const CheckpointReader reader = CheckpointReader::open(corpus_path(rel));
  EXPECT_EQ(reader.prefix(), corpus_path(rel) + "/kws.ckpt");
  EXPECT_EQ(read_every_key(reader), reader.keys().size());
  EXPECT_EQ(reader.verify_all(), reader.keys().size());
}

}  // namespace
}  // namespace floe::conv
