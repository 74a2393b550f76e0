// SPDX-License-Identifier: Apache-2.0
// The TF layout ops floe lowers to TRANSPOSE / PAD (converter/ops/layout_ops.cc):
// Transpose (negative perm entries as TF accepts them), Pad, PadV2 with a
// non-float constant and with a constant_values fed at run time, MirrorPad REFLECT/SYMMETRIC (tf.pad's documented example),
// each through conversion and the runtime; and the conversion-time errors for
// an invalid permutation, too-large mirror paddings and non-constant paddings.
#include <gtest/gtest.h>

#include "converter/ir/error.h"
#include "tests/converter/ops/convert_graph.h"
#include "tests/converter/support/tf_graph_text.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

using G = TfGraphText;

G with_x() {
  G g;
  g.placeholder("x", "DT_FLOAT", {2, 3});
  return g;
}

const std::vector<float> kT = {1, 2, 3, 4, 5, 6};  // tf.pad's example [[1,2,3],[4,5,6]]

TEST(LayoutOps, TransposeWithNegativePermEntries) {
  G g = with_x();
  g.constant("perm", "DT_INT32", {2}, {-1, 0});
  g.node("y", "Transpose", {"x", "perm"}, {G::type("T", "DT_FLOAT"), G::type("Tperm", "DT_INT32")});
  const auto out = run_model(convert_graph(g, "transpose", {"y"}).model, {{"x", make_f32({2, 3}, kT)}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(LayoutOps, MirrorPadMatchesTfDocumentation) {
  G g = with_x();
  g.constant("p", "DT_INT32", {2, 2}, {1, 1, 2, 2});
  g.node("reflect", "MirrorPad", {"x", "p"}, {G::type("T", "DT_FLOAT"), G::str("mode", "REFLECT")});
  g.node("symmetric", "MirrorPad", {"x", "p"}, {G::type("T", "DT_FLOAT"), G::str("mode", "SYMMETRIC")});
  g.node("zeros", "Pad", {"x", "p"}, {G::type("T", "DT_FLOAT")});
  const auto out = run_model(convert_graph(g, "mirror", {"reflect", "symmetric", "zeros"}).model,
                             {{"x", make_f32({2, 3}, kT)}});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{4, 7}));
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1,
                                                   6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(as_floats(out[1]), (std::vector<float>{2, 1, 1, 2, 3, 3, 2, 2, 1, 1, 2, 3, 3, 2,
                                                   5, 4, 4, 5, 6, 6, 5, 5, 4, 4, 5, 6, 6, 5}));
  EXPECT_EQ(as_floats(out[2]), (std::vector<float>{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 0, 0,
                                                   0, 0, 4, 5, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(LayoutOps, PadV2KeepsAnIntegerConstantExact) {
  G g;
  g.placeholder("i", "DT_INT32", {2});
  g.constant("p", "DT_INT32", {1, 2}, {1, 2});
  g.constant("c", "DT_INT32", {}, {16777217});  // not representable as float32
  g.node("y", "PadV2", {"i", "p", "c"}, {G::type("T", "DT_INT32"), G::type("Tpaddings", "DT_INT32")});
  HostTensor in;
  in.dtype = DType::kInt32;
  in.shape = {2};
  in.data.resize(8);
  in.as<int32_t>()[0] = -5;
  in.as<int32_t>()[1] = 9;
  const auto out = run_model(convert_graph(g, "padv2", {"y"}).model, {{"i", in}});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].dtype, DType::kInt32);
  const int32_t* v = out[0].as<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(v, v + 5), (std::vector<int32_t>{16777217, -5, 9, 16777217, 16777217}));
}

// tf.pad's documented example with constant_values fed at run time, as
// Session.run allows: one model, two fed values, float32 and int32.
TEST(LayoutOps, PadV2WithAFedConstantValue) {
  G g = with_x();
  g.placeholder("c", "DT_FLOAT", {});
  g.placeholder("i", "DT_INT32", {2});
  g.placeholder("ci", "DT_INT32", {});
  g.constant("p", "DT_INT32", {2, 2}, {1, 1, 2, 2});
  g.constant("p1", "DT_INT32", {1, 2}, {1, 2});
  g.node("y", "PadV2", {"x", "p", "c"}, {G::type("T", "DT_FLOAT"), G::type("Tpaddings", "DT_INT32")});
  g.node("yi", "PadV2", {"i", "p1", "ci"}, {G::type("T", "DT_INT32"), G::type("Tpaddings", "DT_INT32")});
  const conv::ConvertResult converted = convert_graph(g, "padv2_fed", {"y", "yi"});
  auto scalar_i32 = [](std::vector<int64_t> shape, std::vector<int32_t> values) {
    HostTensor t;
    t.dtype = DType::kInt32;
    t.shape = std::move(shape);
    t.data.resize(values.size() * 4);
    std::copy(values.begin(), values.end(), t.as<int32_t>());
    return t;
  };
  for (const float c : {0.0f, -7.5f}) {
    const auto out = run_model(converted.model, {{"x", make_f32({2, 3}, kT)},
                                                 {"c", make_f32({}, {c})},
                                                 {"i", scalar_i32({2}, {-5, 9})},
                                                 {"ci", scalar_i32({}, {static_cast<int32_t>(c) * 3 + 1})}});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].shape, (std::vector<int64_t>{4, 7}));
    EXPECT_EQ(as_floats(out[0]), (std::vector<float>{c, c, c, c, c, c, c, c, c, 1, 2, 3, c, c,
                                                     c, c, 4, 5, 6, c, c, c, c, c, c, c, c, c}));
    const int32_t ci = static_cast<int32_t>(c) * 3 + 1;
    const int32_t* v = out[1].as<int32_t>();
    EXPECT_EQ(std::vector<int32_t>(v, v + 5), (std::vector<int32_t>{ci, -5, 9, ci, ci}));
  }
}

TEST(LayoutOps, ConversionTimeErrorsNameTheNodeAndTheProblem) {
  {
    G g = with_x();
    g.constant("perm", "DT_INT32", {2}, {1, 1});
    g.node("y", "Transpose", {"x", "perm"}, {G::type("T", "DT_FLOAT")});
    EXPECT_NE(conversion_error(g, "bad_perm", {"y"}).find("node 'y' (op Transpose): permutation [1,1] is not a permutation"),
              std::string::npos);
  }
  {
    G g = with_x();
    g.constant("p", "DT_INT32", {2, 2}, {0, 0, 3, 0});
    g.node("y", "MirrorPad", {"x", "p"}, {G::type("T", "DT_FLOAT"), G::str("mode", "REFLECT")});
    EXPECT_NE(conversion_error(g, "bad_mirror", {"y"}).find("MirrorPad REFLECT paddings must be <= 2 for dim 1 of size 3"),
              std::string::npos);
  }
  {
    G g = with_x();
    g.placeholder("p", "DT_INT32", {2, 2});
    g.node("y", "Pad", {"x", "p"}, {G::type("T", "DT_FLOAT")});
    EXPECT_NE(conversion_error(g, "dynamic_pad", {"y"}).find("the paddings (input 1, 'p:0') must be known at conversion time"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace floe::testing
