// SPDX-License-Identifier: Apache-2.0
// Converter harness for graph files: the bytes are written to a file and go
// through floe-convert's own path (format sniffing -> binary or text GraphDef,
// MetaGraphDef or SavedModel loader -> prune -> freeze -> infer/fold/lower ->
// plan -> emit). The outputs are the graph's unconsumed nodes (as a user would
// name them); a MetaGraphDef or SavedModel with SignatureDefs is also converted
// with no --outputs, through signature selection (floe-convert's default for
// them). A graph whose variables match an example checkpoint is frozen from it.
// Every run must end in a ConvertError or in a model that the runtime accepts
// with its checksum and runs; any other exception, crash or sanitizer report is
// a bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/frontend/graphdef/graph_loader.h"
#include "converter/ir/error.h"
#include <google/protobuf/stubs/logging.h>
#include "converter/pipeline/convert.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using floe::conv::ConvertError;

struct ExampleCheckpoint {
  std::string prefix;
  std::set<std::string> keys;
};

const std::vector<ExampleCheckpoint>& example_checkpoints() {
  static const std::vector<ExampleCheckpoint> checkpoints = [] {
    std::vector<ExampleCheckpoint> list;
    for (const char* prefix : {"examples/conv_seed/model/model.ckpt",
                               "examples/mnist_mlp/model/model.ckpt"}) {
      ExampleCheckpoint c;
      c.prefix = floe::fuzz::source_path(prefix);
      try {
        const auto keys = floe::conv::CheckpointReader::open(c.prefix).keys();
        c.keys.insert(keys.begin(), keys.end());
      } catch (const ConvertError&) {
        continue;  // example absent: those graphs are converted without a checkpoint
      }
      list.push_back(std::move(c));
    }
    return list;
  }();
  return checkpoints;
}

std::string node_of(const std::string& input) {
  std::string name = input.empty() || input[0] != '^' ? input : input.substr(1);
  const size_t colon = name.find(':');
  return colon == std::string::npos ? name : name.substr(0, colon);
}

// Unconsumed nodes that compute something, as a user would list --outputs.
std::vector<std::string> pick_outputs(const floe::tfproto::GraphDef& graph) {
  std::set<std::string> consumed;
  for (const auto& node : graph.node()) {
    for (const auto& input : node.input()) consumed.insert(node_of(input));
  }
  static const std::set<std::string> kNotOutputs = {"NoOp", "Assign", "SaveV2", "RestoreV2",
                                                    "Save", "Restore", "MergeV2Checkpoints"};
  std::vector<std::string> outputs;
  for (const auto& node : graph.node()) {
    if (consumed.count(node.name()) || kNotOutputs.count(node.op()) ||
        node.name().rfind("save", 0) == 0) {
      continue;
    }
    outputs.push_back(node.name());
    if (outputs.size() == 3) break;
  }
  if (outputs.empty() && graph.node_size() > 0) outputs.push_back(graph.node(graph.node_size() - 1).name());
  return outputs;
}

std::string matching_checkpoint(const floe::tfproto::GraphDef& graph) {
  for (const ExampleCheckpoint& c : example_checkpoints()) {
    for (const auto& node : graph.node()) {
      if (c.keys.count(node.name())) return c.prefix;
    }
  }
  return "";
}

// One conversion as floe-convert runs it: ConvertError is the clean refusal.
void convert_and_check(const floe::conv::ConvertOptions& options) {
  floe::conv::ConvertResult result;
  try {
    result = floe::conv::convert(options);
  } catch (const ConvertError&) {
    return;
  }
  floe::fuzz::require_valid_converted_model(result.model);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // protobuf logs every invalid UTF-8 string it meets; the loader reports errors itself.
  static const bool quiet = (google::protobuf::SetLogHandler(nullptr), true);
  (void)quiet;
  const std::string path = floe::fuzz::scratch_dir() + "/graph";
  floe::fuzz::write_file(path, data, size);
  floe::conv::ConvertOptions options;
  options.graph_path = path;
  bool has_signatures = false;
  try {
    const floe::conv::LoadedGraph loaded = floe::conv::load_graph(path);
    options.outputs = pick_outputs(loaded.graph);
    options.checkpoint_path = matching_checkpoint(loaded.graph);
    has_signatures = loaded.meta && loaded.meta->signature_def_size() > 0;
  } catch (const ConvertError&) {
    return 0;  // the clean outcome for a malformed file
  }
  if (has_signatures) {  // `floe-convert --graph export_dir`: outputs and inputs from the signature
    floe::conv::ConvertOptions by_signature = options;
    by_signature.outputs.clear();
    convert_and_check(by_signature);
  }
  if (!options.outputs.empty()) convert_and_check(options);
  return 0;
}
