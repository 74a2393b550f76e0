// SPDX-License-Identifier: Apache-2.0
// End-to-end on real TensorFlow files: what floe freezes from a checkpoint
// must compute what TensorFlow's own frozen graph computes, and frozen graphs
// must reproduce the outputs TensorFlow recorded.
#include <gtest/gtest.h>

#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

std::vector<uint8_t> convert_or_fail(conv::ConvertOptions options) {
  try {
    return conv::convert(options).model;
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
    return {};
  }
}

// tf2onnx regression: the .meta + checkpoint, frozen by floe, equals the graph
// TensorFlow froze (pred = W * X + b) on random inputs, bit for bit.
TEST(CorpusE2E, RegressionCheckpointMatchesTfFrozenGraph) {
  FLOE_REQUIRE_CORPUS("tf2onnx/models/regression/checkpoint/model.meta");
  conv::ConvertOptions from_checkpoint;
  from_checkpoint.graph_path = corpus_path("tf2onnx/models/regression/checkpoint/model.meta");
  from_checkpoint.checkpoint_path = corpus_path("tf2onnx/models/regression/checkpoint");
  from_checkpoint.outputs = {"pred"};
  from_checkpoint.input_shapes = {{"X", {16}}};
  conv::ConvertOptions frozen = from_checkpoint;
  frozen.graph_path = corpus_path("tf2onnx/models/regression/graphdef/frozen.pb");
  frozen.checkpoint_path.clear();

  const auto a = convert_or_fail(from_checkpoint), b = convert_or_fail(frozen);
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const HostTensor x = random_f32({16}, seed, -10.0f, 10.0f);
    const auto ya = run_model(a, {{"X", x}}), yb = run_model(b, {{"X", x}});
    ASSERT_EQ(ya.size(), 1u);
    ASSERT_EQ(yb.size(), 1u);
    EXPECT_EQ(as_floats(ya[0]), as_floats(yb[0])) << "seed " << seed;
  }
}

// dl4j nd4j_convert/simple_graph: the `checkpoint` state file holds a stale
// absolute path from the writer's machine; the directory is still usable.
TEST(CorpusE2E, SimpleGraphMetaAndCheckpointMatchFrozenGraph) {
  const std::string dir = "dl4j_tf_graphs/nd4j_convert/simple_graph";
  FLOE_REQUIRE_CORPUS(dir + "/data-all-1000.meta");
  conv::ConvertOptions meta;
  meta.graph_path = corpus_path(dir + "/data-all-1000.meta");
  meta.checkpoint_path = corpus_path(dir);
  meta.outputs = {"output"};
  conv::ConvertOptions frozen = meta;
  frozen.graph_path = corpus_path(dir + "/frozen_model.pb");
  frozen.checkpoint_path.clear();
  const auto a = convert_or_fail(meta), b = convert_or_fail(frozen);
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  const HostTensor x0 = random_f32({4}, 7), x1 = random_f32({4}, 8);
  const auto ya = run_model(a, {{"input_0", x0}, {"input_1", x1}});
  const auto yb = run_model(b, {{"input_0", x0}, {"input_1", x1}});
  ASSERT_EQ(ya.size(), 1u);
  ASSERT_EQ(yb.size(), 1u);
  EXPECT_EQ(as_floats(ya[0]), as_floats(yb[0]));

  // The variable itself, frozen from the checkpoint: a model with no inputs.
  conv::ConvertOptions variable = meta;
  variable.outputs = {"Variable/read"};
  const auto v = convert_or_fail(variable);
  ASSERT_FALSE(v.empty());
  const auto value = run_model(v, {});
  ASSERT_EQ(value.size(), 1u);
  EXPECT_EQ(value[0].shape, (std::vector<int64_t>{4}));
}

// dl4j examples with TF-computed outputs (input.placeholder.csv -> output.prediction.csv).
void expect_matches_tf(const std::string& dir, const std::vector<std::string>& outputs) {
  const std::string base = corpus_path("dl4j_tf_graphs/examples/" + dir + "/");
  conv::ConvertOptions options;
  options.graph_path = base + "frozen_model.pb";
  options.outputs = outputs;
  const HostTensor input = read_csv_tensor(base + "input.placeholder.csv", base + "input.placeholder.shape");
  options.input_shapes = {{"input", input.shape}};
  const auto model = convert_or_fail(options);
  ASSERT_FALSE(model.empty());
  const auto got = run_model(model, {{"input", input}});
  ASSERT_EQ(got.size(), outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const HostTensor expected = read_csv_tensor(base + outputs[i] + ".prediction.csv",
                                                base + outputs[i] + ".prediction.shape");
    EXPECT_EQ(got[i].shape, expected.shape);
    // The CSVs hold 8 decimals; float32 kernels agree to ~1e-6.
    EXPECT_LT(max_abs_diff(as_floats(got[i]), as_floats(expected)), 1e-5f) << outputs[i];
  }
}

TEST(CorpusE2E, Mnist00MatchesTensorFlow) {
  FLOE_REQUIRE_CORPUS("dl4j_tf_graphs/examples/mnist_00/frozen_model.pb");
  expect_matches_tf("mnist_00", {"output"});
}

TEST(CorpusE2E, Mlp00MatchesTensorFlow) {
  FLOE_REQUIRE_CORPUS("dl4j_tf_graphs/examples/mlp_00/frozen_model.pb");
  expect_matches_tf("mlp_00", {"output"});
}

}  // namespace
}  // namespace floe::testing
