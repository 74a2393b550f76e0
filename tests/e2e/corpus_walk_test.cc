// SPDX-License-Identifier: Apache-2.0
// Walks every artifact of ../shared/corpus/MANIFEST.md's per-file listing through
// the floe-convert CLI, as a user would: graphs get --info (which must succeed for
// every readable graph) and a conversion with sensible default outputs (the
// SavedModel signature, else the candidate outputs --info reports); checkpoints get
// --info --checkpoint (CRC32C of every tensor verified). Every refusal must be
// exit 2 with no output file. The outcome table is printed and compared with the
// committed tests/e2e/corpus_walk_expected.tsv, so any change shows as a readable
// diff; FLOE_UPDATE_CORPUS_WALK=1 rewrites the file after an intended change.
// Also here: the values the issue names (half_plus_two/three through default
// signatures, the KWS checkpoint against its frozen graph) and the negatives.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "converter/frontend/graphdef/graph_loader.h"
#include "converter/ir/graph.h"
#include "converter/pipeline/info.h"
#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

namespace fs = std::filesystem;

const std::string kExpectedTable = std::string(FLOE_SOURCE_DIR) + "/tests/e2e/corpus_walk_expected.tsv";

struct Artifact {
  std::string path;  // relative to the corpus
  std::string kind;  // MANIFEST's kind column
};

// The per-file listing: rows "| `path` | `origin` | size | kind | ...".
std::vector<Artifact> manifest_artifacts() {
  std::ifstream in(corpus_path("MANIFEST.md"));
  std::vector<Artifact> out;
  std::string line;
  bool listing = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) listing = line.find("Per-file listing") != std::string::npos;
    if (!listing || line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream row(line.substr(1));
    std::string cell;
    while (std::getline(row, cell, '|')) cells.push_back(cell);
    if (cells.size() < 4) continue;
    auto trim = [](std::string s) {
      while (!s.empty() && (s.front() == ' ' || s.front() == '`')) s.erase(s.begin());
      while (!s.empty() && (s.back() == ' ' || s.back() == '`')) s.pop_back();
      return s;
    };
    out.push_back({trim(cells[0]), trim(cells[3])});
  }
  return out;
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// The fields floe-convert --error-json wrote (converter/ir/error.h): a tiny
// reader for exactly that format.
struct ErrorRecord {
  std::string category, message, file;
  std::vector<std::pair<std::string, std::vector<std::string>>> refusals;  // reason -> "Op xN" (N nodes)
  std::map<std::string, size_t> nodes_per_reason;
};

class JsonCursor {
 public:
  explicit JsonCursor(const std::string& text) : t_(text) {}
  bool find(const std::string& key) {
    const size_t at = t_.find("\"" + key + "\": ", p_);
    if (at == std::string::npos) return false;
    p_ = at + key.size() + 4;
    return true;
  }
  std::string string() {
    std::string out;
    if (p_ >= t_.size() || t_[p_] != '"') return out;
    for (++p_; p_ < t_.size() && t_[p_] != '"'; ++p_) {
      if (t_[p_] == '\\' && p_ + 1 < t_.size()) {
        ++p_;
        if (t_[p_] == 'u' && p_ + 4 < t_.size()) {
          out += static_cast<char>(std::stoi(t_.substr(p_ + 1, 4), nullptr, 16));
          p_ += 4;
          continue;
        }
      }
      out += t_[p_];
    }
    ++p_;
    return out;
  }
  void skip(char c) {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == ',')) ++p_;
    if (p_ < t_.size() && t_[p_] == c) ++p_;
  }
  char peek() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == ',')) ++p_;
    return p_ < t_.size() ? t_[p_] : '\0';
  }

 private:
  const std::string& t_;
  size_t p_ = 0;
};

ErrorRecord read_error_json(const std::string& path) {
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  ErrorRecord r;
  JsonCursor c(text);
  if (c.find("category")) r.category = c.string();
  if (c.find("message")) r.message = c.string();
  if (c.find("file")) r.file = c.string();
  if (!c.find("refusals")) return r;
  c.skip('[');
  while (c.peek() == '{') {
    c.skip('{');
    c.find("reason");
    std::pair<std::string, std::vector<std::string>> refusal{c.string(), {}};
    c.find("ops");
    c.skip('{');
    while (c.peek() == '"') {
      const std::string op = c.string();
      c.skip(':');
      c.skip('[');
      size_t nodes = 0;
      for (; c.peek() == '"'; ++nodes) c.string();
      c.skip(']');
      refusal.second.push_back(op + " x" + std::to_string(nodes));
      r.nodes_per_reason[refusal.first] += nodes;
    }
    c.skip('}');
    c.skip('}');
    r.refusals.push_back(std::move(refusal));
  }
  return r;
}

// A refusal as a stable table cell, from the error's fields: corpus paths
// removed; an "unsupported" error lists "reason: Op, Op; ...".
std::string summarize(const ErrorRecord& e) {
  std::string message = e.message;
  const std::string root = corpus_path("");
  for (size_t p; (p = message.find(root)) != std::string::npos;) message.erase(p, root.size());
  std::string file = e.file;
  if (starts_with(file, root)) file.erase(0, root.size());
  std::string first = message.substr(0, message.find('\n'));
  if (!file.empty() && starts_with(first, file + ": ")) {
    first = first.substr(file.size() + 2);
  } else if (const size_t colon = first.find(": "); colon != std::string::npos &&
             first.substr(0, colon).find(' ') == std::string::npos &&
             first.substr(0, colon).find('/') != std::string::npos) {
    first = first.substr(colon + 2);  // a leading "<file>: " the error did not record as its file
  }
  if (first.empty()) return "(no message)";
  if (e.category != "unsupported" || !starts_with(first, "cannot convert:")) {
    return first.size() > 220 ? first.substr(0, 220) + "..." : first;
  }
  std::string out;
  for (const auto& [reason, ops] : e.refusals) {
    if (reason == "training-mode batch norm") {
      out = "training-mode batch norm x" + std::to_string(e.nodes_per_reason.at(reason)) + (out.empty() ? "" : "; " + out);
      continue;
    }
    std::string list;
    for (const std::string& op : ops) list += (list.empty() ? "" : ", ") + op;
    out += (out.empty() ? "" : "; ") + reason + ": " + list;
  }
  return "cannot convert: " + out;
}

struct Outcome {
  std::string cell;
  bool crashed = false;
};

// Runs floe-convert; "ok" on exit 0, "refused (...)" on exit 2 (classified
// from its --error-json record), crash otherwise.
Outcome run_cli(const std::string& args, const std::string& output_file, std::string* stdout_text = nullptr) {
  static const std::string error_file = make_temp_dir() + "/error.json";
  std::remove(error_file.c_str());
  const CommandResult r =
      run_command(tool_path("floe-convert") + " --error-json '" + error_file + "' " + args + " 2>&1");
  if (stdout_text) *stdout_text = r.output;
  Outcome o;
  if (r.exit_code == 0) {
    o.cell = "ok";
  } else if (r.exit_code == 2 && !file_exists(error_file)) {
    o.cell = "refused without an --error-json record: " + r.output.substr(0, 300);
    o.crashed = true;
  } else if (r.exit_code == 2) {
    o.cell = "refused (" + summarize(read_error_json(error_file)) + ")";
    if (!output_file.empty() && file_exists(output_file)) {
      o.cell += " [OUTPUT FILE LEFT BEHIND]";
      o.crashed = true;
    }
  } else {
    o.cell = "CRASH exit " + std::to_string(r.exit_code) + ": " + r.output.substr(0, 300);
    o.crashed = true;
  }
  return o;
}

std::string quote(const std::string& path) { return "'" + path + "'"; }

// --checkpoint for a graph file: a .meta's sibling checkpoint is found by floe itself.
std::string walk_graph(const Artifact& a, const std::string& out_dir, bool* crashed) {
  const std::string path = corpus_path(a.path);
  const bool saved_model = starts_with(a.kind, "SavedModel");
  const std::string graph_arg = "--graph " + quote(saved_model ? fs::path(path).parent_path().string() : path);
  const Outcome info = run_cli("--info " + graph_arg, "");
  *crashed = *crashed || info.crashed;
  if (info.cell != "ok") return "unreadable: " + info.cell;

  // Default outputs: the signature's; without signatures, the candidate outputs.
  std::string outputs;
  try {
    const conv::LoadedGraph loaded = conv::load_graph(path);
    if (!saved_model || loaded.meta->signature_def().empty()) {
      const conv::Graph graph(loaded.graph, loaded.path);
      for (const std::string& name : conv::candidate_outputs(graph)) outputs += (outputs.empty() ? "" : ",") + name;
      if (outputs.empty()) return "refused (no candidate outputs)";
    }
  } catch (const std::exception& e) {
    return std::string("info ok, but the library load failed: ") + e.what();
  }
  const std::string out_file = out_dir + "/walk.floe";
  const Outcome convert = run_cli(graph_arg + (outputs.empty() ? "" : " --outputs " + quote(outputs)) + " -o " +
                                      quote(out_file), out_file);
  *crashed = *crashed || convert.crashed;
  std::remove(out_file.c_str());
  return convert.cell;
}

std::string walk_checkpoint(const Artifact& a, bool* crashed) {
  std::string text;
  const Outcome o = run_cli("--info --checkpoint " + quote(corpus_path(a.path)), "", &text);
  *crashed = *crashed || o.crashed;
  if (o.cell != "ok") return o.cell;
  const size_t v1 = text.find(" (V1, ");
  const size_t decoded = text.find("values of ");
  if (v1 != std::string::npos && decoded != std::string::npos) {  // V1: block CRCs, then every slice decoded
    const size_t tensors = text.find(" tensors)", v1);
    const size_t open = text.rfind(", ", tensors);
    if (tensors == std::string::npos || open == std::string::npos) return "ok (?)";
    return "ok (V1, " + text.substr(open + 2, tensors - open - 2) + " tensors, " +
           text.substr(decoded + 10, text.find(' ', decoded + 10) - decoded - 10) + " slices decoded)";
  }
  const size_t at = text.find("CRC32C verified for ");
  const size_t tensors = text.find(" tensors)");
  const size_t open = text.rfind(", ", tensors);
  if (at == std::string::npos || tensors == std::string::npos || open == std::string::npos) return "ok (?)";
  return "ok (" + text.substr(open + 2, tensors - open - 2) + " tensors, " +
         text.substr(at + 20, text.find(' ', at + 20) - at - 20) + " CRC-verified)";
}

std::map<std::string, std::string> read_table(const std::string& path) {
  std::map<std::string, std::string> table;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    if (tab != std::string::npos) table[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return table;
}

TEST(CorpusWalk, EveryManifestArtifactHasItsExpectedOutcome) {
  FLOE_REQUIRE_CORPUS("MANIFEST.md");
  const std::string out_dir = make_temp_dir();
  std::map<std::string, std::string> actual;
  std::vector<std::string> crashes;
  for (const Artifact& a : manifest_artifacts()) {
    bool crashed = false;
    std::string cell;
    if (starts_with(a.kind, "GraphDef") || starts_with(a.kind, "MetaGraphDef") || starts_with(a.kind, "SavedModel (")) {
      cell = walk_graph(a, out_dir, &crashed);
    } else if (starts_with(a.kind, "checkpoint V2 index") || starts_with(a.kind, "checkpoint V1") ||
               starts_with(a.kind, "checkpoint state file")) {
      cell = walk_checkpoint(a, &crashed);
    } else {
      continue;  // data shards (read through their index), assets, wav, npy
    }
    if (crashed) crashes.push_back(a.path + ": " + cell);
    actual[a.path] = cell;
  }
  ASSERT_GT(actual.size(), 100u) << "MANIFEST.md listing not parsed";

  std::printf("[ table    ] artifact -> outcome (%zu artifacts)\n", actual.size());
  size_t ok = 0;
  for (const auto& [artifact, cell] : actual) {
    ok += starts_with(cell, "ok");
    std::printf("  %s -> %s\n", artifact.c_str(), cell.c_str());
  }
  std::printf("[ table    ] %zu ok, %zu refused\n", ok, actual.size() - ok);
  EXPECT_TRUE(crashes.empty()) << "not a clean exit 0 / exit 2:\n  " << ::testing::PrintToString(crashes);

  if (const char* update = std::getenv("FLOE_UPDATE_CORPUS_WALK"); update && std::string(update) == "1") {
    std::ofstream out(kExpectedTable, std::ios::trunc);
    out << "# Expected outcome of every MANIFEST.md artifact through floe-convert (tests/e2e/corpus_walk_test.cc).\n"
           "# Regenerate after an intended change: FLOE_UPDATE_CORPUS_WALK=1 ctest -R CorpusWalk\n";
    for (const auto& [artifact, cell] : actual) out << artifact << "\t" << cell << "\n";
    std::printf("[ table    ] rewrote %s\n", kExpectedTable.c_str());
    return;
  }
  const std::map<std::string, std::string> expected = read_table(kExpectedTable);
  std::string diff;
  for (const auto& [artifact, cell] : actual) {
    const auto it = expected.find(artifact);
    if (it == expected.end()) {
      diff += "\n  + " + artifact + "\n      now:      " + cell;
    } else if (it->second != cell) {
      diff += "\n  ~ " + artifact + "\n      expected: " + it->second + "\n      now:      " + cell;
    }
  }
  for (const auto& [artifact, cell] : expected) {
    if (!actual.count(artifact)) diff += "\n  - " + artifact + "\n      expected: " + cell + " (not walked)";
  }
  EXPECT_TRUE(diff.empty()) << "outcomes differ from " << kExpectedTable
                            << " (if intended, rerun with FLOE_UPDATE_CORPUS_WALK=1):" << diff;
}

// --- negatives: exit 2, no output file, the precise reason --------------------------

void expect_refusal(const std::string& args, const std::string& reason) {
  const std::string out = make_temp_dir() + "/m.floe";
  const CommandResult r = run_command(tool_path("floe-convert") + " " + args + " -o " + out + " 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(file_exists(out));
  EXPECT_NE(r.output.find(reason), std::string::npos) << r.output;
}

TEST(CorpusWalk, NegativesAreRefusedWithTheirReason) {
  FLOE_REQUIRE_CORPUS("tensorflow_serving/servables/tensorflow/testdata/saved_model_half_plus_two_tf2_cpu/00000123");
  const std::string serving = corpus_path("tensorflow_serving/servables/tensorflow/testdata/");
  for (const std::string& tf2 : {serving + "saved_model_half_plus_two_tf2_cpu/00000123",
                                 corpus_path("tensorflow_rust/examples/regression_savedmodel")}) {
    expect_refusal("--graph " + tf2, "a TF2 SavedModel (tf.saved_model.save: the computation lives in");
  }
  // Several signatures, none serving_default: the error lists them.
  expect_refusal("--graph " + corpus_path("tensorflow_serving/servables/tensorflow/testdata/saved_model_counter/00000123"),
                 "choose one with --signature: get_counter, incr_counter, incr_counter_by, reset_counter");
}

TEST(CorpusWalk, InfoListOpsAndFreezeInputFromTheCli) {
  const std::string kws = corpus_path("mlperf_tiny_qualcomm/KWS/trained_models/kws.ckpt.meta");
  FLOE_REQUIRE_CORPUS("mlperf_tiny_qualcomm/KWS/trained_models/kws.ckpt.meta");
  const std::string cli = tool_path("floe-convert");
  CommandResult r = run_command(cli + " --info --graph " + kws + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("candidate outputs (1): dense/Softmax"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("input_1  DT_FLOAT [-1,49,10,1]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("batch_normalization/moving_mean  VarHandleOp DT_FLOAT [64]  in checkpoint"),
            std::string::npos)
      << r.output;
  r = run_command(cli + " --list-ops --graph " + kws + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2416 nodes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("x9  supported"), std::string::npos) << r.output;  // FusedBatchNormV3
  EXPECT_NE(r.output.find("ResourceApplyAdam"), std::string::npos) << r.output;
  r = run_command(cli + " --info 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--info needs --graph (or --checkpoint)"), std::string::npos) << r.output;

  // dl4j cond_false: a cond on a Const predicate resolves statically (TF's output: ones).
  const std::string cond = corpus_path("dl4j_tf_graphs/examples/cond/cond_false/frozen_model.pb");
  const std::string dir = make_temp_dir();
  r = run_command(cli + " --graph " + cond + " --outputs cond/Merge -o " + dir + "/c.floe 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("resolved 1 Switch and 1 Merge"), std::string::npos) << r.output;

  // A Switch on a plain bool placeholder converts once --freeze-input fixes it.
  std::ofstream(dir + "/g.pbtxt") << R"(
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "is_training" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } }
       attr { key: "shape" value { shape { } } } }
node { name: "s" op: "Switch" input: "x" input: "is_training" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "y" op: "Relu" input: "s" attr { key: "T" value { type: DT_FLOAT } } }
)";
  r = run_command(cli + " --graph " + dir + "/g.pbtxt --outputs y -o " + dir + "/g.floe 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--freeze-input is_training="), std::string::npos) << r.output;
  r = run_command(cli + " --graph " + dir + "/g.pbtxt --outputs y --freeze-input is_training=false -o " + dir +
                  "/g.floe 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(file_exists(dir + "/g.floe"));
}

// --- values through default signatures ---------------------------------------------

std::vector<float> half_plus(const std::string& dir) {
  conv::ConvertOptions options;
  options.graph_path = corpus_path(dir);
  options.input_shapes = {{"x", {3, 1}}};
  try {
    const conv::ConvertResult r = conv::convert(options);
    const auto out = run_model(r.model, {{"x", make_f32({3, 1}, {1.0f, 2.0f, 5.0f})}});
    return out.size() == 1 ? as_floats(out[0]) : std::vector<float>{};
  } catch (const std::exception& e) {
    ADD_FAILURE() << dir << ": " << e.what();
    return {};
  }
}

TEST(CorpusWalk, HalfPlusTwoAndThreeThroughDefaultSignatures) {
  const std::string base = "tensorflow_serving/servables/tensorflow/testdata/";
  FLOE_REQUIRE_CORPUS(base + "saved_model_half_plus_three/00000123/saved_model.pb");
  for (const char* variant : {"saved_model_half_plus_two_2_versions", "saved_model_half_plus_two_cpu",
                              "saved_model_half_plus_two_gpu", "saved_model_half_plus_two_gpu_trt",
                              "saved_model_half_plus_two_mkl",
                              "saved_model_half_plus_two_cpu_with_empty_saved_model_config",
                              "saved_model_half_plus_two_cpu_with_saved_model_config"}) {
    EXPECT_EQ(half_plus(base + variant + "/00000123"), (std::vector<float>{2.5f, 3.0f, 4.5f})) << variant;
  }
  EXPECT_EQ(half_plus(base + "saved_model_half_plus_three/00000123"), (std::vector<float>{3.5f, 4.0f, 5.5f}));
  // The CLI needs no flag but the output file.
  const std::string out = make_temp_dir() + "/m.floe";
  const CommandResult r = run_command(tool_path("floe-convert") + " --graph " +
                                      corpus_path(base + "saved_model_half_plus_two_cpu/00000123") + " -o " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(file_exists(out));
}

// KWS DS-CNN: Keras-in-TF1 .meta + checkpoint (resource variables, FusedBatchNormV3)
// frozen by floe equals TensorFlow's own frozen graph of the same model.
TEST(CorpusWalk, KwsCheckpointMatchesItsFrozenGraph) {
  const std::string dir = "mlperf_tiny_qualcomm/KWS/trained_models/";
  FLOE_REQUIRE_CORPUS(dir + "kws.ckpt.meta");
  conv::ConvertOptions meta;
  meta.graph_path = corpus_path(dir + "kws.ckpt.meta");
  meta.outputs = {"dense/Softmax"};
  meta.input_shapes = {{"input_1", {1, 49, 10, 1}}};
  conv::ConvertOptions frozen = meta;
  frozen.graph_path = corpus_path(dir + "kws_model_source_h5_test.pb");
  std::vector<uint8_t> a, b;
  try {
    const conv::ConvertResult ra = conv::convert(meta);
    a = ra.model;
    EXPECT_NE(ra.summary.find("froze "), std::string::npos) << ra.summary;
    b = conv::convert(frozen).model;
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const HostTensor x = random_f32({1, 49, 10, 1}, seed, -30.0f, 30.0f);
    const auto ya = run_model(a, {{"input_1", x}}), yb = run_model(b, {{"input_1", x}});
    ASSERT_EQ(ya.size(), 1u);
    ASSERT_EQ(yb.size(), 1u);
    EXPECT_EQ(ya[0].shape, (std::vector<int64_t>{1, 12}));
    EXPECT_LT(max_abs_diff(as_floats(ya[0]), as_floats(yb[0])), 1e-6f) << "seed " << seed;
  }
}

}  // namespace
}  // namespace floe::testing
