// SPDX-License-Identifier: Apache-2.0
// Every graph the fuzzers start from or once failed on (corpus/ and regress/
// of fuzz_graph and fuzz_tflite) through the floe-convert CLI, as a user would
// run it: the outcome is exit 2 with a message and no file, or exit 0 and a
// model the runtime loads (checksum on) and initialises.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "converter/frontend/graphdef/graph_loader.h"
#include "converter/ir/error.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/support/model_runner.h"

namespace floe::fuzz {
namespace {

namespace fs = std::filesystem;
using floe::testing::make_temp_dir;
using floe::testing::run_command;
using floe::testing::tool_path;

std::vector<std::string> graph_files() {
  std::vector<std::string> files;
  for (const char* dir : {"corpus/fuzz_graph", "regress/fuzz_graph", "corpus/fuzz_tflite", "regress/fuzz_tflite"}) {
    const fs::path path = fs::path(FLOE_SOURCE_DIR) / "tests/fuzz" / dir;
    if (!fs::is_directory(path)) continue;
    for (const auto& entry : fs::directory_iterator(path)) {
      if (entry.is_regular_file()) files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string shell_quoted(const std::string& s) { return "'" + s + "'"; }

// Load (checksum on) and Init in an arena of the model's size.
std::string load_and_init(const std::string& path) {
  floe::tools::ModelFile file;
  try {
    file = floe::tools::read_model_file(path);
  } catch (const std::exception& e) {
    return e.what();
  }
  GuardedBuffer buffer(file.size, file.data.get());
  Model model;
  LoadOptions options;
  options.verify_checksum = true;
  if (model.Load(buffer.data(), file.size, options) != Status::kOk) {
    return std::string("Load: ") + model.error().message + " (op " + std::to_string(model.error().op) + ")";
  }
  GuardedBuffer arena(static_cast<size_t>(model.arena_size()));
  Interpreter interpreter(model, arena.data(), arena.size());
  if (interpreter.Init() != Status::kOk) {
    return std::string("Init: ") + interpreter.error().message + " (op " + std::to_string(interpreter.error().op) + ")";
  }
  return "";
}

TEST(CorpusConversion, EveryGraphEitherFailsCleanlyOrGivesAModelThatLoadsAndInits) {
  const std::vector<std::string> files = graph_files();
  ASSERT_GE(files.size(), 10u);
  const std::string dir = make_temp_dir();
  int converted = 0, refused = 0;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    std::string args = " --graph " + shell_quoted(file);
    const bool tflite = file.size() > 7 && file.compare(file.size() - 7, 7, ".tflite") == 0;
    if (tflite) args += " --max-loop-iterations 16";  // as fuzz_tflite: a .tflite WHILE has no bound of its own
    if (!tflite) {
      try {
        const floe::conv::LoadedGraph loaded = floe::conv::load_graph(file);
        std::string outputs;
        for (const std::string& o : pick_outputs(loaded.graph)) outputs += (outputs.empty() ? "" : ",") + o;
        if (!outputs.empty()) args += " --outputs " + shell_quoted(outputs);
        const std::string checkpoint = matching_checkpoint(loaded.graph);
        if (!checkpoint.empty()) args += " --checkpoint " + shell_quoted(checkpoint);
      } catch (const floe::conv::ConvertError&) {
        // floe-convert must refuse it too (checked below)
      }
    }
    const std::string out = dir + "/" + fs::path(file).filename().string() + ".floe";
    const auto r = run_command(tool_path("floe-convert") + args + " -q -o " + shell_quoted(out) + " 2>&1");
    if (r.exit_code == 2) {
      ++refused;
      EXPECT_NE(r.output.find("floe-convert: error: "), std::string::npos) << r.output;
      EXPECT_FALSE(floe::testing::file_exists(out)) << "a refused conversion left " << out;
      continue;
    }
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ++converted;
    EXPECT_EQ(load_and_init(out), "") << r.output;
  }
  std::printf("  %zu graphs: %d converted (each loads and inits), %d refused with exit 2\n", files.size(), converted,
              refused);
  EXPECT_GT(converted, 0);
  EXPECT_GT(refused, 0);  // the regression inputs
}

}  // namespace
}  // namespace floe::fuzz
