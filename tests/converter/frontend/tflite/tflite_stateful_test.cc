// SPDX-License-Identifier: Apache-2.0
// Ops with state (TFLite variable tensors) on small hand-built .tflite files,
// against TensorFlow Lite 2.9 over streams of invocations (each stream on a
// fresh interpreter whose state carries over its steps; skipped visibly
// without node and the peers' node_modules): SVDF in float (rank 2, RELU,
// batch 2) and in int8 with an int16 state, scaled so its values stay
// mostly unsaturated; a float UNIDIRECTIONAL_SEQUENCE_LSTM with CIFG,
// peepholes, projection and both clips, time-major, batch 2; the int8
// (8x8_16) LSTM with and without an input gate, an asymmetric input and a
// cell clip, batch-major, batch 2. TFLM's own SVDF
// keyword and MNIST LSTM models are tests/e2e/tflm_models_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

#include "converter/pipeline/convert.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "tests/converter/support/tfjs_oracle.h"
#include "tests/converter/support/tflite_builder.h"
#include "tests/support/loaded_model.h"

namespace floe::testing {
namespace {

constexpr int8_t kTflInt16 = 7;
constexpr int kSvdf = 27;
constexpr int8_t kRelu = 1;

uint32_t next(uint32_t& x) {
  x = 1664525u * x + 1013904223u;
  return x;
}

template <typename T>
std::vector<T> seeded(size_t n, uint32_t seed, int32_t lo, int32_t hi) {
  std::vector<T> v(n);
  uint32_t x = seed;
  for (T& e : v) e = static_cast<T>(lo + static_cast<int32_t>(next(x) % static_cast<uint32_t>(hi - lo + 1)));
  return v;
}

std::vector<float> seeded_floats(size_t n, uint32_t seed, float scale) {
  std::vector<float> v(n);
  uint32_t x = seed;
  for (float& e : v) e = scale * (static_cast<float>(next(x) >> 8) / 8388608.0f - 1.0f);
  return v;
}

HostTensor host(DType dtype, std::vector<int64_t> shape, const void* data, size_t bytes) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + bytes);
  return t;
}

// floe's outputs for the streams (one Init, so one state, per stream), as doubles.
std::vector<std::vector<double>> run_streams(const std::vector<uint8_t>& model_bytes,
                                             const std::vector<HostTensor>& inputs, size_t steps) {
  tools::AlignedBytes buffer = tools::aligned_bytes(model_bytes.size());
  std::memcpy(buffer.get(), model_bytes.data(), model_bytes.size());
  Model model;
  EXPECT_EQ(model.Load(buffer.get(), model_bytes.size()), Status::kOk) << model.error().message;
  tools::AlignedBytes arena = tools::aligned_bytes(model.arena_size());
  Interpreter interpreter(model, arena.get(), model.arena_size());
  std::vector<std::vector<double>> outputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i % steps == 0) EXPECT_EQ(interpreter.Init(), Status::kOk) << interpreter.error().message;
    const TensorView in = interpreter.input(0);
    EXPECT_EQ(in.bytes, inputs[i].data.size());
    std::memcpy(in.data, inputs[i].data.data(), in.bytes);
    EXPECT_EQ(interpreter.Invoke(), Status::kOk) << interpreter.error().message;
    const TensorView out = interpreter.output(0);
    std::vector<double> values;
    const size_t n = static_cast<size_t>(out.shape.num_elements());
    for (size_t k = 0; k < n; ++k) {
      values.push_back(out.dtype == DType::kFloat32 ? out.as<float>()[k] : out.as<int8_t>()[k]);
    }
    outputs.push_back(values);
  }
  return outputs;
}

struct Difference {
  double largest = 0;  // absolute, or relative to max(1, |TFLite|) for float
  size_t values = 0, saturated = 0;
};

// 8 streams of 6 steps from one model, floe (host, reference, cortex-m4)
// against TFLite 2.9.
Difference compare_streams(const std::string& bytes, const std::vector<HostTensor>& inputs, size_t steps,
                           bool relative) {
  const std::vector<std::vector<double>> want = run_tflite_stream(bytes, inputs, steps);
  EXPECT_EQ(want.size(), inputs.size());
  const std::string path = make_temp_dir() + "/svdf.tflite";
  std::ofstream(path, std::ios::binary) << bytes;
  Difference diff;
  for (const char* target : {"host", "reference", "cortex-m4"}) {
    conv::ConvertOptions options;
    options.graph_path = path;
    options.target = target;
    const std::vector<std::vector<double>> got = run_streams(conv::convert(options).model, inputs, steps);
    if (got.size() != want.size()) {
      ADD_FAILURE() << target << ": " << got.size() << " outputs for " << want.size();
      return diff;
    }
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].size(), want[i].size());
      for (size_t k = 0; k < got[i].size() && k < want[i].size(); ++k) {
        const double d = std::fabs(got[i][k] - want[i][k]) / (relative ? std::max(1.0, std::fabs(want[i][k])) : 1.0);
        diff.largest = std::max(diff.largest, d);
        ++diff.values;
        diff.saturated += !relative && (want[i][k] == 127 || want[i][k] == -128);
      }
    }
  }
  return diff;
}

constexpr int32_t kBatch = 2, kInput = 12, kFilters = 8, kMemory = 5, kRank = 2, kUnits = kFilters / kRank;
constexpr size_t kSteps = 6, kStreams = 8;

TEST(TfliteStateful, FloatSvdfRank2ReluStreamsLikeTflite29) {
  REQUIRE_TFLITE_ORACLE();
  TfliteBuilder b;
  const int x = b.tensor({{kBatch, kInput}, kTflFloat32, {}, "x"});
  const int wf = b.tensor({{kFilters, kInput}, kTflFloat32, raw(seeded_floats(kFilters * kInput, 3, 0.5f)), "wf"});
  const int wt = b.tensor({{kFilters, kMemory}, kTflFloat32, raw(seeded_floats(kFilters * kMemory, 4, 0.7f)), "wt"});
  const int bias = b.tensor({{kUnits}, kTflFloat32, raw(seeded_floats(kUnits, 5, 0.3f)), "bias"});
  TflTensor state{{kBatch, kFilters * kMemory}, kTflFloat32, {}, "state"};
  state.variable = true;
  const int s = b.tensor(state);
  const int y = b.tensor({{kBatch, kUnits}, kTflFloat32, {}, "y"});
  b.op({kSvdf, {x, wf, wt, bias, s}, {y}, tfl::BuiltinOptions::SVDFOptions, svdf_options(kRank, kRelu)});
  b.inputs = {x};
  b.outputs = {y};
  std::vector<HostTensor> inputs;
  for (uint32_t i = 0; i < kSteps * kStreams; ++i) {
    const std::vector<float> v = seeded_floats(kBatch * kInput, 100 + i, 1.0f);
    inputs.push_back(host(DType::kFloat32, {kBatch, kInput}, v.data(), v.size() * 4));
  }
  const Difference d = compare_streams(b.build(), inputs, kSteps, /*relative=*/true);
  EXPECT_LE(d.largest, 1e-5);
  std::printf("float SVDF: %zu values, largest relative difference from TFLite 2.9 %.2e\n", d.values, d.largest);
}

TEST(TfliteStateful, Int8SvdfWithInt16StateStreamsLikeTflite29) {
  REQUIRE_TFLITE_ORACLE();
  TfliteBuilder b;
  const int x = b.tensor({{kBatch, kInput}, kTflInt8, {}, "x", {0.01f}, {3}});
  const int wf = b.tensor({{kFilters, kInput}, kTflInt8, raw(seeded<int8_t>(kFilters * kInput, 3, -127, 127)), "wf",
                           {0.02f}, {0}});
  const float state_scale = 0.0005f, time_scale = 0.5f / 32768.0f;
  const int wt = b.tensor({{kFilters, kMemory}, kTflInt16, raw(seeded<int16_t>(kFilters * kMemory, 4, -32767, 32767)),
                           "wt", {time_scale}, {0}});
  const int bias = b.tensor({{kUnits}, kTflInt32, raw(seeded<int32_t>(kUnits, 5, -200000, 200000)), "bias",
                             {state_scale * time_scale}, {0}});
  TflTensor state{{kBatch, kFilters * kMemory}, kTflInt16, {}, "state", {state_scale}, {0}};
  state.variable = true;
  const int s = b.tensor(state);
  const int y = b.tensor({{kBatch, kUnits}, kTflInt8, {}, "y", {0.08f}, {-5}});
  b.op({kSvdf, {x, wf, wt, bias, s}, {y}, tfl::BuiltinOptions::SVDFOptions, svdf_options(kRank, kRelu)});
  b.inputs = {x};
  b.outputs = {y};
  std::vector<HostTensor> inputs;
  for (uint32_t i = 0; i < kSteps * kStreams; ++i) {
    const std::vector<int8_t> v = seeded<int8_t>(kBatch * kInput, 100 + i, -128, 127);
    inputs.push_back(host(DType::kInt8, {kBatch, kInput}, v.data(), v.size()));
  }
  const Difference d = compare_streams(b.build(), inputs, kSteps, /*relative=*/false);
  EXPECT_LE(d.largest, 1.0);
  EXPECT_LT(d.saturated * 4, d.values) << "the test's scales should keep most outputs unsaturated";
  std::printf("int8 SVDF: %zu values (%zu saturated), largest difference from TFLite 2.9: %.0f\n", d.values,
              d.saturated, d.largest);
}

// CIFG (no input gate), peepholes on forget and output, projection 6 -> 4
// with bias, cell clip 3 and projection clip 0.8, time-major [time 5, batch 2,
// inputs 3]: every optional path of the float kernel, its state carried over
// 4 invocations.
// State is arena bytes the op rewrites: an SVDF whose state tensor is marked
// a constant (bytes of the model, which may be read-only flash) is refused at
// Init(), before its prepare would reset it.
TEST(TfliteStateful, AStateMarkedConstantIsRefusedAtInit) {
  TfliteBuilder b;
  const int x = b.tensor({{kBatch, kInput}, kTflFloat32, {}, "x"});
  const int wf = b.tensor({{kFilters, kInput}, kTflFloat32, raw(seeded_floats(kFilters * kInput, 3, 0.5f)), "wf"});
  const int wt = b.tensor({{kFilters, kMemory}, kTflFloat32, raw(seeded_floats(kFilters * kMemory, 4, 0.7f)), "wt"});
  TflTensor state{{kBatch, kFilters * kMemory}, kTflFloat32, {}, "state"};
  state.variable = true;
  const int s = b.tensor(state);
  const int y = b.tensor({{kBatch, kUnits}, kTflFloat32, {}, "y"});
  b.op({kSvdf, {x, wf, wt, -1, s}, {y}, tfl::BuiltinOptions::SVDFOptions, svdf_options(kRank)});
  b.inputs = {x};
  b.outputs = {y};
  const std::string path = make_temp_dir() + "/svdf.tflite";
  std::ofstream(path, std::ios::binary) << b.build();
  conv::ConvertOptions options;
  options.graph_path = path;
  options.target = "reference";
  const std::vector<uint8_t> bytes = conv::convert(options).model;
  for (const bool constant : {false, true}) {
    std::unique_ptr<conv::schema::ModelT> model(conv::schema::GetModel(bytes.data())->UnPack());
    for (auto& t : model->tensors) {
      if (!t->variable || !constant) continue;
      t->is_constant = true;  // at the start of the constant section
      t->offset = 0;
      t->live_first_op = t->live_last_op = -1;
    }
    flatbuffers::FlatBufferBuilder fbb;
    conv::schema::FinishModelBuffer(fbb, conv::schema::Model::Pack(fbb, model.get()));
    const std::unique_ptr<LoadedModel> loaded =
        load_model(std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()));
    ASSERT_EQ(loaded->status, Status::kOk) << loaded->model.error().message;
    tools::AlignedBytes arena = tools::aligned_bytes(loaded->model.arena_size());
    Interpreter interpreter(loaded->model, arena.get(), loaded->model.arena_size());
    EXPECT_EQ(interpreter.Init(), constant ? Status::kInvalidModel : Status::kOk) << interpreter.error().message;
  }
}

TEST(TfliteStateful, FloatLstmCifgPeepholeProjectionStreamsLikeTflite29) {
  REQUIRE_TFLITE_ORACLE();
  constexpr int32_t kTime = 5, kLstmBatch = 2, kIn = 3, kCells = 6, kOut = 4;
  TfliteBuilder b;
  uint32_t seed = 40;
  auto constant = [&](std::vector<int32_t> shape, float scale, const char* name) {
    size_t n = 1;
    for (int32_t d : shape) n *= static_cast<size_t>(d);
    return b.tensor({std::move(shape), kTflFloat32, raw(seeded_floats(n, ++seed, scale)), name});
  };
  std::vector<int32_t> in(24, -1);
  in[0] = b.tensor({{kTime, kLstmBatch, kIn}, kTflFloat32, {}, "x"});
  const char* gates[] = {"i", "f", "c", "o"};
  for (int g = 1; g < 4; ++g) {
    in[static_cast<size_t>(1 + g)] = constant({kCells, kIn}, 0.8f, gates[g]);
    in[static_cast<size_t>(5 + g)] = constant({kCells, kOut}, 0.6f, gates[g]);
    in[static_cast<size_t>(12 + g)] = constant({kCells}, 0.5f, gates[g]);
  }
  in[10] = constant({kCells}, 0.4f, "peephole_f");
  in[11] = constant({kCells}, 0.4f, "peephole_o");
  in[16] = constant({kOut, kCells}, 0.7f, "projection");
  in[17] = constant({kOut}, 0.2f, "projection_bias");
  TflTensor h{{kLstmBatch, kOut}, kTflFloat32, {}, "h"}, c{{kLstmBatch, kCells}, kTflFloat32, {}, "c"};
  h.variable = c.variable = true;
  in[18] = b.tensor(h);
  in[19] = b.tensor(c);
  const int y = b.tensor({{kTime, kLstmBatch, kOut}, kTflFloat32, {}, "y"});
  b.op({44, in, {y}, tfl::BuiltinOptions::UnidirectionalSequenceLSTMOptions, lstm_options(3.0f, 0.8f, true)});
  b.inputs = {in[0]};
  b.outputs = {y};
  std::vector<HostTensor> inputs;
  for (uint32_t i = 0; i < 4 * 3; ++i) {
    const std::vector<float> v = seeded_floats(kTime * kLstmBatch * kIn, 300 + i, 2.0f);
    inputs.push_back(host(DType::kFloat32, {kTime, kLstmBatch, kIn}, v.data(), v.size() * 4));
  }
  const Difference d = compare_streams(b.build(), inputs, 4, /*relative=*/true);
  EXPECT_LE(d.largest, 1e-5);
  std::printf("float LSTM (CIFG, peepholes, projection): %zu values, largest difference from TFLite 2.9 %.2e\n",
              d.values, d.largest);
}

// TFLite's 8x8_16 LSTM: int8 input (zero point 5), weights and output state,
// int32 biases, an int16 cell state at 2^-11 clipped to 2.5, batch-major
// [batch 2, time 6, inputs 5], 7 cells; with an input gate or without (CIFG).
// Scales chosen so gates and cell state stay mostly unsaturated.
void expect_int8_lstm_streams_like_tflite(bool cifg) {
  constexpr int32_t kLstmBatch = 2, kTime = 6, kIn = 5, kCells = 7;
  constexpr int8_t kTflInt32 = 2;
  TfliteBuilder b;
  uint32_t seed = cifg ? 60 : 70;
  const float input_scale = 0.02f, state_scale = 1.0f / 128.0f;
  std::vector<int32_t> in(24, -1);
  in[0] = b.tensor({{kLstmBatch, kTime, kIn}, kTflInt8, {}, "x", {input_scale}, {5}});
  const char* gates[] = {"i", "f", "c", "o"};
  for (int g = cifg ? 1 : 0; g < 4; ++g) {
    const float w_scale = 0.006f + 0.001f * static_cast<float>(g), r_scale = 0.004f + 0.001f * static_cast<float>(g);
    in[static_cast<size_t>(1 + g)] = b.tensor({{kCells, kIn}, kTflInt8, raw(seeded<int8_t>(kCells * kIn, ++seed, -127, 127)),
                                               std::string("w_") + gates[g], {w_scale}, {0}});
    in[static_cast<size_t>(5 + g)] = b.tensor({{kCells, kCells}, kTflInt8,
                                               raw(seeded<int8_t>(kCells * kCells, ++seed, -127, 127)),
                                               std::string("r_") + gates[g], {r_scale}, {0}});
    in[static_cast<size_t>(12 + g)] = b.tensor({{kCells}, kTflInt32, raw(seeded<int32_t>(kCells, ++seed, -3000, 3000)),
                                                std::string("b_") + gates[g], {w_scale * input_scale}, {0}});
  }
  TflTensor h{{kLstmBatch, kCells}, kTflInt8, {}, "h", {state_scale}, {0}};
  TflTensor c{{kLstmBatch, kCells}, kTflInt16, {}, "c", {1.0f / 2048.0f}, {0}};
  h.variable = c.variable = true;
  in[18] = b.tensor(h);
  in[19] = b.tensor(c);
  std::vector<int32_t> intermediates;
  for (int k = 0; k < 4; ++k) intermediates.push_back(b.tensor({{0}, kTflFloat32, {}, "gate" + std::to_string(k)}));
  intermediates.push_back(b.tensor({{0}, kTflInt8, {}, "hidden", {state_scale}, {0}}));
  const int y = b.tensor({{kLstmBatch, kTime, kCells}, kTflInt8, {}, "y", {state_scale}, {0}});
  TflOp op{44, in, {y}, tfl::BuiltinOptions::UnidirectionalSequenceLSTMOptions, lstm_options(2.5f, 0.0f, false)};
  op.intermediates = intermediates;
  b.op(op);
  b.inputs = {in[0]};
  b.outputs = {y};
  std::vector<HostTensor> inputs;
  for (uint32_t i = 0; i < 3 * 4; ++i) {
    const std::vector<int8_t> v = seeded<int8_t>(kLstmBatch * kTime * kIn, 500 + i, -128, 127);
    inputs.push_back(host(DType::kInt8, {kLstmBatch, kTime, kIn}, v.data(), v.size()));
  }
  const Difference d = compare_streams(b.build(), inputs, 4, /*relative=*/false);
  EXPECT_LE(d.largest, 1.0);
  EXPECT_LT(d.saturated * 4, d.values) << "the test's scales should keep most outputs unsaturated";
  std::printf("int8 LSTM%s: %zu values (%zu saturated), largest difference from TFLite 2.9: %.0f\n",
              cifg ? " (CIFG)" : "", d.values, d.saturated, d.largest);
}

TEST(TfliteStateful, Int8LstmStreamsLikeTflite29) {
  REQUIRE_TFLITE_ORACLE();
  expect_int8_lstm_streams_like_tflite(/*cifg=*/false);
}

TEST(TfliteStateful, Int8LstmWithoutInputGateStreamsLikeTflite29) {
  REQUIRE_TFLITE_ORACLE();
  expect_int8_lstm_streams_like_tflite(/*cifg=*/true);
}

}  // namespace
}  // namespace floe::testing
