// SPDX-License-Identifier: Apache-2.0
// Each optimization pass on small hand-built lowered models: it rewrites what it
// should (op counts, options, constants), leaves alone what it must not (graph
// outputs, shared intermediates, non-equivalent patterns), and the model computes
// the same outputs through the runtime before and after. Float tolerances: exact
// for pure data movement and constant folding, 1e-5 where weights are rescaled.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "converter/ir/error.h"
#include "converter/optimize/optimize.h"
#include "converter/optimize/passes.h"
#include "tests/converter/support/optimize_test_util.h"

namespace floe::testing {
namespace {

using schema::OpCode;
namespace opt = conv::opt;

// ---- fold-constants -------------------------------------------------------

TEST(FoldConstants, FoldsChainsThroughTheKernels) {
  ModelBuilder b;
  const int x = b.input("x", {2});
  const int c1 = b.constant("c1", {2}, {1.0f, 2.0f}), c2 = b.constant("c2", {2}, {3.0f, 14.0f});
  const int sum = b.op(OpCode::ADD, {c1, c2}, {2});    // [4, 16]
  const int root = b.op(OpCode::SQRT, {sum}, {2});     // [2, 4]
  b.output(b.op(OpCode::MUL, {x, root}, {2}));
  EXPECT_EQ(expect_same_outputs(b.model, opt::fold_constants, 0.0f), 2);
  ASSERT_EQ(b.model.ops.size(), 1u);
  EXPECT_EQ(b.model.ops[0].opcode, OpCode::MUL);
  const auto& folded = *b.model.values[static_cast<size_t>(root)].constant;
  EXPECT_EQ(as_floats(folded), (std::vector<float>{2.0f, 4.0f}));
}

TEST(FoldConstants, ConstantGraphOutputStaysAnOutput) {
  ModelBuilder b;
  const int c = b.constant("c", {3}, {-1.0f, 0.5f, 2.0f});
  const int y = b.op(OpCode::RELU, {c}, {3});
  b.output(y);
  std::vector<std::string> log;
  EXPECT_EQ(opt::fold_constants(b.model, log), 1);
  EXPECT_TRUE(b.model.ops.empty());
  ASSERT_EQ(b.model.outputs, std::vector<int>{y});
  EXPECT_EQ(run_lowered_model(b.model, {})[0], (std::vector<float>{0.0f, 0.5f, 2.0f}));
}

// ---- dead-code ------------------------------------------------------------

TEST(DeadCode, RemovesUnreadOpsAndValuesAndRenumbers) {
  ModelBuilder b;
  b.constant("unused", {4}, {1, 2, 3, 4});
  const int x = b.input("x", {4});
  b.op(OpCode::SIGMOID, {x}, {4});  // nobody reads it
  const int y = b.op(OpCode::RELU, {x}, {4}, {}, "y");
  b.output(y);
  EXPECT_EQ(expect_same_outputs(b.model, opt::eliminate_dead_code, 0.0f), 1 + 2);  // 1 op, 2 values
  ASSERT_EQ(b.model.ops.size(), 1u);
  EXPECT_EQ(b.model.values.size(), 2u);
  EXPECT_EQ(b.model.values[static_cast<size_t>(b.model.outputs[0])].name, "y:0");
  EXPECT_EQ(b.model.values[static_cast<size_t>(b.model.inputs[0])].name, "x");
}

TEST(DeadCode, KeepsUnusedGraphInputs) {
  ModelBuilder b;
  const int x = b.input("x", {2});
  b.input("unused_input", {3});
  b.output(b.op(OpCode::NEG, {x}, {2}));
  std::vector<std::string> log;
  EXPECT_EQ(opt::eliminate_dead_code(b.model, log), 0);
  EXPECT_EQ(b.model.inputs.size(), 2u);
}

// ---- fuse-bias-activation -------------------------------------------------

TEST(FuseBiasActivation, MatMulBiasRelu) {
  ModelBuilder b;
  const int x = b.input("x", {2, 3});
  const int w = b.random_constant("w", {3, 4}, 1);
  const int mm = b.op(OpCode::MATMUL, {x, w}, {2, 4}, ModelBuilder::options(schema::MatMulOptionsT()));
  const int biased = b.op(OpCode::ADD, {b.random_constant("bias", {4}, 2), mm}, {2, 4});  // const first
  b.output(b.op(OpCode::RELU, {biased}, {2, 4}));
  EXPECT_EQ(expect_same_outputs(b.model, opt::fuse_bias_activation, 1e-6f), 1);
  ASSERT_EQ(b.model.ops.size(), 1u);
  EXPECT_EQ(b.model.ops[0].options.AsMatMulOptions()->activation, schema::Activation::RELU);
  ASSERT_EQ(b.model.ops[0].inputs.size(), 3u);
  EXPECT_GE(b.model.ops[0].inputs[2], 0);
}

TEST(FuseBiasActivation, KerasRelu6ChainBecomesRelu6) {
  // Conv -> BiasAdd([1,1,1,C]) -> Relu -> Minimum(6) -> Maximum(0): Keras' relu6.
  ModelBuilder b;
  const int x = b.input("x", {1, 5, 5, 2});
  const int conv = b.op(OpCode::CONV2D, {x, b.random_constant("w", {3, 3, 2, 4}, 3, -3.0f, 3.0f)},
                        {1, 3, 3, 4}, conv_options());
  const int biased = b.op(OpCode::ADD, {conv, b.random_constant("b", {1, 1, 1, 4}, 4)}, {1, 3, 3, 4});
  const int relu = b.op(OpCode::RELU, {biased}, {1, 3, 3, 4});
  const int lo = b.op(OpCode::MINIMUM, {relu, b.constant("six", {}, {6.0f})}, {1, 3, 3, 4});
  b.output(b.op(OpCode::MAXIMUM, {lo, b.constant("zero", {}, {0.0f})}, {1, 3, 3, 4}));
  EXPECT_EQ(expect_same_outputs(b.model, opt::fuse_bias_activation, 1e-6f), 1);
  ASSERT_EQ(b.model.ops.size(), 1u);
  EXPECT_EQ(b.model.ops[0].options.AsConv2DOptions()->activation, schema::Activation::RELU6);
}

TEST(FuseBiasActivation, ClampWithoutReluAndExistingBias) {
  // Depthwise with a bias already, then SUB(c), Minimum(6), Maximum(0) = RELU6.
  ModelBuilder b;
  const int x = b.input("x", {1, 4, 4, 3});
  schema::DepthwiseConv2DOptionsT o;
  o.depth_multiplier = 1;
  const int dw = b.op(OpCode::DEPTHWISE_CONV2D,
                      {x, b.random_constant("w", {2, 2, 3, 1}, 5, -4.0f, 4.0f), b.random_constant("b0", {3}, 6)},
                      {1, 3, 3, 3}, ModelBuilder::options(o));
  const int shifted = b.op(OpCode::SUB, {dw, b.random_constant("c", {3}, 7)}, {1, 3, 3, 3});
  const int hi = b.op(OpCode::MINIMUM, {shifted, b.constant("six", {1}, {6.0f})}, {1, 3, 3, 3});
  b.output(b.op(OpCode::MAXIMUM, {b.constant("zero", {1, 1, 1, 1}, {0.0f}), hi}, {1, 3, 3, 3}));
  EXPECT_EQ(expect_same_outputs(b.model, opt::fuse_bias_activation, 1e-6f), 1);
  ASSERT_EQ(b.model.ops.size(), 1u);
  EXPECT_EQ(b.model.ops[0].options.AsDepthwiseConv2DOptions()->activation, schema::Activation::RELU6);
}

TEST(FuseBiasActivation, UnrepresentableClampFusesOnlyItsPrefix) {
  // Maximum(0) then Minimum(3) = clamp [0,3]: only the Maximum (= RELU) fuses.
  ModelBuilder b;
  const int x = b.input("x", {2, 3});
  const int mm = b.op(OpCode::MATMUL, {x, b.random_constant("w", {3, 3}, 8, -3.0f, 3.0f)}, {2, 3},
                      ModelBuilder::options(schema::MatMulOptionsT()));
  const int lo = b.op(OpCode::MAXIMUM, {mm, b.constant("zero", {}, {0.0f})}, {2, 3});
  b.output(b.op(OpCode::MINIMUM, {lo, b.constant("three", {}, {3.0f})}, {2, 3}));
  EXPECT_EQ(expect_same_outputs(b.model, opt::fuse_bias_activation, 0.0f), 1);
  ASSERT_EQ(b.model.ops.size(), 2u);
  EXPECT_EQ(b.model.ops[0].options.AsMatMulOptions()->activation, schema::Activation::RELU);
  EXPECT_EQ(b.model.ops[1].opcode, OpCode::MINIMUM);
}

TEST(FuseBiasActivation, LeavesGraphOutputsAndSharedValuesAlone) {
  ModelBuilder b;
  const int x = b.input("x", {2, 3});
  const int w = b.random_constant("w", {3, 3}, 9);
  const auto mm_options = ModelBuilder::options(schema::MatMulOptionsT());
  // (1) the matmul result is itself an output: no fusion.
  const int mm1 = b.op(OpCode::MATMUL, {x, w}, {2, 3}, mm_options);
  b.output(mm1);
  b.output(b.op(OpCode::RELU, {mm1}, {2, 3}));
  // (2) the biased value is read twice: bias fuses, the activation does not.
  const int mm2 = b.op(OpCode::MATMUL, {x, w}, {2, 3}, mm_options);
  const int biased = b.op(OpCode::ADD, {mm2, b.random_constant("bias", {3}, 10)}, {2, 3});
  b.output(b.op(OpCode::RELU, {biased}, {2, 3}));
  b.output(b.op(OpCode::TANH, {biased}, {2, 3}));
  // (3) a non-per-channel addend ([2,3]) is no bias.
  const int mm3 = b.op(OpCode::MATMUL, {x, w}, {2, 3}, mm_options);
  b.output(b.op(OpCode::ADD, {mm3, b.random_constant("full", {2, 3}, 11)}, {2, 3}));
  EXPECT_EQ(expect_same_outputs(b.model, opt::fuse_bias_activation, 1e-6f), 1);
  EXPECT_EQ(count_ops(b.model, OpCode::RELU), 2);
  EXPECT_EQ(count_ops(b.model, OpCode::ADD), 1);
}

TEST(FuseBiasActivation, PoolingTakesTheActivation) {
  ModelBuilder b;
  const int x = b.input("x", {1, 4, 4, 2});
  schema::Pool2DOptionsT o;
  o.filter_h = o.filter_w = o.stride_h = o.stride_w = 2;
  const int pool = b.op(OpCode::AVG_POOL2D, {x}, {1, 2, 2, 2}, ModelBuilder::options(o));
  b.output(b.op(OpCode::RELU6, {pool}, {1, 2, 2, 2}));
  EXPECT_EQ(expect_same_outputs(b.model, opt::fuse_bias_activation, 0.0f), 1);
  ASSERT_EQ(b.model.ops.size(), 1u);
  EXPECT_EQ(b.model.ops[0].options.AsPool2DOptions()->activation, schema::Activation::RELU6);
}

// ---- fold-batch-norms -----------------------------------------------------

TEST(FoldBatchNorms, ConvScaleShiftFoldsIntoWeightsAndBias) {
  ModelBuilder b;
  const int x = b.input("x", {1, 6, 6, 3});
  const int conv = b.op(OpCode::CONV2D, {x, b.random_constant("w", {3, 3, 3, 4}, 12)}, {1, 4, 4, 4},
                        conv_options());
  const int scaled = b.op(OpCode::MUL, {conv, b.random_constant("scale", {4}, 13, 0.5f, 2.0f)}, {1, 4, 4, 4});
  const int shifted = b.op(OpCode::ADD, {scaled, b.random_constant("shift", {4}, 14)}, {1, 4, 4, 4});
  b.output(b.op(OpCode::RELU, {shifted}, {1, 4, 4, 4}));
  EXPECT_EQ(expect_same_outputs(b.model, opt::fold_batch_norms, 1e-5f), 1);
  EXPECT_EQ(b.model.ops.size(), 2u);  // CONV2D (+bias) and the RELU fuse-bias-activation takes
  EXPECT_EQ(b.model.ops[0].opcode, OpCode::CONV2D);
  EXPECT_EQ(b.model.ops[1].opcode, OpCode::RELU);
}

TEST(FoldBatchNorms, DepthwiseMultiplierAndBroadcastShapes) {
  // Channel c of a depthwise output with multiplier 2 is filter[..., c/2, c%2].
  ModelBuilder b;
  const int x = b.input("x", {1, 5, 5, 3});
  schema::DepthwiseConv2DOptionsT o;
  o.depth_multiplier = 2;
  o.pad_top = o.pad_left = o.pad_bottom = o.pad_right = 1;
  const int dw = b.op(OpCode::DEPTHWISE_CONV2D, {x, b.random_constant("w", {3, 3, 3, 2}, 15)}, {1, 5, 5, 6},
                      ModelBuilder::options(o));
  const int scaled = b.op(OpCode::MUL, {b.random_constant("scale", {1, 1, 1, 6}, 16), dw}, {1, 5, 5, 6});
  b.output(b.op(OpCode::SUB, {scaled, b.random_constant("mean", {6}, 17)}, {1, 5, 5, 6}));
  EXPECT_EQ(expect_same_outputs(b.model, opt::fold_batch_norms, 1e-5f), 1);
  EXPECT_EQ(b.model.ops.size(), 1u);
}

TEST(FoldBatchNorms, MatMulTransposedWeightsWithDivision) {
  ModelBuilder b;
  const int x = b.input("x", {3, 5});
  schema::MatMulOptionsT o;
  o.transpose_b = true;
  const int mm = b.op(OpCode::MATMUL, {x, b.random_constant("w", {4, 5}, 18), b.random_constant("b", {4}, 19)},
                      {3, 4}, ModelBuilder::options(o));
  const int shifted = b.op(OpCode::ADD, {mm, b.random_constant("pre", {4}, 20)}, {3, 4});
  b.output(b.op(OpCode::DIV, {shifted, b.random_constant("std", {4}, 21, 0.5f, 3.0f)}, {3, 4}));
  EXPECT_EQ(expect_same_outputs(b.model, opt::fold_batch_norms, 1e-5f), 1);
  EXPECT_EQ(b.model.ops.size(), 1u);
}

TEST(FoldBatchNorms, SharedWeightsAreCopiedAndShiftOnlyChainsLeftToBiasFusion) {
  ModelBuilder b;
  const int x = b.input("x", {2, 3});
  const int w = b.random_constant("w", {3, 3}, 22);
  const auto mm_options = ModelBuilder::options(schema::MatMulOptionsT());
  const int a = b.op(OpCode::MATMUL, {x, w}, {2, 3}, mm_options);
  b.output(b.op(OpCode::MUL, {a, b.random_constant("s", {3}, 23)}, {2, 3}));
  const int c = b.op(OpCode::MATMUL, {x, w}, {2, 3}, mm_options);  // same weights, no scale
  b.output(b.op(OpCode::ADD, {c, b.random_constant("t", {3}, 24)}, {2, 3}));
  EXPECT_EQ(expect_same_outputs(b.model, opt::fold_batch_norms, 1e-5f), 1);
  EXPECT_EQ(count_ops(b.model, OpCode::ADD), 1);
  EXPECT_EQ(b.model.ops[0].inputs[1] == w, false);  // the folded op got its own weights
  EXPECT_EQ(b.model.ops[1].inputs[1], w);
}

TEST(FoldBatchNorms, NotAfterAnActivationOrANonConstantScale) {
  ModelBuilder b;
  const int x = b.input("x", {2, 3});
  const int y = b.input("y", {3});
  schema::MatMulOptionsT relu;
  relu.activation = schema::Activation::RELU;
  const int a = b.op(OpCode::MATMUL, {x, b.random_constant("w", {3, 3}, 25)}, {2, 3}, ModelBuilder::options(relu));
  b.output(b.op(OpCode::MUL, {a, b.random_constant("s", {3}, 26)}, {2, 3}));
  const int c = b.op(OpCode::MATMUL, {x, b.random_constant("w2", {3, 3}, 27)}, {2, 3},
                     ModelBuilder::options(schema::MatMulOptionsT()));
  b.output(b.op(OpCode::MUL, {c, y}, {2, 3}));
  EXPECT_EQ(expect_same_outputs(b.model, opt::fold_batch_norms, 0.0f), 0);
  EXPECT_EQ(count_ops(b.model, OpCode::MUL), 2);
}

// ---- fold-pads -------------------------------------------------------------

TEST(FoldPads, ZeroSpatialPadBecomesConvPadding) {
  ModelBuilder b;
  const int x = b.input("x", {1, 5, 6, 2});
  schema::PadOptionsT p;
  p.paddings = {0, 0, 1, 2, 2, 1, 0, 0};
  const int padded = b.op(OpCode::PAD, {x}, {1, 8, 9, 2}, ModelBuilder::options(p));
  b.output(b.op(OpCode::CONV2D, {padded, b.random_constant("w", {3, 3, 2, 3}, 28)}, {1, 3, 4, 3},
                conv_options(2, 0, 0, 0, 0)));
  EXPECT_EQ(expect_same_outputs(b.model, opt::fold_pads, 0.0f), 1);
  ASSERT_EQ(b.model.ops.size(), 1u);
  const auto* o = b.model.ops[0].options.AsConv2DOptions();
  EXPECT_EQ(o->pad_top, 1);
  EXPECT_EQ(o->pad_bottom, 2);
  EXPECT_EQ(o->pad_left, 2);
  EXPECT_EQ(o->pad_right, 1);
}

TEST(FoldPads, DepthwiseAddsToExistingPadding) {
  ModelBuilder b;
  const int x = b.input("x", {1, 4, 4, 2});
  schema::PadOptionsT p;
  p.paddings = {0, 0, 1, 1, 1, 1, 0, 0};
  const int padded = b.op(OpCode::PAD, {x}, {1, 6, 6, 2}, ModelBuilder::options(p));
  schema::DepthwiseConv2DOptionsT o;
  o.depth_multiplier = 1;
  o.pad_top = o.pad_left = o.pad_bottom = o.pad_right = 1;
  b.output(b.op(OpCode::DEPTHWISE_CONV2D, {padded, b.random_constant("w", {3, 3, 2, 1}, 29)}, {1, 6, 6, 2},
                ModelBuilder::options(o)));
  EXPECT_EQ(expect_same_outputs(b.model, opt::fold_pads, 0.0f), 1);
  EXPECT_EQ(b.model.ops[0].options.AsDepthwiseConv2DOptions()->pad_top, 2);
}

TEST(FoldPads, NotEquivalentPadsStay) {
  ModelBuilder b;
  const int x = b.input("x", {1, 4, 4, 2});
  const int w = b.random_constant("w", {3, 3, 2, 2}, 30);
  auto pad = [&](std::vector<int32_t> paddings, float value, schema::PadMode mode) {
    schema::PadOptionsT p;
    p.paddings = std::move(paddings);
    p.constant_value = value;
    p.mode = mode;
    std::vector<int64_t> shape = {1, 4, 4, 2};
    for (size_t d = 0; d < 4; ++d) shape[d] += p.paddings[2 * d] + p.paddings[2 * d + 1];
    return std::make_pair(b.op(OpCode::PAD, {x}, shape, ModelBuilder::options(p)), shape);
  };
  auto conv = [&](std::pair<int, std::vector<int64_t>> in) {
    std::vector<int64_t> out = {in.second[0], in.second[1] - 2, in.second[2] - 2, 2};
    return b.op(OpCode::CONV2D, {in.first, w}, out, conv_options());
  };
  b.output(conv(pad({0, 0, 1, 1, 1, 1, 0, 0}, 1.0f, schema::PadMode::CONSTANT)));   // pads with 1
  b.output(conv(pad({0, 0, 1, 1, 1, 1, 0, 0}, 0.0f, schema::PadMode::REFLECT)));    // mirror
  b.output(conv(pad({1, 0, 1, 1, 1, 1, 0, 0}, 0.0f, schema::PadMode::CONSTANT)));   // batch
  const auto shared = pad({0, 0, 1, 1, 1, 1, 0, 0}, 0.0f, schema::PadMode::CONSTANT);  // read twice
  b.output(conv(shared));
  b.output(b.op(OpCode::RELU, {shared.first}, shared.second));
  schema::Pool2DOptionsT po;
  po.filter_h = po.filter_w = 3;
  const auto pooled = pad({0, 0, 1, 1, 1, 1, 0, 0}, 0.0f, schema::PadMode::CONSTANT);
  b.output(b.op(OpCode::MAX_POOL2D, {pooled.first}, {1, 4, 4, 2}, ModelBuilder::options(po)));
  EXPECT_EQ(expect_same_outputs(b.model, opt::fold_pads, 0.0f), 0);
  EXPECT_EQ(count_ops(b.model, OpCode::PAD), 5);
}

// ---- transposes -----------------------------------------------------------

const std::vector<int32_t> kToNhwc = {0, 2, 3, 1}, kToNchw = {0, 3, 1, 2};

// NCHW conv net as the NCHW lowering emits it: T -> CONV -> T around each conv,
// with NCHW bias add and activation between, then an NCHW global mean.
TEST(Transposes, NchwIslandsCollapseToTheBoundary) {
  ModelBuilder b;
  const int x = b.input("x", {1, 3, 6, 6});
  int v = b.op(OpCode::TRANSPOSE, {x}, {1, 6, 6, 3}, transpose_options(kToNhwc));
  v = b.op(OpCode::CONV2D, {v, b.random_constant("w1", {3, 3, 3, 4}, 31)}, {1, 4, 4, 4}, conv_options());
  v = b.op(OpCode::TRANSPOSE, {v}, {1, 4, 4, 4}, transpose_options(kToNchw));
  v = b.op(OpCode::ADD, {v, b.random_constant("b1", {1, 4, 1, 1}, 32)}, {1, 4, 4, 4});
  v = b.op(OpCode::RELU, {v}, {1, 4, 4, 4});
  v = b.op(OpCode::TRANSPOSE, {v}, {1, 4, 4, 4}, transpose_options(kToNhwc));
  v = b.op(OpCode::CONV2D, {v, b.random_constant("w2", {1, 1, 4, 5}, 33)}, {1, 4, 4, 5}, conv_options());
  v = b.op(OpCode::TRANSPOSE, {v}, {1, 5, 4, 4}, transpose_options(kToNchw));
  schema::ReduceOptionsT mean;
  mean.axes = {2, 3};
  b.output(b.op(OpCode::MEAN, {v}, {1, 5}, ModelBuilder::options(mean)));
  EXPECT_GT(expect_same_outputs(b.model, opt::minimize_transposes, 1e-6f), 0);
  EXPECT_EQ(count_ops(b.model, OpCode::TRANSPOSE), 1);  // only the input's
  EXPECT_EQ(b.model.ops[0].opcode, OpCode::TRANSPOSE);
}

// A reduction that keeps its reduced dims says so in its shapes; the TF
// lowerings leave ReduceOptions.keep_dims unset, so the pass must not read it.
TEST(Transposes, ReductionKeepingDimsWithoutTheOptionFlag) {
  ModelBuilder b;
  const int x = b.input("x", {2, 9, 5, 5});
  int v = b.op(OpCode::TRANSPOSE, {x}, {9, 2, 5, 5}, transpose_options({1, 0, 2, 3}));
  schema::ReduceOptionsT sum;
  sum.axes = {2};  // keep_dims left false, as the lowering of TF's Sum writes it
  v = b.op(OpCode::SUM, {v}, {9, 2, 1, 5}, ModelBuilder::options(sum));
  b.output(b.op(OpCode::TRANSPOSE, {v}, {5, 2, 9, 1}, transpose_options({3, 1, 0, 2})));
  EXPECT_GT(expect_same_outputs(b.model, opt::minimize_transposes, 0.0f), 0);
  EXPECT_EQ(count_ops(b.model, OpCode::TRANSPOSE), 1);
  for (const LoweredOp& op : b.model.ops) {
    if (op.opcode == OpCode::TRANSPOSE) {
      EXPECT_EQ(b.model.values[static_cast<size_t>(op.inputs[0])].shape.size(), 4u);
    }
  }
}

TEST(Transposes, InversePairsCancelAndGraphOutputsKeepTheirTensor) {
  ModelBuilder b;
  const int x = b.input("x", {2, 3, 4});
  const int t = b.op(OpCode::TRANSPOSE, {x}, {4, 2, 3}, transpose_options({2, 0, 1}));
  const int back = b.op(OpCode::TRANSPOSE, {t}, {2, 3, 4}, transpose_options({1, 2, 0}));
  b.output(b.op(OpCode::TANH, {back}, {2, 3, 4}));
  const int t2 = b.op(OpCode::TRANSPOSE, {x}, {3, 2, 4}, transpose_options({1, 0, 2}));
  b.output(b.op(OpCode::TRANSPOSE, {t2}, {2, 3, 4}, transpose_options({1, 0, 2})));  // an output
  EXPECT_GT(expect_same_outputs(b.model, opt::minimize_transposes, 0.0f), 0);
  EXPECT_EQ(count_ops(b.model, OpCode::TRANSPOSE), 0);
  EXPECT_EQ(count_ops(b.model, OpCode::RESHAPE), 1);  // the output copy
}

TEST(Transposes, TwoTransposedOperandsMergeAndLoneTransposesStay) {
  ModelBuilder b;
  const int x = b.input("x", {2, 3, 4}), y = b.input("y", {2, 3, 4});
  const int tx = b.op(OpCode::TRANSPOSE, {x}, {4, 3, 2}, transpose_options({2, 1, 0}));
  const int ty = b.op(OpCode::TRANSPOSE, {y}, {4, 3, 2}, transpose_options({2, 1, 0}));
  b.output(b.op(OpCode::MAXIMUM, {tx, ty}, {4, 3, 2}));
  // A transpose whose path ends at an output without meeting another stays put.
  const int lone = b.op(OpCode::TRANSPOSE, {x}, {3, 2, 4}, transpose_options({1, 0, 2}));
  b.output(b.op(OpCode::EXP, {lone}, {3, 2, 4}));
  EXPECT_EQ(expect_same_outputs(b.model, opt::minimize_transposes, 0.0f), 1);
  EXPECT_EQ(count_ops(b.model, OpCode::TRANSPOSE), 2);
  ASSERT_EQ(b.model.ops.size(), 4u);
  EXPECT_EQ(b.model.ops[3].opcode, OpCode::EXP);  // not moved: still reads the transpose
  EXPECT_EQ(b.model.ops[2].opcode, OpCode::TRANSPOSE);
}

TEST(Transposes, PadAndConcatMoveWithTheLayout) {
  ModelBuilder b;
  const int x = b.input("x", {1, 4, 4, 2}), y = b.input("y", {1, 4, 4, 3});
  const int tx = b.op(OpCode::TRANSPOSE, {x}, {1, 2, 4, 4}, transpose_options(kToNchw));
  const int ty = b.op(OpCode::TRANSPOSE, {y}, {1, 3, 4, 4}, transpose_options(kToNchw));
  schema::ConcatOptionsT c;
  c.axis = 1;
  const int cat = b.op(OpCode::CONCAT, {tx, ty}, {1, 5, 4, 4}, ModelBuilder::options(c));
  schema::PadOptionsT p;
  p.paddings = {0, 0, 0, 0, 1, 0, 0, 2};
  const int padded = b.op(OpCode::PAD, {cat}, {1, 5, 5, 6}, ModelBuilder::options(p));
  b.output(b.op(OpCode::TRANSPOSE, {padded}, {1, 5, 6, 5}, transpose_options(kToNhwc)));
  EXPECT_GT(expect_same_outputs(b.model, opt::minimize_transposes, 0.0f), 0);
  EXPECT_EQ(count_ops(b.model, OpCode::TRANSPOSE), 0);
}

// Every op schemas/contract/ops.def marks element-wise lets a transpose through, not
// only the activations: FLOOR, LEAKY_RELU and SQUARED_DIFFERENCE with a
// constant between an inverse pair leave no transpose.
TEST(Transposes, MoveThroughEveryElementwiseOpTheTraitsName) {
  ModelBuilder b;
  const int x = b.input("x", {2, 3, 4});
  int v = b.op(OpCode::TRANSPOSE, {x}, {4, 2, 3}, transpose_options({2, 0, 1}));
  v = b.op(OpCode::FLOOR, {v}, {4, 2, 3});
  schema::LeakyReluOptionsT leaky;
  leaky.alpha = 0.25f;
  v = b.op(OpCode::LEAKY_RELU, {v}, {4, 2, 3}, ModelBuilder::options(leaky));
  v = b.op(OpCode::SQUARED_DIFFERENCE, {v, b.random_constant("c", {4, 1, 3}, 41)}, {4, 2, 3});
  b.output(b.op(OpCode::TRANSPOSE, {v}, {2, 3, 4}, transpose_options({1, 2, 0})));
  EXPECT_GT(expect_same_outputs(b.model, opt::minimize_transposes, 0.0f), 0);
  EXPECT_EQ(count_ops(b.model, OpCode::TRANSPOSE), 0);
}

// Random chains of transposes and elementwise / reduction ops: same outputs,
// never more transposes than before.
TEST(Transposes, RandomChainsKeepValuesAndNeverAddTransposes) {
  const uint32_t seed = 4242u;
  std::mt19937 rng(seed);
  for (int iter = 0; iter < 60; ++iter) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " iteration " << iter);
    ModelBuilder b;
    std::vector<int64_t> shape = {2, 3, 4};
    int v = b.input("x", shape);
    const int steps = 2 + static_cast<int>(rng() % 6);
    for (int s = 0; s < steps; ++s) {
      const int kind = static_cast<int>(rng() % 4);
      if (kind == 0 || kind == 3) {
        std::vector<int32_t> perm(shape.size());
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng);
        std::vector<int64_t> out(shape.size());
        for (size_t i = 0; i < perm.size(); ++i) out[i] = shape[static_cast<size_t>(perm[i])];
        v = b.op(OpCode::TRANSPOSE, {v}, out, transpose_options(perm));
        shape = out;
      } else if (kind == 1) {
        v = b.op(rng() % 2 ? OpCode::TANH : OpCode::ABS, {v}, shape);
      } else {
        std::vector<int64_t> cshape = shape;
        cshape[rng() % cshape.size()] = 1;
        v = b.op(OpCode::MUL, {v, b.random_constant("c" + std::to_string(s), cshape, 100u + static_cast<uint32_t>(s))},
                 shape);
      }
    }
    b.output(v);
    const int before = count_ops(b.model, OpCode::TRANSPOSE);
    expect_same_outputs(b.model, opt::minimize_transposes, 1e-6f, static_cast<uint32_t>(iter));
    EXPECT_LE(count_ops(b.model, OpCode::TRANSPOSE), before);
  }
}

// ---- the pass manager -----------------------------------------------------

TEST(Optimize, RunsEveryPassAndReportsWhatItDid) {
  ModelBuilder b;
  const int x = b.input("x", {1, 4, 4, 2});
  const int conv = b.op(OpCode::CONV2D, {x, b.random_constant("w", {1, 1, 2, 3}, 40)}, {1, 4, 4, 3},
                        conv_options(), "conv");
  const int scaled = b.op(OpCode::MUL, {conv, b.random_constant("s", {3}, 41)}, {1, 4, 4, 3}, {}, "bn/mul");
  const int shifted = b.op(OpCode::ADD, {scaled, b.random_constant("t", {3}, 42)}, {1, 4, 4, 3}, {}, "bn/add");
  b.output(b.op(OpCode::RELU6, {shifted}, {1, 4, 4, 3}, {}, "relu6"));
  conv::OptimizeReport report;
  auto pass = [&](LoweredModel& m, opt::PassLog&) {
    report = conv::optimize(m, conv::OptimizeOptions());
    return 0;
  };
  expect_same_outputs(b.model, pass, 1e-5f);
  EXPECT_EQ(b.model.ops.size(), 1u);
  EXPECT_EQ(report.find("fold-batch-norms")->rewrites, 1);
  EXPECT_EQ(report.find("fuse-bias-activation")->rewrites, 1);
  EXPECT_EQ(report.ops_before, 4u);
  EXPECT_EQ(report.ops_after, 1u);
  const std::string summary = report.summary();
  EXPECT_NE(summary.find("CONV2D 'conv' <- MUL 'bn/mul', ADD 'bn/add'"), std::string::npos) << summary;
  EXPECT_NE(summary.find("activation RELU6 from RELU6 'relu6'"), std::string::npos) << summary;
}

TEST(Optimize, DisabledPassesDoNotRunAndUnknownNamesAreRefused) {
  ModelBuilder b;
  const int x = b.input("x", {2, 2});
  const int mm = b.op(OpCode::MATMUL, {x, b.random_constant("w", {2, 2}, 43)}, {2, 2},
                      ModelBuilder::options(schema::MatMulOptionsT()));
  b.output(b.op(OpCode::RELU, {mm}, {2, 2}));
  conv::OptimizeOptions options;
  options.disabled = {"fuse-bias-activation"};
  const conv::OptimizeReport report = conv::optimize(b.model, options);
  EXPECT_FALSE(report.find("fuse-bias-activation")->ran);
  EXPECT_NE(report.summary().find("fuse-bias-activation: disabled"), std::string::npos);
  EXPECT_EQ(b.model.ops.size(), 2u);
  options.enabled = false;
  options.disabled.clear();
  conv::optimize(b.model, options);
  EXPECT_EQ(b.model.ops.size(), 2u);
  options.enabled = true;
  options.disabled = {"fuse-everything"};
  try {
    conv::optimize(b.model, options);
    ADD_FAILURE() << "expected an error";
  } catch (const conv::ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown pass 'fuse-everything'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace floe::testing
