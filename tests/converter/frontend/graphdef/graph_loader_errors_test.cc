// SPDX-License-Identifier: Apache-2.0
// Bad input must fail with a ConvertError that says where: truncated and
// corrupted copies of a real frozen graph (written to a temp dir under the build
// tree, never under ../shared), garbage, malformed text, and files that are not
// graphs at all. Also: text with fields outside floe's schema still loads.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "converter/frontend/graphdef/graph_loader.h"
#include "converter/ir/error.h"
#include "tests/support/corpus.h"

namespace floe::conv {
namespace {

namespace fs = std::filesystem;
using floe::testing::corpus_path;

const char* kMnist = "dl4j_tf_graphs/examples/mnist_00/frozen_model.pb";

std::string scratch_dir() {
  const fs::path dir = fs::path(FLOE_BINARY_DIR) / "test_tmp" / "graphdef";
  fs::create_directories(dir);
  return dir.string();
}

std::string write_file(const std::string& name, const std::string& bytes) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The ConvertError message of loading `path` ("" if it loaded).
std::string load_error(const std::string& path) {
  try {
    load_graph(path);
  } catch (const ConvertError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "message: " << (haystack)

TEST(GraphLoaderErrors, TruncatedBinaryNamesFileOffsetAndNode) {
  FLOE_REQUIRE_CORPUS(kMnist);
  const std::string original = read_file(corpus_path(kMnist));
  // Cut inside the 784x10 weight tensor (the bulk of the file).
  const size_t cut = original.size() * 6 / 10;
  const std::string path = write_file("mnist_truncated.pb", original.substr(0, cut));
  const std::string message = load_error(path);
  std::printf("%s\n", message.c_str());
  EXPECT_CONTAINS(message, path + ": truncated or corrupt GraphDef at byte ");
  EXPECT_CONTAINS(message, "(inside node #1 'Variable' > attr['value'] > tensor; last complete node #0 'input')");
  EXPECT_CONTAINS(message, "field 4 (tensor_content) of 31360 bytes");
  EXPECT_CONTAINS(message, "runs past end of file (" + std::to_string(cut) + " bytes)");
}

TEST(GraphLoaderErrors, EveryTruncationPointFailsCleanlyOrLeavesAValidPrefix) {
  FLOE_REQUIRE_CORPUS(kMnist);
  const std::string original = read_file(corpus_path(kMnist));
  int errors = 0, prefixes = 0;
  for (size_t cut = 1; cut < original.size(); cut += (cut < 600 ? 1 : 997)) {
    const std::string path = write_file("mnist_cut.pb", original.substr(0, cut));
    try {
      const LoadedGraph loaded = load_graph(path);
      ++prefixes;  // a cut exactly between two nodes is a valid, smaller GraphDef
      EXPECT_LT(loaded.graph.node_size(), 7) << "cut at " << cut;
    } catch (const ConvertError& e) {
      ++errors;
      EXPECT_CONTAINS(e.what(), path);
    }
  }
  std::printf("truncation sweep: %d ConvertErrors, %d node-boundary prefixes\n", errors, prefixes);
  EXPECT_GT(errors, 500);
}

TEST(GraphLoaderErrors, CorruptLengthInsideANodeIsLocated) {
  FLOE_REQUIRE_CORPUS(kMnist);
  std::string bytes = read_file(corpus_path(kMnist));
  // Node #0 is `0a <len> 0a 05 "input" 12 0b "Placeholder" ...`: make the op
  // string claim 0x7f bytes, past the end of node #0.
  ASSERT_EQ(bytes.substr(4, 5), "input");
  ASSERT_EQ(static_cast<unsigned char>(bytes[9]), 0x12);
  bytes[10] = 0x7f;
  const std::string message = load_error(write_file("mnist_bad_len.pb", bytes));
  std::printf("%s\n", message.c_str());
  EXPECT_CONTAINS(message, "at byte 9 (inside node #0 'input')");
  EXPECT_CONTAINS(message, "field 2 (op) of 127 bytes runs past the end of its enclosing node #0 'input'");
}

TEST(GraphLoaderErrors, InvalidUtf8NodeNameIsLocated) {
  FLOE_REQUIRE_CORPUS(kMnist);
  std::string bytes = read_file(corpus_path(kMnist));
  ASSERT_EQ(bytes.substr(4, 5), "input");
  bytes[5] = '\xff';
  const std::string message = load_error(write_file("mnist_bad_utf8.pb", bytes));
  EXPECT_CONTAINS(message, "at byte 2 (inside node #0): string field 1 (name) is not valid UTF-8");
}

TEST(GraphLoaderErrors, GarbageIsRejectedClearly) {
  std::string garbage(4096, '\0');
  uint32_t state = 12345;
  for (char& c : garbage) {
    state = state * 1664525u + 1013904223u;
    c = static_cast<char>(state >> 24);
  }
  garbage[0] = '\xff';
  std::string message = load_error(write_file("garbage.pb", garbage));
  EXPECT_CONTAINS(message, "garbage.pb: not a TensorFlow GraphDef, MetaGraphDef or SavedModel");

  // Garbage that happens to start like a GraphDef fails in the parser, with an offset.
  garbage[0] = '\x0a';
  message = load_error(write_file("garbage0a.pb", garbage));
  EXPECT_CONTAINS(message, "garbage0a.pb: ");
  EXPECT_CONTAINS(message, " at byte ");

  EXPECT_CONTAINS(load_error(write_file("empty.pb", "")), "empty.pb: not a TensorFlow GraphDef, MetaGraphDef "
                                                          "or SavedModel (the file is empty)");
  EXPECT_CONTAINS(load_error(write_file("words.txt", "hello world\n")), "first field 'hello'");
  EXPECT_CONTAINS(load_error(write_file("checkpoint", "model_checkpoint_path: \"model.ckpt-1\"\n")),
                  "checkpoint state file");
}

TEST(GraphLoaderErrors, MalformedTextReportsLineAndColumn) {
  const std::string path = write_file("bad.pbtxt",
                                      "node {\n"
                                      "  name: \"a\"\n"
                                      "  op: \"Const\"\n"
                                      "  attr { key: \"x\" value { i: notanumber } }\n"
                                      "}\n");
  const std::string message = load_error(path);
  std::printf("%s\n", message.c_str());
  EXPECT_CONTAINS(message, path + ": text-format GraphDef parse error at line 4, column 30: ");
  EXPECT_CONTAINS(message, "integer");

  const std::string unclosed = write_file("unclosed.pbtxt", "node {\n  name: \"a\"\n  op: \"Add\"\n");
  EXPECT_CONTAINS(load_error(unclosed), "parse error at line 4");
}

TEST(GraphLoaderErrors, TextWithFieldsOutsideOurSchemaStillLoads) {
  const std::string path = write_file("future.pbtxt",
                                      "node {\n"
                                      "  name: \"a\" op: \"Const\"\n"
                                      "  experimental_type { type_id: TFT_PRODUCT args { type_id: 2 } }\n"
                                      "  future_field: 3\n"
                                      "  future_message { nested { deeper: [1, 2] } name: \"x\" }\n"
                                      "  attr { key: \"dtype\" value { type: DT_FLOAT } }\n"
                                      "}\n"
                                      "debug_info { files: \"a.py\" traces { key: \"a\" value { } } }\n"
                                      "versions { producer: 38 }\n");
  const LoadedGraph loaded = load_graph(path);
  ASSERT_EQ(loaded.graph.node_size(), 1);
  EXPECT_EQ(loaded.graph.node(0).attr().at("dtype").type(), floe::tfproto::DT_FLOAT);
  EXPECT_EQ(loaded.graph.versions().producer(), 38);
  EXPECT_FALSE(loaded.warnings.empty());
  for (const auto& w : loaded.warnings) std::printf("warning: %s\n", w.c_str());
}

TEST(GraphLoaderErrors, StructurallyInvalidGraphs) {
  EXPECT_CONTAINS(load_error(write_file("noop.pbtxt", "node { name: \"a\" }\n")), "node #0 'a' has an empty op");
  EXPECT_CONTAINS(load_error(write_file("dup.pbtxt", "node { name: \"a\" op: \"X\" }\nnode { name: \"a\" op: \"Y\" }\n")),
                  "duplicate node name 'a' (nodes #0 and #1)");
  EXPECT_CONTAINS(load_error(write_file("dangling.pbtxt", "node { name: \"a\" op: \"Neg\" input: \"b:1\" }\n")),
                  "node #0 'a' input 'b:1' refers to a node that is not in the graph");
}

TEST(GraphLoaderErrors, MissingPathsAndDirectories) {
  EXPECT_CONTAINS(load_error(scratch_dir() + "/does_not_exist.pb"), "no such file or directory");
  const std::string empty_dir = scratch_dir() + "/not_a_saved_model";
  fs::create_directories(empty_dir);
  EXPECT_CONTAINS(load_error(empty_dir), "a directory without saved_model.pb or saved_model.pbtxt");
}

TEST(GraphLoaderErrors, NonGraphProtobufsFromTheCorpus) {
  const char* fingerprint =
      "tensorflow_serving/servables/tensorflow/testdata/saved_model_half_plus_two_tf2_cpu/00000123/fingerprint.pb";
  FLOE_REQUIRE_CORPUS(fingerprint);
  EXPECT_CONTAINS(load_error(corpus_path(fingerprint)), "not a TensorFlow GraphDef, MetaGraphDef or SavedModel");
}

}  // namespace
}  // namespace floe::conv
