// SPDX-License-Identifier: Apache-2.0
// TensorFlow Lite Micro's own test models (../shared/corpus/tflm) run as TFLM
// runs them. The SEANet integration cases (int16 activations, int8 weights,
// int64 biases: TFLite's 16x8 scheme) must give TFLM's golden outputs exactly,
// value for value, on the host, the reference target and the cortex-m4 target
// (whose kernels this host build runs in their portable form). The SVDF
// keyword model streams: its state carries over invocations, as on TFLite 2.9.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "converter/frontend/tflite/tflite_subset_generated.h"
#include "converter/pipeline/convert.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "runtime/tools/npy.h"
#include "tests/converter/support/tfjs_oracle.h"
#include "tests/converter/support/tflite_builder.h"
#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

// Comma-separated integers, as TFLM's integration tests store them.
std::vector<int64_t> read_int_csv(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::vector<int64_t> values;
  std::string field;
  while (std::getline(in, field, ',')) {
    std::istringstream token(field);
    int64_t v = 0;
    if (token >> v) values.push_back(v);
  }
  return values;
}

HostTensor integer_tensor(DType dtype, const std::vector<int64_t>& shape, const std::vector<int64_t>& values) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = shape;
  const size_t size = dtype == DType::kInt16 ? 2 : dtype == DType::kInt8 ? 1 : 4;
  t.data.resize(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    if (size == 2) {
      const int16_t v = static_cast<int16_t>(values[i]);
      std::memcpy(&t.data[i * 2], &v, 2);
    } else if (size == 1) {
      t.data[i] = static_cast<uint8_t>(static_cast<int8_t>(values[i]));
    } else {
      const int32_t v = static_cast<int32_t>(values[i]);
      std::memcpy(&t.data[i * 4], &v, 4);
    }
  }
  return t;
}

std::vector<int64_t> integers_of(const HostTensor& t) {
  std::vector<int64_t> out;
  if (t.dtype == DType::kInt16) {
    for (size_t i = 0; i + 1 < t.data.size(); i += 2) {
      int16_t v;
      std::memcpy(&v, &t.data[i], 2);
      out.push_back(v);
    }
  } else if (t.dtype == DType::kInt8) {
    for (uint8_t b : t.data) out.push_back(static_cast<int8_t>(b));
  } else {
    ADD_FAILURE() << "unexpected output dtype";
  }
  return out;
}

struct ModelInput {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
};

// The converted model's inputs, in the .tflite's order.
std::vector<ModelInput> inputs_of(const std::vector<uint8_t>& bytes) {
  tools::AlignedBytes buffer = tools::aligned_bytes(bytes.size());
  std::memcpy(buffer.get(), bytes.data(), bytes.size());
  Model model;
  EXPECT_EQ(model.Load(buffer.get(), bytes.size()), Status::kOk) << model.error().message;
  std::vector<ModelInput> out;
  const schema::Model* m = model.schema();
  for (int32_t index : *m->inputs()) {
    const schema::Tensor* t = m->tensors()->Get(static_cast<uint32_t>(index));
    ModelInput in;
    in.name = t->name()->str();
    in.dtype = static_cast<DType>(t->dtype());
    for (int32_t d : *t->shape()) in.shape.push_back(d);
    out.push_back(in);
  }
  return out;
}

const char* dtype_suffix(DType t) {
  switch (t) {
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt8: return "int8";
    default: return "unsupported";
  }
}

class SeanetCase : public ::testing::TestWithParam<const char*> {};

TEST_P(SeanetCase, EqualsTflmGolden) {
  const std::string name = GetParam();
  const std::string op = name.substr(0, name.find_last_not_of("0123456789") + 1);
  const std::string dir = "tflm/integration_tests/seanet/" + op + "/";
  FLOE_REQUIRE_CORPUS(dir + name + ".tflite");
  const std::vector<int64_t> golden = read_int_csv(corpus_path(dir + name + "_golden_int16.csv"));
  ASSERT_FALSE(golden.empty());
  for (const char* target : {"host", "reference", "cortex-m4", "cortex-m55"}) {
    SCOPED_TRACE(target);
    conv::ConvertOptions options;
    options.graph_path = corpus_path(dir + name + ".tflite");
    options.target = target;
    const conv::ConvertResult r = conv::convert(options);
    if (op == "conv" && std::string(target).rfind("cortex-m", 0) == 0) {
      // The int16x8 Cortex-M convolution (here in its portable form).
      for (const schema::Operator* o : *schema::GetModel(r.model.data())->operators()) {
        EXPECT_EQ(o->cortexm_kernel(), schema::CortexMKernel::S16_IM2COL_GEMM) << name;
      }
    }
    std::map<std::string, HostTensor> feeds;
    const std::vector<ModelInput> inputs = inputs_of(r.model);
    for (size_t k = 0; k < inputs.size(); ++k) {
      const std::string csv =
          corpus_path(dir + name + "_input" + std::to_string(k) + "_" + dtype_suffix(inputs[k].dtype) + ".csv");
      feeds[inputs[k].name] = integer_tensor(inputs[k].dtype, inputs[k].shape, read_int_csv(csv));
    }
    const std::vector<HostTensor> out = run_model(r.model, feeds);
    ASSERT_EQ(out.size(), 1u);
    const std::vector<int64_t> got = integers_of(out[0]);
    ASSERT_EQ(got.size(), golden.size());
    size_t differing = 0, first = got.size();
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != golden[i]) {
        if (differing++ == 0) first = i;
      }
    }
    EXPECT_EQ(differing, 0u) << name << ": " << differing << " of " << got.size() << " values differ, first at " << first
                             << " (floe " << (first < got.size() ? got[first] : 0) << ", TFLM "
                             << (first < golden.size() ? golden[first] : 0) << ")";
  }
}

// The 46 cases of ../shared/corpus/tflm/integration_tests/seanet.
const char* const kSeanetCases[] = {
    "add0",           "add1",           "add2",           "add3",           "add4",           "add5",
    "conv0",          "conv1",          "conv2",          "conv3",          "conv4",          "conv5",
    "conv6",          "conv7",          "leaky_relu0",    "leaky_relu1",    "leaky_relu2",    "leaky_relu3",
    "leaky_relu4",    "leaky_relu5",    "leaky_relu6",    "leaky_relu7",    "pad0",           "pad1",
    "pad2",           "pad3",           "pad4",           "pad5",           "pad6",           "quantize0",
    "strided_slice0", "strided_slice1", "strided_slice2", "strided_slice3", "strided_slice4", "strided_slice5",
    "strided_slice6", "strided_slice7", "strided_slice8", "strided_slice9", "strided_slice10", "strided_slice11",
    "sub0",           "sub1",           "transpose_conv0", "transpose_conv1"};

INSTANTIATE_TEST_SUITE_P(Tflm, SeanetCase, ::testing::ValuesIn(kSeanetCases),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

// ---- the SVDF keyword model: int16 input quantized to int8, seven int8 SVDF
// layers (int16 state) between FULLY_CONNECTEDs, SOFTMAX int8 -> int16, and an
// int16 -> int32 QUANTIZE. A stream: each invocation is one time step.

constexpr const char* kKeyword = "tflm/models/keyword_scrambled.tflite";

namespace tfl = ::floe::tflite_schema;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

HostTensor seeded_int16(const std::vector<int64_t>& shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int64_t> values;
  uint32_t x = seed * 2654435761u + 1u;
  for (int64_t i = 0; i < n; ++i) {
    x = 1664525u * x + 1013904223u;
    values.push_back(static_cast<int16_t>(x >> 16));
  }
  return integer_tensor(DType::kInt16, shape, values);
}

// One interpreter invoked on each input in turn: the state carries over.
class Stream {
 public:
  explicit Stream(const std::vector<uint8_t>& model_bytes) : buffer_(tools::aligned_bytes(model_bytes.size())) {
    std::memcpy(buffer_.get(), model_bytes.data(), model_bytes.size());
    EXPECT_EQ(model_.Load(buffer_.get(), model_bytes.size()), Status::kOk) << model_.error().message;
    arena_ = tools::aligned_bytes(model_.arena_size());
    interpreter_ = std::make_unique<Interpreter>(model_, arena_.get(), model_.arena_size());
    EXPECT_EQ(interpreter_->Init(), Status::kOk) << interpreter_->error().message;
  }
  std::vector<int64_t> step(const HostTensor& input) {
    const TensorView in = interpreter_->input(0);
    EXPECT_EQ(in.bytes, input.data.size());
    std::memcpy(in.data, input.data.data(), in.bytes);
    EXPECT_EQ(interpreter_->Invoke(), Status::kOk) << interpreter_->error().message;
    const TensorView out = interpreter_->output(0);
    std::vector<int64_t> values;
    if (out.dtype == DType::kInt32) {
      for (size_t i = 0; i < out.bytes / 4; ++i) values.push_back(out.as<int32_t>()[i]);
    } else {
      EXPECT_EQ(out.dtype, DType::kInt8);
      for (size_t i = 0; i < out.bytes; ++i) values.push_back(out.as<int8_t>()[i]);
    }
    return values;
  }
  Interpreter& interpreter() { return *interpreter_; }

 private:
  tools::AlignedBytes buffer_;
  Model model_;
  tools::AlignedBytes arena_;
  std::unique_ptr<Interpreter> interpreter_;
};

// A .tflite with its output moved to tensor `output`, to compare an inner
// value (the keyword model's own output is a SOFTMAX its scrambled weights
// keep at 0.5 / 0.5): TFLite and floe then both stop there (floe keeps only
// what the output needs).
std::string with_output(std::string bytes, int32_t output) {
  auto* graph = tfl::GetMutableModel(&bytes[0])->mutable_subgraphs()->GetMutableObject(0);
  graph->mutable_outputs()->Mutate(0, output);
  return bytes;
}

// Streams of 10 steps from 20 seeds, each compared value by value with
// TFLite 2.9 at three points: the first SVDF's output (tensor 5), the last
// one's (47) and the model's int32 output (53). The host target compares at
// the first only: its FULLY_CONNECTED layers run on XNNPACK, whose int8
// rounding may differ by 1 LSB, and the saturated layers after it can turn
// that into a flip from -128 to 127.
TEST(TflmKeywordSvdf, StreamsLikeTflite29OverTenInvocations) {
  FLOE_REQUIRE_CORPUS(kKeyword);
  REQUIRE_TFLITE_ORACLE();
  constexpr size_t kSteps = 10, kSeeds = 20;
  std::vector<HostTensor> inputs;
  for (uint32_t seed = 1; seed <= kSeeds; ++seed) {
    for (uint32_t k = 0; k < kSteps; ++k) inputs.push_back(seeded_int16({1, 96}, seed * 100 + k));
  }
  const std::string original = read_bytes(corpus_path(kKeyword));
  for (const int32_t output : {5, 47, 53}) {
    const std::string bytes = with_output(original, output);
    const std::vector<std::vector<double>> want = run_tflite_stream(bytes, inputs, kSteps);
    ASSERT_EQ(want.size(), inputs.size());
    const std::string path = make_temp_dir() + "/keyword.tflite";
    std::ofstream(path, std::ios::binary) << bytes;
    for (const char* target : {"host", "reference", "cortex-m4"}) {
      if (output != 5 && std::string(target) == "host") continue;
      SCOPED_TRACE(std::string(target) + ", output tensor " + std::to_string(output));
      conv::ConvertOptions options;
      options.graph_path = path;
      options.target = target;
      const conv::ConvertResult r = conv::convert(options);
      int64_t max_difference = 0;
      size_t compared = 0, state_mattered = 0;
      for (size_t seed = 0; seed < kSeeds; ++seed) {
        Stream stream(r.model);
        for (size_t k = 0; k < kSteps; ++k) {
          const size_t at = seed * kSteps + k;
          const std::vector<int64_t> got = stream.step(inputs[at]);
          ASSERT_EQ(got.size(), want[at].size());
          for (size_t i = 0; i < got.size(); ++i) {
            const int64_t d = std::llabs(got[i] - static_cast<int64_t>(want[at][i]));
            max_difference = std::max(max_difference, d);
            ++compared;
            EXPECT_LE(d, 1) << "seed " << seed << " step " << k << " value " << i << ": floe " << got[i]
                            << ", TFLite " << want[at][i];
          }
        }
        // The last input from a fresh state: the state carried something.
        Stream fresh(r.model);
        const std::vector<int64_t> alone = fresh.step(inputs[seed * kSteps + kSteps - 1]);
        state_mattered += std::vector<double>(alone.begin(), alone.end()) != want[seed * kSteps + kSteps - 1];
      }
      if (output != 53) EXPECT_GT(state_mattered, kSeeds / 2) << "the state should change most streams' last step";
      std::printf("keyword_scrambled to tensor %d (%s): %zu values over %zu streams of %zu steps, largest "
                  "difference from TFLite 2.9 %lld, state changed the last step of %zu streams\n",
                  output, target, compared, kSeeds, kSteps, static_cast<long long>(max_difference), state_mattered);
    }
  }
}

TEST(TflmKeywordSvdf, ResetVariableTensorsRestartsTheStream) {
  FLOE_REQUIRE_CORPUS(kKeyword);
  const std::string path = make_temp_dir() + "/keyword.tflite";
  std::ofstream(path, std::ios::binary) << with_output(read_bytes(corpus_path(kKeyword)), 47);
  conv::ConvertOptions options;
  options.graph_path = path;
  const conv::ConvertResult r = conv::convert(options);
  Stream stream(r.model);
  const std::vector<int64_t> first = stream.step(seeded_int16({1, 96}, 7));
  std::vector<int64_t> later;
  for (uint32_t k = 0; k < 5; ++k) later = stream.step(seeded_int16({1, 96}, 7));
  EXPECT_NE(later, first) << "the same input after five steps should give another output";
  ASSERT_EQ(stream.interpreter().ResetVariableTensors(), Status::kOk);
  EXPECT_EQ(stream.step(seeded_int16({1, 96}, 7)), first);
  // Init() resets too.
  for (uint32_t k = 0; k < 3; ++k) stream.step(seeded_int16({1, 96}, 9));
  ASSERT_EQ(stream.interpreter().Init(), Status::kOk);
  EXPECT_EQ(stream.step(seeded_int16({1, 96}, 7)), first);
}

// The states are planned in bytes of their own: seven int16 states of
// 512 or 1024 elements stay apart from each other and from every other tensor.
TEST(TflmKeywordSvdf, StatesAreVariableTensorsLiveTheWholeRun) {
  FLOE_REQUIRE_CORPUS(kKeyword);
  conv::ConvertOptions options;
  options.graph_path = corpus_path(kKeyword);
  const conv::ConvertResult r = conv::convert(options);
  tools::AlignedBytes buffer = tools::aligned_bytes(r.model.size());
  std::memcpy(buffer.get(), r.model.data(), r.model.size());
  Model model;
  ASSERT_EQ(model.Load(buffer.get(), r.model.size()), Status::kOk) << model.error().message;
  const schema::Model* m = model.schema();
  int variables = 0;
  for (const schema::Tensor* t : *m->tensors()) {
    if (!t->variable()) continue;
    ++variables;
    EXPECT_EQ(t->dtype(), schema::DType::INT16);
    EXPECT_FALSE(t->is_constant());
    // No recorded lifetime: live throughout for the plan check.
    EXPECT_EQ(t->live_first_op(), -1);
    EXPECT_EQ(t->live_last_op(), -1);
    for (const schema::Tensor* u : *m->tensors()) {
      if (u == t || u->is_constant() || u->size() == 0) continue;
      const bool apart = u->offset() + u->size() <= t->offset() || t->offset() + t->size() <= u->offset();
      EXPECT_TRUE(apart) << t->name()->str() << " shares bytes with " << u->name()->str();
    }
  }
  EXPECT_EQ(variables, 7);
}

// ---- the MNIST LSTM examples: one UNIDIRECTIONAL_SEQUENCE_LSTM (20 cells over
// 28 rows of 28 pixels, tanh, cell clip 10), FULLY_CONNECTED, SOFTMAX.

constexpr const char* kLstmDir = "tflm/examples/mnist_lstm/";

HostTensor float_tensor(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  HostTensor t;
  t.dtype = DType::kFloat32;
  t.shape = shape;
  const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
  t.data.assign(bytes, bytes + values.size() * sizeof(float));
  return t;
}

std::vector<float> floats_of(const HostTensor& t) {
  std::vector<float> v(t.data.size() / 4);
  std::memcpy(v.data(), t.data.data(), v.size() * 4);
  return v;
}

// A corpus model converted for `target`, and its first input's name.
struct ConvertedModel {
  std::vector<uint8_t> bytes;
  std::string input;
};

ConvertedModel convert_corpus(const std::string& relative, const char* target) {
  conv::ConvertOptions options;
  options.graph_path = corpus_path(relative);
  options.target = target;
  ConvertedModel m;
  m.bytes = conv::convert(options).model;
  m.input = inputs_of(m.bytes).at(0).name;
  return m;
}

// TFLM's evaluate test: sampleN.npy (the digit N, float [1, 28, 28] in 0..1)
// must come out as N.
TEST(TflmMnistLstm, FloatModelNamesEachSampleDigit) {
  const std::string model = std::string(kLstmDir) + "trained_lstm.tflite";
  FLOE_REQUIRE_CORPUS(model);
  for (const char* target : {"host", "reference", "cortex-m4"}) {
    SCOPED_TRACE(target);
    const ConvertedModel r = convert_corpus(model, target);
    for (int digit = 0; digit < 10; ++digit) {
      const tools::NpyArray sample =
          tools::read_npy(corpus_path(std::string(kLstmDir) + "samples/sample" + std::to_string(digit) + ".npy"));
      ASSERT_EQ(sample.dtype, DType::kFloat32);
      HostTensor x;
      x.dtype = DType::kFloat32;
      x.shape = {1, 28, 28};
      x.data = sample.data;
      const std::vector<float> probabilities = floats_of(run_model(r.bytes, {{r.input, x}}).at(0));
      ASSERT_EQ(probabilities.size(), 10u);
      const int named = static_cast<int>(std::max_element(probabilities.begin(), probabilities.end()) -
                                         probabilities.begin());
      EXPECT_EQ(named, digit) << "sample" << digit << ".npy";
    }
  }
}

// TFLite 2.9 on 20 seeded images at the LSTM's own output (the hidden state
// of all 28 steps, tensor 18): each value within 1e-5 of TFLite's relative to
// the largest of its vector (the softmax after it turns the logits' absolute
// rounding into relative differences of its 1e-16 probabilities).
TEST(TflmMnistLstm, FloatModelEqualsTflite29) {
  const std::string model = std::string(kLstmDir) + "trained_lstm.tflite";
  FLOE_REQUIRE_CORPUS(model);
  REQUIRE_TFLITE_ORACLE();
  {
    const int32_t output = 18;
    const std::string bytes = with_output(read_bytes(corpus_path(model)), output);
    const std::string path = make_temp_dir() + "/lstm.tflite";
    std::ofstream(path, std::ios::binary) << bytes;
    conv::ConvertOptions options;
    options.graph_path = path;
    const conv::ConvertResult r = conv::convert(options);
    const std::string input = inputs_of(r.model).at(0).name;
    double largest = 0;
    size_t values = 0;
    for (uint32_t seed = 1; seed <= 20; ++seed) {
      std::vector<float> pixels(28 * 28);
      uint32_t s = seed * 2654435761u;
      for (float& v : pixels) {
        s = 1664525u * s + 1013904223u;
        v = static_cast<float>(s >> 8) / 16777216.0f;
      }
      const HostTensor x = float_tensor({1, 28, 28}, pixels);
      const std::vector<std::vector<float>> want = run_tflite(bytes, {x}, 1);
      ASSERT_EQ(want.size(), 1u);
      const std::vector<float> got = floats_of(run_model(r.model, {{input, x}}).at(0));
      ASSERT_EQ(got.size(), want[0].size());
      double scale = 0;
      for (float v : want[0]) scale = std::max(scale, std::fabs(static_cast<double>(v)));
      for (size_t i = 0; i < got.size(); ++i) {
        const double d = std::fabs(got[i] - want[0][i]) / std::max(scale, 1e-30);
        largest = std::max(largest, d);
        ++values;
        EXPECT_LE(d, 1e-5) << "seed " << seed << " value " << i << ": floe " << got[i] << ", TFLite " << want[0][i];
      }
    }
    std::printf("trained_lstm.tflite to tensor %d: %zu values over 20 seeds, largest difference from TFLite 2.9 "
                "%.2e of the vector's largest\n",
                output, values, largest);
  }
}

// The int8 model (TFLite's 8x8_16 LSTM: int8 gates' products to Q3.12,
// int16 sigmoid / tanh and cell state) on the same samples, quantized with
// the input's scale 1/255 and zero point -128: the digit is the int8 output's
// largest entry.
HostTensor quantized_sample(int digit) {
  const tools::NpyArray sample =
      tools::read_npy(corpus_path(std::string(kLstmDir) + "samples/sample" + std::to_string(digit) + ".npy"));
  std::vector<float> pixels(sample.data.size() / 4);
  std::memcpy(pixels.data(), sample.data.data(), pixels.size() * 4);
  std::vector<int64_t> q;
  for (float v : pixels) q.push_back(std::clamp<int64_t>(std::lround(v / 0.003921568859f) - 128, -128, 127));
  return integer_tensor(DType::kInt8, {1, 28, 28}, q);
}

TEST(TflmMnistLstm, Int8ModelNamesEachSampleDigit) {
  const std::string model = std::string(kLstmDir) + "trained_lstm_int8.tflite";
  FLOE_REQUIRE_CORPUS(model);
  for (const char* target : {"host", "reference", "cortex-m4"}) {
    SCOPED_TRACE(target);
    const ConvertedModel r = convert_corpus(model, target);
    for (int digit = 0; digit < 10; ++digit) {
      const std::vector<int64_t> scores = integers_of(run_model(r.bytes, {{r.input, quantized_sample(digit)}}).at(0));
      ASSERT_EQ(scores.size(), 10u);
      const int named = static_cast<int>(std::max_element(scores.begin(), scores.end()) - scores.begin());
      EXPECT_EQ(named, digit) << "sample" << digit << ".npy";
    }
  }
}

// TFLite 2.9 on 20 seeded int8 images, at the LSTM's output (tensor 23, all
// 28 steps' output state) and at the model's output: within 1 LSB, on every
// target (the LSTM has only reference kernels; the FULLY_CONNECTED after it
// runs on XNNPACK on the host, which rounds int8 differently by up to 1).
TEST(TflmMnistLstm, Int8ModelWithinOneStepOfTflite29) {
  const std::string model = std::string(kLstmDir) + "trained_lstm_int8.tflite";
  FLOE_REQUIRE_CORPUS(model);
  REQUIRE_TFLITE_ORACLE();
  std::vector<HostTensor> inputs;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::vector<int64_t> values;
    uint32_t s = seed * 2654435761u;
    for (int i = 0; i < 28 * 28; ++i) {
      s = 1664525u * s + 1013904223u;
      values.push_back(static_cast<int8_t>(s >> 24));
    }
    inputs.push_back(integer_tensor(DType::kInt8, {1, 28, 28}, values));
  }
  for (const int32_t output : {23, 26}) {
    const std::string bytes = output == 26 ? read_bytes(corpus_path(model)) : with_output(read_bytes(corpus_path(model)), output);
    const std::string path = make_temp_dir() + "/lstm8.tflite";
    std::ofstream(path, std::ios::binary) << bytes;
    std::vector<std::vector<float>> want;
    for (const HostTensor& x : inputs) want.push_back(run_tflite(bytes, {x}, 1).at(0));
    for (const char* target : {"host", "reference", "cortex-m4"}) {
      SCOPED_TRACE(std::string(target) + " tensor " + std::to_string(output));
      conv::ConvertOptions options;
      options.graph_path = path;
      options.target = target;
      const std::vector<uint8_t> converted = conv::convert(options).model;
      const std::string input = inputs_of(converted).at(0).name;
      int64_t largest = 0, differing = 0, values = 0;
      for (size_t k = 0; k < inputs.size(); ++k) {
        const std::vector<int64_t> got = integers_of(run_model(converted, {{input, inputs[k]}}).at(0));
        ASSERT_EQ(got.size(), want[k].size());
        for (size_t i = 0; i < got.size(); ++i) {
          const int64_t d = std::llabs(got[i] - static_cast<int64_t>(want[k][i]));
          largest = std::max(largest, d);
          differing += d != 0;
          ++values;
          EXPECT_LE(d, 1) << "seed " << k + 1 << " value " << i << ": floe " << got[i] << ", TFLite " << want[k][i];
        }
      }
      std::printf("trained_lstm_int8.tflite (%s) to tensor %d: %lld values over 20 seeds, %lld differ from TFLite "
                  "2.9, by at most %lld\n",
                  target, output, static_cast<long long>(values), static_cast<long long>(differing),
                  static_cast<long long>(largest));
    }
  }
}

// ---- micro_speech's keyword network (int8: reshape, depthwise conv, fully
// connected, softmax over 49 x 40 features): TFLite 2.9's outputs on 20
// seeded inputs, exactly on the reference and cortex-m4 targets, within 1 LSB
// on the host (XNNPACK's int8 rounding).
TEST(TflmMicroSpeech, KeywordNetworkEqualsTflite29) {
  const std::string model = "tflm/examples/micro_speech/models/micro_speech_quantized.tflite";
  FLOE_REQUIRE_CORPUS(model);
  REQUIRE_TFLITE_ORACLE();
  const std::string bytes = read_bytes(corpus_path(model));
  std::vector<HostTensor> inputs;
  std::vector<std::vector<float>> want;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::vector<int64_t> values;
    uint32_t s = seed * 2246822519u;
    for (int i = 0; i < 1960; ++i) {
      s = 1664525u * s + 1013904223u;
      values.push_back(static_cast<int8_t>(s >> 24));
    }
    inputs.push_back(integer_tensor(DType::kInt8, {1, 1960}, values));
    want.push_back(run_tflite(bytes, {inputs.back()}, 1).at(0));
  }
  for (const char* target : {"host", "reference", "cortex-m4"}) {
    SCOPED_TRACE(target);
    const ConvertedModel r = convert_corpus(model, target);
    const int64_t allowed = std::string(target) == "host" ? 1 : 0;
    int64_t largest = 0;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const std::vector<int64_t> got = integers_of(run_model(r.bytes, {{r.input, inputs[k]}}).at(0));
      ASSERT_EQ(got.size(), want[k].size());
      for (size_t i = 0; i < got.size(); ++i) {
        const int64_t d = std::llabs(got[i] - static_cast<int64_t>(want[k][i]));
        largest = std::max(largest, d);
        EXPECT_LE(d, allowed) << "seed " << k + 1 << " label " << i << ": floe " << got[i] << ", TFLite "
                              << want[k][i];
      }
    }
    std::printf("micro_speech_quantized.tflite (%s): 20 seeds, largest difference from TFLite 2.9 %lld\n", target,
                static_cast<long long>(largest));
  }
}

// ---- refusals: a valid file floe cannot run is "unsupported" (exit 2) naming
// the node, a broken one "invalid-input"; nothing is written either way.

constexpr const char* kAdd = "tflm/integration_tests/seanet/add/add0.tflite";

TEST(TflmRefusals, AnInt16ZeroPointOtherThanZeroIsUnsupportedNamingTheTensor) {
  FLOE_REQUIRE_CORPUS(kAdd);
  std::string bytes = read_bytes(corpus_path(kAdd));
  auto* graph = tfl::GetMutableModel(&bytes[0])->mutable_subgraphs()->GetMutableObject(0);
  const int32_t input = graph->inputs()->Get(0);
  auto* q = graph->mutable_tensors()->GetMutableObject(static_cast<uint32_t>(input))->mutable_quantization();
  q->mutable_zero_point()->Mutate(0, 3);
  const Refusal r = convert_refused(bytes);
  EXPECT_NE(r.output.find("with zero point 3; TFLite's 16x8 scheme needs 0"), std::string::npos) << r.output;
  EXPECT_NE(r.json.find("\"category\": \"unsupported\""), std::string::npos) << r.json;
  EXPECT_NE(r.json.find("\"op\": \"ADD\""), std::string::npos) << r.json;
}

TEST(TflmRefusals, AnInt16OpWithoutAKernelIsUnsupportedNamingTheNode) {
  // An int16 GREATER (floe compares int16 only as MAXIMUM / MINIMUM), hand-built.
  // (Every other op the importer reads has its int16 kernel now.)
  TfliteBuilder b;
  const int x = b.tensor({{1, 4, 4, 3}, 7, {}, "x", {0.0005f}, {0}});
  const int c = b.tensor({{3}, 7, raw(std::vector<int16_t>{1, 2, 3}), "c", {0.0005f}, {0}});
  const int y = b.tensor({{1, 4, 4, 3}, kTflBool, {}, "above"});
  b.op({61, {x, c}, {y}});
  b.inputs = {x};
  b.outputs = {y};
  const Refusal r = convert_refused(b.build());
  EXPECT_NE(r.output.find("GREATER ('above'): compares int16 tensors"), std::string::npos) << r.output;
  EXPECT_NE(r.json.find("\"category\": \"unsupported\""), std::string::npos) << r.json;
  EXPECT_EQ(r.json.find("\"node\": \"\""), std::string::npos) << "the node is named: " << r.json;
}

// An LSTM without its forget gate's input weights is a broken file.
TEST(TflmRefusals, AnLstmWithoutItsWeightsIsInvalid) {
  const std::string model = std::string(kLstmDir) + "trained_lstm.tflite";
  FLOE_REQUIRE_CORPUS(model);
  std::string bytes = read_bytes(corpus_path(model));
  auto* ops = tfl::GetMutableModel(&bytes[0])->mutable_subgraphs()->GetMutableObject(0)->mutable_operators();
  ops->GetMutableObject(0)->mutable_inputs()->Mutate(2, -1);  // input_to_forget_weights
  const Refusal r = convert_refused(bytes);
  EXPECT_NE(r.output.find("UNIDIRECTIONAL_SEQUENCE_LSTM"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("input and recurrent weights are required"), std::string::npos) << r.output;
  EXPECT_NE(r.json.find("\"category\": \"invalid-input\""), std::string::npos) << r.json;
}

// An int8 LSTM with peephole weights (TFLite's 8x8_16 has them, TFLM's int8
// LSTM not, nor floe): unsupported, naming the op and why.
TEST(TflmRefusals, AnInt8LstmWithPeepholeWeightsIsUnsupportedNamingTheOp) {
  const std::string model = std::string(kLstmDir) + "trained_lstm_int8.tflite";
  FLOE_REQUIRE_CORPUS(model);
  std::string bytes = read_bytes(corpus_path(model));
  auto* ops = tfl::GetMutableModel(&bytes[0])->mutable_subgraphs()->GetMutableObject(0)->mutable_operators();
  ops->GetMutableObject(0)->mutable_inputs()->Mutate(10, 12);  // cell_to_forget_weights: any tensor
  const Refusal r = convert_refused(bytes);
  EXPECT_NE(r.output.find("UNIDIRECTIONAL_SEQUENCE_LSTM (int8 with peephole weights) x1"), std::string::npos)
      << r.output;
  EXPECT_NE(r.json.find("\"category\": \"unsupported\""), std::string::npos) << r.json;
}

// TFLite quantizes o * tanh(c) to the hidden intermediate and copies it into
// the output state: a file where the two differ is refused, not misread.
TEST(TflmRefusals, AnInt8LstmWhoseHiddenScaleDiffersFromItsStateIsUnsupported) {
  const std::string model = std::string(kLstmDir) + "trained_lstm_int8.tflite";
  FLOE_REQUIRE_CORPUS(model);
  std::string bytes = read_bytes(corpus_path(model));
  auto* graph = tfl::GetMutableModel(&bytes[0])->mutable_subgraphs()->GetMutableObject(0);
  const int32_t hidden = graph->operators()->Get(0)->intermediates()->Get(4);
  auto* q = graph->mutable_tensors()->GetMutableObject(static_cast<uint32_t>(hidden))->mutable_quantization();
  q->mutable_scale()->Mutate(0, q->scale()->Get(0) * 2);
  const Refusal r = convert_refused(bytes);
  EXPECT_NE(r.output.find("hidden intermediate is quantized unlike its output state"), std::string::npos) << r.output;
  EXPECT_NE(r.json.find("\"category\": \"unsupported\""), std::string::npos) << r.json;
  EXPECT_NE(r.json.find("\"op\": \"UNIDIRECTIONAL_SEQUENCE_LSTM\""), std::string::npos) << r.json;
}

// The SVDF layers' shapes and state are checked at conversion: a rank that
// does not divide the filters, or a state that is not a variable tensor, is a
// broken file (invalid-input, exit 2, nothing written), named by operator.
tfl::Operator* first_svdf(std::string& bytes) {
  auto* model = tfl::GetMutableModel(&bytes[0]);
  auto* ops = model->mutable_subgraphs()->GetMutableObject(0)->mutable_operators();
  for (uint32_t i = 0; i < ops->size(); ++i) {
    auto* op = ops->GetMutableObject(i);
    const auto* code = model->operator_codes()->Get(op->opcode_index());
    if (std::max<int32_t>(code->deprecated_builtin_code(), code->builtin_code()) == 27) return op;
  }
  return nullptr;
}

TEST(TflmRefusals, AnSvdfRankThatDoesNotDivideTheFiltersIsInvalid) {
  FLOE_REQUIRE_CORPUS(kKeyword);
  std::string bytes = read_bytes(corpus_path(kKeyword));
  tfl::Operator* svdf = first_svdf(bytes);
  ASSERT_NE(svdf, nullptr);
  auto* o = static_cast<tfl::SVDFOptions*>(svdf->mutable_builtin_options());
  ASSERT_TRUE(o->mutate_rank(3));  // 64 filters
  const Refusal r = convert_refused(bytes);
  EXPECT_NE(r.output.find("SVDF"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank must divide the filters"), std::string::npos) << r.output;
  EXPECT_NE(r.json.find("\"category\": \"invalid-input\""), std::string::npos) << r.json;
}

TEST(TflmRefusals, AnSvdfStateThatIsNoVariableTensorIsInvalid) {
  FLOE_REQUIRE_CORPUS(kKeyword);
  std::string bytes = read_bytes(corpus_path(kKeyword));
  tfl::Operator* svdf = first_svdf(bytes);
  ASSERT_NE(svdf, nullptr);
  auto* tensors = tfl::GetMutableModel(&bytes[0])->mutable_subgraphs()->GetMutableObject(0)->mutable_tensors();
  ASSERT_TRUE(tensors->GetMutableObject(static_cast<uint32_t>(svdf->inputs()->Get(4)))->mutate_is_variable(false));
  const Refusal r = convert_refused(bytes);
  EXPECT_NE(r.output.find("is not a variable tensor"), std::string::npos) << r.output;
  EXPECT_NE(r.json.find("\"category\": \"invalid-input\""), std::string::npos) << r.json;
}

}  // namespace
}  // namespace floe::testing
