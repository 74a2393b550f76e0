// SPDX-License-Identifier: Apache-2.0
// Tests for ref::matmul_f32: a hand-computed product, the four transpose
// combinations of the same logical matrices, bias + fused activations, K = 0,
// and seeded random shapes against a naive triple loop in double, to
// 1e-5 * sum_k |a_ik * b_kj| + 1e-6: float accumulation of K terms errs by at
// most ~K * 2^-24 of the terms' magnitude (K <= 40 -> 2.4e-6), and a bound on
// that scale stays meaningful when terms cancel and the result is near zero.
#include "runtime/kernels/reference/matmul.h"

#include <gtest/gtest.h>
#include <math.h>

#include <random>
#include <vector>

namespace floe::ref {
namespace {

struct Case {
  int m, k, n;
  bool ta, tb;
  Activation act = Activation::kNone;
  bool bias = false;
};

// Stores the logical [rows, cols] matrix `x` either as is or transposed.
std::vector<float> store(const std::vector<float>& x, int rows, int cols, bool transpose) {
  if (!transpose) return x;
  std::vector<float> t(x.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
  return t;
}

std::vector<float> run(const Case& c, const std::vector<float>& a_logical, const std::vector<float>& b_logical,
                       const std::vector<float>& bias) {
  const std::vector<float> a = store(a_logical, c.m, c.k, c.ta);
  const std::vector<float> b = store(b_logical, c.k, c.n, c.tb);
  const int32_t a_dims[2] = {c.ta ? c.k : c.m, c.ta ? c.m : c.k};
  const int32_t b_dims[2] = {c.tb ? c.n : c.k, c.tb ? c.k : c.n};
  const int32_t bias_dims[1] = {c.n};
  const int32_t out_dims[2] = {c.m, c.n};
  std::vector<float> out(static_cast<size_t>(c.m) * c.n, -12345.0f);
  MatMulParams params;
  params.transpose_a = c.ta;
  params.transpose_b = c.tb;
  params.activation = c.act;
  matmul_f32(params, MatMulOperands{{a.data(), {a_dims, 2}},
                                    {b.data(), {b_dims, 2}},
                                    {c.bias ? bias.data() : nullptr, {bias_dims, 1}},
                                    {out.data(), {out_dims, 2}}});
  return out;
}

TEST(MatMul, HandComputedAllTransposes) {
  // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]].
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {7, 8, 9, 10, 11, 12};
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      EXPECT_EQ(run({2, 3, 2, ta, tb}, a, b, {}), (std::vector<float>{58, 64, 139, 154}))
          << "transpose_a " << ta << " transpose_b " << tb;
    }
  }
}

TEST(MatMul, NonSquareShapes) {
  // [3,2] x [2,4]: rows/cols of different lengths catch swapped strides.
  const std::vector<float> a = {1, -1, 2, 0, 0.5f, 3};
  const std::vector<float> b = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<float> want = {-4, -4, -4, -4, 2, 4, 6, 8, 15.5f, 19, 22.5f, 26};
  for (bool ta : {false, true})
    for (bool tb : {false, true}) EXPECT_EQ(run({3, 2, 4, ta, tb}, a, b, {}), want) << ta << tb;
}

TEST(MatMul, BiasThenActivation) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {7, 8, 9, 10, 11, 12};
  const std::vector<float> bias = {-60, -150};
  Case c{2, 3, 2, false, false};
  c.bias = true;
  EXPECT_EQ(run(c, a, b, bias), (std::vector<float>{-2, -86, 79, 4}));
  c.act = Activation::kRelu;
  EXPECT_EQ(run(c, a, b, bias), (std::vector<float>{0, 0, 79, 4}));
  c.act = Activation::kRelu6;
  c.tb = true;
  EXPECT_EQ(run(c, a, b, bias), (std::vector<float>{0, 0, 6, 4}));
}

TEST(MatMul, EmptyInnerDimensionGivesBias) {
  Case c{2, 0, 3, false, false};
  c.bias = true;
  EXPECT_EQ(run(c, {}, {}, {1, -2, 3}), (std::vector<float>{1, -2, 3, 1, -2, 3}));
}

TEST(MatMul, RandomMatchesNaive) {
  const uint32_t seed = 7301u;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> val(-2.0f, 2.0f);
  for (int iter = 0; iter < 200; ++iter) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " iteration " << iter);
    Case c{1 + static_cast<int>(rng() % 17), 1 + static_cast<int>(rng() % 40), 1 + static_cast<int>(rng() % 17),
           rng() % 2 == 0, rng() % 2 == 0};
    c.act = static_cast<Activation>(rng() % 3);
    c.bias = rng() % 2 == 0;
    std::vector<float> a(static_cast<size_t>(c.m) * c.k), b(static_cast<size_t>(c.k) * c.n), bias(c.n);
    for (float& v : a) v = val(rng);
    for (float& v : b) v = val(rng);
    for (float& v : bias) v = val(rng);
    const std::vector<float> got = run(c, a, b, bias);
    for (int i = 0; i < c.m; ++i) {
      for (int j = 0; j < c.n; ++j) {
        double sum = 0, mag = 0;
        for (int k = 0; k < c.k; ++k) {
          const double t = static_cast<double>(a[i * c.k + k]) * b[k * c.n + j];
          sum += t;
          mag += fabs(t);
        }
        if (c.bias) {
          sum += bias[j];
          mag += fabs(bias[j]);
        }
        if (c.act != Activation::kNone) sum = fmax(sum, 0.0);
        if (c.act == Activation::kRelu6) sum = fmin(sum, 6.0);
        ASSERT_NEAR(got[i * c.n + j], sum, 1e-5 * mag + 1e-6)
            << "i " << i << " j " << j << " m,k,n " << c.m << "," << c.k << "," << c.n << " ta " << c.ta
            << " tb " << c.tb;
      }
    }
  }
}

}  // namespace
}  // namespace floe::ref
