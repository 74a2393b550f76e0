// SPDX-License-Identifier: Apache-2.0
// TensorFlow Lite Micro's own test models (../shared/corpus/tflm) run as TFLM
// runs them. The SEANet integration cases (int16 activations, int8 weights,
// int64 biases: TFLite's 16x8 scheme) must give TFLM's golden outputs exactly,
// value for value, on the host, the reference target and the cortex-m4 target
// (whose kernels this host build runs in their portable form).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "converter/frontend/tflite/tflite_subset_generated.h"
#include "converter/pipeline/convert.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
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
  for (const char* target : {"host", "reference", "cortex-m4"}) {
    SCOPED_TRACE(target);
    conv::ConvertOptions options;
    options.graph_path = corpus_path(dir + name + ".tflite");
    options.target = target;
    const conv::ConvertResult r = conv::convert(options);
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

// ---- refusals: a valid file floe cannot run is "unsupported" (exit 2) naming
// the node, a broken one "invalid-input"; nothing is written either way.

namespace tfl = ::floe::tflite_schema;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct Refusal {
  std::string output, json;
};

Refusal convert_refused(const std::string& bytes) {
  const std::string dir = make_temp_dir();
  {
    std::ofstream(dir + "/model.tflite", std::ios::binary) << bytes;
  }
  const CommandResult r = run_command(tool_path("floe-convert") + " --graph " + dir + "/model.tflite -o " + dir +
                                      "/out.floe --error-json " + dir + "/error.json");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(file_exists(dir + "/out.floe")) << "output file left behind";
  return {r.output, read_bytes(dir + "/error.json")};
}

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
  const char* leaky = "tflm/integration_tests/seanet/leaky_relu/leaky_relu0.tflite";
  FLOE_REQUIRE_CORPUS(leaky);
  std::string bytes = read_bytes(corpus_path(leaky));
  // The same operator as an int16 LOGISTIC (which reads no options).
  auto* code = tfl::GetMutableModel(&bytes[0])->mutable_operator_codes()->GetMutableObject(0);
  ASSERT_TRUE(code->mutate_deprecated_builtin_code(14));
  ASSERT_TRUE(code->mutate_builtin_code(14));
  const Refusal r = convert_refused(bytes);
  EXPECT_NE(r.output.find("(SIGMOID): floe has no int16 kernel for this op yet"), std::string::npos) << r.output;
  EXPECT_NE(r.json.find("\"category\": \"unsupported\""), std::string::npos) << r.json;
  EXPECT_EQ(r.json.find("\"node\": \"\""), std::string::npos) << "the node is named: " << r.json;
}

}  // namespace
}  // namespace floe::testing
