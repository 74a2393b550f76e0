// SPDX-License-Identifier: Apache-2.0
// The small ops TF.js's converter executes that floe lowers onto its existing
// ops or folds: Concat (V1), Reverse (V1), BroadcastArgs, EuclideanNorm,
// LowerBound / UpperBound, Bincount / DenseBincount, BitwiseAnd, Print, and
// TF.js's own names Conv1D, DepthwiseConv2d, Ones, Zeros, and a Switch / Merge
// cond floe runs as an IF — each against the
// TF.js oracle on a graph written here, with values checked without it too;
// and Unique / UniqueV2 / ListDiff, refused with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "converter/ir/error.h"
#include "converter/pipeline/info.h"
#include "tests/converter/ops/convert_graph.h"
#include "tests/converter/support/tfjs_oracle.h"

namespace floe::testing {
namespace {

using G = TfGraphText;

std::string bool_tensor(const std::vector<int64_t>& dims, const std::vector<bool>& values) {
  std::string s = "attr { key: \"value\" value { tensor { dtype: DT_BOOL tensor_shape {";
  for (int64_t d : dims) s += " dim { size: " + std::to_string(d) + " }";
  s += " }";
  for (bool v : values) s += v ? " bool_val: true" : " bool_val: false";
  return s + " } } }";
}

std::vector<double> converted_values(const OracleGraph& c, size_t output) {
  const std::vector<HostTensor> out = run_floe(c);
  if (out.size() <= output) {
    ADD_FAILURE() << "floe returned " << out.size() << " outputs";
    return {};
  }
  return values_of(out[output]);
}

OracleGraph concat_and_reverse() {
  OracleGraph c;
  c.graph.placeholder("a", "DT_FLOAT", {2, 3});
  c.graph.placeholder("b", "DT_FLOAT", {2, 2});
  c.graph.constant("axis", "DT_INT32", {}, {1});
  c.graph.node("joined", "Concat", {"axis", "a", "b"}, {G::integer("N", 2), G::type("T", "DT_FLOAT")});
  c.graph.node("dims", "Const", {}, {G::type("dtype", "DT_BOOL"), bool_tensor({2}, {true, false})});
  c.graph.node("flipped", "Reverse", {"joined", "dims"}, {G::type("T", "DT_FLOAT")});
  c.inputs = {{"a", make_f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", make_f32({2, 2}, {7, 8, 9, 10})}};
  c.outputs = {"joined", "flipped"};
  return c;
}

TEST(TfjsListedOps, ConcatV1TakesTheAxisFirstAndReverseV1BoolDims) {
  const OracleGraph c = concat_and_reverse();
  EXPECT_EQ(converted_values(c, 0), (std::vector<double>{1, 2, 3, 7, 8, 4, 5, 6, 9, 10}));
  EXPECT_EQ(converted_values(c, 1), (std::vector<double>{4, 5, 6, 9, 10, 1, 2, 3, 7, 8}));
  FLOE_REQUIRE_TFJS_ORACLE();
  expect_matches_tfjs(c, 0);
}

// tf.cond(t > 0, lambda: tf.gather(x * 2, [3, 2, 1, 0]), lambda: x - 1) as TF1
// writes it (Switch / Merge, branch constants hanging off the pivots): the
// Gather makes floe run it as an IF. TF.js executes Switch / Merge too.
OracleGraph gather_cond(float t) {
  OracleGraph c;
  G& g = c.graph;
  g.placeholder("x", "DT_FLOAT", {4}).placeholder("t", "DT_FLOAT", {});
  g.constant("zero", "DT_FLOAT", {}, {0});
  g.node("pred", "Greater", {"t", "zero"}, {G::type("T", "DT_FLOAT")});
  g.node("cond/Switch", "Switch", {"pred", "pred"}, {G::type("T", "DT_BOOL")});
  g.node("cond/switch_t", "Identity", {"cond/Switch:1"}, {G::type("T", "DT_BOOL")});
  g.node("cond/switch_f", "Identity", {"cond/Switch"}, {G::type("T", "DT_BOOL")});
  g.node("cond/pred_id", "Identity", {"pred"}, {G::type("T", "DT_BOOL")});
  g.node("cond/mul/Switch", "Switch", {"x", "cond/pred_id"}, {G::type("T", "DT_FLOAT")});
  g.node("cond/mul/y", "Const", {"^cond/switch_t"}, {G::type("dtype", "DT_FLOAT"), G::tensor("DT_FLOAT", {}, {2})});
  g.node("cond/mul", "Mul", {"cond/mul/Switch:1", "cond/mul/y"}, {G::type("T", "DT_FLOAT")});
  g.node("cond/indices", "Const", {"^cond/switch_t"},
         {G::type("dtype", "DT_INT32"), G::tensor("DT_INT32", {4}, {3, 2, 1, 0})});
  g.node("cond/axis", "Const", {"^cond/switch_t"}, {G::type("dtype", "DT_INT32"), G::tensor("DT_INT32", {}, {0})});
  g.node("cond/gather", "GatherV2", {"cond/mul", "cond/indices", "cond/axis"},
         {G::type("Tparams", "DT_FLOAT"), G::type("Tindices", "DT_INT32"), G::type("Taxis", "DT_INT32"),
          G::integer("batch_dims", 0)});
  g.node("cond/sub/Switch", "Switch", {"x", "cond/pred_id"}, {G::type("T", "DT_FLOAT")});
  g.node("cond/sub/y", "Const", {"^cond/switch_f"}, {G::type("dtype", "DT_FLOAT"), G::tensor("DT_FLOAT", {}, {1})});
  g.node("cond/sub", "Sub", {"cond/sub/Switch", "cond/sub/y"}, {G::type("T", "DT_FLOAT")});
  g.node("cond/Merge", "Merge", {"cond/sub", "cond/gather"}, {G::integer("N", 2), G::type("T", "DT_FLOAT")});
  g.node("y", "Identity", {"cond/Merge"}, {G::type("T", "DT_FLOAT")});
  c.inputs = {{"x", make_f32({4}, {0.5f, 1.0f, -0.25f, 2.0f})}, {"t", make_f32({}, {t})}};
  c.outputs = {"y"};
  return c;
}

TEST(TfjsListedOps, SwitchMergeCondWithAGatherRunsOnlyTheTakenBranch) {
  EXPECT_EQ(converted_values(gather_cond(1.0f), 0), (std::vector<double>{4, -0.5, 2, 1}));
  EXPECT_EQ(converted_values(gather_cond(-1.0f), 0), (std::vector<double>{-0.5, 0, -1.25, 1}));
  FLOE_REQUIRE_TFJS_ORACLE();
  expect_matches_tfjs(gather_cond(1.0f), 0);
  expect_matches_tfjs(gather_cond(-1.0f), 0);
}

OracleGraph norms_and_shapes() {
  OracleGraph c;
  c.graph.placeholder("x", "DT_FLOAT", {2, 3, 4});
  c.graph.constant("inner", "DT_INT32", {2}, {1, -1});
  c.graph.constant("outer", "DT_INT32", {1}, {0});
  c.graph.node("norm", "EuclideanNorm", {"x", "inner"},
               {G::type("T", "DT_FLOAT"), G::type("Tidx", "DT_INT32"), G::boolean("keep_dims", false)});
  c.graph.node("norm_kept", "EuclideanNorm", {"x", "outer"},
               {G::type("T", "DT_FLOAT"), G::type("Tidx", "DT_INT32"), G::boolean("keep_dims", true)});
  c.graph.constant("s0", "DT_INT32", {3}, {2, 1, 3});
  c.graph.constant("s1", "DT_INT32", {2}, {4, 1});
  c.graph.node("broadcast", "BroadcastArgs", {"s0", "s1"}, {G::type("T", "DT_INT32")});
  c.graph.constant("shape", "DT_INT32", {2}, {2, 3});
  c.graph.node("ones", "Ones", {"shape"}, {G::type("T", "DT_FLOAT")});
  c.graph.node("zeros", "Zeros", {"shape"}, {G::type("T", "DT_INT32")});
  c.graph.node("printed", "Print", {"x", "x"},
               {G::type("T", "DT_FLOAT"), "attr { key: \"U\" value { list { type: DT_FLOAT } } }",
                G::str("message", "x = "), G::integer("first_n", -1), G::integer("summarize", 3)});
  c.inputs = {{"x", random_f32({2, 3, 4}, 5)}};
  c.outputs = {"norm", "norm_kept", "broadcast", "ones", "zeros", "printed"};
  return c;
}

TEST(TfjsListedOps, EuclideanNormBroadcastArgsOnesZerosPrint) {
  const OracleGraph c = norms_and_shapes();
  const std::vector<float> x = as_floats(c.inputs.at("x"));
  const std::vector<double> norm = converted_values(c, 0);
  ASSERT_EQ(norm.size(), 2u);
  for (int b = 0; b < 2; ++b) {
    double sum = 0;
    for (int i = 0; i < 12; ++i) sum += static_cast<double>(x[static_cast<size_t>(b * 12 + i)]) * x[static_cast<size_t>(b * 12 + i)];
    EXPECT_NEAR(norm[static_cast<size_t>(b)], std::sqrt(sum), 1e-5);
  }
  EXPECT_EQ(converted_values(c, 2), (std::vector<double>{2, 4, 3}));
  EXPECT_EQ(converted_values(c, 3), std::vector<double>(6, 1.0));
  EXPECT_EQ(converted_values(c, 4), std::vector<double>(6, 0.0));
  const std::vector<double> printed = converted_values(c, 5);
  EXPECT_EQ(printed, std::vector<double>(x.begin(), x.end()));
  conv::ConvertOptions options;
  options.graph_path = c.graph.write(make_temp_dir() + "/print.pbtxt");
  options.outputs = {"printed"};
  EXPECT_NE(conv::convert(options).summary.find("Print node 'printed' passes its input through; its printing is dropped"),
            std::string::npos);
  FLOE_REQUIRE_TFJS_ORACLE();
  expect_matches_tfjs(c, 1e-6);
}

OracleGraph counting() {
  OracleGraph c;
  c.graph.placeholder("sorted", "DT_FLOAT", {2, 5});
  c.graph.placeholder("values", "DT_FLOAT", {2, 4});
  c.graph.node("lower", "LowerBound", {"sorted", "values"}, {G::type("T", "DT_FLOAT"), G::type("out_type", "DT_INT32")});
  c.graph.node("upper", "UpperBound", {"sorted", "values"}, {G::type("T", "DT_FLOAT"), G::type("out_type", "DT_INT32")});
  c.graph.placeholder("arr", "DT_INT32", {7});
  c.graph.placeholder("weights", "DT_FLOAT", {7});
  c.graph.constant("size", "DT_INT32", {}, {5});
  c.graph.constant("no_weights", "DT_FLOAT", {0}, {});
  c.graph.node("counts", "Bincount", {"arr", "size", "no_weights"}, {G::type("T", "DT_FLOAT")});
  c.graph.node("weighted", "Bincount", {"arr", "size", "weights"}, {G::type("T", "DT_FLOAT")});
  c.graph.placeholder("batch", "DT_INT32", {2, 4});
  c.graph.node("dense", "DenseBincount", {"batch", "size", "no_weights"},
               {G::type("Tidx", "DT_INT32"), G::type("T", "DT_FLOAT"), G::boolean("binary_output", false)});
  c.graph.node("dense_binary", "DenseBincount", {"batch", "size", "no_weights"},
               {G::type("Tidx", "DT_INT32"), G::type("T", "DT_FLOAT"), G::boolean("binary_output", true)});
  c.inputs = {{"sorted", make_f32({2, 5}, {1, 2, 2, 2, 5, -3, -1, 0, 0, 4})},
              {"values", make_f32({2, 4}, {2, 0, 5, 6, 0, -5, 4, 1})},
              {"arr", make_i32({7}, {1, 3, 1, 0, 7, 4, 1})},
              {"weights", make_f32({7}, {0.5f, 2, 1, 3, 10, -1, 0.25f})},
              {"batch", make_i32({2, 4}, {0, 0, 2, 9, 4, 4, 4, 1})}};
  c.outputs = {"lower", "upper", "counts", "weighted", "dense", "dense_binary"};
  return c;
}

TEST(TfjsListedOps, BoundsAndBincounts) {
  const OracleGraph c = counting();
  EXPECT_EQ(converted_values(c, 0), (std::vector<double>{1, 0, 4, 5, 2, 0, 4, 4}));
  EXPECT_EQ(converted_values(c, 1), (std::vector<double>{4, 0, 5, 5, 4, 0, 5, 4}));
  EXPECT_EQ(converted_values(c, 2), (std::vector<double>{1, 3, 0, 1, 1}));  // 7 is outside [0, 5)
  EXPECT_EQ(converted_values(c, 3), (std::vector<double>{3, 1.75, 0, 2, -1}));
  EXPECT_EQ(converted_values(c, 4), (std::vector<double>{2, 0, 1, 0, 0, 0, 1, 0, 0, 3}));
  EXPECT_EQ(converted_values(c, 5), (std::vector<double>{1, 0, 1, 0, 0, 0, 1, 0, 0, 1}));
  FLOE_REQUIRE_TFJS_ORACLE();
  expect_matches_tfjs(c, 1e-6);
}

// No oracle: TF.js 4.22 lists BitwiseAnd's inputs as x, y but its executor
// reads params a, b, so a GraphModel cannot run the op. TF's values instead,
// int32 and int8 (computed widened to int32 and narrowed back).
TEST(TfjsListedOps, BitwiseAndOnIntegers) {
  OracleGraph c;
  c.graph.placeholder("p", "DT_INT32", {4});
  c.graph.placeholder("q", "DT_INT32", {1});
  c.graph.node("bits", "BitwiseAnd", {"p", "q"}, {G::type("T", "DT_INT32")});
  c.graph.constant("narrow_a", "DT_INT32", {3}, {-128, 127, -3});
  c.graph.node("a8", "Cast", {"narrow_a"}, {G::type("SrcT", "DT_INT32"), G::type("DstT", "DT_INT8")});
  c.graph.placeholder("b32", "DT_INT32", {3});
  c.graph.node("b8", "Cast", {"b32"}, {G::type("SrcT", "DT_INT32"), G::type("DstT", "DT_INT8")});
  c.graph.node("bits8", "BitwiseAnd", {"a8", "b8"}, {G::type("T", "DT_INT8")});
  c.inputs = {{"p", make_i32({4}, {12, -1, -8, 255})}, {"q", make_i32({1}, {-246})}, {"b32", make_i32({3}, {-1, 85, -6})}};
  c.outputs = {"bits", "bits8"};
  // -246 = ...1111 0000 1010
  EXPECT_EQ(converted_values(c, 0), (std::vector<double>{8, -246, -248, 10}));
  EXPECT_EQ(converted_values(c, 1), (std::vector<double>{-128, 85, -8}));
}

OracleGraph tfjs_convolutions() {
  OracleGraph c;
  c.graph.placeholder("signal", "DT_FLOAT", {2, 9, 3});
  c.graph.node("taps", "Const", {},
               {G::type("dtype", "DT_FLOAT"), G::tensor("DT_FLOAT", {3, 3, 2}, [] {
                  std::vector<double> v;
                  for (int i = 0; i < 18; ++i) v.push_back(0.125 * (i % 7) - 0.375);
                  return v;
                }())});
  c.graph.node("conv1d", "Conv1D", {"signal", "taps"},
               {G::type("T", "DT_FLOAT"), G::integer("stride", 2), G::str("padding", "same"),
                G::str("data_format", "NWC"), G::integer("dilation", 1)});
  c.graph.node("conv1d_dilated", "Conv1D", {"signal", "taps"},
               {G::type("T", "DT_FLOAT"), G::integer("stride", 1), G::str("padding", "valid"),
                G::str("data_format", "NWC"), G::integer("dilation", 2)});
  c.graph.placeholder("image", "DT_FLOAT", {1, 5, 5, 2});
  c.graph.node("dw_filter", "Const", {},
               {G::type("dtype", "DT_FLOAT"), G::tensor("DT_FLOAT", {3, 3, 2, 2}, [] {
                  std::vector<double> v;
                  for (int i = 0; i < 36; ++i) v.push_back(0.0625 * (i % 9) - 0.25);
                  return v;
                }())});
  c.graph.node("depthwise", "DepthwiseConv2d", {"image", "dw_filter"},
               {G::type("T", "DT_FLOAT"), G::ints("strides", {1, 1, 1, 1}), G::str("padding", "SAME"),
                G::str("data_format", "NHWC"), G::ints("dilations", {1, 1, 1, 1})});
  c.inputs = {{"signal", random_f32({2, 9, 3}, 31)}, {"image", random_f32({1, 5, 5, 2}, 32)}};
  c.outputs = {"conv1d", "conv1d_dilated", "depthwise"};
  return c;
}

TEST(TfjsListedOps, Conv1DAndDepthwiseConv2dAliases) {
  const OracleGraph c = tfjs_convolutions();
  const std::vector<HostTensor> out = run_floe(c);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 5, 2}));  // SAME, stride 2: ceil(9 / 2)
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{2, 5, 2}));  // VALID, dilation 2: 9 - 4
  EXPECT_EQ(out[2].shape, (std::vector<int64_t>{1, 5, 5, 4}));
  // Conv1D's first output column by hand: SAME with stride 2 pads 1 on the left.
  const std::vector<float> x = as_floats(c.inputs.at("signal")), y = as_floats(out[0]);
  double want = 0;
  for (int k = 1; k < 3; ++k) {
    for (int ci = 0; ci < 3; ++ci) want += x[static_cast<size_t>((k - 1) * 3 + ci)] * (0.125 * ((k * 6 + ci * 2) % 7) - 0.375);
  }
  EXPECT_NEAR(y[0], want, 1e-5);
  FLOE_REQUIRE_TFJS_ORACLE();
  expect_matches_tfjs(c, 1e-5);
}

TEST(TfjsListedOps, DataDependentSizesAreRefusedWithTheReason) {
  for (const char* op : {"Unique", "ListDiff"}) {
    G g;
    g.placeholder("x", "DT_INT32", {6});
    if (std::string(op) == "Unique") {
      g.node("u", op, {"x"}, {G::type("T", "DT_INT32"), G::type("out_idx", "DT_INT32")});
    } else {
      g.placeholder("y", "DT_INT32", {3});
      g.node("u", op, {"x", "y"}, {G::type("T", "DT_INT32"), G::type("out_idx", "DT_INT32")});
    }
    const std::string e = conversion_error(g, "refused", {"u"});
    EXPECT_NE(e.find(std::string(op) + " x1: u (its output size depends on the values and floe models have static "
                     "shapes: compute it outside the model and feed the result (--inputs))"),
              std::string::npos)
        << e;
    conv::InfoOptions info;
    info.graph_path = g.write(make_temp_dir() + "/list_ops.pbtxt");
    const std::string listed = conv::describe_ops(info);
    EXPECT_NE(listed.find("refused: its output size depends on the values and floe models have static shapes"),
              std::string::npos)
        << listed;
  }
}

TEST(TfjsListedOps, RefusesOperandsTheOpsDoNotTake) {
  {
    G g;
    g.placeholder("x", "DT_FLOAT", {4});
    g.node("bits", "BitwiseAnd", {"x", "x"}, {});
    const std::string e = conversion_error(g, "refused", {"bits"});
    EXPECT_NE(e.find("node 'bits' (op BitwiseAnd): bitwise ops take integers, got float32"), std::string::npos) << e;
  }
  {
    G g;
    g.placeholder("x", "DT_FLOAT", {2, 3});
    g.node("dims", "Const", {}, {G::type("dtype", "DT_BOOL"), bool_tensor({1}, {true})});
    g.node("r", "Reverse", {"x", "dims"}, {G::type("T", "DT_FLOAT")});
    const std::string e = conversion_error(g, "refused", {"r"});
    EXPECT_NE(e.find("dims must be a bool vector with one value per dim of input 0 (rank 2)"), std::string::npos) << e;
  }
  {
    G g;
    g.placeholder("s0", "DT_INT32", {2});
    g.constant("s1", "DT_INT32", {1}, {3});
    g.node("b", "BroadcastArgs", {"s0", "s1"}, {G::type("T", "DT_INT32")});
    const std::string e = conversion_error(g, "refused", {"b"});
    EXPECT_NE(e.find("shape s0 (input 0, 's0:0') must be known at conversion time"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace floe::testing
