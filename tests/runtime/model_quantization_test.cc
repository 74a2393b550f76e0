// SPDX-License-Identifier: Apache-2.0
// Tensor quantization in the model format: a TensorQuantization that breaks
// the rules (scale count, quantized_dimension, finite positive scales, zero
// points that fit the dtype) reads as unquantized, so the QUANTIZE/DEQUANTIZE
// that need it are refused at Init; an int8 op whose operands lack the
// converter's integers is refused when Init prepares it, the API hands
// firmware the scale and zero point of inputs and outputs, and files written
// before the field existed load as unquantized.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "runtime/core/registry.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "schemas/floe_generated.h"
#include "tests/support/one_op_model.h"

namespace floe {
namespace {

struct QuantSpec {
  bool present = true;
  std::vector<float> scale = {0.5f};
  std::vector<int64_t> zero_point = {-3};
  int32_t dimension = 0;
};

// x (INT8 [1,4]) -> SOFTMAX -> y (INT8 [1,4]); each test changes one record.
struct Spec {
  schema::DType x_dtype = schema::DType::INT8;
  QuantSpec x;
  QuantSpec y{true, {1.0f / 256}, {-128}, 0};
};

std::vector<uint8_t> build(const Spec& spec) {
  flatbuffers::FlatBufferBuilder b;
  auto quant = [&](const QuantSpec& q) -> flatbuffers::Offset<schema::TensorQuantization> {
    if (!q.present) return 0;
    return schema::CreateTensorQuantization(b, b.CreateVector(q.scale), b.CreateVector(q.zero_point), q.dimension);
  };
  const std::vector<int32_t> shape = {1, 4};
  const uint64_t x_bytes = spec.x_dtype == schema::DType::FLOAT32 ? 16 : 4;
  std::vector<flatbuffers::Offset<schema::Tensor>> tensors = {
      schema::CreateTensor(b, b.CreateString("x:0"), spec.x_dtype, b.CreateVector(shape), false, 0, x_bytes, -1, -1,
                           quant(spec.x)),
      schema::CreateTensor(b, b.CreateString("y:0"), schema::DType::INT8, b.CreateVector(shape), false, 16, 4, -1, -1,
                           quant(spec.y))};
  const auto op = schema::CreateOperator(b, schema::OpCode::SOFTMAX, b.CreateVector(std::vector<int32_t>{0}),
                                         b.CreateVector(std::vector<int32_t>{1}), schema::OpOptions::SoftmaxOptions,
                                         schema::CreateSoftmaxOptions(b).Union());
  return testing::finish_one_op_model(b, tensors, op, schema::OpCode::SOFTMAX);
}

struct Loaded {
  tools::AlignedBytes buffer;
  Model model;
  Status status;
};

Loaded load(const std::vector<uint8_t>& bytes) {
  Loaded l{tools::aligned_bytes(bytes.size()), Model(), Status::kOk};
  std::memcpy(l.buffer.get(), bytes.data(), bytes.size());
  l.status = l.model.Load(l.buffer.get(), bytes.size());
  return l;
}

TEST(ModelQuantization, InputAndOutputScalesReachTheApi) {
  Loaded l = load(build(Spec()));
  ASSERT_EQ(l.status, Status::kOk) << l.model.error().message;
  const Quantization x = l.model.quantization(0);
  EXPECT_TRUE(x.quantized());
  EXPECT_EQ(x.scale, 0.5f);
  EXPECT_EQ(x.zero_point, -3);
  EXPECT_EQ(x.channels, 1u);
  EXPECT_FALSE(l.model.quantization(7).quantized());  // out of range: none

  alignas(16) uint8_t arena[1024];
  ASSERT_LE(l.model.arena_size(), sizeof(arena));
  Interpreter interpreter(l.model, arena, sizeof(arena));
  const Quantization in = interpreter.input_quantization(0), out = interpreter.output_quantization(0);
  EXPECT_EQ(in.scale, 0.5f);
  EXPECT_EQ(in.zero_point, -3);
  EXPECT_EQ(out.scale, 1.0f / 256);
  EXPECT_EQ(out.zero_point, -128);
  EXPECT_FALSE(interpreter.input_quantization(1).quantized());
  // An int8 SOFTMAX without the converter's requantization: Init refuses the
  // op by index instead of running on made-up integers.
  EXPECT_EQ(interpreter.Init(), Status::kInvalidModel);
  EXPECT_EQ(interpreter.error().op, 0);
}

TEST(ModelQuantization, PerChannelReportsTheChannelCount) {
  Spec spec;
  spec.x.scale = {0.5f, 0.25f, 0.125f, 1.0f};
  spec.x.zero_point = {0, 1, 2, 3};
  spec.x.dimension = 1;
  Loaded l = load(build(spec));
  ASSERT_EQ(l.status, Status::kOk) << l.model.error().message;
  EXPECT_EQ(l.model.quantization(0).channels, 4u);
  EXPECT_EQ(l.model.quantization(0).scale, 0.5f);
}

void expect_unquantized(const Spec& spec, int32_t tensor, const char* why) {
  SCOPED_TRACE(why);
  Loaded l = load(build(spec));
  ASSERT_EQ(l.status, Status::kOk) << l.model.error().message;
  EXPECT_FALSE(l.model.quantization(static_cast<size_t>(tensor)).quantized());
}

TEST(ModelQuantization, InconsistentRecordsReadAsUnquantized) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const float bad : {0.0f, -1.0f, nan, inf}) {
    Spec s;
    s.x.scale = {bad};
    expect_unquantized(s, 0, "scale must be finite and > 0");
  }
  Spec count;
  count.x.scale = {0.5f, 0.5f};
  count.x.zero_point = {0, 0};
  count.x.dimension = 1;
  expect_unquantized(count, 0, "two scales for a dimension of 4");
  Spec dim;
  dim.x.scale = {1, 1, 1, 1};
  dim.x.zero_point = {0, 0, 0, 0};
  dim.x.dimension = 2;
  expect_unquantized(dim, 0, "quantized_dimension beyond the rank");
  Spec negative_dim;
  negative_dim.x.dimension = -1;
  expect_unquantized(negative_dim, 0, "negative quantized_dimension");
  Spec zero_points;
  zero_points.x.zero_point = {0, 0};
  expect_unquantized(zero_points, 0, "zero points and scales differ in number");
  Spec no_scale;
  no_scale.x.scale = {};
  no_scale.x.zero_point = {};
  expect_unquantized(no_scale, 0, "empty record");
  Spec range;
  range.y.zero_point = {128};
  expect_unquantized(range, 1, "int8 zero point 128");
  Spec on_float;
  on_float.x_dtype = schema::DType::FLOAT32;
  expect_unquantized(on_float, 0, "quantization on a float tensor");
}

TEST(ModelQuantization, OneZeroPointHoldsForEveryChannel) {
  Spec spec;
  spec.x.scale = {0.5f, 0.25f, 0.125f, 1.0f};
  spec.x.zero_point = {0};
  spec.x.dimension = 1;
  Loaded l = load(build(spec));
  ASSERT_EQ(l.status, Status::kOk) << l.model.error().message;
  EXPECT_EQ(l.model.quantization(0).channels, 4u);
  EXPECT_EQ(l.model.quantization(0).zero_point, 0);
  Spec out_of_range = spec;
  out_of_range.x.zero_point = {200};
  expect_unquantized(out_of_range, 0, "the shared zero point is checked too");
}

TEST(ModelQuantization, Int8OperandsOfRealValuedOpsNeedIt) {
  Spec unquantized_output;
  unquantized_output.y.present = false;
  Spec unquantized_input;
  unquantized_input.x.present = false;
  for (const Spec& spec : {unquantized_output, unquantized_input}) {
    Loaded l = load(build(spec));
    ASSERT_EQ(l.status, Status::kOk) << l.model.error().message;
    alignas(16) uint8_t arena[1024];
    Interpreter interpreter(l.model, arena, sizeof(arena));
    EXPECT_EQ(interpreter.Init(), Status::kInvalidModel);
    EXPECT_EQ(interpreter.error().op, 0) << interpreter.error().message;
  }
}

// These committed fuzz seeds were written before the field existed.
TEST(ModelQuantization, FilesWithoutTheFieldLoadUnquantized) {
  int loaded = 0;
  for (const char* name : {"conv_seed.floe", "zoo_conv.floe", "zoo_conv_xnnpack.floe", "zoo_data.floe",
                           "zoo_elementwise.floe", "zoo_nn.floe"}) {
    const std::string path = std::string(FLOE_SOURCE_DIR) + "/tests/fuzz/corpus/fuzz_model/" + name;
    std::ifstream in(path, std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    Loaded l = load(bytes);
    ASSERT_EQ(l.status, Status::kOk) << path << ": " << l.model.error().message;
    for (size_t t = 0; t < l.model.tensor_count(); ++t) EXPECT_FALSE(l.model.quantization(t).quantized());
    ++loaded;
  }
  EXPECT_EQ(loaded, 6);
}

}  // namespace
}  // namespace floe
