// SPDX-License-Identifier: Apache-2.0
// Sweeps: every graph-like file in ../shared/corpus outside dl4j examples must
// load or fail with a ConvertError (never crash), with a printed table; and
// every dl4j example's binary frozen_model.pb must equal its frozen_graph.pbtxt
// twin message for message (both written by TF from the same graph).
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "converter/frontend/graphdef/graph_loader.h"
#include "converter/ir/error.h"
#include "tests/support/corpus.h"

namespace floe::conv {
namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_graph_like(const std::string& name) {
  for (const char* ext : {".pb", ".pbtxt", ".pb.txt", ".prototxt", ".meta"}) {
    if (ends_with(name, ext)) return true;
  }
  return false;
}

// Protobuf files in the corpus that are NOT graphs (the truth per MANIFEST.md):
// TF-Serving's assets.extra/saved_model_config.pb and TF >= 2.12 fingerprint.pb.
bool expected_not_a_graph(const std::string& relative) {
  return relative.find("/assets.extra/") != std::string::npos || ends_with(relative, "/fingerprint.pb");
}

// SavedModels without a {serve} MetaGraphDef: fail with the default tags, and
// must load with theirs (checked in SavedModelWithOtherTags below).
const char* kServeTrainSavedModel = "tensorflow_rust/test_resources/regression-model/saved_model.pb";

bool expected_to_fail(const std::string& relative) {
  return expected_not_a_graph(relative);
}

TEST(GraphLoaderCorpus, EveryGraphFileLoadsOrFailsCleanly) {
  FLOE_REQUIRE_CORPUS("MANIFEST.md");
  const fs::path root = floe::testing::corpus_path("");
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string relative = fs::relative(it->path(), root).string();
    if (it->is_directory() && relative == "dl4j_tf_graphs/examples") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && is_graph_like(it->path().filename().string())) files.push_back(relative);
  }
  std::sort(files.begin(), files.end());
  ASSERT_GT(files.size(), 90u);

  int loaded_count = 0, rejected_count = 0;
  std::printf("%-100s %9s  %-6s %-13s %6s  %s\n", "file", "bytes", "result", "kind", "nodes", "detail");
  for (const std::string& relative : files) {
    const std::string path = (root / relative).string();
    const auto size = fs::file_size(path);
    try {
      const LoadedGraph loaded = load_graph(path);
      ++loaded_count;
      std::string detail = loaded.encoding == GraphEncoding::kText ? "text" : "binary";
      if (loaded.meta) {
        const auto& info = loaded.meta->meta_info_def();
        detail += " tags" + format_tag_set(*loaded.meta) + " tf=" +
                  (info.tensorflow_version().empty() ? "?" : info.tensorflow_version()) +
                  " sigs=" + std::to_string(loaded.meta->signature_def_size()) +
                  (loaded.meta->has_saver_def() ? " saver" : "") +
                  (info.stripped_default_attrs() ? " stripped_defaults" : "") +
                  " +attrs=" + std::to_string(loaded.default_attrs_added);
      }
      if (loaded.graph.library().function_size() > 0) {
        detail += " functions=" + std::to_string(loaded.graph.library().function_size());
      }
      detail += " producer=" + std::to_string(loaded.graph.versions().producer());
      if (!loaded.warnings.empty()) detail += " warnings=" + std::to_string(loaded.warnings.size());
      std::printf("%-100s %9ju  %-6s %-13s %6d  %s\n", relative.c_str(), static_cast<uintmax_t>(size), "OK",
                  graph_file_kind_name(loaded.kind), loaded.graph.node_size(), detail.c_str());
      EXPECT_FALSE(expected_to_fail(relative)) << relative << " loaded but should not have";
    } catch (const ConvertError& e) {
      ++rejected_count;
      std::printf("%-100s %9ju  %-6s %-13s %6s  %s\n", relative.c_str(), static_cast<uintmax_t>(size), "ERROR",
                  "-", "-", e.what());
      EXPECT_TRUE(expected_to_fail(relative)) << relative << ": " << e.what();
    }
    // Any other exception type escapes and fails the test: that would be a bug.
  }
  std::printf("%zu files: %d loaded, %d rejected with ConvertError\n", files.size(), loaded_count,
              rejected_count);
}

TEST(GraphLoaderCorpus, SavedModelWithOtherTags) {
  FLOE_REQUIRE_CORPUS(kServeTrainSavedModel);
  LoadOptions options;
  options.tags = {"train", "serve"};  // order does not matter: tags are a set
  const LoadedGraph loaded = load_graph(floe::testing::corpus_path(kServeTrainSavedModel), options);
  EXPECT_EQ(format_tag_set(*loaded.meta), "{serve, train}");
  EXPECT_GT(loaded.graph.node_size(), 0);
  EXPECT_TRUE(loaded.warnings.empty());
  // The default {serve} matches no tag set exactly; the only superset is taken, with a warning.
  const LoadedGraph by_default = load_graph(floe::testing::corpus_path(kServeTrainSavedModel));
  EXPECT_EQ(format_tag_set(*by_default.meta), "{serve, train}");
  ASSERT_EQ(by_default.warnings.size(), 1u);
  EXPECT_NE(by_default.warnings[0].find("using the one tagged {serve, train}"), std::string::npos);
  options.tags = {"gpu"};
  try {
    load_graph(floe::testing::corpus_path(kServeTrainSavedModel), options);
    ADD_FAILURE() << "tags {gpu} should not load";
  } catch (const ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("no MetaGraphDef with tags {gpu}; available tag sets: {serve, train}"),
              std::string::npos)
        << e.what();
  }
}

TEST(GraphLoaderCorpus, Dl4jBinaryAndTextTwinsAreIdentical) {
  FLOE_REQUIRE_CORPUS("dl4j_tf_graphs/examples");
  const fs::path examples = floe::testing::corpus_path("dl4j_tf_graphs/examples");
  int compared = 0;
  for (auto it = fs::recursive_directory_iterator(examples); it != fs::recursive_directory_iterator(); ++it) {
    if (!it->is_regular_file() || it->path().filename() != "frozen_model.pb") continue;
    const fs::path text_path = it->path().parent_path() / "frozen_graph.pbtxt";
    if (!fs::exists(text_path)) continue;
    const LoadedGraph binary = load_graph(it->path().string());
    const LoadedGraph text = load_graph(text_path.string());
    ASSERT_EQ(binary.encoding, GraphEncoding::kBinary) << it->path();
    ASSERT_EQ(text.encoding, GraphEncoding::kText) << text_path;
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(binary.graph, text.graph)) << it->path();
    ++compared;
  }
  std::printf("dl4j examples: %d binary/text twins identical\n", compared);
  EXPECT_GT(compared, 500);
}

}  // namespace
}  // namespace floe::conv
