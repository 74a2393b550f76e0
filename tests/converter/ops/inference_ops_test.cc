// SPDX-License-Identifier: Apache-2.0
// Inference ops floe lowers onto ops it already has (converter/ops/composite_ops.cc
// and the fused convolutions and matmul in converter/ops/conv_ops.cc), each converted
// and run through the runtime with its inputs fed at run time:
// ClipByValue, DivNoNan, Prelu, BroadcastTo, EnsureShape, ShapeN,
// MatrixBandPart, Erf, Diag, DiagPart, MatrixDiag(Part) and ReverseSequence
// against the values of TF's own tests and documentation (cited per test); Einsum against the matrix products its equations name; _FusedConv2D,
// _FusedMatMul and (_)FusedDepthwiseConv2dNative against the unfused TF ops they
// stand for in the same graph (what TF's remapper tests check: the fused node
// computes what the ops it replaced computed), and the refusal of a fused_ops
// combination floe does not lower.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "converter/ir/error.h"
#include "tests/converter/ops/convert_graph.h"
#include "tests/converter/support/tf_graph_text.h"
#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

using G = TfGraphText;

std::vector<int32_t> as_ints(const HostTensor& t) {
  return std::vector<int32_t>(t.as<int32_t>(), t.as<int32_t>() + t.num_elements());
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tolerance) << "index " << i;
}

std::string strings_attr(const std::string& key, const std::vector<std::string>& values) {
  std::string s = "attr { key: \"" + key + "\" value { list {";
  for (const std::string& v : values) s += " s: \"" + v + "\"";
  return s + " } } }";
}

// Values of tensorflow/python/kernel_tests/clip_ops_test.py: testClipByValue
// (float, scalar bounds) and testClipByValue3Type (int32, tensor bounds).
TEST(InferenceOps, ClipByValueMatchesTfTests) {
  G g;
  g.placeholder("x", "DT_FLOAT", {2, 3});
  g.placeholder("i", "DT_INT32", {2, 3});
  g.constant("lo", "DT_FLOAT", {}, {-4.4});
  g.constant("hi", "DT_FLOAT", {}, {4.4});
  g.constant("ilo", "DT_INT32", {2, 3}, {2, 2, 2, 5, 5, 5});
  g.constant("ihi", "DT_INT32", {2, 3}, {5, 5, 5, 7, 7, 7});
  g.node("y", "ClipByValue", {"x", "lo", "hi"}, {G::type("T", "DT_FLOAT")});
  g.node("yi", "ClipByValue", {"i", "ilo", "ihi"}, {G::type("T", "DT_INT32")});
  const auto out = run_model(convert_graph(g, "clip", {"y", "yi"}).model,
                             {{"x", make_f32({2, 3}, {-5, 2, 3, 4, 5, 6})}, {"i", make_i32({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{-4.4f, 2, 3, 4, 4.4f, 4.4f}));
  EXPECT_EQ(as_ints(out[1]), (std::vector<int32_t>{2, 2, 3, 5, 5, 6}));
}

// tf.math.divide_no_nan's documented example ([6, 8, 12, 15] / [2, 3, 4, 0]),
// plus a non-finite numerator over 0, which the op also maps to 0.
TEST(InferenceOps, DivNoNanIsZeroWhereTheDivisorIsZero) {
  G g;
  g.placeholder("x", "DT_FLOAT", {5});
  g.placeholder("y", "DT_FLOAT", {5});
  g.node("q", "DivNoNan", {"x", "y"}, {G::type("T", "DT_FLOAT")});
  const auto out = run_model(convert_graph(g, "div_no_nan", {"q"}).model,
                             {{"x", make_f32({5}, {6, 8, 12, 15, INFINITY})}, {"y", make_f32({5}, {2, 3, 4, 0, 0})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{3, 8.0f / 3.0f, 3, 0, 0}));
}

// Prelu (TF.js's op, what Keras' PReLU computes): max(x, 0) + alpha * min(x, 0)
// with alpha per channel.
TEST(InferenceOps, PreluScalesNegativesPerChannel) {
  G g;
  g.placeholder("x", "DT_FLOAT", {2, 4});
  g.constant("alpha", "DT_FLOAT", {4}, {0.1, 0.2, 0.3, 0.4});
  g.node("y", "Prelu", {"x", "alpha"}, {G::type("T", "DT_FLOAT")});
  const auto out = run_model(convert_graph(g, "prelu", {"y"}).model,
                             {{"x", make_f32({2, 4}, {-1, -2, 3, -4, 5, 0, -10, 2})}});
  ASSERT_EQ(out.size(), 1u);
  expect_near(as_floats(out[0]), {-0.1f, -0.4f, 3, -1.6f, 5, 0, -3, 2}, 1e-6f);
}

// tf.broadcast_to's documented example ([1, 2, 3] to [3, 3]) and a column to a matrix.
TEST(InferenceOps, BroadcastToRepeatsAlongNewAndUnitDims) {
  G g;
  g.placeholder("v", "DT_FLOAT", {3});
  g.placeholder("c", "DT_INT32", {2, 1});
  g.constant("s33", "DT_INT32", {2}, {3, 3});
  g.constant("s23", "DT_INT32", {2}, {2, 3});
  g.node("m", "BroadcastTo", {"v", "s33"}, {G::type("T", "DT_FLOAT"), G::type("Tidx", "DT_INT32")});
  g.node("k", "BroadcastTo", {"c", "s23"}, {G::type("T", "DT_INT32"), G::type("Tidx", "DT_INT32")});
  const auto out = run_model(convert_graph(g, "broadcast_to", {"m", "k"}).model,
                             {{"v", make_f32({3}, {1, 2, 3})}, {"c", make_i32({2, 1}, {7, -8})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{1, 2, 3, 1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(as_ints(out[1]), (std::vector<int32_t>{7, 7, 7, -8, -8, -8}));
  G bad;
  bad.placeholder("v", "DT_FLOAT", {3});
  bad.constant("s", "DT_INT32", {2}, {3, 2});
  bad.node("m", "BroadcastTo", {"v", "s"}, {G::type("T", "DT_FLOAT")});
  EXPECT_NE(conversion_error(bad, "broadcast_bad", {"m"}).find("input [3] cannot be broadcast to [3,2]"),
            std::string::npos);
}

// EnsureShape passes the tensor through when the shape holds (-1 = any dim) and
// is refused at conversion when it does not; ShapeN gives each input's shape.
TEST(InferenceOps, EnsureShapeAndShapeN) {
  G g;
  g.placeholder("x", "DT_FLOAT", {2, 3});
  g.placeholder("flat", "DT_FLOAT", {6});
  g.node("e", "EnsureShape", {"x"}, {G::type("T", "DT_FLOAT"), G::shape("shape", {-1, 3})});
  g.node("shapes", "ShapeN", {"flat", "x"}, {G::type("T", "DT_FLOAT"), G::integer("N", 2)});
  g.node("r", "Reshape", {"flat", "shapes:1"}, {G::type("T", "DT_FLOAT")});
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  const auto out = run_model(convert_graph(g, "ensure_shape", {"e", "r"}).model,
                             {{"x", make_f32({2, 3}, values)}, {"flat", make_f32({6}, values)}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(as_floats(out[0]), values);
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(as_floats(out[1]), values);
  G bad;
  bad.placeholder("x", "DT_FLOAT", {2, 3});
  bad.node("e", "EnsureShape", {"x"}, {G::type("T", "DT_FLOAT"), G::shape("shape", {2, 4})});
  EXPECT_NE(conversion_error(bad, "ensure_bad", {"e"}).find("the input's shape [2,3] is not the shape [2,4] the graph ensures"),
            std::string::npos);
}

// tf.linalg.band_part's documented example: a 4x4 Toeplitz matrix with
// (num_lower, num_upper) = (1, -1) and (2, 1).
TEST(InferenceOps, MatrixBandPartMatchesTfDocumentation) {
  G g;
  g.placeholder("x", "DT_FLOAT", {4, 4});
  g.constant("one", "DT_INT32", {}, {1});
  g.constant("two", "DT_INT32", {}, {2});
  g.constant("all", "DT_INT32", {}, {-1});
  g.node("upper", "MatrixBandPart", {"x", "one", "all"}, {G::type("T", "DT_FLOAT"), G::type("Tindex", "DT_INT32")});
  g.node("band", "MatrixBandPart", {"x", "two", "one"}, {G::type("T", "DT_FLOAT"), G::type("Tindex", "DT_INT32")});
  const auto out = run_model(convert_graph(g, "band_part", {"upper", "band"}).model,
                             {{"x", make_f32({4, 4}, {0, 1, 2, 3, -1, 0, 1, 2, -2, -1, 0, 1, -3, -2, -1, 0})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{0, 1, 2, 3, -1, 0, 1, 2, 0, -1, 0, 1, 0, 0, -1, 0}));
  EXPECT_EQ(as_floats(out[1]), (std::vector<float>{0, 1, 0, 0, -1, 0, 1, 0, -2, -1, 0, 1, 0, -2, -1, 0}));
}

// Erf against the values of the error function (tabulated in Abramowitz and
// Stegun, table 7.1; the same as scipy.special.erf, which TF's unary op tests
// compare tf.math.erf with), its odd symmetry, 0 and the saturation at +-1.
TEST(InferenceOps, ErfMatchesTheErrorFunction) {
  G g;
  g.placeholder("x", "DT_FLOAT", {9});
  g.node("y", "Erf", {"x"}, {G::type("T", "DT_FLOAT")});
  const auto out = run_model(convert_graph(g, "erf", {"y"}).model,
                             {{"x", make_f32({9}, {0, 0.1f, 0.5f, 1, 2, -0.25f, -1.5f, 3, -10})}});
  ASSERT_EQ(out.size(), 1u);
  expect_near(as_floats(out[0]),
              {0, 0.1124629160f, 0.5204998778f, 0.8427007929f, 0.9953222650f, -0.2763263902f, -0.9661051465f,
               0.9999779095f, -1},
              3e-7f);
}

// Deterministic weights in [-1, 1).
std::vector<double> weights(size_t n, uint32_t seed) {
  std::vector<double> v(n);
  for (double& x : v) {
    seed = 1664525u * seed + 1013904223u;
    x = static_cast<double>(seed >> 8) / 8388608.0 - 1.0;
  }
  return v;
}

// Each fused node next to the unfused ops it replaces, on the same weights and input.
TEST(InferenceOps, FusedOpsComputeWhatTheOpsTheyReplaceCompute) {
  G g;
  g.placeholder("x", "DT_FLOAT", {1, 5, 5, 3});
  g.placeholder("m", "DT_FLOAT", {2, 6});
  g.constant("filter", "DT_FLOAT", {3, 3, 3, 4}, weights(108, 1));
  g.constant("dw_filter", "DT_FLOAT", {3, 3, 3, 2}, weights(54, 2));
  g.constant("bias4", "DT_FLOAT", {4}, {0.5, -0.25, 0.125, -1});
  g.constant("bias6", "DT_FLOAT", {6}, {0.1, -0.2, 0.3, -0.4, 0.5, -0.6});
  g.constant("w", "DT_FLOAT", {6, 4}, weights(24, 3));
  g.constant("scale", "DT_FLOAT", {4}, {1.5, 0.5, 2, 1});
  g.constant("offset", "DT_FLOAT", {4}, {0.1, 0.2, -0.3, 0});
  g.constant("mean", "DT_FLOAT", {4}, {0.05, -0.1, 0.2, 0.3});
  g.constant("variance", "DT_FLOAT", {4}, {1, 0.25, 4, 0.5});
  const std::string t = G::type("T", "DT_FLOAT");
  const std::string same = G::str("padding", "SAME"), strides = G::ints("strides", {1, 1, 1, 1});
  // _FusedConv2D BiasAdd + Relu
  g.node("conv", "Conv2D", {"x", "filter"}, {t, same, strides});
  g.node("conv_bias", "BiasAdd", {"conv", "bias4"}, {t});
  g.node("conv_relu", "Relu", {"conv_bias"}, {t});
  g.node("fused_conv", "_FusedConv2D", {"x", "filter", "bias4"},
         {t, same, strides, G::integer("num_args", 1), strings_attr("fused_ops", {"BiasAdd", "Relu"})});
  // _FusedConv2D FusedBatchNorm + Relu6
  g.node("bn", "FusedBatchNorm", {"conv", "scale", "offset", "mean", "variance"},
         {t, G::boolean("is_training", false), "attr { key: \"epsilon\" value { f: 0.001 } }"});
  g.node("bn_relu6", "Relu6", {"bn"}, {t});
  g.node("fused_bn", "_FusedConv2D", {"x", "filter", "scale", "offset", "mean", "variance"},
         {t, same, strides, G::integer("num_args", 4), strings_attr("fused_ops", {"FusedBatchNorm", "Relu6"}),
          "attr { key: \"epsilon\" value { f: 0.001 } }"});
  // FusedDepthwiseConv2dNative BiasAdd + Elu
  g.node("dw", "DepthwiseConv2dNative", {"x", "dw_filter"}, {t, same, strides});
  g.node("dw_bias", "BiasAdd", {"dw", "bias6"}, {t});
  g.node("dw_elu", "Elu", {"dw_bias"}, {t});
  g.node("fused_dw", "FusedDepthwiseConv2dNative", {"x", "dw_filter", "bias6"},
         {t, same, strides, G::integer("num_args", 1), strings_attr("fused_ops", {"BiasAdd", "Elu"})});
  // The same under the name TF's remapper gives it
  g.node("dw_elu_again", "Elu", {"dw_bias"}, {t});
  g.node("fused_dw_tf", "_FusedDepthwiseConv2dNative", {"x", "dw_filter", "bias6"},
         {t, same, strides, G::integer("num_args", 1), strings_attr("fused_ops", {"BiasAdd", "Elu"})});
  // _FusedMatMul BiasAdd + LeakyRelu (alpha 0.3)
  g.node("mm", "MatMul", {"m", "w"}, {t});
  g.node("mm_bias", "BiasAdd", {"mm", "bias4"}, {t});
  g.node("mm_leaky", "LeakyRelu", {"mm_bias"}, {t, "attr { key: \"alpha\" value { f: 0.3 } }"});
  g.node("fused_mm", "_FusedMatMul", {"m", "w", "bias4"},
         {t, G::integer("num_args", 1), strings_attr("fused_ops", {"BiasAdd", "LeakyRelu"}),
          "attr { key: \"leakyrelu_alpha\" value { f: 0.3 } }"});
  const auto converted = convert_graph(g, "fused", {"conv_relu", "fused_conv", "bn_relu6", "fused_bn", "dw_elu", "fused_dw",
                                              "mm_leaky", "fused_mm", "dw_elu_again", "fused_dw_tf"});
  const std::vector<double> xv = weights(75, 7), mv = weights(12, 8);
  const auto out = run_model(converted.model, {{"x", make_f32({1, 5, 5, 3}, std::vector<float>(xv.begin(), xv.end()))},
                                               {"m", make_f32({2, 6}, std::vector<float>(mv.begin(), mv.end()))}});
  ASSERT_EQ(out.size(), 10u);
  for (size_t i = 0; i < 10; i += 2) {
    EXPECT_EQ(out[i].shape, out[i + 1].shape) << i;
    expect_near(as_floats(out[i + 1]), as_floats(out[i]), 1e-5f);
    // Not trivially equal: the activation leaves some values negative or clips some.
    const std::vector<float> v = as_floats(out[i]);
    EXPECT_NE(*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())) << i;
  }
}

// Einsum matrix products against the BatchMatMulV2 / MatMul they are: a
// batched product with the second operand transposed, Keras EinsumDense's
// "abc,cd->abd", and a plain transposed-first product; other equations are
// refused with the reason.
TEST(InferenceOps, EinsumMatrixProducts) {
  G g;
  g.placeholder("a", "DT_FLOAT", {2, 3, 4});
  g.placeholder("b", "DT_FLOAT", {2, 5, 4});
  g.placeholder("m", "DT_FLOAT", {4, 3});
  g.constant("w", "DT_FLOAT", {4, 6}, weights(24, 5));
  g.constant("w2", "DT_FLOAT", {4, 2}, weights(8, 6));
  const std::string t = G::type("T", "DT_FLOAT");
  g.node("e1", "Einsum", {"a", "b"}, {t, G::str("equation", "bik,bjk->bij"), G::integer("N", 2)});
  g.node("r1", "BatchMatMulV2", {"a", "b"}, {t, G::boolean("adj_y", true)});
  g.node("e2", "Einsum", {"a", "w"}, {t, G::str("equation", "abc,cd->abd"), G::integer("N", 2)});
  g.node("r2", "BatchMatMulV2", {"a", "w"}, {t});
  g.node("e3", "Einsum", {"m", "w2"}, {t, G::str("equation", "ki, kj -> ij"), G::integer("N", 2)});
  g.node("r3", "MatMul", {"m", "w2"}, {t, G::boolean("transpose_a", true)});
  const auto converted = convert_graph(g, "einsum", {"e1", "r1", "e2", "r2", "e3", "r3"});
  const std::vector<double> av = weights(24, 9), bv = weights(40, 10), mv = weights(12, 11);
  const auto out = run_model(converted.model, {{"a", make_f32({2, 3, 4}, std::vector<float>(av.begin(), av.end()))},
                                               {"b", make_f32({2, 5, 4}, std::vector<float>(bv.begin(), bv.end()))},
                                               {"m", make_f32({4, 3}, std::vector<float>(mv.begin(), mv.end()))}});
  ASSERT_EQ(out.size(), 6u);
  const std::vector<std::vector<int64_t>> shapes = {{2, 3, 5}, {2, 3, 6}, {3, 2}};
  for (size_t i = 0; i < 6; i += 2) {
    EXPECT_EQ(out[i].shape, shapes[i / 2]);
    EXPECT_EQ(out[i].shape, out[i + 1].shape);
    expect_near(as_floats(out[i]), as_floats(out[i + 1]), 1e-6f);
  }
  G bad;
  bad.placeholder("a", "DT_FLOAT", {3, 3});
  bad.node("trace", "Einsum", {"a", "a"}, {G::type("T", "DT_FLOAT"), G::str("equation", "ij,jk->"), G::integer("N", 2)});
  EXPECT_NE(conversion_error(bad, "einsum_bad", {"trace"}).find("einsum 'ij,jk->': floe lowers two-operand matrix products"),
            std::string::npos);
}

// The _FusedMatMul graphs of nGraph's TF bridge tests (the corpus' only
// grappler-fused graphs): weights and bias are placeholders, so the fused
// bias and activation run on fed values. Against relu / relu6 / identity of
// x @ w + b computed here in double.
TEST(InferenceOps, CorpusFusedMatMulGraphs) {
  const std::string dir = "ngraph_bridge/test/python/";
  FLOE_REQUIRE_CORPUS(dir + "fusedmatmul_0.pbtxt");
  const std::vector<double> xv = weights(6, 21), wv = weights(12, 22), bv = weights(4, 23);
  const HostTensor x = make_f32({2, 3}, std::vector<float>(xv.begin(), xv.end()));
  const HostTensor w = make_f32({3, 4}, std::vector<float>(wv.begin(), wv.end()));
  const HostTensor b = make_f32({4}, std::vector<float>(bv.begin(), bv.end()));
  for (int k = 0; k < 3; ++k) {
    conv::ConvertOptions options;
    options.graph_path = corpus_path(dir + "fusedmatmul_" + std::to_string(k) + ".pbtxt");
    options.outputs = {"Relu_1"};
    options.input_shapes = {{"Placeholder_3", {2, 3}}, {"Placeholder_4", {3, 4}}, {"Placeholder_5", {4}}};
    const auto out = run_model(conv::convert(options).model,
                               {{"Placeholder_3", x}, {"Placeholder_4", w}, {"Placeholder_5", b}});
    ASSERT_EQ(out.size(), 1u);
    std::vector<float> want;
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 4; ++j) {
        double v = bv[static_cast<size_t>(j)];
        for (int c = 0; c < 3; ++c) v += static_cast<double>(static_cast<float>(xv[static_cast<size_t>(i * 3 + c)])) *
                                         static_cast<float>(wv[static_cast<size_t>(c * 4 + j)]);
        if (k == 0) v = std::max(v, 0.0);
        if (k == 1) v = std::min(std::max(v, 0.0), 6.0);
        want.push_back(static_cast<float>(v));
      }
    }
    expect_near(as_floats(out[0]), want, 1e-5f);
  }
}

TEST(InferenceOps, UnknownFusedOpsAreRefusedByName) {
  G g;
  g.placeholder("m", "DT_FLOAT", {2, 6});
  g.constant("w", "DT_FLOAT", {6, 4}, weights(24, 3));
  g.constant("b", "DT_FLOAT", {4}, {0, 0, 0, 0});
  g.node("y", "_FusedMatMul", {"m", "w", "b"},
         {G::type("T", "DT_FLOAT"), G::integer("num_args", 1), strings_attr("fused_ops", {"BiasAdd", "GeluExact"})});
  EXPECT_NE(conversion_error(g, "fused_bad", {"y"}).find("fused_ops [BiasAdd,GeluExact] is not a combination floe lowers"),
            std::string::npos);
}


HostTensor make_i64(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  HostTensor t;
  t.dtype = DType::kInt64;
  t.shape = std::move(shape);
  t.data.resize(values.size() * sizeof(int64_t));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

// tf.linalg.tensor_diag's documented example ([1, 2, 3, 4] on a 4x4
// diagonal), and a rank-2 input whose rank-4 output has x[i, j] at [i, j, i, j];
// DiagPart (tf.linalg.tensor_diag_part) takes each back.
TEST(InferenceOps, DiagAndDiagPartMatchTfDocumentation) {
  G g;
  g.placeholder("v", "DT_FLOAT", {4});
  g.placeholder("m", "DT_INT32", {2, 2});
  g.node("diag", "Diag", {"v"}, {G::type("T", "DT_FLOAT")});
  g.node("diag2", "Diag", {"m"}, {G::type("T", "DT_INT32")});
  g.node("part", "DiagPart", {"diag"}, {G::type("T", "DT_FLOAT")});
  g.node("part2", "DiagPart", {"diag2"}, {G::type("T", "DT_INT32")});
  const auto out = run_model(convert_graph(g, "diag", {"diag", "diag2", "part", "part2"}).model,
                             {{"v", make_f32({4}, {1, 2, 3, 4})}, {"m", make_i32({2, 2}, {5, -6, 7, 8})}});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4}));
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{2, 2, 2, 2}));
  EXPECT_EQ(as_ints(out[1]), (std::vector<int32_t>{5, 0, 0, 0, 0, -6, 0, 0, 0, 0, 7, 0, 0, 0, 0, 8}));
  EXPECT_EQ(as_floats(out[2]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(out[3].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(as_ints(out[3]), (std::vector<int32_t>{5, -6, 7, 8}));
}

// Off the diagonal Diag writes zeros, never x * 0: an infinite or NaN input
// stays on the diagonal alone.
TEST(InferenceOps, DiagKeepsNonFiniteValuesOnTheDiagonal) {
  G g;
  g.placeholder("v", "DT_FLOAT", {2});
  g.node("diag", "Diag", {"v"}, {G::type("T", "DT_FLOAT")});
  const auto out = run_model(convert_graph(g, "diag_inf", {"diag"}).model,
                             {{"v", make_f32({2}, {INFINITY, NAN})}});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<float> got = as_floats(out[0]);
  EXPECT_EQ(got[0], INFINITY);
  EXPECT_EQ(got[1], 0.0f);
  EXPECT_EQ(got[2], 0.0f);
  EXPECT_TRUE(std::isnan(got[3]));
}

// tf.linalg.diag_part's documented example (a [2, 3, 4] batch: the main
// diagonal of each 3x4 matrix), and tf.linalg.diag (MatrixDiagV3 as TF2
// writes it: k = 0, num_rows = num_cols = -1) with a padding value, and the
// V1 MatrixDiag with zeros.
TEST(InferenceOps, MatrixDiagAndDiagPartMatchTfDocumentation) {
  G g;
  g.placeholder("x", "DT_FLOAT", {2, 3, 4});
  g.placeholder("d", "DT_FLOAT", {2, 3});
  g.constant("k", "DT_INT32", {}, {0});
  g.constant("unknown", "DT_INT32", {}, {-1});
  g.constant("pad", "DT_FLOAT", {}, {9});
  g.node("part", "MatrixDiagPartV3", {"x", "k", "pad"}, {G::type("T", "DT_FLOAT"), G::str("align", "RIGHT_LEFT")});
  g.node("part1", "MatrixDiagPart", {"x"}, {G::type("T", "DT_FLOAT")});
  g.node("diag", "MatrixDiagV3", {"d", "k", "unknown", "unknown", "pad"},
         {G::type("T", "DT_FLOAT"), G::str("align", "RIGHT_LEFT")});
  g.node("diag1", "MatrixDiag", {"d"}, {G::type("T", "DT_FLOAT")});
  const auto out = run_model(
      convert_graph(g, "matrix_diag", {"part", "part1", "diag", "diag1"}).model,
      {{"x", make_f32({2, 3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8})},
       {"d", make_f32({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{1, 6, 7, 5, 2, 7}));
  EXPECT_EQ(as_floats(out[1]), (std::vector<float>{1, 6, 7, 5, 2, 7}));
  EXPECT_EQ(out[2].shape, (std::vector<int64_t>{2, 3, 3}));
  EXPECT_EQ(as_floats(out[2]), (std::vector<float>{1, 9, 9, 9, 2, 9, 9, 9, 3, 4, 9, 9, 9, 5, 9, 9, 9, 6}));
  EXPECT_EQ(as_floats(out[3]), (std::vector<float>{1, 0, 0, 0, 2, 0, 0, 0, 3, 4, 0, 0, 0, 5, 0, 0, 0, 6}));
}

// tf.reverse_sequence's documented layouts: batch_dim 0 / seq_dim 1 (here
// x[b, t] = 10 b + t with lengths 7, 2, 3, 5, which reverse that many leading
// steps of each row), and seq_dim 0 / batch_dim 2 with an axis between
// (x[t, m, b] = 100 t + 10 m + b, lengths 2 and 3), int64 lengths as TF's
// default Tlen.
TEST(InferenceOps, ReverseSequenceMatchesTfDocumentation) {
  G g;
  g.placeholder("x", "DT_INT32", {4, 8});
  g.placeholder("lengths", "DT_INT64", {4});
  g.placeholder("y", "DT_FLOAT", {3, 2, 2});
  g.placeholder("y_lengths", "DT_INT32", {2});
  g.node("rev", "ReverseSequence", {"x", "lengths"},
         {G::type("T", "DT_INT32"), G::type("Tlen", "DT_INT64"), G::integer("seq_dim", 1), G::integer("batch_dim", 0)});
  g.node("rev_t", "ReverseSequence", {"y", "y_lengths"},
         {G::type("T", "DT_FLOAT"), G::type("Tlen", "DT_INT32"), G::integer("seq_dim", 0), G::integer("batch_dim", 2)});
  std::vector<int32_t> x;
  for (int b = 0; b < 4; ++b) {
    for (int t = 0; t < 8; ++t) x.push_back(10 * b + t);
  }
  std::vector<float> y;
  for (int t = 0; t < 3; ++t) {
    for (int m = 0; m < 2; ++m) {
      for (int b = 0; b < 2; ++b) y.push_back(static_cast<float>(100 * t + 10 * m + b));
    }
  }
  const auto out = run_model(convert_graph(g, "reverse_sequence", {"rev", "rev_t"}).model,
                             {{"x", make_i32({4, 8}, x)},
                              {"lengths", make_i64({4}, {7, 2, 3, 5})},
                              {"y", make_f32({3, 2, 2}, y)},
                              {"y_lengths", make_i32({2}, {2, 3})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(as_ints(out[0]), (std::vector<int32_t>{6,  5,  4,  3,  2,  1,  0,  7,  11, 10, 12, 13, 14, 15, 16, 17,
                                                   22, 21, 20, 23, 24, 25, 26, 27, 34, 33, 32, 31, 30, 35, 36, 37}));
  EXPECT_EQ(as_floats(out[1]), (std::vector<float>{100, 201, 110, 211, 0, 101, 10, 111, 200, 1, 210, 11}));
}

TEST(InferenceOps, DiagonalAndSequenceOpsRefuseWhatTfRefuses) {
  G g;
  g.placeholder("x", "DT_FLOAT", {2, 3});
  g.placeholder("lengths", "DT_INT32", {3});
  g.placeholder("d", "DT_FLOAT", {3});
  g.constant("one", "DT_INT32", {}, {1});
  g.constant("unknown", "DT_INT32", {}, {-1});
  g.constant("pad", "DT_FLOAT", {}, {0});
  g.node("part", "DiagPart", {"x"}, {G::type("T", "DT_FLOAT")});
  g.node("same_axis", "ReverseSequence", {"x", "lengths"},
         {G::type("T", "DT_FLOAT"), G::type("Tlen", "DT_INT32"), G::integer("seq_dim", 1), G::integer("batch_dim", 1)});
  g.node("wrong_lengths", "ReverseSequence", {"x", "lengths"},
         {G::type("T", "DT_FLOAT"), G::type("Tlen", "DT_INT32"), G::integer("seq_dim", 1), G::integer("batch_dim", 0)});
  g.node("super", "MatrixDiagV3", {"d", "one", "unknown", "unknown", "pad"}, {G::type("T", "DT_FLOAT")});
  EXPECT_NE(conversion_error(g, "diag_part_shape", {"part"}).find("is not D + D"), std::string::npos);
  EXPECT_NE(conversion_error(g, "same_axis", {"same_axis"}).find("seq_dim and batch_dim are both 1"), std::string::npos);
  EXPECT_NE(conversion_error(g, "lengths", {"wrong_lengths"}).find("seq_lengths has shape [3], not [2]"),
            std::string::npos);
  EXPECT_NE(conversion_error(g, "super_diagonal", {"super"}).find("main diagonal (k = 0)"), std::string::npos);
}

}  // namespace
}  // namespace floe::testing
