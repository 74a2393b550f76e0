// SPDX-License-Identifier: Apache-2.0
// Tests for ref::unary_f32: Relu, Relu6, Sigmoid (exact reference values and
// saturation at +-100 and beyond without NaN), Tanh, NaN propagation and in-place
// (output == input) use. Tolerance for sigmoid/tanh: 2 ulp-ish, 1e-6 relative +
// 1e-7 absolute against values from the closed form evaluated in double.
#include "runtime/kernels/reference/unary.h"

#include <gtest/gtest.h>
#include <math.h>

#include <vector>

namespace floe::ref {
namespace {

std::vector<float> run(UnaryOp op, std::vector<float> in) {
  const int32_t dims[1] = {static_cast<int32_t>(in.size())};
  std::vector<float> out(in.size(), -12345.0f);
  unary_f32(op, UnaryOperands{{in.data(), {dims, 1}}, {out.data(), {dims, 1}}});
  return out;
}

void expect_close(float got, double want) {
  EXPECT_NEAR(got, want, 1e-7 + 1e-6 * fabs(want));
}

TEST(Unary, Relu) {
  EXPECT_EQ(run(UnaryOp::kRelu, {-2, -0.0f, 0, 0.25f, 7, 1e30f}),
            (std::vector<float>{0, -0.0f, 0, 0.25f, 7, 1e30f}));
}

TEST(Unary, Relu6) {
  EXPECT_EQ(run(UnaryOp::kRelu6, {-2, 0, 3.5f, 6, 6.0001f, 100}), (std::vector<float>{0, 0, 3.5f, 6, 6, 6}));
}

TEST(Unary, SigmoidValues) {
  const std::vector<float> in = {0, 1, -1, 2.5f, -2.5f, 10, -10};
  const std::vector<float> out = run(UnaryOp::kSigmoid, in);
  EXPECT_EQ(out[0], 0.5f);
  for (size_t i = 0; i < in.size(); ++i) expect_close(out[i], 1.0 / (1.0 + exp(-static_cast<double>(in[i]))));
  // sigmoid(-x) = 1 - sigmoid(x)
  EXPECT_NEAR(out[1] + out[2], 1.0f, 1e-7f);
}

TEST(Unary, SigmoidSaturatesWithoutNaN) {
  const std::vector<float> in = {100, -100, 88.8f, -88.8f, 1000, -1000, INFINITY, -INFINITY};
  const std::vector<float> out = run(UnaryOp::kSigmoid, in);
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_FALSE(isnan(out[i])) << "x = " << in[i];
    EXPECT_GE(out[i], 0.0f) << "x = " << in[i];
    EXPECT_LE(out[i], 1.0f) << "x = " << in[i];
  }
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[4], 1.0f);
  EXPECT_EQ(out[6], 1.0f);
  // sigmoid(-100) = 3.72e-44: a float denormal, not a flushed or overflowed value.
  EXPECT_NEAR(out[1], 3.720076e-44f, 1e-45f);
  EXPECT_EQ(out[5], 0.0f);
  EXPECT_EQ(out[7], 0.0f);
  EXPECT_NEAR(out[3], exp(-88.8), 1e-43);
}

TEST(Unary, Tanh) {
  const std::vector<float> in = {0, 0.5f, -0.5f, 3, -3, 20, -20, 100};
  const std::vector<float> out = run(UnaryOp::kTanh, in);
  for (size_t i = 0; i < in.size(); ++i) expect_close(out[i], tanh(static_cast<double>(in[i])));
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[7], 1.0f);
}

TEST(Unary, NaNPropagates) {
  for (UnaryOp op : {UnaryOp::kRelu, UnaryOp::kRelu6, UnaryOp::kSigmoid, UnaryOp::kTanh}) {
    EXPECT_TRUE(isnan(run(op, {NAN})[0])) << static_cast<int>(op);
  }
}

TEST(Unary, InPlaceMatchesOutOfPlace) {
  const std::vector<float> in = {-7, -1.5f, -0.1f, 0, 0.1f, 1.5f, 5.9f, 6.5f, 42};
  const int32_t dims[2] = {3, 3};
  for (UnaryOp op : {UnaryOp::kRelu, UnaryOp::kRelu6, UnaryOp::kSigmoid, UnaryOp::kTanh, UnaryOp::kExp}) {
    const std::vector<float> want = run(op, in);
    std::vector<float> buf = in;
    unary_f32(op, UnaryOperands{{buf.data(), {dims, 2}}, {buf.data(), {dims, 2}}});
    EXPECT_EQ(buf, want) << static_cast<int>(op);
  }
}

TEST(Unary, ElementaryMath) {
  const std::vector<float> in = {0.25f, 1.0f, 2.0f, 9.0f};
  EXPECT_EQ(run(UnaryOp::kSqrt, in), (std::vector<float>{0.5f, 1.0f, sqrtf(2.0f), 3.0f}));
  EXPECT_EQ(run(UnaryOp::kRsqrt, in), (std::vector<float>{2.0f, 1.0f, 1.0f / sqrtf(2.0f), 1.0f / 3.0f}));
  const std::vector<float> e = run(UnaryOp::kExp, {0.0f, 1.0f, -1.0f});
  for (size_t i = 0; i < e.size(); ++i) expect_close(e[i], exp(static_cast<double>(i == 0 ? 0 : (i == 1 ? 1 : -1))));
  const std::vector<float> l = run(UnaryOp::kLog, in);
  for (size_t i = 0; i < l.size(); ++i) expect_close(l[i], log(static_cast<double>(in[i])));
  EXPECT_TRUE(std::isinf(run(UnaryOp::kLog, {0.0f})[0]));
  EXPECT_TRUE(std::isnan(run(UnaryOp::kSqrt, {-1.0f})[0]));
}

TEST(Unary, EmptyTensor) {
  EXPECT_TRUE(run(UnaryOp::kSigmoid, {}).empty());
}

}  // namespace
}  // namespace floe::ref
