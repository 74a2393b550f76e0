// SPDX-License-Identifier: Apache-2.0
// Converter harness for calibration files (--calibration): the bytes are
// written as one file and read as floe-convert reads it (sniffed: .npy, or an
// .npz zip: end records, zip64 fields, central directory, local headers, CRC,
// each member's .npy header). Arrays it accepts are matched against a small
// model's input "x:0" [1, 4], and samples it accepts calibrate that model,
// quantize it and give it its int8 integers; the emitted model must load, with
// its checksum, prepare and run. Only ConvertError is a clean outcome.
#include <cstdint>
#include <string>
#include <vector>

#include "converter/pipeline/convert.h"
#include "converter/frontend/calibration/calibration_file.h"
#include "converter/ir/error.h"
#include "converter/quantize/int8_arithmetic.h"
#include "converter/quantize/post_training.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

// x:0 [1, 4] -> MATMUL [4, 3] -> SOFTMAX
floe::conv::LoweredModel small_model() {
  using namespace floe::conv;
  LoweredModel m;
  auto value = [&](const std::string& name, std::vector<int64_t> shape) {
    Value v;
    v.name = name;
    v.dtype = floe::DType::kFloat32;
    v.shape = std::move(shape);
    return m.add_value(std::move(v));
  };
  const int x = value("x:0", {1, 4});
  Value w;
  w.name = "w";
  w.dtype = floe::DType::kFloat32;
  w.shape = {4, 3};
  auto t = std::make_shared<HostTensor>();
  t->dtype = floe::DType::kFloat32;
  t->shape = w.shape;
  const std::vector<float> weights = {0.5f, -1, 0.25f, 1, 0, -0.5f, 2, 0.75f, -0.25f, -2, 1.5f, 0.125f};
  t->data.assign(reinterpret_cast<const uint8_t*>(weights.data()),
                 reinterpret_cast<const uint8_t*>(weights.data()) + weights.size() * sizeof(float));
  w.constant = std::move(t);
  const int wi = m.add_value(std::move(w));
  const int logits = value("logits:0", {1, 3});
  const int probs = value("probs:0", {1, 3});
  LoweredOp fc;
  fc.opcode = schema::OpCode::MATMUL;
  fc.options.Set(schema::MatMulOptionsT{});
  fc.inputs = {x, wi};
  fc.outputs = {logits};
  fc.node_name = "fc";
  LoweredOp softmax;
  softmax.opcode = schema::OpCode::SOFTMAX;
  softmax.options.Set(schema::SoftmaxOptionsT{});
  softmax.inputs = {logits};
  softmax.outputs = {probs};
  softmax.node_name = "softmax";
  m.ops = {fc, softmax};
  m.inputs = {x};
  m.outputs = {probs};
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = floe::fuzz::scratch_dir() + "/x.npz";
  floe::fuzz::write_file(path, data, size);
  floe::conv::LoweredModel model = small_model();
  try {
    const std::vector<floe::conv::CalibrationArray> arrays = floe::conv::read_calibration(path);
    std::vector<floe::conv::CalibrationSample> samples = floe::conv::calibration_samples(model, arrays);
    if (samples.size() > 64) samples.resize(64);  // the reader was the target; keep runs fast
    const floe::conv::PostTrainingOptions options;
    const std::vector<floe::conv::ValueRange> ranges = floe::conv::calibrate(model, samples, options);
    floe::conv::quantize_post_training(&model, ranges, options);
    floe::conv::derive_int8_arithmetic(&model);
  } catch (const floe::conv::ConvertError&) {
    return 0;
  }
  floe::fuzz::require_valid_converted_model(floe::conv::plan_and_emit(model, "fuzz_calibration"));
  return 0;
}
