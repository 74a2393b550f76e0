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

constexpr uint32_t kLoopWatchdog = 64;

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
  // A watchdog for run-time loops, which have no bound of their own: the
  // model runs on zeroed inputs, on which a loop's condition may never turn.
  options.max_loop_iterations = kLoopWatchdog;
  bool has_signatures = false;
  try {
    const floe::conv::LoadedGraph loaded = floe::conv::load_graph(path);
    options.outputs = floe::fuzz::pick_outputs(loaded.graph);
    options.checkpoint_path = floe::fuzz::matching_checkpoint(loaded.graph);
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
