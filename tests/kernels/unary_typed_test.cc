// SPDX-License-Identifier: Apache-2.0
// Tests for the typed unary kernels (unary.h): rounding (Round is half-to-even like TF), Sign,
// Elu/Selu/Softplus/Softsign against their closed forms (double), LeakyRelu,
// predicates, integer Abs/Neg wrap at INT_MIN, and Cast: float -> int truncates
// toward zero and saturates, NaN -> 0, int narrowing wraps, float16 / bfloat16
// round to nearest even (checked against known bit patterns).
#include "runtime/kernels/reference/unary.h"

#include <gtest/gtest.h>
#include <math.h>

#include <cstdint>
#include <vector>

#include "runtime/kernels/reference/half.h"

namespace floe::ref {
namespace {

template <typename TI, typename TO>
std::vector<TO> run_cast(DType from, DType to, std::vector<TI> in) {
  const int32_t dims[1] = {static_cast<int32_t>(in.size())};
  std::vector<TO> out(in.size());
  cast(from, to, {{in.data(), {dims, 1}}, {out.data(), {dims, 1}}});
  return out;
}

std::vector<float> run_math(MathOp op, std::vector<float> in) {
  const int32_t dims[1] = {static_cast<int32_t>(in.size())};
  std::vector<float> out(in.size());
  math(op, DType::kFloat32, {{in.data(), {dims, 1}}, {out.data(), {dims, 1}}});
  return out;
}

TEST(UnaryOps, RoundingAndSign) {
  EXPECT_EQ(run_math(MathOp::kRound, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f}),
            (std::vector<float>{0, 2, 2, -0.0f, -2, 2}));
  EXPECT_EQ(run_math(MathOp::kFloor, {-1.5f, 1.5f}), (std::vector<float>{-2, 1}));
  EXPECT_EQ(run_math(MathOp::kCeil, {-1.5f, 1.5f}), (std::vector<float>{-1, 2}));
  EXPECT_EQ(run_math(MathOp::kSign, {-3, 0, 2}), (std::vector<float>{-1, 0, 1}));
}

// Float ABS, NEG and SQUARE (the ops' only float path).
TEST(UnaryOps, AbsNegSquare) {
  EXPECT_EQ(run_math(MathOp::kAbs, {-2.5f, 0.0f, 3.0f}), (std::vector<float>{2.5f, 0.0f, 3.0f}));
  EXPECT_EQ(run_math(MathOp::kNeg, {-2.5f, 3.0f}), (std::vector<float>{2.5f, -3.0f}));
  EXPECT_EQ(run_math(MathOp::kSquare, {-3.0f, 0.5f}), (std::vector<float>{9.0f, 0.25f}));
}

TEST(UnaryOps, ActivationsMatchClosedForms) {
  const std::vector<float> x = {-20, -3, -0.5f, 0, 0.5f, 3, 20, 40};
  const auto elu = run_math(MathOp::kElu, x), selu = run_math(MathOp::kSelu, x);
  const auto sp = run_math(MathOp::kSoftplus, x), ss = run_math(MathOp::kSoftsign, x);
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    EXPECT_NEAR(elu[i], v < 0 ? expm1(v) : v, 1e-6 * (1 + fabs(v)));
    EXPECT_NEAR(selu[i], v < 0 ? 1.0507009873554805 * 1.6732632423543772 * expm1(v) : 1.0507009873554805 * v,
                1e-5 * (1 + fabs(v)));
    EXPECT_NEAR(sp[i], log1p(exp(v)), 1e-6 * (1 + fabs(v)));
    EXPECT_NEAR(ss[i], v / (1 + fabs(v)), 1e-7);
  }
  std::vector<float> in = {-2, 3}, out(2);
  const int32_t dims[1] = {2};
  leaky_relu_f32(0.2f, {{in.data(), {dims, 1}}, {out.data(), {dims, 1}}});
  EXPECT_EQ(out, (std::vector<float>{-0.4f, 3}));
}

TEST(UnaryOps, PredicatesAndIntegerOps) {
  std::vector<float> in = {1, NAN, INFINITY, -INFINITY};
  std::vector<uint8_t> out(4);
  const int32_t dims[1] = {4};
  predicate_f32(PredicateOp::kIsNan, {{in.data(), {dims, 1}}, {out.data(), {dims, 1}}});
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 1, 0, 0}));
  predicate_f32(PredicateOp::kIsInf, {{in.data(), {dims, 1}}, {out.data(), {dims, 1}}});
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 0, 1, 1}));
  predicate_f32(PredicateOp::kIsFinite, {{in.data(), {dims, 1}}, {out.data(), {dims, 1}}});
  EXPECT_EQ(out, (std::vector<uint8_t>{1, 0, 0, 0}));
  std::vector<int32_t> iv = {INT32_MIN, -5, 7}, io(3);
  const int32_t d3[1] = {3};
  math(MathOp::kAbs, DType::kInt32, {{iv.data(), {d3, 1}}, {io.data(), {d3, 1}}});
  EXPECT_EQ(io, (std::vector<int32_t>{INT32_MIN, 5, 7}));
  EXPECT_FALSE(math_supports(MathOp::kSin, DType::kInt32));
}

TEST(UnaryOps, CastFloatToInt) {
  EXPECT_EQ((run_cast<float, int32_t>(DType::kFloat32, DType::kInt32, {1.9f, -1.9f, 3e9f, -3e9f, NAN})),
            (std::vector<int32_t>{1, -1, INT32_MAX, INT32_MIN, 0}));
  EXPECT_EQ((run_cast<int32_t, int8_t>(DType::kInt32, DType::kInt8, {300, -129, 5})), (std::vector<int8_t>{44, 127, 5}));
  EXPECT_EQ((run_cast<int64_t, uint8_t>(DType::kInt64, DType::kBool, {0, 5, -1})), (std::vector<uint8_t>{0, 1, 1}));
  EXPECT_EQ((run_cast<uint8_t, float>(DType::kBool, DType::kFloat32, {0, 1})), (std::vector<float>{0, 1}));
}

TEST(UnaryOps, CastHalfAndBfloat16RoundToNearestEven) {
  // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even mantissa wins (1.0).
  const auto h = run_cast<float, uint16_t>(DType::kFloat32, DType::kFloat16,
                                           {1.0f, 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 65504.0f, 1e6f, 0x1p-24f, -2.0f});
  EXPECT_EQ(h, (std::vector<uint16_t>{0x3C00, 0x3C00, 0x3C02, 0x7BFF, 0x7C00, 0x0001, 0xC000}));
  for (uint32_t bits = 0; bits < 0x7C00; bits += 7) {  // every 7th finite half round-trips exactly
    ASSERT_EQ(float_to_half(half_to_float(static_cast<uint16_t>(bits))), bits);
  }
  const auto b = run_cast<float, uint16_t>(DType::kFloat32, DType::kBFloat16, {1.0f, 1.00390625f, 3.0f});
  EXPECT_EQ(b, (std::vector<uint16_t>{0x3F80, 0x3F80, 0x4040}));
  EXPECT_TRUE(isnan(half_to_float(float_to_half(NAN))));
}

}  // namespace
}  // namespace floe::ref
