// SPDX-License-Identifier: Apache-2.0
// Tests for ref::binary_f32: each op's arithmetic, NumPy broadcasting (bias-like,
// scalar, both-sided, rank padding, rank 8), fused activations, NaN handling and
// in-place use. Results are exact: each output is one float operation.
#include "runtime/kernels/reference/binary.h"

#include <gtest/gtest.h>
#include <math.h>

#include <random>
#include <vector>

namespace floe::ref {
namespace {

struct Tensor {
  std::vector<int32_t> dims;
  std::vector<float> data;
  Shape shape() const { return Shape{dims.empty() ? nullptr : dims.data(), static_cast<int32_t>(dims.size())}; }
};

std::vector<float> run(BinaryOp op, const Tensor& a, const Tensor& b, std::vector<int32_t> out_dims,
                       Activation act = Activation::kNone) {
  size_t n = 1;
  for (int32_t d : out_dims) n *= static_cast<size_t>(d);
  std::vector<float> out(n, -12345.0f);
  const Shape out_shape{out_dims.empty() ? nullptr : out_dims.data(), static_cast<int32_t>(out_dims.size())};
  BinaryParams params;
  params.op = op;
  params.activation = act;
  binary_f32(params, BinaryOperands{{a.data.data(), a.shape()}, {b.data.data(), b.shape()}, {out.data(), out_shape}});
  return out;
}

TEST(Binary, SameShapeArithmetic) {
  const Tensor a{{2, 3}, {1, -2, 3, 4.5f, 0, -6}};
  const Tensor b{{2, 3}, {2, 4, -3, 0.5f, 7, 2}};
  EXPECT_EQ(run(BinaryOp::kAdd, a, b, {2, 3}), (std::vector<float>{3, 2, 0, 5, 7, -4}));
  EXPECT_EQ(run(BinaryOp::kSub, a, b, {2, 3}), (std::vector<float>{-1, -6, 6, 4, -7, -8}));
  EXPECT_EQ(run(BinaryOp::kMul, a, b, {2, 3}), (std::vector<float>{2, -8, -9, 2.25f, 0, -12}));
  EXPECT_EQ(run(BinaryOp::kMaximum, a, b, {2, 3}), (std::vector<float>{2, 4, 3, 4.5f, 7, 2}));
  EXPECT_EQ(run(BinaryOp::kMinimum, a, b, {2, 3}), (std::vector<float>{1, -2, -3, 0.5f, 0, -6}));
}

TEST(Binary, DivIsTrueFloatDivision) {
  const Tensor a{{6}, {7, -7, 1, -1, 0, 1}};
  const Tensor b{{6}, {2, 2, 0, 0, 0, 3}};
  const std::vector<float> out = run(BinaryOp::kDiv, a, b, {6});
  EXPECT_EQ(out[0], 3.5f);   // not integer division
  EXPECT_EQ(out[1], -3.5f);  // not floor division
  EXPECT_TRUE(isinf(out[2]) && out[2] > 0);
  EXPECT_TRUE(isinf(out[3]) && out[3] < 0);
  EXPECT_TRUE(isnan(out[4]));
  EXPECT_EQ(out[5], 1.0f / 3.0f);  // correctly rounded quotient, not 1 * (1/3)
}

TEST(Binary, BiasLikeBroadcastLastDim) {
  // [2,3] + [3]: b repeats along rows.
  const Tensor a{{2, 3}, {1, 2, 3, 4, 5, 6}};
  const Tensor b{{3}, {10, 20, 30}};
  EXPECT_EQ(run(BinaryOp::kAdd, a, b, {2, 3}), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  // Broadcast operand on the left keeps operand order for non-commutative ops.
  EXPECT_EQ(run(BinaryOp::kSub, b, a, {2, 3}), (std::vector<float>{9, 18, 27, 6, 15, 24}));
}

TEST(Binary, BothSidesBroadcast_2x1x3_plus_4x1) {
  // a [2,1,3], b [4,1] -> [2,4,3]; out[i][j][k] = a[i][k] + b[j].
  const Tensor a{{2, 1, 3}, {1, 2, 3, 4, 5, 6}};
  const Tensor b{{4, 1}, {10, 20, 30, 40}};
  const std::vector<float> want = {
      11, 12, 13, 21, 22, 23, 31, 32, 33, 41, 42, 43,  // i = 0
      14, 15, 16, 24, 25, 26, 34, 35, 36, 44, 45, 46,  // i = 1
  };
  EXPECT_EQ(run(BinaryOp::kAdd, a, b, {2, 4, 3}), want);
}

TEST(Binary, OuterDifference_3x1_minus_1x4) {
  // The innermost dim broadcasts a and walks b; the outer one the opposite.
  const Tensor a{{3, 1}, {1, 2, 3}};
  const Tensor b{{1, 4}, {10, 20, 30, 40}};
  const std::vector<float> want = {-9, -19, -29, -39, -8, -18, -28, -38, -7, -17, -27, -37};
  EXPECT_EQ(run(BinaryOp::kSub, a, b, {3, 4}), want);
}

TEST(Binary, ScalarOperands) {
  const Tensor s{{}, {4}};  // rank 0, null dims
  const Tensor v{{2, 2}, {1, 2, 8, -2}};
  EXPECT_EQ(run(BinaryOp::kDiv, v, s, {2, 2}), (std::vector<float>{0.25f, 0.5f, 2, -0.5f}));
  EXPECT_EQ(run(BinaryOp::kDiv, s, v, {2, 2}), (std::vector<float>{4, 2, 0.5f, -2}));
  EXPECT_EQ(run(BinaryOp::kSub, s, v, {2, 2}), (std::vector<float>{3, 2, -4, 6}));
  const Tensor one{{1, 1}, {3}};  // a one-element tensor of rank 2 is a scalar too
  EXPECT_EQ(run(BinaryOp::kMul, one, v, {2, 2}), (std::vector<float>{3, 6, 24, -6}));
  EXPECT_EQ(run(BinaryOp::kAdd, s, s, {}), (std::vector<float>{8}));
}

TEST(Binary, RankPaddingWithLeadingOnes) {
  // a [1,1,3] + b [2,3] -> [1,2,3]; a [1,3] + b [2,1,1] -> [2,1,3].
  const Tensor a{{1, 1, 3}, {1, 2, 3}};
  const Tensor b{{2, 3}, {10, 20, 30, 40, 50, 60}};
  EXPECT_EQ(run(BinaryOp::kAdd, a, b, {1, 2, 3}), (std::vector<float>{11, 22, 33, 41, 52, 63}));
  const Tensor c{{1, 3}, {1, 2, 3}};
  const Tensor d{{2, 1, 1}, {100, 200}};
  EXPECT_EQ(run(BinaryOp::kMul, c, d, {2, 1, 3}), (std::vector<float>{100, 200, 300, 200, 400, 600}));
}

TEST(Binary, FusedActivation) {
  const Tensor a{{5}, {-3, -0.5f, 0.5f, 5, 9}};
  const Tensor b{{}, {1}};
  EXPECT_EQ(run(BinaryOp::kAdd, a, b, {5}, Activation::kRelu), (std::vector<float>{0, 0.5f, 1.5f, 6, 10}));
  EXPECT_EQ(run(BinaryOp::kAdd, a, b, {5}, Activation::kRelu6), (std::vector<float>{0, 0.5f, 1.5f, 6, 6}));
  // On the general broadcast path too.
  const Tensor c{{2, 1}, {-10, 10}};
  const Tensor d{{1, 2}, {1, 2}};
  EXPECT_EQ(run(BinaryOp::kMul, c, d, {2, 2}, Activation::kRelu6), (std::vector<float>{0, 0, 6, 6}));
}

TEST(Binary, MaximumMinimumPropagateNaN) {
  const float nan = NAN;
  const Tensor a{{4}, {nan, 1, nan, -1}};
  const Tensor b{{4}, {1, nan, nan, -2}};
  const std::vector<float> mx = run(BinaryOp::kMaximum, a, b, {4});
  const std::vector<float> mn = run(BinaryOp::kMinimum, a, b, {4});
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(isnan(mx[i])) << i;
    EXPECT_TRUE(isnan(mn[i])) << i;
  }
  EXPECT_EQ(mx[3], -1.0f);
  EXPECT_EQ(mn[3], -2.0f);
}

TEST(Binary, InPlaceOutputAliasesFullOperand) {
  const int32_t dims[2] = {2, 3};
  const int32_t bias_dims[1] = {3};
  float a[6] = {1, 2, 3, 4, 5, 6};
  const float bias[3] = {0.5f, -1, 2};
  BinaryParams params;
  params.op = BinaryOp::kSub;
  binary_f32(params, BinaryOperands{{a, {dims, 2}}, {bias, {bias_dims, 1}}, {a, {dims, 2}}});
  EXPECT_EQ(std::vector<float>(a, a + 6), (std::vector<float>{0.5f, 3, 1, 3.5f, 6, 4}));
  float b[6] = {1, 2, 3, 4, 5, 6};
  params.op = BinaryOp::kMul;
  binary_f32(params, BinaryOperands{{b, {dims, 2}}, {b, {dims, 2}}, {b, {dims, 2}}});
  EXPECT_EQ(std::vector<float>(b, b + 6), (std::vector<float>{1, 4, 9, 16, 25, 36}));
}

TEST(Binary, EmptyOutputWritesNothing) {
  const Tensor a{{0, 3}, {}};
  const Tensor b{{3}, {1, 2, 3}};
  EXPECT_TRUE(run(BinaryOp::kAdd, a, b, {0, 3}).empty());
}

// Random shapes up to rank 8 with every dim independently broadcast in a, in b,
// in neither, and ranks independently shortened; checked against the direct
// formula (full multi-index per element). Exact: one float op per element.
TEST(Binary, RandomBroadcastMatchesDirectFormula) {
  const uint32_t seed = 20240611u;
  std::mt19937 rng(seed);
  for (int iter = 0; iter < 300; ++iter) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " iteration " << iter);
    const int rank = 1 + static_cast<int>(rng() % kMaxRank);
    std::vector<int32_t> out_dims(rank);
    for (auto& d : out_dims) d = 1 + static_cast<int32_t>(rng() % 3);
    const int a_rank = static_cast<int>(rng() % (rank + 1));
    const int b_rank = rank;  // at least one operand has the full rank
    Tensor a, b;
    a.dims.assign(out_dims.end() - a_rank, out_dims.end());
    b.dims = out_dims;
    for (auto& d : a.dims) if (rng() % 3 == 0) d = 1;
    for (int i = 0; i < b_rank; ++i) {
      // Where a holds the full dim, b may broadcast it.
      const int ai = i - (rank - a_rank);
      if (ai >= 0 && a.dims[ai] == out_dims[i] && rng() % 3 == 0) b.dims[i] = 1;
    }
    const bool swap = rng() % 2 == 0;
    if (swap) std::swap(a, b);
    for (Tensor* t : {&a, &b}) {
      size_t n = 1;
      for (int32_t d : t->dims) n *= static_cast<size_t>(d);
      t->data.resize(n);
      for (float& v : t->data) v = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 64.0f;
    }
    const BinaryOp op = static_cast<BinaryOp>(rng() % 6);
    const std::vector<float> got = run(op, a, b, out_dims);

    // Direct formula.
    size_t total = got.size();
    std::vector<int32_t> idx(rank, 0);
    for (size_t flat = 0; flat < total; ++flat) {
      size_t rem = flat;
      for (int i = rank - 1; i >= 0; --i) {
        idx[i] = static_cast<int32_t>(rem % out_dims[i]);
        rem /= out_dims[i];
      }
      auto offset = [&](const Tensor& t) {
        size_t off = 0;
        const int shift = rank - static_cast<int>(t.dims.size());
        for (size_t i = 0; i < t.dims.size(); ++i) {
          off = off * t.dims[i] + (t.dims[i] == 1 ? 0 : idx[i + shift]);
        }
        return off;
      };
      const float x = a.data[offset(a)];
      const float y = b.data[offset(b)];
      float want = 0;
      switch (op) {
        case BinaryOp::kAdd: want = x + y; break;
        case BinaryOp::kSub: want = x - y; break;
        case BinaryOp::kMul: want = x * y; break;
        case BinaryOp::kDiv: want = x / y; break;
        case BinaryOp::kMaximum: want = x > y ? x : y; break;
        case BinaryOp::kMinimum: want = x < y ? x : y; break;
      }
      if (isnan(want)) {
        ASSERT_TRUE(isnan(got[flat])) << "flat " << flat;
      } else {
        ASSERT_EQ(got[flat], want) << "flat " << flat << " op " << static_cast<int>(op);
      }
    }
  }
}

}  // namespace
}  // namespace floe::ref
