// SPDX-License-Identifier: Apache-2.0
// What a conversion tells its user while and after it runs: the stages it
// passes through (ConvertOptions::progress; floe-convert shows them on a
// terminal), and a summary whose long lists are cut unless verbose.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "converter/pipeline/convert.h"
#include "converter/pipeline/summary.h"
#include "tests/support/model_runner.h"

namespace floe::conv {
namespace {

const std::string kMnist = std::string(FLOE_SOURCE_DIR) + "/examples/mnist_mlp/model/";

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(SummaryFolding, LongListsKeepTheirFirstLinesAndSayWhatIsLeftOut) {
  std::string summary = "floe-convert: m.pb\n  optimized: 40 -> 20 ops\n    fuse-activation: 20 rewrites\n";
  for (int i = 0; i < 20; ++i) summary += "      fused Relu " + std::to_string(i) + " into MatMul\n";
  summary += "  ranges:" + std::string(60, 'x');
  for (int i = 0; i < 100; ++i) summary += " value_" + std::to_string(i);
  summary += "\n  model: 1000 bytes\n";
  const std::string folded = fold_summary(summary, false);
  EXPECT_EQ(count(folded, "fused Relu "), 8u);
  EXPECT_NE(folded.find("      fused Relu 7 into MatMul\n      ... 12 more line(s) like these (--verbose lists all)\n"
                        "  ranges:"),
            std::string::npos)
      << folded;
  EXPECT_NE(folded.find(" more characters; --verbose shows all)\n  model: 1000 bytes\n"), std::string::npos) << folded;
  EXPECT_EQ(folded.find("value_99"), std::string::npos);
  EXPECT_EQ(fold_summary(summary, true), summary);
  // Short lists and top-level lines stay whole.
  const std::string short_list = "  a\n    b\n    c\n  d\n";
  EXPECT_EQ(fold_summary(short_list, false), short_list);
}

TEST(ConversionProgress, EveryStageIsReportedInOrder) {
  const std::string dir = testing::make_temp_dir();
  std::ofstream(dir + "/images.npy", std::ios::binary)
      << std::ifstream(kMnist + "digit_3.npy", std::ios::binary).rdbuf();
  ConvertOptions options;
  options.graph_path = kMnist + "mnist_mlp.meta";
  options.checkpoint_path = kMnist;
  options.outputs = {"softmax_linear/add"};
  options.input_shapes = {{"images", {1, 784}}};
  options.quantize_int8 = true;
  options.calibration_path = dir;
  std::vector<std::string> stages;
  options.progress = [&](const std::string& stage) { stages.push_back(stage); };
  convert(options);
  const std::vector<std::string> expected = {"loading the graph", "freezing variables", "unrolling loops",
                                             "lowering and optimizing", "calibrating: sample 1 of 1", "quantizing",
                                             "choosing kernels", "ordering ops",
                                             "planning memory, writing the model"};
  EXPECT_EQ(stages, expected);
}

TEST(ConversionProgress, ATfliteReportsItsStagesToo) {
  ConvertOptions options;
  options.graph_path = std::string(FLOE_SOURCE_DIR) + "/tests/fuzz/corpus/fuzz_tflite/resource_variables.tflite";
  std::vector<std::string> stages;
  options.progress = [&](const std::string& stage) { stages.push_back(stage); };
  convert(options);
  const std::vector<std::string> expected = {"reading the .tflite", "optimizing", "choosing kernels", "ordering ops",
                                             "planning memory, writing the model"};
  EXPECT_EQ(stages, expected);
}

TEST(ConversionProgress, EachLoopIsNamedAsItStarts) {
  ConvertOptions options;
  options.graph_path = std::string(FLOE_SOURCE_DIR) + "/examples/while_loop/model/while_loop.pbtxt";
  options.outputs = {"y"};
  std::vector<std::string> stages;
  options.progress = [&](const std::string& stage) { stages.push_back(stage); };
  convert(options);
  std::vector<std::string> loops;
  for (const std::string& stage : stages) {
    if (stage.rfind("unrolling loops: ", 0) == 0) loops.push_back(stage);
  }
  ASSERT_EQ(loops.size(), 1u) << ::testing::PrintToString(stages);
  EXPECT_NE(loops[0].find("unrolling loops: loop '"), std::string::npos) << loops[0];
}

}  // namespace
}  // namespace floe::conv
