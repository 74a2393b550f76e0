// SPDX-License-Identifier: Apache-2.0
// Converter harness for .tflite files: the bytes go through the TFLite
// importer (FlatBuffers verifier, then every index, shape, buffer and
// quantization record checked), and a file it accepts through floe-convert's
// whole path (sniffing, import, optimization, backends, plan, emit). Every run
// must end in a ConvertError or in a model the runtime loads with its
// checksum; a float model must also Init and run (int8 ones cannot yet: the
// runtime has no int8 kernels). Any other exception, crash or sanitizer report
// is a bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "converter/frontend/tflite/tflite_import.h"
#include "converter/ir/error.h"
#include "converter/pipeline/convert.h"
#include "runtime/core/model.h"
#include "schemas/floe_generated.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

// Load with the checksum: whatever the converter writes, the runtime must
// accept, except QUANTIZE / DEQUANTIZE, which it has no kernels for yet (Load
// refuses them by index with kUnsupportedOp).
void require_loadable(const std::vector<uint8_t>& model) {
  const floe::fuzz::GuardedBuffer buffer(model.size(), model.data());
  floe::Model loaded;
  floe::LoadOptions options;
  options.verify_checksum = true;
  const floe::Status status = loaded.Load(buffer.data(), buffer.size(), options);
  if (status == floe::Status::kUnsupportedOp && loaded.error().op >= 0) {
    const auto* ops = floe::schema::GetModel(model.data())->operators();  // the converter's own output
    const floe::schema::OpCode code = ops->Get(static_cast<uint32_t>(loaded.error().op))->opcode();
    if (code == floe::schema::OpCode::QUANTIZE || code == floe::schema::OpCode::DEQUANTIZE) return;
  }
  if (status != floe::Status::kOk) {
    std::fprintf(stderr, "converted .tflite model refused by Model::Load: %s (op %d, tensor %d)\n",
                 loaded.error().message, loaded.error().op, loaded.error().tensor);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  bool quantized = false;
  try {
    quantized = floe::conv::import_tflite(bytes, "fuzz.tflite").quantized;
  } catch (const floe::conv::ConvertError&) {
    return 0;  // the clean outcome for a malformed or unsupported file
  }
  if (!floe::conv::is_tflite(bytes)) return 0;  // imported bytes always carry the identifier
  const std::string path = floe::fuzz::scratch_dir() + "/model.tflite";
  floe::fuzz::write_file(path, data, size);
  floe::conv::ConvertOptions options;
  options.graph_path = path;
  options.target = "host";
  std::vector<uint8_t> model;
  try {
    model = floe::conv::convert(options).model;
  } catch (const floe::conv::ConvertError&) {
    return 0;
  }
  if (quantized) {  // int8: no kernels yet, so Init would refuse it
    require_loadable(model);
  } else {
    floe::fuzz::require_valid_converted_model(model);
  }
  return 0;
}
