// SPDX-License-Identifier: Apache-2.0
// Typed access to inputs and outputs checks the dtype, as TFLite's
// typed_input_tensor<T>() does: a float pointer into an int8 input is null,
// never a reinterpretation that writes floats into int8 memory.
#include <gtest/gtest.h>

#include <vector>

#include "runtime/core/interpreter.h"
#include "runtime/core/registry.h"
#include "schemas/floe_generated.h"
#include "tests/support/loaded_model.h"
#include "tests/support/one_op_model.h"

namespace floe {
namespace {

// x (INT8 [1,4], scale 0.5, zero point -3) -> DEQUANTIZE -> y (FLOAT32 [1,4]).
std::vector<uint8_t> dequantize_model() {
  flatbuffers::FlatBufferBuilder b;
  const std::vector<int32_t> shape = {1, 4};
  auto quant = schema::CreateTensorQuantization(b, b.CreateVector(std::vector<float>{0.5f}),
                                                b.CreateVector(std::vector<int64_t>{-3}), 0);
  std::vector<flatbuffers::Offset<schema::Tensor>> tensors = {
      schema::CreateTensor(b, b.CreateString("x:0"), schema::DType::INT8, b.CreateVector(shape), false, 0, 4, -1,
                           -1, quant),
      schema::CreateTensor(b, b.CreateString("y:0"), schema::DType::FLOAT32, b.CreateVector(shape), false, 16, 16)};
  const auto op = schema::CreateOperator(b, schema::OpCode::DEQUANTIZE, b.CreateVector(std::vector<int32_t>{0}),
                                         b.CreateVector(std::vector<int32_t>{1}));
  return testing::finish_one_op_model(b, tensors, op, schema::OpCode::DEQUANTIZE);
}

struct Running {
  std::unique_ptr<testing::LoadedModel> loaded = testing::load_model(dequantize_model());
  tools::AlignedBytes arena = tools::aligned_bytes(loaded->model.arena_size());
  Interpreter interpreter{loaded->model, arena.get(), static_cast<size_t>(loaded->model.arena_size())};
};

TEST(TypedAccess, TheTensorsDtypeGivesAPointerAnyOtherGivesNull) {
  Running r;
  ASSERT_EQ(r.loaded->status, Status::kOk) << r.loaded->model.error().message;
  ASSERT_EQ(r.interpreter.Init(), Status::kOk) << r.interpreter.error().message;
  int8_t* x = r.interpreter.typed_input<int8_t>(0);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x, r.interpreter.input(0).data);
  EXPECT_EQ(r.interpreter.typed_input<float>(0), nullptr);
  EXPECT_EQ(r.interpreter.typed_input<uint8_t>(0), nullptr);  // same width, other dtype
  EXPECT_EQ(r.interpreter.typed_input<int8_t>(1), nullptr);  // no second input
  EXPECT_EQ(r.interpreter.typed_output<int8_t>(0), nullptr);
  EXPECT_EQ(r.interpreter.typed_output<float>(1), nullptr);

  const int8_t q[4] = {-3, -1, 1, 127};
  for (int i = 0; i < 4; ++i) x[i] = q[i];
  ASSERT_EQ(r.interpreter.Invoke(), Status::kOk);
  const float* y = r.interpreter.typed_output<float>(0);
  ASSERT_NE(y, nullptr);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(y[i], 0.5f * static_cast<float>(q[i] + 3));
}

TEST(TypedAccess, TensorViewAsChecksTheDtypeToo) {
  Running r;
  ASSERT_EQ(r.interpreter.Init(), Status::kOk) << r.interpreter.error().message;
  // The old unchecked cast: interpreter.input(0).as<float>() on an int8 input.
  EXPECT_EQ(r.interpreter.input(0).as<float>(), nullptr);
  EXPECT_EQ(r.interpreter.input(0).as<const int8_t>(), r.interpreter.input(0).data);
  EXPECT_EQ(r.interpreter.output(0).as<int32_t>(), nullptr);  // float32 is not int32, same width
  EXPECT_NE(r.interpreter.output(0).as<const float>(), nullptr);
}

}  // namespace
}  // namespace floe
