// SPDX-License-Identifier: Apache-2.0
// The project's example models (examples/*/model, written by the generator
// scripts exactly as TensorFlow 1.14 lays them out) convert through the same
// code paths as the corpus and reproduce the values numpy computed.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <regex>

#include "runtime/tools/npy.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

const std::string kExamples = std::string(FLOE_SOURCE_DIR) + "/examples/";

HostTensor load_npy(const std::string& path) {
  const tools::NpyArray a = tools::read_npy(path);
  HostTensor t;
  t.dtype = a.dtype;
  t.shape = a.shape;
  t.data = a.data;
  return t;
}

struct Sample {
  std::string file;
  int label = -1;
  std::vector<float> logits;
};

// expected.json: {"samples": [{"file": ..., "label": n, ..., "logits": [...]}, ...]}
std::vector<Sample> read_expected(const std::string& path) {
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  const std::regex sample_re(
      "\"file\":\\s*\"([^\"]+)\",\\s*\"label\":\\s*(\\d+),[^\\]]*?\"logits\":\\s*\\[([^\\]]*)\\]");
  std::vector<Sample> samples;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), sample_re); it != std::sregex_iterator(); ++it) {
    Sample s;
    s.file = (*it)[1];
    s.label = std::stoi((*it)[2]);
    std::stringstream values((*it)[3].str());
    for (std::string v; std::getline(values, v, ',');) s.logits.push_back(std::stof(v));
    samples.push_back(s);
  }
  return samples;
}

int argmax(const std::vector<float>& v) {
  return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}

void check_mnist(const std::string& graph_file) {
  const std::string dir = kExamples + "mnist_mlp/model/";
  conv::ConvertOptions options;
  options.graph_path = dir + graph_file;
  options.checkpoint_path = dir;
  options.outputs = {"softmax_linear/add"};
  const conv::ConvertResult result = conv::convert(options);
  // Pruning drops the training tail; only the three dense layers remain.
  EXPECT_NE(result.summary.find("MATMUL x3"), std::string::npos) << result.summary;
  EXPECT_NE(result.summary.find("froze 6 variable(s)"), std::string::npos) << result.summary;
  const std::vector<Sample> samples = read_expected(dir + "expected.json");
  ASSERT_EQ(samples.size(), 3u);
  for (const Sample& s : samples) {
    const auto out = run_model(result.model, {{"images", load_npy(dir + s.file)}});
    ASSERT_EQ(out.size(), 1u);
    const std::vector<float> logits = as_floats(out[0]);
    EXPECT_LT(max_abs_diff(logits, s.logits), 1e-4f) << s.file;
    EXPECT_EQ(argmax(logits), s.label) << s.file;
  }
}

TEST(Examples, MnistMlpMetaAndCheckpoint) { check_mnist("mnist_mlp.meta"); }
TEST(Examples, MnistMlpTextGraphAndCheckpoint) { check_mnist("mnist_mlp.pbtxt"); }

TEST(Examples, ConvSeedMatchesNumpy) {
  const std::string dir = kExamples + "conv_seed/model/";
  conv::ConvertOptions options;
  options.graph_path = dir + "conv_seed.meta";
  options.checkpoint_path = dir;
  options.outputs = {"conv"};
  const auto model = conv::convert(options).model;
  const auto out = run_model(model, {{"image", load_npy(dir + "input.npy")}});
  ASSERT_EQ(out.size(), 1u);
  const HostTensor expected = load_npy(dir + "expected.npy");
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{1, 3, 3, 1}));
  EXPECT_LT(max_abs_diff(as_floats(out[0]), as_floats(expected)), 1e-5f);
}

}  // namespace
}  // namespace floe::testing
