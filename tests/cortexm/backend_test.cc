// SPDX-License-Identifier: Apache-2.0
// The CORTEX_M backend end to end on the host: the converter assigns it for the
// cortex-m targets only, and only to the ops its kernels are tuned for; the
// runtime dispatches on Operator.backend; the model converted for a Cortex-M
// core computes, on the host (portable variant), bit for bit what the model
// converted for the reference kernels computes.
#include <gtest/gtest.h>

#include <cstring>

#include "converter/ir/error.h"
#include "converter/lower/backend_cortexm.h"
#include "runtime/tools/npy.h"
#include "schemas/floe_generated.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

const std::string kMnist = std::string(FLOE_SOURCE_DIR) + "/examples/mnist_mlp/model/";

std::vector<uint8_t> convert_mnist(const std::string& target) {
  conv::ConvertOptions options;
  options.graph_path = kMnist + "mnist_mlp.meta";
  options.checkpoint_path = kMnist;
  options.outputs = {"softmax_linear/add"};
  options.input_shapes["images"] = {1, 784};
  options.target = target;
  return conv::convert(options).model;
}

HostTensor digit(const std::string& file) {
  const tools::NpyArray a = tools::read_npy(kMnist + file);
  HostTensor t;
  t.dtype = a.dtype;
  t.shape = a.shape;
  t.data = a.data;
  return t;
}

TEST(CortexmBackend, ConverterAssignsDenseOpsForCortexMTargets) {
  for (const char* target : {"cortex-m4", "cortex-m33", "cortex-m55"}) {
    const std::vector<uint8_t> bytes = convert_mnist(target);
    const schema::Model* model = schema::GetModel(bytes.data());
    ASSERT_NE(model->target(), nullptr);
    EXPECT_STREQ(model->target()->c_str(), target);
    ASSERT_GT(model->operators()->size(), 0u);
    for (const schema::Operator* op : *model->operators()) {
      EXPECT_EQ(op->opcode(), schema::OpCode::MATMUL);
      EXPECT_EQ(op->backend(), schema::Backend::CORTEX_M) << target;
    }
    EXPECT_EQ(model->xnnpack_arena_size(), 0u) << "no XNNPACK budget for a Cortex-M target";
  }
}

TEST(CortexmBackend, ReferenceTargetKeepsReferenceKernels) {
  const std::vector<uint8_t> bytes = convert_mnist("reference");
  for (const schema::Operator* op : *schema::GetModel(bytes.data())->operators()) {
    EXPECT_EQ(op->backend(), schema::Backend::REFERENCE);
  }
}

TEST(CortexmBackend, HostRunOfCortexMModelIsBitExactWithReference) {
  const std::vector<uint8_t> cortexm = convert_mnist("cortex-m4");
  const std::vector<uint8_t> reference = convert_mnist("reference");
  for (const char* file : {"digit_3.npy", "digit_7.npy", "digit_9.npy"}) {
    const auto a = run_model(cortexm, {{"images", digit(file)}});
    const auto b = run_model(reference, {{"images", digit(file)}});
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), 1u);
    ASSERT_EQ(a[0].data.size(), b[0].data.size());
    EXPECT_EQ(std::memcmp(a[0].data.data(), b[0].data.data(), a[0].data.size()), 0) << file;
  }
}

// The per-op rule on a hand-built lowered model: float MATMUL / CONV2D and
// multiplier-1 DEPTHWISE_CONV2D go to CORTEX_M; a multiplier-2 depthwise, a
// non-float MATMUL and any other op stay on the reference kernels.
TEST(CortexmBackend, AssignsOnlyWhatTheKernelsAreTunedFor) {
  conv::LoweredModel m;
  conv::Value f32;
  f32.dtype = DType::kFloat32;
  conv::Value i32;
  i32.dtype = DType::kInt32;
  const int x = m.add_value(f32), w = m.add_value(f32), y = m.add_value(f32);
  const int xi = m.add_value(i32), wi = m.add_value(i32), yi = m.add_value(i32);
  auto add_op = [&](conv::schema::OpCode code, std::vector<int> in, int out) {
    conv::LoweredOp op;
    op.opcode = code;
    op.inputs = std::move(in);
    op.outputs = {out};
    m.ops.push_back(std::move(op));
    return &m.ops.back();
  };
  add_op(conv::schema::OpCode::MATMUL, {x, w, -1}, y);
  add_op(conv::schema::OpCode::CONV2D, {x, w}, y);
  for (int multiplier : {1, 2}) {
    conv::LoweredOp* op = add_op(conv::schema::OpCode::DEPTHWISE_CONV2D, {x, w}, y);
    conv::schema::DepthwiseConv2DOptionsT options;
    options.depth_multiplier = multiplier;
    op->options.Set(options);
  }
  add_op(conv::schema::OpCode::MATMUL, {xi, wi}, yi);
  add_op(conv::schema::OpCode::ADD, {x, w}, y);
  EXPECT_EQ(conv::assign_cortexm_backends(&m, "cortex-m4"), 3);
  const conv::schema::Backend expected[] = {
      conv::schema::Backend::CORTEX_M, conv::schema::Backend::CORTEX_M, conv::schema::Backend::CORTEX_M,
      conv::schema::Backend::REFERENCE, conv::schema::Backend::REFERENCE, conv::schema::Backend::REFERENCE};
  for (size_t i = 0; i < m.ops.size(); ++i) EXPECT_EQ(m.ops[i].backend, expected[i]) << "op " << i;
  EXPECT_EQ(m.target, "cortex-m4");
  EXPECT_TRUE(conv::is_cortexm_target("cortex-m55"));
  EXPECT_FALSE(conv::is_cortexm_target("cortex-m7"));
}

}  // namespace
}  // namespace floe::testing
