// SPDX-License-Identifier: Apache-2.0
// Converter harness for .tflite files: the bytes go through the TFLite
// importer (FlatBuffers verifier, then every index, shape, buffer and
// quantization record checked), and a file it accepts through floe-convert's
// whole path (sniffing, import, optimization, backends, plan, emit). Every run
// must end in a ConvertError or in a model the runtime loads with its
// checksum, prepares and runs, float and int8 alike. Any other exception,
// crash or sanitizer report is a bug. WHILE loops are bounded (a .tflite
// carries no bound) so they convert and run, a bounded number of times.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "converter/frontend/tflite/tflite_import.h"
#include "converter/ir/error.h"
#include "converter/pipeline/convert.h"
#include "tests/fuzz/fuzz_support.h"

namespace {
constexpr uint32_t kLoopBound = 16;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    floe::conv::TfliteOptions import_options;
    import_options.max_loop_iterations = kLoopBound;
    floe::conv::import_tflite(bytes, "fuzz.tflite", import_options);
  } catch (const floe::conv::ConvertError&) {
    return 0;  // the clean outcome for a malformed or unsupported file
  }
  if (!floe::conv::is_tflite(bytes)) return 0;  // imported bytes always carry the identifier
  const std::string path = floe::fuzz::scratch_dir() + "/model.tflite";
  floe::fuzz::write_file(path, data, size);
  floe::conv::ConvertOptions options;
  options.graph_path = path;
  options.target = "host";
  options.max_loop_iterations = kLoopBound;
  std::vector<uint8_t> model;
  try {
    model = floe::conv::convert(options).model;
  } catch (const floe::conv::ConvertError&) {
    return 0;
  }
  floe::fuzz::require_valid_converted_model(model);
  return 0;
}
