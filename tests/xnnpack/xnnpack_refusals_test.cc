// SPDX-License-Identifier: Apache-2.0
// What the XNNPACK backend refuses at Init(): models converted for this
// architecture, then edited (object API) into what the converter never writes
// but a damaged or hostile file can say. Each edit passes Model::Load and the
// op's reference prepare, and each would make XNNPACK read or write past a
// tensor (it creates its operators from the options and shapes as given):
// Init() must fail naming the op instead.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "tests/support/edited_model.h"
#include "tests/support/loaded_model.h"

namespace floe::testing {
namespace {

namespace obj = schema_obj;

std::vector<uint8_t> model_bytes(const std::string& name) {
  const tools::ModelFile file = tools::read_model_file(std::string(FLOE_XNNPACK_MODELS) + "/" + name + ".floe");
  return std::vector<uint8_t>(file.data.get(), file.data.get() + file.size);
}

// Index of the first op of `code` (-1: none).
int first_op(const obj::ModelT& model, obj::OpCode code) {
  for (size_t i = 0; i < model.operators.size(); ++i) {
    if (model.operators[i]->opcode == code) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// `name` initializes as converted; edited by `edit` (which is handed the
// first op of `code`), Load accepts it and Init refuses that op with a
// message containing `expected`.
void expect_refused(const std::string& name, obj::OpCode code,
                    const std::function<void(obj::ModelT&, obj::OperatorT&)>& edit, const std::string& expected) {
  const std::vector<uint8_t> bytes = model_bytes(name);
  const InitOutcome as_converted = init_outcome(bytes);
  ASSERT_EQ(as_converted.status, Status::kOk) << name << ": " << as_converted.message;
  int op = -1;
  const std::vector<uint8_t> edited = edited_model(bytes.data(), [&](obj::ModelT& model) {
    op = first_op(model, code);
    if (op >= 0) edit(model, *model.operators[static_cast<size_t>(op)]);
  });
  ASSERT_GE(op, 0) << name << " has no " << obj::EnumNameOpCode(code);
  ASSERT_EQ(load_model(edited)->status, Status::kOk);
  const InitOutcome r = init_outcome(edited);
  EXPECT_EQ(r.status, Status::kInvalidModel) << name;
  EXPECT_EQ(r.op, op);
  EXPECT_NE(r.message.find(expected), std::string::npos) << r.message;
}

obj::TensorT& output_of(obj::ModelT& model, const obj::OperatorT& op) {
  return *model.tensors[static_cast<size_t>(op.outputs[0])];
}

class XnnpackRefusals : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(backend_initialize(), Status::kOk); }
};

// An int8 op XNNPACK has no int8 operator for (it would be created as f32,
// 4 bytes per 1-byte element).
TEST_F(XnnpackRefusals, Int8OpWithoutAnInt8Operator) {
  expect_refused("int8_avgpool_global", obj::OpCode::AVG_POOL2D,
                 [](obj::ModelT&, obj::OperatorT& op) { op.opcode = obj::OpCode::MAX_POOL2D; },
                 "XNNPACK runs this op on float32 operands only");
}

// TFLM's int16x8 conv (../shared/corpus/tflm) moved onto XNNPACK, which
// would create it as an f32 convolution over 2-byte elements.
TEST_F(XnnpackRefusals, Int16ConvOnXnnpack) {
  const std::string path = std::string(FLOE_XNNPACK_MODELS) + "/exact_conv0.floe";
  if (!tools::read_model_file(path).data) GTEST_SKIP() << "SKIPPED: " << path << " absent (../shared)";
  // The reference conversion (the x86_64 one lays the op out for the
  // portable Cortex-M kernels), given the target XNNPACK runs on here.
  const std::string target = obj::GetModel(model_bytes("conv").data())->target()->str();
  expect_refused("exact_conv0_ref", obj::OpCode::CONV2D,
                 [&](obj::ModelT& model, obj::OperatorT& op) {
                   ASSERT_EQ(model.tensors[static_cast<size_t>(op.outputs[0])]->dtype, obj::DType::INT16);
                   op.backend = obj::Backend::XNNPACK;
                   model.target = target;
                   model.xnnpack_arena_size = 1 << 20;
                   model.constants.resize(model.constants.size() + 16);  // XNN_EXTRA_BYTES, as the converter pads
                 },
                 "XNNPACK runs this op on float32 operands only");
}

// An int8 global average into an empty output: XNNPACK still writes N x C bytes.
TEST_F(XnnpackRefusals, Int8GlobalAverageIntoTooFewValues) {
  expect_refused("int8_avgpool_global", obj::OpCode::AVG_POOL2D,
                 [](obj::ModelT& model, obj::OperatorT& op) {
                   obj::TensorT& y = output_of(model, op);
                   y.shape[1] = y.shape[2] = 0;
                   y.size = 0;
                 },
                 "whole image");
}

// An int8 average whose window is not the image is not a global average.
TEST_F(XnnpackRefusals, Int8AverageOverPartOfTheImage) {
  expect_refused("int8_avgpool_global", obj::OpCode::AVG_POOL2D,
                 [](obj::ModelT&, obj::OperatorT& op) { op.options.AsPool2DOptions()->filter_h -= 1; },
                 "whole image");
}

// int8 conv / depthwise: options that give XNNPACK a larger output than the tensor.
TEST_F(XnnpackRefusals, Int8ConvWhoseStrideDoesNotGiveTheOutput) {
  expect_refused("int8_conv_stride2_valid", obj::OpCode::CONV2D,
                 [](obj::ModelT&, obj::OperatorT& op) {
                   op.options.AsConv2DOptions()->stride_h = 1;
                   op.options.AsConv2DOptions()->stride_w = 1;
                 },
                 "int8 conv2d padding does not give the output shape");
}

TEST_F(XnnpackRefusals, Int8DepthwiseWhosePaddingDoesNotGiveTheOutput) {
  expect_refused("int8_dw_3x3", obj::OpCode::DEPTHWISE_CONV2D,
                 [](obj::ModelT&, obj::OperatorT& op) {
                   obj::DepthwiseConv2DOptionsT& o = *op.options.AsDepthwiseConv2DOptions();
                   o.pad_top = o.pad_bottom = o.pad_left = o.pad_right = 0;
                 },
                 "int8 depthwise padding does not give the output shape");
}

// A negative bottom pad balanced by the top one gives the same extent by the
// formula, but XNNPACK takes the pad as uint32: 2^32 - 1 rows.
TEST_F(XnnpackRefusals, NegativePadBalancedByTheOtherSide) {
  expect_refused("conv", obj::OpCode::CONV2D,
                 [](obj::ModelT&, obj::OperatorT& op) {
                   ASSERT_EQ(op.backend, obj::Backend::XNNPACK);
                   obj::Conv2DOptionsT& o = *op.options.AsConv2DOptions();
                   o.pad_top += o.pad_bottom + 1;
                   o.pad_bottom = -1;
                 },
                 "conv2d padding does not give the output shape");
  expect_refused("windows", obj::OpCode::DEPTHWISE_CONV2D,
                 [](obj::ModelT&, obj::OperatorT& op) {
                   ASSERT_EQ(op.backend, obj::Backend::XNNPACK);
                   obj::DepthwiseConv2DOptionsT& o = *op.options.AsDepthwiseConv2DOptions();
                   o.pad_left += o.pad_right + 1;
                   o.pad_right = -1;
                 },
                 "depthwise padding does not give the output shape");
  expect_refused("windows", obj::OpCode::MAX_POOL2D,
                 [](obj::ModelT&, obj::OperatorT& op) {
                   ASSERT_EQ(op.backend, obj::Backend::XNNPACK);
                   obj::Pool2DOptionsT& o = *op.options.AsPool2DOptions();
                   o.pad_top += o.pad_bottom + 1;
                   o.pad_bottom = -1;
                 },
                 "pooling padding does not give the output shape");
}

// A constant operand moved to the very end of the constant section: XNNPACK
// may read 16 bytes past it (XNN_EXTRA_BYTES), past the model's buffer.
TEST_F(XnnpackRefusals, ConstantOperandWithoutReadSlack) {
  expect_refused("conv", obj::OpCode::CONV2D,
                 [](obj::ModelT& model, obj::OperatorT& op) {
                   ASSERT_EQ(op.backend, obj::Backend::XNNPACK);
                   obj::TensorT& filter = *model.tensors[static_cast<size_t>(op.inputs[1])];
                   ASSERT_TRUE(filter.is_constant);
                   filter.offset = (model.constants.size() - filter.size) / 16 * 16;
                 },
                 "XNN_EXTRA_BYTES");
}

}  // namespace
}  // namespace floe::testing
