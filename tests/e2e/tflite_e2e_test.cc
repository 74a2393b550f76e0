// SPDX-License-Identifier: Apache-2.0
// Real .tflite files (../shared/corpus/int8): the three float MLPerf Tiny
// models convert and match TensorFlow Lite 2.9 (fixtures in tflite_oracle/,
// made by make_tflite_fixtures.py); the five int8 models convert into .floe
// files whose tensors carry the scales and zero points of the file; and bad
// files get exit 2, the file name and no output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "converter/ir/error.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "runtime/tools/npy.h"
#include "schemas/floe_generated.h"
#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

// make_tflite_fixtures.py: lcg_input.
HostTensor lcg_input(std::vector<int64_t> shape, uint32_t seed, int scale) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> values(static_cast<size_t>(n));
  uint32_t x = seed;
  for (float& v : values) {
    x = 1664525u * x + 1013904223u;
    const float u = static_cast<float>(x >> 8) * (1.0f / 16777216.0f);
    v = scale == 0 ? u : static_cast<float>(scale) * (2.0f * u - 1.0f);
  }
  return make_f32(std::move(shape), values);
}

struct FloatCase {
  const char* name;
  const char* model;  // corpus-relative
  std::vector<int64_t> shape;
  int scale;
  std::vector<uint32_t> seeds;
  double tolerance;  // max |floe - TFLite| over the softmax outputs
};

// KWS's "float" twin is dynamic-range quantized: its five CONV_2D have int8
// weights. floe dequantizes them at conversion and computes in float; TFLite's
// hybrid kernel quantizes each conv's input to int8 at run time, so the two
// differ by that rounding (measured over seeds 1-3: 0.033, argmax equal). IC and
// VWW are plain float32: floe and TFLite agree within 1e-6 (measured 8.1e-7 / 1.9e-8).
const std::vector<FloatCase>& float_cases() {
  static const std::vector<FloatCase> all = {
      {"kws_float", "int8/mlperf_tiny/kws/kws_ref_model_float32.tflite", {1, 49, 10, 1}, 8, {1, 2, 3}, 0.05},
      {"ic_float", "int8/mlperf_tiny/ic/pretrainedResnet.tflite", {1, 32, 32, 3}, 0, {1, 2, 3}, 1e-5},
      {"vww_float", "int8/mlperf_tiny/vww/vww_96_float.tflite", {1, 96, 96, 3}, 0, {1, 2}, 1e-5},
  };
  return all;
}

std::vector<float> fixture(const FloatCase& c, uint32_t seed) {
  const tools::NpyArray a = tools::read_npy(std::string(FLOE_SOURCE_DIR) + "/tests/e2e/tflite_oracle/" + c.name +
                                            "_seed" + std::to_string(seed) + "__Identity.npy");
  std::vector<float> out(a.data.size() / 4);
  std::memcpy(out.data(), a.data.data(), a.data.size());
  return out;
}

size_t argmax(const std::vector<float>& v) {
  return static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

conv::ConvertResult convert_tflite(const std::string& relative, const std::string& target = "reference",
                                   bool optimize = true) {
  conv::ConvertOptions options;
  options.graph_path = corpus_path(relative);
  options.target = target;
  options.optimize.enabled = optimize;
  return conv::convert(options);
}

class TfliteFloat : public ::testing::TestWithParam<size_t> {};

TEST_P(TfliteFloat, MatchesTflite29OnReferenceAndHostKernels) {
  const FloatCase& c = float_cases()[GetParam()];
  FLOE_REQUIRE_CORPUS(c.model);
  const struct {
    const char* target;
    bool optimize;
  } runs[] = {{"reference", false}, {"reference", true}, {"host", true}};
  for (const auto& [target, optimize] : runs) {
    const conv::ConvertResult r = convert_tflite(c.model, target, optimize);
    double worst = 0.0;
    for (uint32_t seed : c.seeds) {
      const std::vector<HostTensor> out = run_model(r.model, {{"input_1", lcg_input(c.shape, seed, c.scale)}});
      ASSERT_EQ(out.size(), 1u);
      const std::vector<float> got = as_floats(out[0]), expected = fixture(c, seed);
      ASSERT_EQ(got.size(), expected.size());
      worst = std::max(worst, static_cast<double>(max_abs_diff(got, expected)));
      EXPECT_EQ(argmax(got), argmax(expected)) << c.name << " seed " << seed << " " << target;
    }
    EXPECT_LE(worst, c.tolerance) << c.name << " " << target << "\n" << r.summary;
    std::printf("%s --target %s%s: max |floe - TFLite 2.9| = %.3g\n", c.name, target,
                optimize ? "" : " --no-optimize", worst);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, TfliteFloat, ::testing::Range<size_t>(0, 3),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return std::string(float_cases()[info.param].name);
                         });

// ---- int8 models: the quantization read from the file reaches the .floe ----

struct Floe {
  tools::AlignedBytes bytes;
  Model model;
  const schema::Model* schema() const { return model.schema(); }
};

std::unique_ptr<Floe> load(const std::vector<uint8_t>& bytes) {
  auto f = std::make_unique<Floe>();
  f->bytes = tools::aligned_bytes(bytes.size());
  std::memcpy(f->bytes.get(), bytes.data(), bytes.size());
  EXPECT_EQ(f->model.Load(f->bytes.get(), bytes.size()), Status::kOk) << f->model.error().message;
  return f;
}

TEST(TfliteInt8, AllFiveModelsConvertWithTheirQuantization) {
  const struct {
    const char* model;
    schema::DType in;
    float in_scale;
    int in_zero_point;
    float out_scale;
    int out_zero_point;
  } cases[] = {
      {"int8/mlperf_tiny/kws/kws_ref_model.tflite", schema::DType::INT8, 0.584703f, 83, 1.0f / 256, -128},
      {"int8/mlperf_tiny/ic/pretrainedResnet_quant.tflite", schema::DType::INT8, 1.0f, -128, 1.0f / 256, -128},
      {"int8/mlperf_tiny/vww/vww_96_int8.tflite", schema::DType::INT8, 1.0f / 255, -128, 1.0f / 256, -128},
      {"int8/mlperf_tiny/ad/ad01_int8.tflite", schema::DType::INT8, 0.391015f, 89, 0.364498f, 96},
      {"int8/tflite_micro/person_detection/person_detect.tflite", schema::DType::INT8, 2.0f / 255, -1, 1.0f / 256,
       -128},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.model);
    if (!path_exists(corpus_path(c.model))) GTEST_SKIP() << "SKIPPED: ../shared/corpus not available";
    const conv::ConvertResult r = convert_tflite(c.model, "host");
    const auto f = load(r.model);
    if (!f->model.loaded()) continue;
    ASSERT_EQ(f->schema()->inputs()->size(), 1u);
    const int in = f->schema()->inputs()->Get(0), out = f->schema()->outputs()->Get(0);
    EXPECT_EQ(f->schema()->tensors()->Get(static_cast<uint32_t>(in))->dtype(), c.in);
    const Quantization qi = f->model.quantization(static_cast<size_t>(in));
    const Quantization qo = f->model.quantization(static_cast<size_t>(out));
    EXPECT_NEAR(qi.scale, c.in_scale, 1e-6);  // the corpus README gives 6 decimals
    EXPECT_EQ(qi.zero_point, c.in_zero_point);
    EXPECT_NEAR(qo.scale, c.out_scale, 1e-6);
    EXPECT_EQ(qo.zero_point, c.out_zero_point);
    // Every op has its int8 kernel: Init prepares them all, in exactly the
    // arena the converter stated (tflite_int8_e2e_test.cc runs them).
    std::vector<uint8_t> arena(static_cast<size_t>(f->model.arena_size()) + 16);
    Interpreter interpreter(f->model, arena.data() + (16 - reinterpret_cast<uintptr_t>(arena.data()) % 16) % 16,
                            static_cast<size_t>(f->model.arena_size()));
    EXPECT_EQ(interpreter.Init(), Status::kOk) << interpreter.error().message;
    EXPECT_EQ(interpreter.arena_used(), f->model.arena_size());
  }
}

TEST(TfliteInt8, KwsFirstConvWeightsArePerChannelOnTheOutputAxis) {
  FLOE_REQUIRE_CORPUS("int8/mlperf_tiny/kws/kws_ref_model.tflite");
  const auto f = load(convert_tflite("int8/mlperf_tiny/kws/kws_ref_model.tflite").model);
  ASSERT_TRUE(f->model.loaded());
  const schema::Operator* conv = f->schema()->operators()->Get(0);
  ASSERT_EQ(conv->opcode(), schema::OpCode::CONV2D);
  const schema::Tensor* w = f->schema()->tensors()->Get(static_cast<uint32_t>(conv->inputs()->Get(1)));
  // TFLite's [64,10,4,1] OHWI filter is floe's HWIO [10,4,1,64]; its 64 scales
  // follow the output channel from axis 0 to axis 3.
  ASSERT_EQ(w->shape()->size(), 4u);
  EXPECT_EQ(w->shape()->Get(0), 10);
  EXPECT_EQ(w->shape()->Get(3), 64);
  ASSERT_NE(w->quantization(), nullptr);
  EXPECT_EQ(w->quantization()->quantized_dimension(), 3);
  ASSERT_EQ(w->quantization()->scale()->size(), 64u);
  // Bias scale = input scale x weight scale (the file's own rule, read back):
  // 0.584703 x weight_scale[0] = 0.000779.
  const schema::Tensor* bias = f->schema()->tensors()->Get(static_cast<uint32_t>(conv->inputs()->Get(2)));
  ASSERT_NE(bias->quantization(), nullptr);
  EXPECT_NEAR(0.584703 * w->quantization()->scale()->Get(0), bias->quantization()->scale()->Get(0), 1e-6);
  // The depthwise weights [1,3,3,64] (64 scales on axis 3) become [3,3,64,1]: axis 2.
  const schema::Operator* dw = f->schema()->operators()->Get(1);
  ASSERT_EQ(dw->opcode(), schema::OpCode::DEPTHWISE_CONV2D);
  const schema::Tensor* dww = f->schema()->tensors()->Get(static_cast<uint32_t>(dw->inputs()->Get(1)));
  EXPECT_EQ(dww->quantization()->quantized_dimension(), 2);
  EXPECT_EQ(dww->shape()->Get(2), 64);
  // FULLY_CONNECTED weights stay [12,64] per tensor, read with transpose_b.
  const schema::Operator* fc = f->schema()->operators()->Get(11);
  ASSERT_EQ(fc->opcode(), schema::OpCode::MATMUL);
  EXPECT_TRUE(fc->options_as_MatMulOptions()->transpose_b());
  EXPECT_EQ(f->schema()->tensors()->Get(static_cast<uint32_t>(fc->inputs()->Get(1)))->quantization()->scale()->size(),
            1u);
}

TEST(TfliteInt8, PersonDetectBiasQuantizedDimensionIsNormalizedWithANote) {
  FLOE_REQUIRE_CORPUS("int8/tflite_micro/person_detection/person_detect.tflite");
  const conv::ConvertResult r = convert_tflite("int8/tflite_micro/person_detection/person_detect.tflite");
  EXPECT_NE(r.summary.find("note: 14 1-D tensor(s)"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("as TensorFlow Lite Micro does"), std::string::npos) << r.summary;
  const auto f = load(r.model);
  ASSERT_TRUE(f->model.loaded());
  // Layer 0: depthwise, multiplier 8 from one channel: filter [3,3,1,8], its 8
  // scales on axis 3; every bias is per channel on axis 0.
  const schema::Operator* dw = f->schema()->operators()->Get(0);
  ASSERT_EQ(dw->opcode(), schema::OpCode::DEPTHWISE_CONV2D);
  EXPECT_EQ(dw->options_as_DepthwiseConv2DOptions()->depth_multiplier(), 8);
  const schema::Tensor* w = f->schema()->tensors()->Get(static_cast<uint32_t>(dw->inputs()->Get(1)));
  EXPECT_EQ(w->shape()->Get(2), 1);
  EXPECT_EQ(w->shape()->Get(3), 8);
  EXPECT_EQ(w->quantization()->quantized_dimension(), 3);
  int biases = 0;
  for (const schema::Operator* op : *f->schema()->operators()) {
    if (op->opcode() != schema::OpCode::DEPTHWISE_CONV2D) continue;
    const schema::Tensor* b = f->schema()->tensors()->Get(static_cast<uint32_t>(op->inputs()->Get(2)));
    EXPECT_EQ(b->quantization()->quantized_dimension(), 0);
    ++biases;
  }
  EXPECT_EQ(biases, 14);
}

// ---- the CLI on bad files ---------------------------------------------------

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string expect_refused(const std::string& graph) {
  const std::string dir = make_temp_dir();
  const std::string out = dir + "/out.floe";
  const CommandResult r = run_command(tool_path("floe-convert") + " --graph " + graph + " -o " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(file_exists(out)) << "output file left behind";
  EXPECT_EQ(run_command("ls -A " + dir).output, "") << "temporary files left behind";
  return r.output;
}

TEST(TfliteCli, ConvertsWithoutOutputs) {
  FLOE_REQUIRE_CORPUS("int8/mlperf_tiny/vww/vww_96_float.tflite");
  const std::string dir = make_temp_dir();
  const CommandResult r = run_command(tool_path("floe-convert") + " --graph " +
                                      corpus_path("int8/mlperf_tiny/vww/vww_96_float.tflite") + " -o " + dir +
                                      "/vww.floe");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(file_exists(dir + "/vww.floe"));
  EXPECT_NE(r.output.find("tflite: 31 operators"), std::string::npos) << r.output;
}

TEST(TfliteCli, TruncatedFileNamesTheFile) {
  FLOE_REQUIRE_CORPUS("int8/mlperf_tiny/kws/kws_ref_model.tflite");
  const std::string bytes = read_file(corpus_path("int8/mlperf_tiny/kws/kws_ref_model.tflite"));
  const std::string path = make_temp_dir() + "/cut.tflite";
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() / 3);
  const std::string message = expect_refused(path);
  EXPECT_NE(message.find("cut.tflite"), std::string::npos) << message;
  EXPECT_NE(message.find("verifier failed"), std::string::npos) << message;
}

// A copy whose operator codes for AVERAGE_POOL_2D and SOFTMAX are changed to
// ops floe does not convert: both are listed in one refusal.
TEST(TfliteCli, UnsupportedOpsAreListedAtOnce) {
  FLOE_REQUIRE_CORPUS("int8/mlperf_tiny/kws/kws_ref_model.tflite");
  std::string bytes = read_file(corpus_path("int8/mlperf_tiny/kws/kws_ref_model.tflite"));
  // operator_codes (from the file): 0 CONV_2D, 1 DEPTHWISE_CONV_2D,
  // 2 AVERAGE_POOL_2D, 3 RESHAPE, 4 FULLY_CONNECTED, 5 SOFTMAX; find each
  // code's deprecated_builtin_code byte through the vtable.
  auto field = [&](uint32_t table, int slot) -> size_t {
    uint32_t soffset;
    std::memcpy(&soffset, &bytes[table], 4);
    const size_t vtable = table - static_cast<int32_t>(soffset);
    uint16_t at;
    std::memcpy(&at, &bytes[vtable + 4 + 2 * static_cast<size_t>(slot)], 2);
    return at == 0 ? 0 : table + at;
  };
  auto follow = [&](size_t pos) -> uint32_t {
    uint32_t offset;
    std::memcpy(&offset, &bytes[pos], 4);
    return static_cast<uint32_t>(pos + offset);
  };
  const uint32_t root = follow(0);
  const uint32_t codes = follow(field(root, 1));  // Model.operator_codes
  auto set_code = [&](uint32_t index, char code) {
    const uint32_t table = follow(codes + 4 + 4 * index);
    const size_t at = field(table, 0);  // OperatorCode.deprecated_builtin_code
    ASSERT_NE(at, 0u);
    bytes[at] = code;
  };
  set_code(2, 5);   // AVERAGE_POOL_2D -> DEPTH_TO_SPACE
  set_code(5, 50);  // SOFTMAX -> LOG_SOFTMAX
  const std::string path = make_temp_dir() + "/edited.tflite";
  std::ofstream(path, std::ios::binary) << bytes;
  const std::string message = expect_refused(path);
  EXPECT_NE(message.find("edited.tflite"), std::string::npos) << message;
  EXPECT_NE(message.find("DEPTH_TO_SPACE x1"), std::string::npos) << message;
  EXPECT_NE(message.find("LOG_SOFTMAX x1"), std::string::npos) << message;
}

}  // namespace
}  // namespace floe::testing
