// SPDX-License-Identifier: Apache-2.0
// The int8 .tflite models of ../shared/corpus/int8 run end to end on floe's
// int8 reference kernels: KWS and person_detect give the outputs TFLM's own
// tests give on their shipped inputs, and on 20 seeded random inputs per model
// KWS, VWW and AD stay within 1 LSB of TensorFlow Lite 2.9 (fixtures in
// tflite_oracle/, made by make_tflite_fixtures.py).
//
// IC does not, and cannot while floe keeps TFLM's arithmetic: TFLite 2.9's
// optimized per-channel CONV_2D (the x86 build peers.md runs) rounds the final
// right shift of a negative tie upward, where TFLM, CMSIS-NN and TFLite's own
// reference kernels (the golden cases floe matches byte for byte) round it away
// from zero. Measured on seed 9: 24 of 16,384 outputs of IC's first conv
// without an activation differ by 1 (ReLU layers clip the negative ties away,
// which is why KWS and VWW agree exactly); the differences grow through three
// residual blocks to 22 steps at the softmax. Changing only that rounding in
// floe's conv reproduced TFLite 2.9 on every IC layer with zero differences.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "converter/pipeline/convert.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "runtime/tools/npy.h"
#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

conv::ConvertResult convert_tflite(const std::string& relative, const std::string& target) {
  conv::ConvertOptions options;
  options.graph_path = corpus_path(relative);
  options.target = target;
  return conv::convert(options);
}

HostTensor int8_tensor(std::vector<int64_t> shape, std::vector<int8_t> values) {
  HostTensor t;
  t.dtype = DType::kInt8;
  t.shape = std::move(shape);
  t.data.resize(values.size());
  std::memcpy(t.data.data(), values.data(), values.size());
  return t;
}

// make_tflite_fixtures.py: lcg_int8.
HostTensor lcg_int8(std::vector<int64_t> shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int8_t> values(static_cast<size_t>(n));
  uint32_t x = seed;
  for (int8_t& v : values) {
    x = 1664525u * x + 1013904223u;
    v = static_cast<int8_t>(static_cast<int32_t>(x >> 24) - 128);
  }
  return int8_tensor(std::move(shape), std::move(values));
}

HostTensor read_int8_npy(const std::string& path) {
  const tools::NpyArray a = tools::read_npy(path);
  std::vector<int8_t> v(a.data.size());
  std::memcpy(v.data(), a.data.data(), a.data.size());
  std::vector<int64_t> shape(a.shape.begin(), a.shape.end());
  return int8_tensor(shape, v);
}

std::vector<int> values_of(const HostTensor& t) {
  EXPECT_EQ(t.dtype, DType::kInt8);
  std::vector<int> out;
  for (size_t i = 0; i < t.data.size(); ++i) out.push_back(static_cast<int8_t>(t.data[i]));
  return out;
}

// The arena Init() needs on a 32-bit device: activations + prepared ops
// (reference kernels: no XNNPACK region).
uint64_t device_arena_32(const std::vector<uint8_t>& bytes) {
  tools::AlignedBytes buffer = tools::aligned_bytes(bytes.size());
  std::memcpy(buffer.get(), bytes.data(), bytes.size());
  Model model;
  EXPECT_EQ(model.Load(buffer.get(), bytes.size()), Status::kOk) << model.error().message;
  const schema::Model* m = model.schema();
  return ((m->arena_size() + 15) / 16) * 16 + m->persistent_size_ptr32();
}

TEST(TfliteInt8Run, KwsGivesClassFiveSaturated) {
  const char* model = "int8/mlperf_tiny/kws/kws_ref_model.tflite";
  FLOE_REQUIRE_CORPUS(model);
  for (const char* target : {"reference", "host"}) {
    const conv::ConvertResult r = convert_tflite(model, target);
    const std::vector<HostTensor> out =
        run_model(r.model, {{"input_1", read_int8_npy(corpus_path("int8/mlperf_tiny/kws/kws_input0_int8.npy"))}});
    ASSERT_EQ(out.size(), 1u);
    const std::vector<int> got = values_of(out[0]);
    ASSERT_EQ(got.size(), 12u);
    for (size_t c = 0; c < got.size(); ++c) EXPECT_EQ(got[c], c == 5 ? 127 : -128) << "class " << c << " " << target;
  }
  const uint64_t arena = device_arena_32(convert_tflite(model, "reference").model);
  std::printf("KWS int8 arena on a 32-bit device: %llu bytes (TFLM on the M4: 22772)\n",
              static_cast<unsigned long long>(arena));
  EXPECT_LT(arena, 22772u);
}

TEST(TfliteInt8Run, PersonDetectGivesTflmScores) {
  const char* model = "int8/tflite_micro/person_detection/person_detect.tflite";
  FLOE_REQUIRE_CORPUS(model);
  const conv::ConvertResult r = convert_tflite(model, "reference");
  // TFLM's person_detection_test inputs, and the camera's pixel - 128 form
  // (../shared/corpus/int8/README.md; TFLite 2.9 on a fixed copy agrees).
  const struct {
    const char* input;
    int no_person, person;
  } cases[] = {{"person_tflm_int8.npy", -113, 113},
               {"no_person_tflm_int8.npy", 57, -57},
               {"no_person_pixel_minus_128_int8.npy", 77, -77}};
  for (const auto& c : cases) {
    const std::vector<HostTensor> out = run_model(
        r.model, {{"input", read_int8_npy(corpus_path(std::string("int8/tflite_micro/person_detection/") + c.input))}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(values_of(out[0]), (std::vector<int>{c.no_person, c.person})) << c.input;
  }
  const uint64_t arena = device_arena_32(r.model);
  std::printf("person_detect int8 arena on a 32-bit device: %llu bytes (TFLM on the M4: 82292)\n",
              static_cast<unsigned long long>(arena));
  EXPECT_LT(arena, 82292u);
}

struct Int8Case {
  const char* name;
  const char* model;  // corpus-relative
  const char* input;
  std::vector<int64_t> shape;
  const char* output;
  int tolerance;  // max |floe - TFLite 2.9| in output steps
};

class TfliteInt8Oracle : public ::testing::TestWithParam<Int8Case> {};

TEST_P(TfliteInt8Oracle, AgreesWithTflite29OnTwentySeeds) {
  const Int8Case& c = GetParam();
  FLOE_REQUIRE_CORPUS(c.model);
  const conv::ConvertResult r = convert_tflite(c.model, "reference");
  size_t outputs = 0, exact = 0;
  int worst = 0;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const std::vector<HostTensor> out = run_model(r.model, {{c.input, lcg_int8(c.shape, seed)}});
    ASSERT_EQ(out.size(), 1u);
    const std::vector<int> got = values_of(out[0]);
    const std::vector<int> expected =
        values_of(read_int8_npy(std::string(FLOE_SOURCE_DIR) + "/tests/e2e/tflite_oracle/" + c.name + "_seed" +
                                std::to_string(seed) + "__" + c.output + ".npy"));
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      const int d = std::abs(got[i] - expected[i]);
      worst = std::max(worst, d);
      exact += d == 0;
      ++outputs;
    }
  }
  EXPECT_LE(worst, c.tolerance) << c.name;
  std::printf("%s: %zu of %zu outputs equal to TFLite 2.9's, the rest within %d LSB\n", c.name, exact, outputs,
              worst);
}

INSTANTIATE_TEST_SUITE_P(
    Models, TfliteInt8Oracle,
    ::testing::Values(
        Int8Case{"kws_int8", "int8/mlperf_tiny/kws/kws_ref_model.tflite", "input_1", {1, 49, 10, 1}, "Identity", 1},
        Int8Case{"ic_int8", "int8/mlperf_tiny/ic/pretrainedResnet_quant.tflite", "input_1_int8", {1, 32, 32, 3},
                 "Identity_int8", 22},
        Int8Case{"vww_int8", "int8/mlperf_tiny/vww/vww_96_int8.tflite", "input_1_int8", {1, 96, 96, 3},
                 "Identity_int8", 1},
        Int8Case{"ad_int8", "int8/mlperf_tiny/ad/ad01_int8.tflite", "input_1", {1, 640}, "Identity", 1}),
    [](const ::testing::TestParamInfo<Int8Case>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace floe::testing
